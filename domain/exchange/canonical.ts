/**
 * The one canonical chat model between the two inbound wire formats (OpenAI chat completions, Anthropic messages) and
 * the three upstream ones (OpenAI-compatible chat, Anthropic messages, Gemini generateContent): 2 + 3 translators,
 * never 2 x 3 (DESIGN.md section 10). Pure data; no vendor's field names appear here.
 */
import { USD18_SCALE } from "../money.ts"

/** An explicit prompt-cache breakpoint on a text part or a tool definition. */
export interface CacheMark {
  readonly ttl: "5m" | "1h"
}

export interface TextPart {
  readonly type: "text"
  readonly text: string
  readonly cache?: CacheMark | undefined
}

/** A tool call made by the assistant: `arguments` is the JSON text the model produced. */
export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
  /** A breakpoint on the replayed call (Anthropic takes one on a tool_use block; other vendors drop it). */
  readonly cache?: CacheMark | undefined
}

/**
 * A reasoning block of an earlier assistant turn as its vendor issued it, replayed by the client: Anthropic's
 * `thinking` (text plus the signature that proves it) or `redacted_thinking` (opaque). Only the vendor that signed it
 * takes it back; the others get the text as their own reasoning continuity, where they have one.
 */
export type ReasoningBlock =
  | { readonly type: "thinking"; readonly thinking: string; readonly signature: string }
  | { readonly type: "redacted_thinking"; readonly data: string }

export interface SystemMessage {
  readonly role: "system"
  readonly parts: ReadonlyArray<TextPart>
  /** A per-turn system message's effort from that turn on (Anthropic's per-turn control), as sent. */
  readonly turnEffort?: string | undefined
}

export interface UserMessage {
  readonly role: "user"
  readonly parts: ReadonlyArray<TextPart>
}

export interface AssistantMessage {
  readonly role: "assistant"
  readonly parts: ReadonlyArray<TextPart>
  readonly toolCalls: ReadonlyArray<ToolCall>
  /** Reasoning text of an earlier turn, replayed to vendors that require it (a chat request's `reasoning` field). */
  readonly reasoning?: string | undefined
  /** The turn's signed reasoning blocks as the client replayed them (Messages); they precede the turn's content. */
  readonly reasoningBlocks?: ReadonlyArray<ReasoningBlock> | undefined
}

/** The result of one tool call, answering `toolCallId`. */
export interface ToolMessage {
  readonly role: "tool"
  readonly toolCallId: string
  readonly parts: ReadonlyArray<TextPart>
  readonly isError?: boolean | undefined
  /** A breakpoint on the result block itself (Anthropic takes it there; other vendors drop it). */
  readonly cache?: CacheMark | undefined
}

export type CanonicalMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage

export interface ToolDefinition {
  readonly name: string
  readonly description?: string | undefined
  /** A JSON Schema object. */
  readonly parameters: { readonly [key: string]: unknown }
  readonly cache?: CacheMark | undefined
  /**
   * Anthropic's tool fields beyond the definition (`defer_loading`, `input_examples`, `strict`,
   * `eager_input_streaming`), as the client sent them: forwarded to Anthropic, dropped (and named) elsewhere.
   */
  readonly anthropicFields?: AnthropicToolFields | undefined
}

export interface AnthropicToolFields {
  readonly defer_loading?: boolean
  readonly input_examples?: ReadonlyArray<{ readonly [key: string]: unknown }>
  readonly strict?: boolean
  readonly eager_input_streaming?: boolean
}

export type ToolChoice =
  | { readonly type: "auto" }
  | { readonly type: "none" }
  | { readonly type: "required" }
  | { readonly type: "tool"; readonly name: string }

export type ResponseFormat =
  | { readonly type: "text" }
  | { readonly type: "json_object" }
  | {
    readonly type: "json_schema"
    readonly name: string
    readonly schema: { readonly [key: string]: unknown }
    readonly strict?: boolean | undefined
    readonly description?: string | undefined
  }

export type ReasoningEffort = "low" | "medium" | "high"

/** Reasoning asked for, after the inbound format's controls were reconciled (domain/exchange/reasoning.ts). */
export interface ReasoningRequest {
  readonly effort: ReasoningEffort
  /** The thinking budget in tokens (explicit, or the effort's share of the output limit; floor 1024). */
  readonly budgetTokens: number
  /** Reason but withhold the reasoning text from the reply (still generated and billed). */
  readonly exclude: boolean
  /**
   * Anthropic's adaptive thinking: the model decides whether to think, so a model that cannot reason serves the request
   * without it (named dropped) instead of refusing it.
   */
  readonly adaptive?: boolean | undefined
}

/** A chat request as every upstream adapter receives it. Absent optional fields are not sent upstream. */
export interface ChatRequest {
  /** In order; system messages first as the inbound format gave them (Anthropic `system` becomes one). */
  readonly messages: ReadonlyArray<CanonicalMessage>
  /** The output limit asked for (`max_completion_tokens` / `max_tokens`); undefined: the vendor's default. */
  readonly maxOutputTokens?: number | undefined
  readonly temperature?: number | undefined
  readonly topP?: number | undefined
  readonly topK?: number | undefined
  readonly stop: ReadonlyArray<string>
  readonly frequencyPenalty?: number | undefined
  readonly presencePenalty?: number | undefined
  readonly seed?: number | undefined
  readonly logitBias?: { readonly [token: string]: number } | undefined
  readonly logprobs?: boolean | undefined
  readonly topLogprobs?: number | undefined
  readonly tools: ReadonlyArray<ToolDefinition>
  /** Absent when `tools` is empty (dropped by policy). */
  readonly toolChoice?: ToolChoice | undefined
  readonly parallelToolCalls?: boolean | undefined
  readonly responseFormat?: ResponseFormat | undefined
  /** Absent: no reasoning asked for (the vendor's default). `null`: reasoning explicitly switched off. */
  readonly reasoning?: ReasoningRequest | null | undefined
  /** The HMAC fingerprint of the caller's end user (`user` / `metadata.user_id`); absent when none or no key. */
  readonly userFingerprint?: string | undefined
  /**
   * The client's format may have withheld reasoning it was served (a Responses client shown no summary, a sealed item
   * that did not open): a vendor that needs a tool-calling turn's reasoning back then gets an empty one.
   */
  readonly reasoningWithheld?: boolean | undefined
  /** Fields of Anthropic's own clients that only Anthropic takes as they are (Messages requests only). */
  readonly anthropic?: AnthropicPassthrough | undefined
}

/**
 * What an Anthropic client sent that only Anthropic takes as it is (DESIGN.md section 10, "Agents' dialects"): passed
 * through untouched when an Anthropic model serves the request, otherwise translated where the canonical request
 * already carries its meaning (adaptive thinking's effort, `display`) and dropped, by name, where nothing does.
 */
export interface AnthropicPassthrough {
  /** The `anthropic-beta` header's values, in order. */
  readonly betas: ReadonlyArray<string>
  /** `context_management` (server-side context editing), as sent. */
  readonly contextManagement?: { readonly [key: string]: unknown } | undefined
  /** The top-level `cache_control` (automatic breakpoint placement), as sent. */
  readonly cacheControl?: { readonly [key: string]: unknown } | undefined
  /** `output_config.effort` as sent (Anthropic has levels beyond the canonical three, such as `max`). */
  readonly effort?: string | undefined
  /** `thinking.display` as sent. */
  readonly thinkingDisplay?: "summarized" | "omitted" | undefined
  /** System turns inside `messages` stay where they are (Anthropic's per-turn system messages) instead of hoisted. */
  readonly inlineSystem: boolean
}

/** How the request asks to be routed (the exchange's extensions and the `model` field). */
export interface RouteRequest {
  /** As written by the client; undefined when omitted (= `auto`). */
  readonly model?: string | undefined
  /** The ordered fallback list `models[]` (1-8), as written. */
  readonly models?: ReadonlyArray<string> | undefined
  readonly routingBias?: "cheaper" | "balanced" | "better" | undefined
  readonly conversationId?: string | undefined
}

/**
 * Token counts in disjoint buckets (DESIGN.md section 10). `output` includes reasoning; `reasoning` is the part of
 * `output` that was reasoning. A count the vendor did not report is undefined, never 0.
 */
export interface Usage {
  readonly freshInput?: number | undefined
  readonly cacheRead?: number | undefined
  readonly cacheWrite5m?: number | undefined
  readonly cacheWrite1h?: number | undefined
  readonly output?: number | undefined
  readonly reasoning?: number | undefined
}

/** Merges a later usage report into an earlier one field by field: a reported field replaces, an absent one keeps. */
export const mergeUsage = (earlier: Usage, later: Usage): Usage => ({
  freshInput: later.freshInput ?? earlier.freshInput,
  cacheRead: later.cacheRead ?? earlier.cacheRead,
  cacheWrite5m: later.cacheWrite5m ?? earlier.cacheWrite5m,
  cacheWrite1h: later.cacheWrite1h ?? earlier.cacheWrite1h,
  output: later.output ?? earlier.output,
  reasoning: later.reasoning ?? earlier.reasoning
})

/** The whole input side: fresh input plus cache reads and writes (what selects a context tier). */
export const inputSide = (usage: Usage): number =>
  (usage.freshInput ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite5m ?? 0) + (usage.cacheWrite1h ?? 0)

export type StopReason = "stop" | "length" | "tool_calls" | "content_filter"

/**
 * What an upstream adapter yields, streaming or not (a non-streaming answer is the same events at once).
 * - `start` first; `reasoning_delta` / `reasoning_signature` before the text they precede;
 * - `tool_call_delta` by the call's index in this reply: the first delta of an index carries `id` and `name`;
 * - `usage` any number of times: each is a report so far, merged with `mergeUsage` (later fields win);
 * - `stop` once, last but for a trailing `usage`.
 */
export type ChatEvent =
  | { readonly type: "start"; readonly upstreamId?: string | undefined }
  | { readonly type: "reasoning_delta"; readonly text: string }
  | { readonly type: "reasoning_signature"; readonly signature: string }
  | { readonly type: "text_delta"; readonly text: string }
  | {
    readonly type: "tool_call_delta"
    readonly index: number
    readonly id?: string | undefined
    readonly name?: string | undefined
    readonly argumentsDelta: string
  }
  | { readonly type: "usage"; readonly usage: Usage }
  | { readonly type: "stop"; readonly reason: StopReason; readonly stopSequence?: string | null | undefined }

/** A whole reply, folded from its events (for non-streaming answers). */
export interface ChatResult {
  readonly text: string
  readonly reasoning: string
  /** The vendor's reasoning signature (Anthropic), else null. */
  readonly reasoningSignature: string | null
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly usage: Usage
  readonly stopReason: StopReason
  readonly stopSequence: string | null
}

/** Folds a reply's events; a reply without `stop` ends as "stop". */
export const foldEvents = (events: Iterable<ChatEvent>): ChatResult => {
  let text = ""
  let reasoning = ""
  let signature: string | null = null
  let usage: Usage = {}
  let stopReason: StopReason = "stop"
  let stopSequence: string | null = null
  const calls: Array<{ id: string; name: string; arguments: string }> = []
  for (const event of events) {
    switch (event.type) {
      case "text_delta":
        text += event.text
        break
      case "reasoning_delta":
        reasoning += event.text
        break
      case "reasoning_signature":
        signature = (signature ?? "") + event.signature
        break
      case "tool_call_delta": {
        const call = (calls[event.index] ??= { id: "", name: "", arguments: "" })
        if (event.id !== undefined) call.id = event.id
        if (event.name !== undefined) call.name = event.name
        call.arguments += event.argumentsDelta
        break
      }
      case "usage":
        usage = mergeUsage(usage, event.usage)
        break
      case "stop":
        stopReason = event.reason
        stopSequence = event.stopSequence ?? null
        break
      case "start":
        break
    }
  }
  return { text, reasoning, reasoningSignature: signature, toolCalls: calls.filter((c) => c !== undefined), usage, stopReason, stopSequence }
}

/** What a reply's renderer needs besides the events: our ids and the model that answered. */
export interface ReplyMeta {
  /** Our request id (`X-Request-Id`), used as the reply's id. */
  readonly id: string
  /** `<vendor>/<model>` that answered. */
  readonly model: string
  /** Epoch seconds. */
  readonly created: number
}

/** What a settled answer hands its inbound format: the charge, the balance after it, the key's requests left. */
export interface SettledFigures {
  readonly chargeWei: bigint
  readonly balanceWei: bigint
  /** Requests left in the key's tightest request-rate window; null when no limit applies. */
  readonly requestsRemaining: number | null
}

/** wei as a decimal number of credits (the wire's `x_credits_*`, `creditsCost`; the exact figures are in wei). */
export const creditsOf = (wei: bigint): number => Number(wei) / Number(USD18_SCALE)

/** The wire-only figures of a settled answer, made by the inbound format that renders them. */
export const replyBillOf = (settled: SettledFigures): ReplyBill => ({
  creditsUsed: creditsOf(settled.chargeWei),
  creditsRemaining: creditsOf(settled.balanceWei),
  requestsRemaining: settled.requestsRemaining
})

/** The bill's figures a reply carries at its end (`x_credits_used` ...), after settlement. */
export interface ReplyBill {
  /** Credits debited (wei / 10^18) as a decimal number. */
  readonly creditsUsed: number
  /** The balance after settlement, in credits. */
  readonly creditsRemaining: number
  /** Requests left in the key's tightest request-rate window; null when no limit applies. */
  readonly requestsRemaining: number | null
}

/** A failure reported to the client inside a stream that already started (SPEC: stream_interrupted). */
export interface StreamFailure {
  readonly code: "stream_interrupted"
  readonly message: string
}
