/**
 * Our `/v1/messages` endpoint, inbound: the Anthropic messages body -> the canonical ChatRequest and RouteRequest.
 * Pure. Replies are rendered by anthropicRender.ts (whole Message) and anthropicStream.ts (SSE), re-exported here.
 *
 * Two kinds of 422 (SPEC "Errors"): a body the schema (wire/anthropicMessages.ts) does not take is `validation_error`
 * with every offending field in `issues`; a body that parsed but asks for something we refuse by policy is
 * `invalid_request_error` naming the one field in `param`.
 *
 * Choices, field by field (SPEC "Parameter policy": every parameter takes effect, is refused, or is dropped):
 * - Taken: model (omitted = auto), messages, max_tokens (required positive integer, as Anthropic requires it),
 *   system, stream, tools, tool_choice, thinking, stop_sequences, metadata.user_id, temperature (0-1), top_p (0-1),
 *   top_k (positive integer), and the extensions models (1-8), routing_bias.
 * - conversation_id: TAKEN although SPEC's messages list does not name it. "Model selection" rule 4 pins
 *   conversations whatever the format, and the chat format has it; refusing it would make a pinned conversation
 *   impossible on this endpoint. A non-empty string.
 * - thinking `{type:"adaptive"}`: taken as reasoning at MEDIUM effort (budget = 50% of max_tokens, floor 1024, below
 *   max_tokens), the closest fixed request to "the model decides". `display:"omitted"` = reason but withhold the
 *   text (`exclude`); `display:"summarized"` / null is the default. `{type:"between_tools"}` and others: schema 422.
 * - tool_choice (and its disable_parallel_tool_use) without a non-empty `tools`: dropped (SPEC). A `tool` choice
 *   naming no offered tool: refused (`tool_choice.name`), as the vendor would.
 * - Dropped (accepted, no effect): service_tier, speed (capacity class, never the answer), diagnostics (asks for
 *   cache-miss explanations in the reply; the reply simply has none). A text block's `citations` and a tool_use
 *   block's `caller` (what a client replays from an earlier reply) are dropped too.
 * - Refused by name (invalid_request_error), each changes the answer or where it is made and we cannot honour it:
 *   container, mcp_servers, context_management (server-side execution and context editing), output_config and
 *   output_format (structured output / effort levels: no canonical way through the messages format), cache_control
 *   at the top level (automatic breakpoint placement: put `cache_control` on a block instead), inference_geo (a
 *   residency requirement dropped silently would be a broken promise), betas (beta features we do not run).
 *   `null` for any of them means "none" and is accepted.
 * - Any other top-level field, and any extra field on a message object or a content block: schema 422 naming it.
 * - Content blocks: text, tool_use (assistant turns; `input` a JSON object), tool_result (user turns, content a
 *   string or <= 50 text blocks, or absent = an empty result, as the SDK types allow). Any other type is a schema
 *   422 at `messages.N.content.M.type`; thinking / redacted_thinking say to strip them before replay (their
 *   signatures bind them to one vendor's model; we may route elsewhere).
 * - cache_control `{type:"ephemeral", ttl?:"5m"|"1h"}` on message text blocks, system text blocks, text blocks in a
 *   tool_result and tools[] entries; other type/ttl values are schema 422. Refused by policy: on a text block whose
 *   text is empty (a breakpoint over nothing), on a tool_result block itself and on a tool_use block (SPEC lists
 *   neither place).
 */
import { Either } from "effect"
import { ValidationFailed } from "../../errors.ts"
import type {
  CacheMark,
  CanonicalMessage,
  ChatRequest,
  ReasoningRequest,
  RouteRequest,
  TextPart,
  ToolChoice,
  ToolDefinition
} from "../canonical.ts"
import { budgetOfEffort, reconcileThinking } from "../reasoning.ts"
import {
  type CacheControl,
  type MessageParam,
  MessagesRequest,
  REFUSED_FIELDS,
  type TextBlockParam,
  type ThinkingParam,
  type ToolChoiceParam
} from "../wire/anthropicMessages.ts"
import { decodeBody } from "./parseIssues.ts"

export { renderMessage, renderUsage, stopReasonOf } from "./anthropicRender.ts"
export { makeMessagesStream, type MessagesStream } from "./anthropicStream.ts"

export interface DecodedMessages {
  readonly chat: ChatRequest
  readonly route: RouteRequest
  readonly stream: boolean
  /** `metadata.user_id` as sent (the exchange fingerprints it); undefined when absent or empty. */
  readonly endUser: string | undefined
}

// ---------------------------------------------------------------------------------------------------------
// Refusals after parsing

const refuse = (message: string, param: string) => Either.left(new ValidationFailed({ message, param }))

const refusedField = (request: MessagesRequest): Either.Either<void, ValidationFailed> => {
  const reasons: Record<(typeof REFUSED_FIELDS)[number], string> = {
    container: "code-execution containers run on the vendor's side",
    mcp_servers: "MCP servers are called from the vendor's side",
    context_management: "server-side context editing is not available through the exchange",
    output_config: "output configuration (structured output, effort levels) is not available on /v1/messages",
    output_format: "structured output is not available on /v1/messages",
    cache_control: "automatic breakpoint placement is not supported; put cache_control on a text block or a tools[] entry",
    inference_geo: "the exchange cannot promise where inference runs",
    betas: "beta features are not available through the exchange"
  }
  for (const field of REFUSED_FIELDS) {
    const value = request[field]
    if (value !== undefined && value !== null) return refuse(`${field} is not supported: ${reasons[field]}.`, field)
  }
  return Either.right(undefined)
}

/** SPEC "Prompt caching": a breakpoint needs text under it, and is not taken on tool_result / tool_use blocks. */
const misplacedCache = (request: MessagesRequest): Either.Either<void, ValidationFailed> => {
  const emptyText = (block: TextBlockParam) => block.cache_control != null && block.text === ""
  const onEmpty = (param: string) =>
    refuse(`cache_control needs text to cache: the block at ${param.replace(/\.cache_control$/, "")} is empty.`, param)
  if (typeof request.system !== "string") {
    const at = request.system?.findIndex(emptyText) ?? -1
    if (at >= 0) return onEmpty(`system.${at}.cache_control`)
  }
  for (const [i, message] of request.messages.entries()) {
    if (typeof message.content === "string") continue
    for (const [j, block] of message.content.entries()) {
      const here = `messages.${i}.content.${j}`
      if (block.type === "text" && emptyText(block)) return onEmpty(`${here}.cache_control`)
      if (block.type === "tool_use" && block.cache_control != null) {
        return refuse(`cache_control is not taken on a tool_use block; put it on a text block.`, `${here}.cache_control`)
      }
      if (block.type === "tool_result") {
        if (block.cache_control != null) {
          return refuse(`cache_control is not taken on the tool_result block itself; put it on a text block inside its content.`, `${here}.cache_control`)
        }
        if (typeof block.content !== "string") {
          const at = block.content?.findIndex(emptyText) ?? -1
          if (at >= 0) return onEmpty(`${here}.content.${at}.cache_control`)
        }
      }
    }
  }
  return Either.right(undefined)
}

const reasoningOf = (
  thinking: ThinkingParam | undefined,
  maxTokens: number
): Either.Either<ReasoningRequest | null | undefined, ValidationFailed> => {
  const exclude = thinking !== undefined && "display" in thinking && thinking.display === "omitted"
  const withExclude = (r: ReasoningRequest | null | undefined) => (r != null && exclude ? { ...r, exclude } : r)
  if (thinking?.type === "adaptive") {
    const budgetTokens = budgetOfEffort("medium", maxTokens)
    return budgetTokens < maxTokens
      ? Either.right(withExclude({ effort: "medium", budgetTokens, exclude: false }))
      : refuse(
        `thinking.type=adaptive reasons at a medium budget of ${budgetTokens} tokens, which must be below max_tokens=${maxTokens}; raise max_tokens or send {type:"enabled", budget_tokens}.`,
        "thinking.type"
      )
  }
  const reconciled = reconcileThinking(
    thinking?.type === "enabled" ? { type: "enabled", budget_tokens: thinking.budget_tokens } : thinking,
    maxTokens
  )
  return Either.map(reconciled, withExclude)
}

// ---------------------------------------------------------------------------------------------------------
// Canonical mapping

const cacheOf = (control: CacheControl | null | undefined): CacheMark | undefined =>
  control == null ? undefined : { ttl: control.ttl ?? "5m" }

const textPart = (text: string, control?: CacheControl | null): TextPart => {
  const cache = cacheOf(control)
  return cache === undefined ? { type: "text", text } : { type: "text", text, cache }
}

const partsOf = (content: string | ReadonlyArray<TextBlockParam> | undefined): ReadonlyArray<TextPart> =>
  content === undefined ? [] : typeof content === "string" ? [textPart(content)] : content.map((b) => textPart(b.text, b.cache_control))

/**
 * A user turn's tool_result blocks become `tool` messages and its text blocks `user` messages, in the turn's own
 * order (Anthropic puts results first); an assistant turn is one message with its text and its tool calls.
 */
const messagesOf = (message: MessageParam): ReadonlyArray<CanonicalMessage> => {
  if (typeof message.content === "string") {
    const parts = [textPart(message.content)]
    return [message.role === "user" ? { role: "user", parts } : { role: "assistant", parts, toolCalls: [] }]
  }
  if (message.role === "assistant") {
    const parts: Array<TextPart> = []
    const toolCalls: Array<{ id: string; name: string; arguments: string }> = []
    for (const block of message.content) {
      if (block.type === "text") parts.push(textPart(block.text, block.cache_control))
      else toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) })
    }
    return [{ role: "assistant", parts, toolCalls }]
  }
  const out: Array<CanonicalMessage> = []
  let texts: Array<TextPart> = []
  const flush = () => {
    if (texts.length > 0) out.push({ role: "user", parts: texts })
    texts = []
  }
  for (const block of message.content) {
    if (block.type === "text") {
      texts.push(textPart(block.text, block.cache_control))
      continue
    }
    flush()
    out.push({
      role: "tool",
      toolCallId: block.tool_use_id,
      parts: partsOf(block.content),
      ...(block.is_error === undefined ? {} : { isError: block.is_error })
    })
  }
  flush()
  return out
}

const toolChoiceOf = (choice: ToolChoiceParam): ToolChoice =>
  choice.type === "any" ? { type: "required" } : choice.type === "tool" ? { type: "tool", name: choice.name } : { type: choice.type }

const toolsOf = (request: MessagesRequest): ReadonlyArray<ToolDefinition> =>
  (request.tools ?? []).map((tool) => {
    const cache = cacheOf(tool.cache_control)
    return {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.input_schema,
      ...(cache === undefined ? {} : { cache })
    }
  })

const systemOf = (system: MessagesRequest["system"]): ReadonlyArray<CanonicalMessage> => {
  if (system === undefined || system === "" || system.length === 0) return []
  return [{ role: "system", parts: partsOf(system) }]
}

/** The body of `POST /v1/messages` -> canonical request, routing directive, stream flag and end user. */
const parseMessagesRequest = decodeBody(MessagesRequest)

export const decodeMessagesRequest = (body: unknown): Either.Either<DecodedMessages, ValidationFailed> => {
  const decoded = parseMessagesRequest(body)
  if (Either.isLeft(decoded)) return Either.left(decoded.left)
  const request = decoded.right
  return Either.gen(function*() {
    yield* refusedField(request)
    yield* misplacedCache(request)
    const reasoning = yield* reasoningOf(request.thinking, request.max_tokens)
    const tools = toolsOf(request)
    // SPEC: tool_choice (and with it disable_parallel_tool_use) without a non-empty tools list is dropped.
    const choice = tools.length > 0 ? request.tool_choice : undefined
    if (choice?.type === "tool" && !tools.some((tool) => tool.name === choice.name)) {
      yield* refuse(`tool_choice.name "${choice.name}" names no tool in tools.`, "tool_choice.name")
    }
    const disableParallel = choice !== undefined && "disable_parallel_tool_use" in choice ? choice.disable_parallel_tool_use : undefined
    const chat: ChatRequest = {
      messages: [...systemOf(request.system), ...request.messages.flatMap(messagesOf)],
      maxOutputTokens: request.max_tokens,
      temperature: request.temperature,
      topP: request.top_p,
      topK: request.top_k,
      stop: request.stop_sequences ?? [],
      tools,
      toolChoice: choice === undefined ? undefined : toolChoiceOf(choice),
      parallelToolCalls: disableParallel === undefined ? undefined : !disableParallel,
      reasoning
    }
    const route: RouteRequest = {
      model: request.model,
      models: request.models,
      routingBias: request.routing_bias,
      conversationId: request.conversation_id
    }
    const endUser = request.metadata?.user_id
    return { chat, route, stream: request.stream === true, endUser: endUser === null || endUser === "" ? undefined : endUser }
  })
}
