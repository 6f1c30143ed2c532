/**
 * The OpenAI Responses wire format, the answer's side as WE send it (the request as we accept it is
 * openaiResponses.ts): the response object, its output items and usage, its stream events, and the stored responses'
 * reads. Type = Encoded throughout, so a typed value is its own wire form. Shapes follow `openai`
 * (node_modules/openai/resources/responses/responses.d.ts).
 */
import { Schema } from "effect"
import { JsonObject } from "./openaiChat.ts"
import { SummaryText, TextFormat } from "./openaiResponses.ts"

// ---------------------------------------------------------------------------------------------------------
// The response as we send it (Type = Encoded: a typed value is its own wire form)

export const OutputText = Schema.Struct({
  type: Schema.Literal("output_text"),
  text: Schema.String,
  annotations: Schema.Tuple(),
  logprobs: Schema.Tuple()
})
export type OutputText = typeof OutputText.Type

export const OutputMessage = Schema.Struct({
  type: Schema.Literal("message"),
  id: Schema.String,
  role: Schema.Literal("assistant"),
  status: Schema.Literal("in_progress", "completed", "incomplete"),
  content: Schema.Array(OutputText)
})
export type OutputMessage = typeof OutputMessage.Type

export const OutputFunctionCall = Schema.Struct({
  type: Schema.Literal("function_call"),
  id: Schema.String,
  call_id: Schema.String,
  name: Schema.String,
  namespace: Schema.optional(Schema.String),
  arguments: Schema.String,
  status: Schema.Literal("in_progress", "completed", "incomplete")
})
export type OutputFunctionCall = typeof OutputFunctionCall.Type

export const OutputCustomToolCall = Schema.Struct({
  type: Schema.Literal("custom_tool_call"),
  id: Schema.String,
  call_id: Schema.String,
  name: Schema.String,
  namespace: Schema.optional(Schema.String),
  input: Schema.String,
  status: Schema.Literal("in_progress", "completed", "incomplete")
})
export type OutputCustomToolCall = typeof OutputCustomToolCall.Type

export const OutputReasoning = Schema.Struct({
  type: Schema.Literal("reasoning"),
  id: Schema.String,
  summary: Schema.Array(SummaryText),
  encrypted_content: Schema.optional(Schema.String)
})
export type OutputReasoning = typeof OutputReasoning.Type

export const OutputItem = Schema.Union(OutputMessage, OutputFunctionCall, OutputCustomToolCall, OutputReasoning)
export type OutputItem = typeof OutputItem.Type

export const ResponsesUsage = Schema.Struct({
  input_tokens: Schema.Number,
  input_tokens_details: Schema.Struct({ cached_tokens: Schema.Number }),
  output_tokens: Schema.Number,
  output_tokens_details: Schema.Struct({ reasoning_tokens: Schema.Number }),
  total_tokens: Schema.Number
}).annotations({ identifier: "ResponsesUsage" })
export type ResponsesUsage = typeof ResponsesUsage.Type

export const ResponseStatus = Schema.Literal("in_progress", "completed", "incomplete", "failed")
export type ResponseStatus = typeof ResponseStatus.Type

export const ResponseObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("response"),
  created_at: Schema.Number,
  status: ResponseStatus,
  model: Schema.String,
  output: Schema.Array(OutputItem),
  output_text: Schema.String,
  error: Schema.NullOr(Schema.Struct({ code: Schema.String, message: Schema.String })),
  incomplete_details: Schema.NullOr(Schema.Struct({ reason: Schema.Literal("max_output_tokens", "content_filter") })),
  instructions: Schema.NullOr(Schema.String),
  max_output_tokens: Schema.NullOr(Schema.Number),
  metadata: Schema.Record({ key: Schema.String, value: Schema.String }),
  parallel_tool_calls: Schema.Boolean,
  previous_response_id: Schema.NullOr(Schema.String),
  reasoning: Schema.Struct({ effort: Schema.NullOr(Schema.String), summary: Schema.NullOr(Schema.String) }),
  store: Schema.Boolean,
  temperature: Schema.NullOr(Schema.Number),
  text: Schema.Struct({ format: Schema.Union(TextFormat, Schema.Struct({ type: Schema.Literal("text") })) }),
  tool_choice: Schema.Union(Schema.String, Schema.Struct({ type: Schema.String, name: Schema.String })),
  tools: Schema.Array(JsonObject),
  top_p: Schema.NullOr(Schema.Number),
  truncation: Schema.Literal("auto", "disabled"),
  usage: Schema.NullOr(ResponsesUsage),
  user: Schema.optional(Schema.String),
  x_credits_used: Schema.optional(Schema.Number),
  x_credits_remaining: Schema.optional(Schema.Number),
  x_ratelimit_requests_remaining: Schema.optional(Schema.NullOr(Schema.Number))
}).annotations({ identifier: "Response" })
export type ResponseObject = typeof ResponseObject.Type

/** `DELETE /v1/responses/{id}`. */
export const DeletedResponse = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("response"),
  deleted: Schema.Literal(true)
}).annotations({ identifier: "DeletedResponse" })

/** `POST /v1/responses/input_tokens`. */
export const InputTokensCount = Schema.Struct({
  object: Schema.Literal("response.input_tokens"),
  input_tokens: Schema.Number
}).annotations({ identifier: "ResponsesInputTokens" })

/** A stored input item as `GET /v1/responses/{id}/input_items` lists it (always with an id). */
export const StoredInputItem = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ identifier: "ResponseInputItem" })

export const InputItemList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(StoredInputItem),
  first_id: Schema.NullOr(Schema.String),
  last_id: Schema.NullOr(Schema.String),
  has_more: Schema.Boolean
}).annotations({ identifier: "ResponseInputItemList" })

// ---------------------------------------------------------------------------------------------------------
// Stream events (each with its `sequence_number`, from 0)

type WithSequence<A> = A & { readonly sequence_number: number }

export type ResponsesStreamEvent = WithSequence<
  | { readonly type: "response.created" | "response.in_progress" | "response.completed" | "response.incomplete" | "response.failed"; readonly response: ResponseObject }
  | { readonly type: "response.output_item.added" | "response.output_item.done"; readonly output_index: number; readonly item: OutputItem }
  | {
    readonly type: "response.content_part.added" | "response.content_part.done"
    readonly item_id: string
    readonly output_index: number
    readonly content_index: number
    readonly part: OutputText
  }
  | {
    readonly type: "response.output_text.delta"
    readonly item_id: string
    readonly output_index: number
    readonly content_index: number
    readonly delta: string
    readonly logprobs: readonly []
  }
  | {
    readonly type: "response.output_text.done"
    readonly item_id: string
    readonly output_index: number
    readonly content_index: number
    readonly text: string
    readonly logprobs: readonly []
  }
  | { readonly type: "response.function_call_arguments.delta"; readonly item_id: string; readonly output_index: number; readonly delta: string }
  | {
    readonly type: "response.function_call_arguments.done"
    readonly item_id: string
    readonly output_index: number
    readonly name: string
    readonly arguments: string
  }
  | { readonly type: "response.custom_tool_call_input.delta"; readonly item_id: string; readonly output_index: number; readonly delta: string }
  | { readonly type: "response.custom_tool_call_input.done"; readonly item_id: string; readonly output_index: number; readonly input: string }
  | {
    readonly type: "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done"
    readonly item_id: string
    readonly output_index: number
    readonly summary_index: number
    readonly part: typeof SummaryText.Type
  }
  | {
    readonly type: "response.reasoning_summary_text.delta"
    readonly item_id: string
    readonly output_index: number
    readonly summary_index: number
    readonly delta: string
  }
  | {
    readonly type: "response.reasoning_summary_text.done"
    readonly item_id: string
    readonly output_index: number
    readonly summary_index: number
    readonly text: string
  }
>
