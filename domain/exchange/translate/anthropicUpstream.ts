/**
 * Anthropic as an upstream, requests: the canonical ChatRequest -> a `/v1/messages` (or `/v1/messages/count_tokens`)
 * body. Pure. Replies are parsed by anthropicUpstreamParse.ts, re-exported here.
 *
 * - Cache markers are forwarded natively (SPEC "Prompt caching"): ttl 1h as `{type:"ephemeral", ttl:"1h"}`, 5m as
 *   the default `{type:"ephemeral"}` (the shape every API version takes).
 * - System messages are hoisted into `system` blocks, wherever they stood (Anthropic has no system turn).
 * - A run of tool messages becomes ONE user turn of tool_result blocks (Anthropic wants every result of a turn's
 *   calls in the next user turn); a user message right after the run joins that turn, after the results.
 * - Empty text parts are left out: Anthropic refuses empty text blocks.
 * - An assistant message's replayed reasoning blocks (a Messages client's `thinking` / `redacted_thinking`) lead
 *   its content as they were sent; a thinking block without a signature (another vendor's reasoning, which SPEC
 *   renders unsigned) is left out, since Anthropic takes back only what it signed. Bare reasoning text (a chat
 *   request's `reasoning`) is not sent either, for the same reason.
 * - What an Anthropic client sent for Anthropic (`chat.anthropic`: the betas, context_management, the top-level
 *   cache_control, output_config.effort as sent, thinking.display, per-turn system messages in place, the tools'
 *   own fields, breakpoints on tool_use / tool_result blocks) is forwarded untouched (DESIGN.md section 10,
 *   "Agents' dialects"). Per-turn system messages stay in place only for such a client; otherwise every system
 *   message is hoisted.
 * - Reasoning, by the model's traits (domain/exchange/traits.ts, `thinkingStyle`): `budget` (the default) sends
 *   `{type:"enabled", budget_tokens}`; `adaptive` (newer Claude models refuse budget_tokens) sends
 *   `{type:"adaptive", display}` with `output_config.effort` = the request's effort (an explicit budget was already
 *   mapped to its closest effort bucket). Switched off: `{type:"disabled"}`, or nothing for a model whose traits
 *   say `omit` (it does not think unless asked).
 * - `responseFormat` json_schema is structured output, `output_config.format`; json_object has no Anthropic
 *   equivalent and is refused earlier (traits.ts parameterRefusal), as is json_schema on a model without it.
 * - Dropped by policy (SPEC "Parameter policy"): frequency/presence penalty, seed, logit_bias, logprobs,
 *   top_logprobs. `reasoning.exclude` is not sent on budget thinking: the reply is withheld on our side (adaptive
 *   thinking asks for the thinking text to be omitted then).
 */
import type { CacheMark, CanonicalMessage, ChatRequest, ReasoningBlock, TextPart, ToolCall } from "../canonical.ts"
import type { AnthropicTraitOptions } from "../traits.ts"
import type {
  CacheControlOut,
  CountTokensRequestOut,
  MessageOut,
  MessagesRequestOut,
  OutputConfigOut,
  TextBlockOut,
  ThinkingOut,
  ToolChoiceOut,
  ToolOut,
  ToolResultBlockOut
} from "../wire/anthropicMessages.ts"
import { inputOf } from "./anthropicRender.ts"

export { makeAnthropicStreamParser, parseAnthropicCountTokens, parseAnthropicResponse, usageOfAnthropic } from "./anthropicUpstreamParse.ts"

export interface AnthropicTarget extends AnthropicTraitOptions {
  readonly upstreamModel: string
  readonly stream: boolean
  /** `max_tokens` when the client set none: Anthropic requires the field. */
  readonly defaultMaxTokens: number
}

const cacheControlOf = (cache: CacheMark | undefined): CacheControlOut | undefined =>
  cache === undefined ? undefined : cache.ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" }

const textBlocks = (parts: ReadonlyArray<TextPart>): Array<TextBlockOut> =>
  parts
    .filter((part) => part.text !== "")
    .map((part) => {
      const cache = cacheControlOf(part.cache)
      return cache === undefined ? { type: "text", text: part.text } : { type: "text", text: part.text, cache_control: cache }
    })

const withCacheControl = <T extends object>(block: T, cache: CacheMark | undefined): T => {
  const control = cacheControlOf(cache)
  return control === undefined ? block : { ...block, cache_control: control }
}

const toolUse = (call: ToolCall) =>
  withCacheControl({ type: "tool_use" as const, id: call.id, name: call.name, input: inputOf(call.arguments) }, call.cache)

/** The blocks Anthropic signed: a thinking block with no signature is another vendor's and is left out. */
const signedBlocks = (blocks: ReadonlyArray<ReasoningBlock> | undefined): ReadonlyArray<ReasoningBlock> =>
  (blocks ?? []).filter((block) => block.type === "redacted_thinking" || block.signature !== "")

/** System messages after the first other message, for a client that sends per-turn system messages. */
const isInlineSystem = (messages: ReadonlyArray<CanonicalMessage>, inline: boolean) => {
  const firstTurn = messages.findIndex((message) => message.role !== "system")
  return (message: CanonicalMessage, index: number) => inline && message.role === "system" && firstTurn >= 0 && index > firstTurn
}

const messagesOf = (messages: ReadonlyArray<CanonicalMessage>, inlineSystem: boolean): Array<MessageOut> => {
  const out: Array<MessageOut> = []
  let results: Array<ToolResultBlockOut> = []
  const flushResults = () => {
    if (results.length > 0) out.push({ role: "user", content: results })
    results = []
  }
  const inline = isInlineSystem(messages, inlineSystem)
  for (const [index, message] of messages.entries()) {
    switch (message.role) {
      case "system":
        if (inline(message, index)) {
          flushResults()
          const effort = message.turnEffort !== undefined && EFFORTS.includes(message.turnEffort) ? (message.turnEffort as Effort) : undefined
          out.push({ role: "system", content: textBlocks(message.parts), ...(effort === undefined ? {} : { output_config: { effort } }) })
        }
        break
      case "tool": {
        const content = textBlocks(message.parts)
        results.push(withCacheControl({
          type: "tool_result" as const,
          tool_use_id: message.toolCallId,
          ...(content.length === 0 ? {} : { content }),
          ...(message.isError === undefined ? {} : { is_error: message.isError })
        }, message.cache))
        break
      }
      case "user":
        out.push({ role: "user", content: [...results, ...textBlocks(message.parts)] })
        results = []
        break
      case "assistant":
        flushResults()
        out.push({
          role: "assistant",
          content: [...signedBlocks(message.reasoningBlocks), ...textBlocks(message.parts), ...message.toolCalls.map(toolUse)]
        })
        break
    }
  }
  flushResults()
  return out
}

const systemOf = (messages: ReadonlyArray<CanonicalMessage>, inlineSystem: boolean): Array<TextBlockOut> | undefined => {
  const inline = isInlineSystem(messages, inlineSystem)
  const blocks = messages.flatMap((message, index) => (message.role === "system" && !inline(message, index) ? textBlocks(message.parts) : []))
  return blocks.length === 0 ? undefined : blocks
}

const toolsOf = (chat: ChatRequest): Array<ToolOut> | undefined =>
  chat.tools.length === 0
    ? undefined
    : chat.tools.map((tool) => {
      const cache = cacheControlOf(tool.cache)
      return {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        // Anthropic requires an object schema's `type`; a client's bare `{}` ("no parameters") gets it.
        input_schema: "type" in tool.parameters ? tool.parameters : { type: "object", ...tool.parameters },
        ...(cache === undefined ? {} : { cache_control: cache }),
        ...tool.anthropicFields
      }
    })

/** `parallelToolCalls: false` rides on the choice (`disable_parallel_tool_use`); `none` takes no such flag. */
const toolChoiceOf = (chat: ChatRequest): ToolChoiceOut | undefined => {
  if (chat.tools.length === 0) return undefined
  const disable = chat.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {}
  const choice = chat.toolChoice
  switch (choice?.type) {
    case undefined:
      return chat.parallelToolCalls === false ? { type: "auto", ...disable } : undefined
    case "none":
      return { type: "none" }
    case "auto":
      return { type: "auto", ...disable }
    case "required":
      return { type: "any", ...disable }
    case "tool":
      return { type: "tool", name: choice.name, ...disable }
  }
}

const thinkingOf = (chat: ChatRequest, options: AnthropicTraitOptions): ThinkingOut | undefined => {
  const reasoning = chat.reasoning
  if (reasoning === undefined) return undefined
  if (reasoning === null) return options.reasoningOff === "omit" ? undefined : { type: "disabled" }
  const display = chat.anthropic?.thinkingDisplay
  return options.thinkingStyle === "adaptive"
    ? { type: "adaptive", display: display ?? (reasoning.exclude ? "omitted" : "summarized") }
    : { type: "enabled", budget_tokens: reasoning.budgetTokens, ...(display === undefined ? {} : { display }) }
}

type Effort = NonNullable<OutputConfigOut["effort"]>
const EFFORTS: ReadonlyArray<string> = ["low", "medium", "high", "xhigh", "max"]
/** The effort an Anthropic client asked for, as it asked (levels beyond the canonical three included). */
const clientEffort = (chat: ChatRequest): Effort | undefined => {
  const effort = chat.anthropic?.effort
  return effort !== undefined && EFFORTS.includes(effort) ? (effort as Effort) : undefined
}

/** Adaptive thinking's effort and structured output's schema, when either applies. */
const outputConfigOf = (chat: ChatRequest, options: AnthropicTraitOptions): OutputConfigOut | undefined => {
  const effort = clientEffort(chat) ?? (chat.reasoning != null && options.thinkingStyle === "adaptive" ? chat.reasoning.effort : undefined)
  const format = chat.responseFormat?.type === "json_schema" ? { type: "json_schema" as const, schema: chat.responseFormat.schema } : undefined
  if (effort === undefined && format === undefined) return undefined
  return { ...(effort === undefined ? {} : { effort }), ...(format === undefined ? {} : { format }) }
}

const promptOf = (chat: ChatRequest, upstreamModel: string, options: AnthropicTraitOptions): CountTokensRequestOut => {
  const inlineSystem = chat.anthropic?.inlineSystem ?? false
  const system = systemOf(chat.messages, inlineSystem)
  const tools = toolsOf(chat)
  const toolChoice = toolChoiceOf(chat)
  const thinking = thinkingOf(chat, options)
  const contextManagement = chat.anthropic?.contextManagement
  return {
    model: upstreamModel,
    messages: messagesOf(chat.messages, inlineSystem),
    ...(system === undefined ? {} : { system }),
    ...(tools === undefined ? {} : { tools }),
    ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }),
    ...(thinking === undefined ? {} : { thinking }),
    ...(contextManagement === undefined ? {} : { context_management: contextManagement })
  }
}

export const buildAnthropicRequest = (
  chat: ChatRequest,
  target: AnthropicTarget
): { readonly path: "/v1/messages"; readonly body: MessagesRequestOut } => {
  const outputConfig = outputConfigOf(chat, target)
  return {
    path: "/v1/messages",
    body: {
      ...promptOf(chat, target.upstreamModel, target),
      max_tokens: chat.maxOutputTokens ?? target.defaultMaxTokens,
      ...(target.stream ? { stream: true } : {}),
      ...(chat.temperature === undefined ? {} : { temperature: chat.temperature }),
      ...(chat.topP === undefined ? {} : { top_p: chat.topP }),
      ...(chat.topK === undefined ? {} : { top_k: chat.topK }),
      ...(chat.stop.length === 0 ? {} : { stop_sequences: chat.stop }),
      ...(chat.userFingerprint === undefined ? {} : { metadata: { user_id: chat.userFingerprint } }),
      ...(outputConfig === undefined ? {} : { output_config: outputConfig }),
      ...automaticCache(chat)
    }
  }
}

/** The client's top-level breakpoint (Anthropic places it on the last cacheable block itself). */
const automaticCache = (chat: ChatRequest): { cache_control?: CacheControlOut } => {
  const control = chat.anthropic?.cacheControl
  if (control === undefined) return {}
  return { cache_control: control["ttl"] === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" } }
}

/** The `anthropic-beta` header of a request whose client named betas (forwarded as they were sent). */
export const anthropicBetaHeader = (chat: ChatRequest): Record<string, string> => {
  const betas = chat.anthropic?.betas ?? []
  return betas.length === 0 ? {} : { "anthropic-beta": betas.join(",") }
}

/** The prompt side only: count_tokens takes no output limit, sampling, stop sequences, metadata or output config. */
export const buildAnthropicCountTokensRequest = (
  chat: ChatRequest,
  target: { readonly upstreamModel: string } & AnthropicTraitOptions
): { readonly path: "/v1/messages/count_tokens"; readonly body: CountTokensRequestOut } => ({
  path: "/v1/messages/count_tokens",
  body: promptOf(chat, target.upstreamModel, target)
})
