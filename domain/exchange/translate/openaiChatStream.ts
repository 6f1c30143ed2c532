/**
 * The chat-completions stream we write (SPEC "Streaming"): canonical events in, SSE text out. Pure apart from the
 * renderer's own state (whether the role chunk went out, the held stop reason).
 *
 * Frame order: a first chunk with `delta: {role:"assistant", content:""}`, then one chunk per delta (reasoning as
 * `delta.reasoning`, text as `delta.content`, tool calls in OpenAI's `delta.tool_calls` shape), then ONE final chunk
 * with `finish_reason`, `usage` and the bill's figures, then `data: [DONE]`. `usage` is null on every other chunk.
 * A failure after the first byte is a `{"error":{...}}` frame and no [DONE]: the openai SDK's stream reader throws an
 * APIError on a chunk carrying `error` (node_modules/openai/core/streaming.js).
 */
import { type ChatEvent, inputSide, type ReplyBill, type ReplyMeta, type StopReason, type StreamFailure, type Usage } from "../canonical.ts"
import type { ChatCompletionChunk, ChatStreamError, ChatUsage } from "../wire/openaiChat.ts"

/**
 * SPEC "Prompt caching": `prompt_tokens` is the whole input side, cache reads and writes included; the details
 * split them out (writes of both lifetimes summed). Unreported counts are 0 here: the wire has no "unknown".
 */
export const renderChatUsage = (usage: Usage): ChatUsage => {
  const prompt = inputSide(usage)
  const completion = usage.output ?? 0
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: {
      cached_tokens: usage.cacheRead ?? 0,
      cache_creation_tokens: (usage.cacheWrite5m ?? 0) + (usage.cacheWrite1h ?? 0)
    },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 }
  }
}

/** The bill's figures on the final reply or chunk (SPEC "Streaming"). */
export const renderBill = (bill: ReplyBill) => ({
  x_credits_used: bill.creditsUsed,
  x_credits_remaining: bill.creditsRemaining,
  x_ratelimit_requests_remaining: bill.requestsRemaining
})

type Delta = ChatCompletionChunk["choices"][number]["delta"]

const frame = (payload: ChatCompletionChunk | ChatStreamError): string => `data: ${JSON.stringify(payload)}\n\n`

export const DONE_FRAME = "data: [DONE]\n\n"

export interface ChatCompletionStream {
  /** The frames an event adds (possibly none: `usage`, `reasoning_signature` and `stop` write nothing). */
  readonly event: (event: ChatEvent) => string
  /** The final chunk (with the held stop reason, the usage and the bill) and [DONE]. */
  readonly finish: (usage: Usage, bill: ReplyBill) => string
  /** The error frame of a stream that broke after it started. */
  readonly interrupted: (failure: StreamFailure) => string
}

export const makeChatCompletionStream = (meta: ReplyMeta): ChatCompletionStream => {
  let started = false
  // Held until `finish`, so the finish reason travels with the usage and the bill in one final chunk.
  let stopReason: StopReason = "stop"

  const chunk = (delta: Delta, finishReason: StopReason | null = null): ChatCompletionChunk => ({
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    usage: null
  })

  /** The role chunk, exactly once and before anything else. */
  const opening = (): string => {
    if (started) return ""
    started = true
    return frame(chunk({ role: "assistant", content: "" }))
  }

  const event = (e: ChatEvent): string => {
    switch (e.type) {
      case "start":
        return opening()
      case "reasoning_delta":
        return e.text === "" ? opening() : opening() + frame(chunk({ reasoning: e.text }))
      case "text_delta":
        return e.text === "" ? opening() : opening() + frame(chunk({ content: e.text }))
      case "tool_call_delta":
        return opening() + frame(chunk({
          tool_calls: [{
            index: e.index,
            // The first delta of a call carries its id and name (canonical rule); OpenAI adds the type there.
            ...(e.id !== undefined ? { id: e.id, type: "function" as const } : {}),
            function: { ...(e.name !== undefined ? { name: e.name } : {}), arguments: e.argumentsDelta }
          }]
        }))
      case "stop":
        stopReason = e.reason
        return ""
      // The chat format has no place for a reasoning signature; usage is written once, by `finish`.
      case "reasoning_signature":
      case "usage":
        return ""
    }
  }

  const finish = (usage: Usage, bill: ReplyBill): string =>
    opening() +
    frame({ ...chunk({}, stopReason), usage: renderChatUsage(usage), ...renderBill(bill) }) +
    DONE_FRAME

  const interrupted = (failure: StreamFailure): string =>
    frame({ error: { message: failure.message, type: "server_error", code: failure.code } })

  return { event, finish, interrupted }
}
