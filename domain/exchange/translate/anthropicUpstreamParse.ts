/**
 * Anthropic as an upstream, replies: a Message body or a stream of named events -> canonical ChatEvents. Pure (the
 * stream parser keeps per-stream state in its closure).
 *
 * Usage (DESIGN.md section 10): `input_tokens` is already fresh input (cache tokens are beside it); writes come split
 * by lifetime under `cache_creation`, else only as the aggregate `cache_creation_input_tokens`, counted as 5m. Usage
 * arrives on message_start and, cumulative, on message_delta: each is passed on as a report and the consumer merges
 * them field by field, so a field a report lacks stays undefined here. message_delta carries no split: once a split
 * was seen, its aggregate is read as "1h as split, the rest 5m", never as another 5m write on top of the split.
 * `output_tokens_details.thinking_tokens`, which newer API versions report, is the reasoning share of the output.
 */
import { Either, ParseResult, Schema } from "effect"
import type { ChatEvent, StopReason, Usage } from "../canonical.ts"
import { UpstreamProtocolError, UpstreamStreamError } from "../upstreamErrors.ts"
import {
  CountTokensReply,
  UPSTREAM_EVENT_TYPES,
  type UpstreamContentBlock,
  UpstreamErrorBody,
  UpstreamMessage,
  UpstreamStreamEvent,
  type UpstreamUsage
} from "../wire/anthropicMessagesReply.ts"

/** The HTTP status each of Anthropic's error types is sent with (their errors page), for the caller's retry rules. */
const STATUS_OF_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529
}

const errorFields = (error: { readonly type: string; readonly message: string }) => {
  const status = STATUS_OF_ERROR_TYPE[error.type]
  return { message: `${error.type}: ${error.message}`, ...(status === undefined ? {} : { status }) }
}

const protocolError = (what: string, error: ParseResult.ParseError) =>
  new UpstreamProtocolError({ message: `${what}: ${ParseResult.TreeFormatter.formatErrorSync(error)}` })

const isErrorBody = Schema.is(UpstreamErrorBody)

// ---------------------------------------------------------------------------------------------------------
// Usage and stop reasons

/** What a stream saw of the write split, so an aggregate-only report is read against it. */
interface SplitSeen {
  write1h: number | undefined
}

export const usageOfAnthropic = (usage: UpstreamUsage, seen: SplitSeen = { write1h: undefined }): Usage => {
  const split = usage.cache_creation
  let cacheWrite5m: number | undefined
  let cacheWrite1h: number | undefined
  if (split != null) {
    cacheWrite1h = split.ephemeral_1h_input_tokens ?? 0
    // The aggregate is the vendor's total of writes: when both are given, 5m is what the aggregate holds beyond the 1h
    // share, so the buckets always sum to the vendor's whole input (input + writes + reads).
    cacheWrite5m = usage.cache_creation_input_tokens != null
      ? Math.max(0, usage.cache_creation_input_tokens - cacheWrite1h)
      : split.ephemeral_5m_input_tokens ?? 0
    seen.write1h = cacheWrite1h
  } else if (usage.cache_creation_input_tokens != null) {
    cacheWrite5m = Math.max(0, usage.cache_creation_input_tokens - (seen.write1h ?? 0))
  }
  return {
    freshInput: usage.input_tokens ?? undefined,
    cacheRead: usage.cache_read_input_tokens ?? undefined,
    cacheWrite5m,
    cacheWrite1h,
    output: usage.output_tokens ?? undefined,
    reasoning: usage.output_tokens_details?.thinking_tokens ?? undefined
  }
}

const usageEvents = (usage: UpstreamUsage | null | undefined, seen?: SplitSeen): Array<ChatEvent> => {
  if (usage == null) return []
  const mapped = usageOfAnthropic(usage, seen)
  return Object.values(mapped).some((count) => count !== undefined) ? [{ type: "usage", usage: mapped }] : []
}

/**
 * end_turn / stop_sequence / pause_turn (a server-side pause; the turn is over for us) -> stop, max_tokens and
 * model_context_window_exceeded -> length, tool_use -> tool_calls, refusal -> content_filter; an unknown reason
 * ends as stop.
 */
export const stopReasonOfAnthropic = (reason: string): StopReason => {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool_calls"
    case "refusal":
      return "content_filter"
    default:
      return "stop"
  }
}

const stopEvent = (reason: string, stopSequence: string | null | undefined): ChatEvent => {
  const mapped = stopReasonOfAnthropic(reason)
  return { type: "stop", reason: mapped, stopSequence: mapped === "stop" ? stopSequence ?? null : null }
}

// ---------------------------------------------------------------------------------------------------------
// Content blocks

/** A whole block's events; `toolIndex` is its place among the reply's tool calls (not among all blocks). */
const blockEvents = (block: UpstreamContentBlock, toolIndex: number): Array<ChatEvent> => {
  switch (block.type) {
    case "text":
      return "text" in block && block.text !== "" ? [{ type: "text_delta", text: block.text }] : []
    case "thinking": {
      if (!("thinking" in block)) return []
      const events: Array<ChatEvent> = []
      if (block.thinking !== "") events.push({ type: "reasoning_delta", text: block.thinking })
      if (block.signature != null && block.signature !== "") events.push({ type: "reasoning_signature", signature: block.signature })
      return events
    }
    case "tool_use": {
      if (!("id" in block)) return []
      const input = block.input === undefined || isEmptyObject(block.input) ? "" : JSON.stringify(block.input)
      return [{ type: "tool_call_delta", index: toolIndex, id: block.id, name: block.name, argumentsDelta: input }]
    }
    default:
      // redacted_thinking (opaque, nothing to show), server tool blocks: not part of the canonical reply.
      return []
  }
}

const isEmptyObject = (u: unknown) => typeof u === "object" && u !== null && !Array.isArray(u) && Object.keys(u).length === 0

// ---------------------------------------------------------------------------------------------------------
// Whole replies

export const parseAnthropicResponse = (json: unknown): Either.Either<ReadonlyArray<ChatEvent>, UpstreamProtocolError> => {
  if (isErrorBody(json)) return Either.left(new UpstreamProtocolError(errorFields(json.error)))
  return Either.match(Schema.decodeUnknownEither(UpstreamMessage)(json), {
    onLeft: (error) => Either.left(protocolError("Unexpected Anthropic message", error)),
    onRight: (message) => {
      const events: Array<ChatEvent> = [{ type: "start", upstreamId: message.id }]
      let tools = 0
      for (const block of message.content) {
        // A non-streamed tool_use carries its whole input: `{}` is a real (empty) argument object here.
        if (block.type === "tool_use" && "id" in block) {
          events.push({ type: "tool_call_delta", index: tools++, id: block.id, name: block.name, argumentsDelta: JSON.stringify(block.input ?? {}) })
        } else events.push(...blockEvents(block, tools))
      }
      events.push(...usageEvents(message.usage))
      events.push(stopEvent(message.stop_reason ?? "end_turn", message.stop_sequence))
      return Either.right(events)
    }
  })
}

export const parseAnthropicCountTokens = (json: unknown): Either.Either<number, UpstreamProtocolError> => {
  if (isErrorBody(json)) return Either.left(new UpstreamProtocolError(errorFields(json.error)))
  return Either.mapBoth(Schema.decodeUnknownEither(CountTokensReply)(json), {
    onLeft: (error) => protocolError("Unexpected Anthropic count_tokens reply", error),
    onRight: (reply) => reply.input_tokens
  })
}

// ---------------------------------------------------------------------------------------------------------
// Streams

const isKnownEvent = (type: unknown): type is UpstreamStreamEvent["type"] =>
  typeof type === "string" && (UPSTREAM_EVENT_TYPES as ReadonlyArray<string>).includes(type)

/**
 * A parser for one stream: feed it each SSE message (`event:` name, `data:` payload) in order. `ping` and event
 * types Anthropic may add later are skipped; an `error` event is the stream breaking (UpstreamStreamError); a
 * payload that is not JSON, or a known event not in its documented shape, is a protocol error.
 */
export const makeAnthropicStreamParser = (): ((
  event: string | undefined,
  data: string
) => Either.Either<ReadonlyArray<ChatEvent>, UpstreamProtocolError | UpstreamStreamError>) => {
  const seen: SplitSeen = { write1h: undefined }
  /** content block index -> tool call index, for the input_json_deltas that follow a tool_use start. */
  const toolOfBlock = new Map<number, number>()
  let tools = 0
  return (event, data) => {
    if (event === "ping" || (data.trim() === "" && event !== "error")) return Either.right([])
    let json: unknown
    try {
      json = JSON.parse(data)
    } catch {
      return Either.left(
        event === "error"
          ? new UpstreamStreamError({ message: `Anthropic stream error: ${data.slice(0, 200)}` })
          : new UpstreamProtocolError({ message: `Anthropic stream event is not JSON: ${data.slice(0, 200)}` })
      )
    }
    // The payload's own `type` names the event (the SSE `event:` line repeats it; some proxies drop that line).
    const type = typeof json === "object" && json !== null && "type" in json ? json.type : event
    if (!isKnownEvent(type)) return Either.right([])
    const decoded = Schema.decodeUnknownEither(UpstreamStreamEvent)(json)
    if (Either.isLeft(decoded)) return Either.left(protocolError(`Unexpected Anthropic ${type} event`, decoded.left))
    const e = decoded.right
    switch (e.type) {
      case "ping":
      case "content_block_stop":
      case "message_stop":
        return Either.right([])
      case "error":
        return Either.left(new UpstreamStreamError(errorFields(e.error)))
      case "message_start":
        return Either.right([{ type: "start", upstreamId: e.message.id }, ...usageEvents(e.message.usage, seen)])
      case "content_block_start": {
        if (e.content_block.type === "tool_use") toolOfBlock.set(e.index, tools++)
        return Either.right(blockEvents(e.content_block, toolOfBlock.get(e.index) ?? tools))
      }
      case "content_block_delta": {
        const delta = e.delta
        switch (delta.type) {
          case "text_delta":
            return Either.right("text" in delta && delta.text !== "" ? [{ type: "text_delta", text: delta.text }] : [])
          case "thinking_delta":
            return Either.right("thinking" in delta && delta.thinking !== "" ? [{ type: "reasoning_delta", text: delta.thinking }] : [])
          case "signature_delta":
            return Either.right("signature" in delta && delta.signature !== "" ? [{ type: "reasoning_signature", signature: delta.signature }] : [])
          case "input_json_delta": {
            const index = toolOfBlock.get(e.index)
            if (index === undefined) return Either.left(new UpstreamProtocolError({ message: `Anthropic input_json_delta for block ${e.index}, which is not a tool_use` }))
            return Either.right("partial_json" in delta && delta.partial_json !== "" ? [{ type: "tool_call_delta", index, argumentsDelta: delta.partial_json }] : [])
          }
          default:
            return Either.right([])
        }
      }
      case "message_delta": {
        const stop = e.delta.stop_reason == null ? [] : [stopEvent(e.delta.stop_reason, e.delta.stop_sequence)]
        return Either.right([...usageEvents(e.usage, seen), ...stop])
      }
    }
  }
}
