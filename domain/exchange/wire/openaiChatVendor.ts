/**
 * The OpenAI chat-completions wire format as it crosses to and from OpenAI-compatible vendors (DESIGN.md section 10):
 * the request we send, and the replies and chunks we read. The latter are lenient (every field optional and
 * nullable, extra fields ignored): the compatible vendors add fields and write `null` freely. Our own endpoint's
 * shapes are in openaiChat.ts.
 */
import { Schema } from "effect"
import { ChatToolCall, JsonObject } from "./openaiChat.ts"

// ---------------------------------------------------------------------------------------------------------
// The request as we send it to an OpenAI-compatible vendor. Optional fields left undefined are not serialized.

export const UpstreamChatMessage = Schema.Union(
  Schema.Struct({ role: Schema.Literal("system"), content: Schema.String }),
  Schema.Struct({ role: Schema.Literal("user"), content: Schema.String }),
  Schema.Struct({
    role: Schema.Literal("assistant"),
    // null when the turn is only tool calls (OpenAI's own rule).
    content: Schema.NullOr(Schema.String),
    tool_calls: Schema.optional(Schema.Array(ChatToolCall)),
    // DeepSeek's name for a replayed turn's reasoning.
    reasoning_content: Schema.optional(Schema.String)
  }),
  Schema.Struct({ role: Schema.Literal("tool"), content: Schema.String, tool_call_id: Schema.String })
)
export type UpstreamChatMessage = typeof UpstreamChatMessage.Type

export const OpenaiChatRequestBody = Schema.Struct({
  model: Schema.String,
  messages: Schema.Array(UpstreamChatMessage),
  max_tokens: Schema.optional(Schema.Number),
  max_completion_tokens: Schema.optional(Schema.Number),
  temperature: Schema.optional(Schema.Number),
  top_p: Schema.optional(Schema.Number),
  stop: Schema.optional(Schema.Array(Schema.String)),
  frequency_penalty: Schema.optional(Schema.Number),
  presence_penalty: Schema.optional(Schema.Number),
  seed: Schema.optional(Schema.Number),
  logit_bias: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Number })),
  logprobs: Schema.optional(Schema.Boolean),
  top_logprobs: Schema.optional(Schema.Number),
  tools: Schema.optional(
    Schema.Array(
      Schema.Struct({
        type: Schema.Literal("function"),
        function: Schema.Struct({
          name: Schema.String,
          description: Schema.optional(Schema.String),
          parameters: JsonObject
        })
      })
    )
  ),
  tool_choice: Schema.optional(
    Schema.Union(
      Schema.Literal("none", "auto", "required"),
      Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) })
    )
  ),
  parallel_tool_calls: Schema.optional(Schema.Boolean),
  response_format: Schema.optional(
    Schema.Union(
      Schema.Struct({ type: Schema.Literal("text") }),
      Schema.Struct({ type: Schema.Literal("json_object") }),
      Schema.Struct({
        type: Schema.Literal("json_schema"),
        json_schema: Schema.Struct({
          name: Schema.String,
          schema: JsonObject,
          strict: Schema.optional(Schema.Boolean),
          description: Schema.optional(Schema.String)
        })
      })
    )
  ),
  // low/medium/high forward the request's effort; none/minimal are what switches reasoning off where the model takes
  // them (domain/exchange/traits.ts `reasoningOff`).
  reasoning_effort: Schema.optional(Schema.Literal("none", "minimal", "low", "medium", "high")),
  // DeepSeek, Z.ai and Moonshot switch reasoning off with this (their OpenAI-compatible extension).
  thinking: Schema.optional(Schema.Struct({ type: Schema.Literal("disabled") })),
  stream: Schema.optional(Schema.Boolean),
  stream_options: Schema.optional(Schema.Struct({ include_usage: Schema.Boolean })),
  user: Schema.optional(Schema.String)
})
export type OpenaiChatRequestBody = typeof OpenaiChatRequestBody.Type

// ---------------------------------------------------------------------------------------------------------
// Replies and chunks as vendors send them: every field optional and nullable, extra fields ignored.

const loose = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))
const Count = loose(Schema.Number)

/**
 * Every vendor's usage fields in one lenient shape; what each means per vendor is the translator's (usageOf in
 * translate/openaiChatUpstream.ts, and docs/decisions.md "Usage per OpenAI-compatible vendor").
 */
export const VendorUsage = Schema.Struct({
  prompt_tokens: Count,
  completion_tokens: Count,
  total_tokens: Count,
  prompt_tokens_details: loose(
    Schema.Struct({
      cached_tokens: Count,
      // Our own extension (an exchange like this one as the upstream).
      cache_creation_tokens: Count,
      // Alibaba's explicit cache: the tokens written, also split by lifetime (only 5m exists there).
      cache_creation_input_tokens: Count,
      cache_creation: loose(Schema.Struct({ ephemeral_5m_input_tokens: Count }))
    })
  ),
  completion_tokens_details: loose(Schema.Struct({ reasoning_tokens: Count })),
  // DeepSeek.
  prompt_cache_hit_tokens: Count,
  prompt_cache_miss_tokens: Count,
  // Moonshot: the cache hit at the top of usage, not under prompt_tokens_details.
  cached_tokens: Count
})
export type VendorUsage = typeof VendorUsage.Type

/** Mistral's reasoning models answer with typed chunks: text, and thinking holding text chunks. */
const VendorContentChunk = Schema.Struct({
  type: Schema.String,
  text: loose(Schema.String),
  thinking: loose(Schema.Array(Schema.Struct({ type: loose(Schema.String), text: loose(Schema.String) })))
})
export const VendorContent = Schema.Union(Schema.String, Schema.Array(VendorContentChunk))
export type VendorContent = typeof VendorContent.Type

export const VendorToolCall = Schema.Struct({
  index: loose(Schema.Number),
  id: loose(Schema.String),
  type: loose(Schema.String),
  function: loose(Schema.Struct({ name: loose(Schema.String), arguments: loose(Schema.String) }))
})
export type VendorToolCall = typeof VendorToolCall.Type

/** A message (whole reply) or a delta (stream chunk): the same fields, all optional. */
export const VendorMessage = Schema.Struct({
  content: loose(VendorContent),
  refusal: loose(Schema.String),
  // DeepSeek, Moonshot, Alibaba ... / OpenRouter-style.
  reasoning_content: loose(Schema.String),
  reasoning: loose(Schema.String),
  tool_calls: loose(Schema.Array(VendorToolCall))
})
export type VendorMessage = typeof VendorMessage.Type

const VendorChoice = {
  index: Count,
  finish_reason: loose(Schema.String),
  // Moonshot reports streamed usage inside the choice.
  usage: loose(VendorUsage)
}

export const VendorChatCompletion = Schema.Struct({
  id: loose(Schema.String),
  choices: Schema.Array(Schema.Struct({ ...VendorChoice, message: VendorMessage })),
  usage: loose(VendorUsage)
})
export type VendorChatCompletion = typeof VendorChatCompletion.Type

export const VendorChatChunk = Schema.Struct({
  id: loose(Schema.String),
  choices: loose(Schema.Array(Schema.Struct({ ...VendorChoice, delta: loose(VendorMessage) }))),
  usage: loose(VendorUsage)
})
export type VendorChatChunk = typeof VendorChatChunk.Type

/** An error object as vendors send it, in a body or as a stream chunk (OpenAI: {error:{message,type,code}}). */
export const VendorError = Schema.Struct({
  error: Schema.Union(
    Schema.String,
    Schema.Struct({
      message: loose(Schema.String),
      type: loose(Schema.String),
      code: loose(Schema.Union(Schema.String, Schema.Number)),
      status: loose(Schema.Number)
    })
  )
})
export type VendorError = typeof VendorError.Type
