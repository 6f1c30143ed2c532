/**
 * Our `/v1/messages` replies, non-streaming: a folded ChatResult -> the Anthropic Message body plus the exchange's
 * bill fields. Pure. The pieces shared with the stream renderer (stop reason, usage) live here.
 */
import type { ChatResult, ReplyBill, ReplyMeta, StopReason, Usage } from "../canonical.ts"
import type { MessageReply, ReplyContentBlock, ReplyStopReason, ReplyUsage } from "../wire/anthropicMessagesReply.ts"

/** SPEC "Stop reasons map": stop -> end_turn (stop_sequence when one matched), length -> max_tokens, ... */
export const stopReasonOf = (reason: StopReason, stopSequence: string | null | undefined): ReplyStopReason => {
  switch (reason) {
    case "stop":
      return stopSequence == null ? "end_turn" : "stop_sequence"
    case "length":
      return "max_tokens"
    case "tool_calls":
      return "tool_use"
    case "content_filter":
      return "refusal"
  }
}

/**
 * The disjoint buckets in Anthropic's shape: `input_tokens` is fresh input only (cache reads and writes are beside
 * it, never inside), writes are summed in `cache_creation_input_tokens` and split by lifetime under
 * `cache_creation`. An unreported count is 0 here: SDK clients read these as numbers.
 */
export const renderUsage = (usage: Usage): ReplyUsage => {
  const write5m = usage.cacheWrite5m ?? 0
  const write1h = usage.cacheWrite1h ?? 0
  return {
    input_tokens: usage.freshInput ?? 0,
    output_tokens: usage.output ?? 0,
    cache_read_input_tokens: usage.cacheRead ?? 0,
    cache_creation_input_tokens: write5m + write1h,
    cache_creation: { ephemeral_5m_input_tokens: write5m, ephemeral_1h_input_tokens: write1h }
  }
}

/** A tool call's JSON text as the object Anthropic's `input` is; text that is not a JSON object becomes `{}`. */
export const inputOf = (args: string): { readonly [key: string]: unknown } => {
  try {
    const parsed: unknown = JSON.parse(args)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as { [key: string]: unknown }) : {}
  } catch {
    return {}
  }
}

export const billFieldsOf = (bill: ReplyBill) => ({
  x_credits_used: bill.creditsUsed,
  x_credits_remaining: bill.creditsRemaining,
  x_ratelimit_requests_remaining: bill.requestsRemaining
})

/**
 * SPEC "Reasoning controls": the thinking block's signature is the vendor's when an Anthropic model served the request,
 * else empty. `meta.model` is the catalog key of the model that answered; an Anthropic-format upstream serving
 * another vendor's model (or a Gemini thought signature) never passes its signature on.
 */
export const passesSignature = (meta: ReplyMeta): boolean => meta.model.toLowerCase().startsWith("anthropic/")

/**
 * Content in Anthropic's order: the thinking block first (the vendor's signature when an Anthropic model answered,
 * else ""), then the text, then the tool uses. A reply with nothing at all still has one (empty) text block, as
 * Anthropic's own replies do.
 *
 * `model` is the id the request named (`modelAsAsked`), as Anthropic answers the id it was asked for: Claude Code
 * strips the signed thinking of every earlier reply whose `model` differs from the one it asks for now, and then
 * Anthropic refuses its tool loop. The catalog key that answered is in `X-Model-Used`.
 */
export const renderMessage = (result: ChatResult, meta: ReplyMeta, bill: ReplyBill, modelAsAsked: string = meta.model): MessageReply => {
  const content: Array<ReplyContentBlock> = []
  const signature = passesSignature(meta) ? result.reasoningSignature ?? "" : ""
  // A signature with its text withheld still gets its block (empty), for the client to replay.
  if (result.reasoning !== "" || signature !== "") content.push({ type: "thinking", thinking: result.reasoning, signature })
  if (result.text !== "" || (content.length === 0 && result.toolCalls.length === 0)) content.push({ type: "text", text: result.text })
  for (const call of result.toolCalls) content.push({ type: "tool_use", id: call.id, name: call.name, input: inputOf(call.arguments) })
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: modelAsAsked,
    content,
    stop_reason: stopReasonOf(result.stopReason, result.stopSequence),
    // Only a `stop` ends on a stop sequence; anything else reported beside another reason is noise.
    stop_sequence: result.stopReason === "stop" ? result.stopSequence : null,
    usage: renderUsage(result.usage),
    ...billFieldsOf(bill)
  }
}
