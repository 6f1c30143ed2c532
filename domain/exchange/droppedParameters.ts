/**
 * What a request asked for that the serving upstream does not get (SPEC "Parameter policy": every parameter takes
 * effect, is refused, or is dropped), named for `X-Dropped-Parameters` (DESIGN.md section 10, "Agents' dialects").
 * Pure: the canonical request and the upstream that serves it decide it, so a fallback to another vendor names what
 * that vendor dropped.
 *
 * Names are the client's own field paths, with `[]` for "in any entry": `context_management`,
 * `tools[].defer_loading`, `messages[].thinking`; a header is named as the header (`anthropic-beta`).
 */
import type { ChatRequest } from "./canonical.ts"
import { canReason, type RoutableModel } from "./routing.ts"
import type { InboundFormatName } from "./traits.ts"
import { replaysReasoning } from "./translate/openaiChatUpstream.ts"

/** SPEC "Parameter policy": dropped on Anthropic-served models. */
const ANTHROPIC_DROPS = [
  ["frequency_penalty", (chat: ChatRequest) => chat.frequencyPenalty],
  ["presence_penalty", (chat: ChatRequest) => chat.presencePenalty],
  ["seed", (chat: ChatRequest) => chat.seed],
  ["logit_bias", (chat: ChatRequest) => chat.logitBias],
  ["logprobs", (chat: ChatRequest) => chat.logprobs],
  ["top_logprobs", (chat: ChatRequest) => chat.topLogprobs]
] as const

const assistantTurns = (chat: ChatRequest) => chat.messages.flatMap((m) => (m.role === "assistant" ? [m] : []))

/** On an Anthropic upstream: the policy's drops, and replayed reasoning Anthropic did not sign. */
const droppedByAnthropic = (chat: ChatRequest): Array<string> => {
  const dropped: Array<string> = ANTHROPIC_DROPS.filter(([, of]) => of(chat) !== undefined).map(([name]) => name)
  const turns = assistantTurns(chat)
  if (turns.some((m) => (m.reasoningBlocks ?? []).some((b) => b.type === "thinking" && b.signature === ""))) dropped.push("messages[].thinking")
  if (turns.some((m) => m.reasoning !== undefined && m.reasoningBlocks === undefined)) dropped.push("messages[].reasoning")
  return dropped
}

/** On any other upstream: what only Anthropic takes, and what has no translation there. */
const droppedByOthers = (chat: ChatRequest, vendor: string): Array<string> => {
  const dropped: Array<string> = []
  const anthropic = chat.anthropic
  if (anthropic !== undefined) {
    if (anthropic.betas.length > 0) dropped.push("anthropic-beta")
    if (anthropic.contextManagement !== undefined) dropped.push("context_management")
    if (anthropic.cacheControl !== undefined) dropped.push("cache_control")
    // With reasoning on, the effort is the request's reasoning effort; alone it tunes only Anthropic's answer.
    if (anthropic.effort !== undefined && chat.reasoning == null) dropped.push("output_config.effort")
  }
  if (chat.messages.some((m) => m.role === "system" && m.turnEffort !== undefined)) dropped.push("messages[].output_config")
  const toolFields = new Set(chat.tools.flatMap((tool) => Object.keys(tool.anthropicFields ?? {})))
  for (const field of [...toolFields].sort()) dropped.push(`tools[].${field}`)
  const blocks = assistantTurns(chat).flatMap((m) => m.reasoningBlocks ?? [])
  if (blocks.some((b) => b.type === "thinking") && !replaysReasoning(vendor)) dropped.push("messages[].thinking")
  if (blocks.some((b) => b.type === "redacted_thinking")) dropped.push("messages[].redacted_thinking")
  return dropped
}

/** A Responses client replays reasoning as `reasoning` items of its `input`, not as a turn's field. */
const RESPONSES_NAMES: Readonly<Record<string, string>> = {
  "messages[].reasoning": "input[].reasoning",
  "messages[].thinking": "input[].reasoning"
}

/**
 * What the serving model did not get of the request (`chat` as the exchange took it, before `requestFor`), named by
 * the client's format.
 */
export const droppedParameters = (chat: ChatRequest, model: RoutableModel, format: InboundFormatName = "chat"): ReadonlyArray<string> => {
  // Adaptive thinking leaves the choice to think to the model: one that cannot reason answers without it.
  const thinking = chat.reasoning?.adaptive === true && !canReason(model) ? ["thinking"] : []
  const dropped = [...thinking, ...(model.provider.format === "anthropic-messages" ? droppedByAnthropic(chat) : droppedByOthers(chat, model.vendor))]
  return format !== "responses" ? dropped : [...new Set(dropped.map((name) => RESPONSES_NAMES[name] ?? name))]
}
