/**
 * The Anthropic Messages API's reply side: the Message body and stream events as we RENDER them on `/v1/messages`
 * (exact shapes, plus the exchange's `x_*` bill fields), and as an Anthropic upstream SENDS them (lenient: extra
 * fields are ignored, enum-like strings stay strings, counts may be null or absent), so a vendor adding a field or a
 * stop reason never breaks a reply. Field names follow @anthropic-ai/sdk resources/messages (Message, ContentBlock,
 * RawMessageStreamEvent, Usage, MessageDeltaUsage, MessageTokensCount).
 */
import { Schema } from "effect"

// ---------------------------------------------------------------------------------------------------------
// Rendered (our /v1/messages replies)

/** Every count present (0 when unreported): SDK clients read them as numbers. */
export const ReplyUsage = Schema.Struct({
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cache_read_input_tokens: Schema.Number,
  /** Both lifetimes summed, as Anthropic reports it. */
  cache_creation_input_tokens: Schema.Number,
  cache_creation: Schema.Struct({ ephemeral_5m_input_tokens: Schema.Number, ephemeral_1h_input_tokens: Schema.Number })
})
export type ReplyUsage = typeof ReplyUsage.Type

export const ReplyStopReason = Schema.Literal("end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal")
export type ReplyStopReason = typeof ReplyStopReason.Type

export const ReplyTextBlock = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
export const ReplyThinkingBlock = Schema.Struct({ type: Schema.Literal("thinking"), thinking: Schema.String, signature: Schema.String })
export const ReplyToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export const ReplyContentBlock = Schema.Union(ReplyThinkingBlock, ReplyTextBlock, ReplyToolUseBlock)
export type ReplyContentBlock = typeof ReplyContentBlock.Type

/** The exchange's bill at the end of a reply (SPEC "Streaming": the same three on both formats). */
const billFields = {
  x_credits_used: Schema.Number,
  x_credits_remaining: Schema.Number,
  x_ratelimit_requests_remaining: Schema.NullOr(Schema.Number)
}

export const MessageReply = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  model: Schema.String,
  content: Schema.Array(ReplyContentBlock),
  stop_reason: ReplyStopReason,
  stop_sequence: Schema.NullOr(Schema.String),
  usage: ReplyUsage,
  ...billFields
})
export type MessageReply = typeof MessageReply.Type

export const MessageStartEvent = Schema.Struct({
  type: Schema.Literal("message_start"),
  message: Schema.Struct({
    id: Schema.String,
    type: Schema.Literal("message"),
    role: Schema.Literal("assistant"),
    model: Schema.String,
    content: Schema.Tuple(),
    stop_reason: Schema.Null,
    stop_sequence: Schema.Null,
    usage: ReplyUsage
  })
})
export type MessageStartEvent = typeof MessageStartEvent.Type

export const ContentBlockStartEvent = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Schema.Number,
  content_block: ReplyContentBlock
})
export type ContentBlockStartEvent = typeof ContentBlockStartEvent.Type

export const ReplyDelta = Schema.Union(
  Schema.Struct({ type: Schema.Literal("thinking_delta"), thinking: Schema.String }),
  Schema.Struct({ type: Schema.Literal("signature_delta"), signature: Schema.String }),
  Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String })
)
export type ReplyDelta = typeof ReplyDelta.Type

export const ContentBlockDeltaEvent = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  index: Schema.Number,
  delta: ReplyDelta
})
export type ContentBlockDeltaEvent = typeof ContentBlockDeltaEvent.Type

export const ContentBlockStopEvent = Schema.Struct({ type: Schema.Literal("content_block_stop"), index: Schema.Number })
export type ContentBlockStopEvent = typeof ContentBlockStopEvent.Type

export const MessageDeltaEvent = Schema.Struct({
  type: Schema.Literal("message_delta"),
  delta: Schema.Struct({ stop_reason: ReplyStopReason, stop_sequence: Schema.NullOr(Schema.String) }),
  usage: ReplyUsage,
  ...billFields
})
export type MessageDeltaEvent = typeof MessageDeltaEvent.Type

export const MessageStopEvent = Schema.Struct({ type: Schema.Literal("message_stop") })
export type MessageStopEvent = typeof MessageStopEvent.Type

/** `error.type` is our error table's type; `code` is ours too (SPEC: clients branch on it). */
export const StreamErrorEvent = Schema.Struct({
  type: Schema.Literal("error"),
  error: Schema.Struct({ type: Schema.String, message: Schema.String, code: Schema.String })
})
export type StreamErrorEvent = typeof StreamErrorEvent.Type

export type ReplyStreamEvent =
  | MessageStartEvent
  | ContentBlockStartEvent
  | ContentBlockDeltaEvent
  | ContentBlockStopEvent
  | MessageDeltaEvent
  | MessageStopEvent
  | StreamErrorEvent

// ---------------------------------------------------------------------------------------------------------
// Upstream (what an Anthropic-format vendor sends; lenient)

const Count = Schema.optional(Schema.NullOr(Schema.Number))

/** `Usage` on a Message / message_start and the cumulative `MessageDeltaUsage` on message_delta. */
export const UpstreamUsage = Schema.Struct({
  input_tokens: Count,
  output_tokens: Count,
  cache_read_input_tokens: Count,
  cache_creation_input_tokens: Count,
  cache_creation: Schema.optional(
    Schema.NullOr(Schema.Struct({ ephemeral_5m_input_tokens: Count, ephemeral_1h_input_tokens: Count }))
  ),
  output_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ thinking_tokens: Count })))
})
export type UpstreamUsage = typeof UpstreamUsage.Type

const KNOWN_BLOCKS = ["text", "thinking", "redacted_thinking", "tool_use"]

export const UpstreamContentBlock = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking"), thinking: Schema.String, signature: Schema.optional(Schema.NullOr(Schema.String)) }),
  Schema.Struct({ type: Schema.Literal("redacted_thinking") }),
  Schema.Struct({ type: Schema.Literal("tool_use"), id: Schema.String, name: Schema.String, input: Schema.optional(Schema.Unknown) }),
  // Server tool uses and their results, container uploads ...: kept out of the canonical reply. A KNOWN type with a
  // broken shape must not slip through here, hence the filter.
  Schema.Struct({ type: Schema.String.pipe(Schema.filter((t) => !KNOWN_BLOCKS.includes(t))) })
)
export type UpstreamContentBlock = typeof UpstreamContentBlock.Type

export const UpstreamMessage = Schema.Struct({
  id: Schema.String,
  type: Schema.optional(Schema.Literal("message")),
  model: Schema.optional(Schema.String),
  content: Schema.Array(UpstreamContentBlock),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
  stop_sequence: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Schema.optional(Schema.NullOr(UpstreamUsage))
})
export type UpstreamMessage = typeof UpstreamMessage.Type

const KNOWN_DELTAS = ["text_delta", "thinking_delta", "signature_delta", "input_json_delta"]

export const UpstreamDelta = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking_delta"), thinking: Schema.String }),
  Schema.Struct({ type: Schema.Literal("signature_delta"), signature: Schema.String }),
  Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String }),
  // citations_delta and whatever comes next: ignored.
  Schema.Struct({ type: Schema.String.pipe(Schema.filter((t) => !KNOWN_DELTAS.includes(t))) })
)
export type UpstreamDelta = typeof UpstreamDelta.Type

export const UpstreamError = Schema.Struct({ type: Schema.String, message: Schema.String })

export const UpstreamStreamEvent = Schema.Union(
  Schema.Struct({ type: Schema.Literal("message_start"), message: UpstreamMessage }),
  Schema.Struct({ type: Schema.Literal("content_block_start"), index: Schema.Number, content_block: UpstreamContentBlock }),
  Schema.Struct({ type: Schema.Literal("content_block_delta"), index: Schema.Number, delta: UpstreamDelta }),
  Schema.Struct({ type: Schema.Literal("content_block_stop"), index: Schema.Number }),
  Schema.Struct({
    type: Schema.Literal("message_delta"),
    delta: Schema.Struct({
      stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
      stop_sequence: Schema.optional(Schema.NullOr(Schema.String))
    }),
    usage: Schema.optional(Schema.NullOr(UpstreamUsage))
  }),
  Schema.Struct({ type: Schema.Literal("message_stop") }),
  Schema.Struct({ type: Schema.Literal("ping") }),
  Schema.Struct({ type: Schema.Literal("error"), error: UpstreamError })
)
export type UpstreamStreamEvent = typeof UpstreamStreamEvent.Type
export const UPSTREAM_EVENT_TYPES: ReadonlyArray<UpstreamStreamEvent["type"]> = [
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "ping",
  "error"
]

/** An error body (`{type:"error", error:{type, message}}`), on a failed status or in a 200 by mistake. */
export const UpstreamErrorBody = Schema.Struct({ type: Schema.Literal("error"), error: UpstreamError })

export const CountTokensReply = Schema.Struct({ input_tokens: Schema.Number.pipe(Schema.int(), Schema.nonNegative()) })
export type CountTokensReply = typeof CountTokensReply.Type
