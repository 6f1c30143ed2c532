/**
 * The OpenAI Responses wire format, our `/v1/responses` endpoint's side (DESIGN.md section 10, "Agents' dialects"):
 * the request as WE accept it, strict (an unknown field is 422 naming it) but for what OpenAI's own clients send
 * (Codex CLI, the Agents SDK), which is accepted and either used, translated or dropped by name. The answer as we send
 * it is openaiResponsesReply.ts.
 * Shapes follow `openai` (node_modules/openai/resources/responses/responses.d.ts). OpenAI is reached upstream
 * through chat completions, so this format has no vendor side.
 */
import { Schema } from "effect"
import { JsonObject } from "./openaiChat.ts"

const nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))
const NonEmptyString = Schema.String.pipe(Schema.minLength(1))
const FunctionName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, { message: () => "must be 1-64 letters, digits, underscores or dashes" })
)
/** Items and parts carry fields a client echoes back from our own output (ids, statuses): accepted, not used. */
const ItemStatus = nullable(Schema.Literal("in_progress", "completed", "incomplete"))

// ---------------------------------------------------------------------------------------------------------
// Input items

const onlyText = (what: string) =>
  Schema.Literal("input_text", "output_text", "refusal").annotations({
    message: (issue) => ({
      message: `${what} type ${JSON.stringify(issue.actual)} is not supported: only text parts (input_text, output_text, refusal) are accepted`,
      override: true
    })
  })

/** A text part of a message: `input_text` (user side), `output_text` or `refusal` (an assistant turn replayed). */
export const InputContentPart = Schema.Struct({
  type: onlyText("content part"),
  text: Schema.optional(Schema.String),
  refusal: Schema.optional(Schema.String),
  // Echoed from our own output_text parts.
  annotations: Schema.optional(Schema.Array(Schema.Unknown)),
  logprobs: Schema.optional(Schema.Array(Schema.Unknown))
}).pipe(
  Schema.filter((part) =>
    part.type === "refusal"
      ? part.refusal === undefined ? { path: ["refusal"], message: "a refusal part needs `refusal`" } : undefined
      : part.text === undefined ? { path: ["text"], message: "a text part needs `text`" } : undefined
  )
)
export type InputContentPart = typeof InputContentPart.Type

export const MAX_CONTENT_PARTS = 50
const MessageContent = Schema.Union(
  Schema.String,
  Schema.Array(InputContentPart).annotations({ title: "an array of text parts" }).pipe(Schema.maxItems(MAX_CONTENT_PARTS))
)

export const InputMessage = Schema.Struct({
  type: Schema.optional(Schema.Literal("message")),
  role: Schema.Literal("user", "assistant", "system", "developer"),
  content: MessageContent,
  id: Schema.optional(Schema.String),
  status: ItemStatus,
  phase: nullable(Schema.String)
}).annotations({ title: "a message item" })

export const InputFunctionCall = Schema.Struct({
  type: Schema.Literal("function_call"),
  call_id: NonEmptyString,
  name: Schema.String,
  arguments: Schema.String,
  namespace: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  status: ItemStatus
}).annotations({ title: "a function_call item" })

const ToolOutput = Schema.Union(
  Schema.String,
  Schema.Array(
    Schema.Struct({
      type: Schema.Literal("input_text", "output_text").annotations({
        message: (issue) => ({ message: `tool output part type ${JSON.stringify(issue.actual)} is not supported: only input_text`, override: true })
      }),
      text: Schema.String
    })
  ).annotations({ title: "an array of input_text parts" })
)

export const InputFunctionCallOutput = Schema.Struct({
  type: Schema.Literal("function_call_output"),
  call_id: NonEmptyString,
  output: ToolOutput,
  id: nullable(Schema.String),
  status: ItemStatus
}).annotations({ title: "a function_call_output item" })

/** A freeform tool's call (Codex's `apply_patch`): translated to a function taking one string, `input`. */
export const InputCustomToolCall = Schema.Struct({
  type: Schema.Literal("custom_tool_call"),
  call_id: NonEmptyString,
  name: Schema.String,
  input: Schema.String,
  namespace: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  status: ItemStatus
}).annotations({ title: "a custom_tool_call item" })

export const InputCustomToolCallOutput = Schema.Struct({
  type: Schema.Literal("custom_tool_call_output"),
  call_id: NonEmptyString,
  output: ToolOutput,
  id: nullable(Schema.String)
}).annotations({ title: "a custom_tool_call_output item" })

export const SummaryText = Schema.Struct({ type: Schema.Literal("summary_text"), text: Schema.String })

export const InputReasoning = Schema.Struct({
  type: Schema.Literal("reasoning"),
  id: Schema.optional(Schema.String),
  summary: Schema.Array(SummaryText),
  content: nullable(Schema.Array(Schema.Struct({ type: Schema.Literal("reasoning_text"), text: Schema.String }))),
  encrypted_content: nullable(Schema.String),
  status: ItemStatus
}).annotations({ title: "a reasoning item" })

const ITEM_TITLE = "an input item (message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning)"

/** Every item as the union reads it: each member chosen by its `type` (a message's is given, below). */
const TypedInputItem = Schema.Union(
  Schema.Struct({ ...InputMessage.fields, type: Schema.Literal("message") }),
  InputFunctionCall,
  InputFunctionCallOutput,
  InputCustomToolCall,
  InputCustomToolCallOutput,
  InputReasoning
).annotations({ title: ITEM_TITLE })

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * An input item. A message may leave out its `type` (OpenAI's EasyInputMessage): an item with a `role` and no `type`
 * is read as `type: "message"`, so the union picks every item's member by its type and a refusal names what failed
 * inside that member (`input.0.role`, `input.0.x`), never an optional `type` the other members complain about.
 */
export const InputItem = Schema.transform(Schema.Unknown, TypedInputItem, {
  strict: false,
  decode: (item) => (isRecord(item) && !Object.hasOwn(item, "type") && Object.hasOwn(item, "role") ? { ...item, type: "message" } : item),
  encode: (item) => item
}).annotations({ title: ITEM_TITLE })
export type InputItem = typeof InputMessage.Type | Exclude<typeof TypedInputItem.Type, { readonly role: unknown }>

// ---------------------------------------------------------------------------------------------------------
// Tools

export const FunctionTool = Schema.Struct({
  type: Schema.Literal("function"),
  name: FunctionName,
  description: nullable(Schema.String),
  parameters: nullable(JsonObject),
  strict: nullable(Schema.Boolean),
  defer_loading: Schema.optional(Schema.Boolean)
})

export const CustomTool = Schema.Struct({
  type: Schema.Literal("custom"),
  name: FunctionName,
  description: Schema.optional(Schema.String),
  // A grammar (lark / regex) or plain text: the model is told of it in the description, never held to it.
  format: Schema.optional(JsonObject),
  defer_loading: Schema.optional(Schema.Boolean)
})

export const NamespaceTool = Schema.Struct({
  type: Schema.Literal("namespace"),
  name: FunctionName,
  description: Schema.optional(Schema.String),
  tools: Schema.Array(
    Schema.Union(
      Schema.Struct({
        type: Schema.Literal("function"),
        name: FunctionName,
        description: nullable(Schema.String),
        parameters: nullable(JsonObject),
        strict: nullable(Schema.Boolean),
        defer_loading: Schema.optional(Schema.Boolean)
      }),
      CustomTool
    )
  )
})

/**
 * Tools the vendor runs itself (search, code, files, images, computer, MCP, shells): the exchange cannot run them, so
 * they are dropped under the parameter policy and named (`tools[web_search]`). Their options are not interpreted.
 */
export const BUILT_IN_TOOLS = [
  "web_search",
  "web_search_2025_08_26",
  "web_search_preview",
  "web_search_preview_2025_03_11",
  "file_search",
  "code_interpreter",
  "image_generation",
  "computer_use_preview",
  "computer",
  "mcp",
  "local_shell",
  "shell",
  "apply_patch",
  "tool_search"
] as const
/**
 * One member per built-in type, each a single literal: the union then picks a tool's member by its `type`, so a
 * function, custom or namespace tool that fails is refused for what failed in it (`tools.0.name`, `tools.0.x`), not
 * told that its `type` is none of the built-in ones.
 */
export const BuiltInTools = BUILT_IN_TOOLS.map((type) =>
  Schema.Struct({ type: Schema.Literal(type) }).annotations({ parseOptions: { onExcessProperty: "ignore" } })
)

export const RequestTool = Schema.Union(FunctionTool, CustomTool, NamespaceTool, ...BuiltInTools).annotations({
  title: "a tool (function, custom, namespace, or a built-in tool)"
})
export type RequestTool = typeof RequestTool.Type

export const RequestToolChoice = Schema.Union(
  Schema.Literal("none", "auto", "required"),
  Schema.Struct({ type: Schema.Literal("function"), name: Schema.String }).annotations({ title: '{type:"function", name}' }),
  Schema.Struct({ type: Schema.Literal("custom"), name: Schema.String }).annotations({ title: '{type:"custom", name}' })
)

export const TextFormat = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    name: FunctionName,
    schema: JsonObject,
    strict: nullable(Schema.Boolean),
    description: Schema.optional(Schema.String)
  })
)
export type TextFormat = typeof TextFormat.Type

/** OpenAI's reasoning efforts; `minimal` and `xhigh` are served as the nearest canonical effort, `none` as off. */
export const ResponsesEffort = Schema.Literal("none", "minimal", "low", "medium", "high", "xhigh")
export type ResponsesEffort = typeof ResponsesEffort.Type

export const INCLUDABLE = [
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
  "message.input_image.image_url",
  "web_search_call.action.sources",
  "web_search_call.results",
  "file_search_call.results",
  "code_interpreter_call.outputs",
  "computer_call_output.output.image_url"
] as const

/**
 * `POST /v1/responses`. Every schema failure is reported (errors: all) and unknown fields are refused
 * (onExcessProperty: error) at every depth but where annotated otherwise.
 */
export const ResponsesRequest = Schema.Struct({
  model: Schema.optional(NonEmptyString),
  input: Schema.Union(
    Schema.String,
    Schema.Array(InputItem).annotations({ title: "an array of input items" })
  ),
  instructions: nullable(Schema.String),
  stream: nullable(Schema.Boolean),
  store: nullable(Schema.Boolean),
  previous_response_id: nullable(NonEmptyString),
  include: nullable(Schema.Array(Schema.Literal(...INCLUDABLE))),
  tools: nullable(Schema.Array(RequestTool)),
  tool_choice: nullable(RequestToolChoice),
  parallel_tool_calls: nullable(Schema.Boolean),
  text: nullable(
    Schema.Struct({
      format: Schema.optional(TextFormat),
      verbosity: nullable(Schema.Literal("low", "medium", "high"))
    })
  ),
  reasoning: nullable(
    Schema.Struct({
      effort: nullable(ResponsesEffort),
      summary: nullable(Schema.Literal("auto", "concise", "detailed")),
      generate_summary: nullable(Schema.Literal("auto", "concise", "detailed"))
    })
  ),
  max_output_tokens: nullable(Schema.Int.pipe(Schema.greaterThanOrEqualTo(16))),
  temperature: nullable(Schema.Number.pipe(Schema.between(0, 2))),
  top_p: nullable(Schema.Number.pipe(Schema.between(0, 1))),
  metadata: nullable(Schema.Record({ key: Schema.String.pipe(Schema.maxLength(64)), value: Schema.String.pipe(Schema.maxLength(512)) })),
  user: nullable(Schema.String),
  safety_identifier: nullable(Schema.String),
  prompt_cache_key: nullable(Schema.String),
  prompt_cache_retention: nullable(Schema.String),
  service_tier: nullable(Schema.String),
  truncation: nullable(Schema.Literal("auto", "disabled")),
  max_tool_calls: nullable(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  top_logprobs: nullable(Schema.Int.pipe(Schema.between(0, 20))),
  background: nullable(Schema.Boolean),
  stream_options: nullable(
    Schema.Struct({ include_obfuscation: nullable(Schema.Boolean) }).annotations({ parseOptions: { onExcessProperty: "ignore" } })
  ),
  /** Codex's own annotations of the request (its installation, the turn): never forwarded. */
  client_metadata: nullable(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  // Refused by name after parsing: the Conversations API and stored prompts are not served.
  conversation: Schema.optional(Schema.Unknown),
  prompt: Schema.optional(Schema.Unknown),
  // The exchange's extensions, as on chat completions.
  models: Schema.optional(Schema.Array(NonEmptyString).pipe(Schema.minItems(1), Schema.maxItems(8))),
  conversation_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  routing_bias: Schema.optional(Schema.Literal("cheaper", "balanced", "better"))
}).annotations({
  identifier: "ResponsesRequest",
  parseOptions: { errors: "all", onExcessProperty: "error" }
})
export type ResponsesRequest = typeof ResponsesRequest.Type

/** `POST /v1/responses/input_tokens`: the request's input side only (OpenAI's shape); nothing is generated. */
export const InputTokensRequest = Schema.Struct({
  model: Schema.optional(NonEmptyString),
  input: Schema.optional(ResponsesRequest.fields.input),
  instructions: ResponsesRequest.fields.instructions,
  previous_response_id: ResponsesRequest.fields.previous_response_id,
  tools: ResponsesRequest.fields.tools,
  tool_choice: ResponsesRequest.fields.tool_choice,
  parallel_tool_calls: ResponsesRequest.fields.parallel_tool_calls,
  text: ResponsesRequest.fields.text,
  reasoning: ResponsesRequest.fields.reasoning,
  truncation: ResponsesRequest.fields.truncation,
  conversation: ResponsesRequest.fields.conversation
}).annotations({
  identifier: "ResponsesInputTokensRequest",
  parseOptions: { errors: "all", onExcessProperty: "error" }
})
export type InputTokensRequest = typeof InputTokensRequest.Type
