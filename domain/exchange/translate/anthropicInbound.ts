/**
 * Our `/v1/messages` endpoint, inbound: the Anthropic messages body -> the canonical ChatRequest and RouteRequest.
 * Pure. Replies are rendered by anthropicRender.ts (whole Message) and anthropicStream.ts (SSE), re-exported here.
 *
 * Two kinds of 422 (SPEC "Errors"): a body the schema (wire/anthropicMessages.ts) does not take is `validation_error`
 * with every offending field in `issues`; a body that parsed but asks for something we refuse by policy is
 * `invalid_request_error` naming the one field in `param`.
 *
 * What Anthropic's own API takes from its own clients is taken (DESIGN.md section 10, "Agents' dialects", which
 * extends SPEC's V1 refusals; docs/decisions.md "Messages as Anthropic's clients send them"). Field by field:
 * - Taken: model (omitted = auto), messages, max_tokens (required positive integer, as Anthropic requires it),
 *   system, stream, tools, tool_choice, thinking, stop_sequences, metadata.user_id, temperature (0-1), top_p (0-1),
 *   top_k (positive integer), and the extensions models (1-8), routing_bias, conversation_id (SPEC "Model selection"
 *   rule 4 pins conversations whatever the format; refusing it would make a pinned conversation impossible here).
 * - Anthropic's client fields, carried in `chat.anthropic` and forwarded untouched when an Anthropic model serves the
 *   request: the `anthropic-beta` header, context_management, the top-level cache_control (automatic breakpoints),
 *   output_config.effort, thinking.display, per-turn `system` messages (kept in place), replayed `thinking` /
 *   `redacted_thinking` blocks with their signatures, cache_control on tool_use and tool_result blocks, and the
 *   tools' defer_loading / input_examples / strict / eager_input_streaming. For another vendor each is translated
 *   where the canonical request carries its meaning (adaptive thinking's effort; display "omitted" = reason but
 *   withhold the text; replayed thinking text = the turn's reasoning, which DeepSeek takes back; per-turn system
 *   messages stay in place where the format has system turns) and otherwise dropped and named in
 *   X-Dropped-Parameters (domain/exchange/droppedParameters.ts).
 * - output_config.format and output_format (structured output): the request's json_schema response format.
 * - thinking `{type:"adaptive"}`: reasoning at output_config.effort (xhigh and max are `high` in the canonical
 *   three; Anthropic gets the level as sent), MEDIUM when none is given; the budget for vendors that take one is the
 *   effort's share of max_tokens (floor 1024, below max_tokens). output_config.effort without thinking changes only
 *   Anthropic's answer: passed to Anthropic, dropped for others.
 * - tool_choice (and its disable_parallel_tool_use) without a non-empty `tools`: dropped (SPEC). A `tool` choice
 *   naming no offered tool: refused (`tool_choice.name`), as the vendor would.
 * - Dropped (accepted, no effect): service_tier, speed (capacity class and price, never the answer), diagnostics. A
 *   text block's `citations` and a tool_use block's `caller` (what a client replays from an earlier reply) too.
 * - Refused by name (invalid_request_error): container, mcp_servers (code and MCP calls run on the vendor's side
 *   and bill outside the token counts the exchange settles on), inference_geo (a residency promise we cannot keep
 *   on every route, priced apart), betas in the body (the SDK sends betas as the header). `null` means "none".
 * - Any other top-level field, and any extra field on a message object or a content block: schema 422 naming it.
 * - Content blocks: text, tool_use and thinking / redacted_thinking (assistant turns), tool_result (user turns,
 *   content a string or <= 50 text blocks, or absent), text (system turns). Any other type: schema 422.
 * - cache_control `{type:"ephemeral", ttl?:"5m"|"1h"}` wherever Anthropic takes it: text blocks, tools, tool_use and
 *   tool_result blocks, and the top level; other type/ttl values are schema 422. Refused by policy: on a text block
 *   whose text is empty (a breakpoint over nothing).
 */
import { Either } from "effect"
import { ValidationFailed } from "../../errors.ts"
import type {
  AnthropicPassthrough,
  AnthropicToolFields,
  CacheMark,
  CanonicalMessage,
  ChatRequest,
  ReasoningBlock,
  ReasoningEffort,
  ReasoningRequest,
  ResponseFormat,
  RouteRequest,
  TextPart,
  ToolCall,
  ToolChoice,
  ToolDefinition
} from "../canonical.ts"
import { budgetOfEffort, reconcileThinking } from "../reasoning.ts"
import {
  type CacheControl,
  CountTokensRequest,
  DROPPED_FIELDS,
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
  /** Fields accepted and dropped whatever serves the request (for X-Dropped-Parameters). */
  readonly dropped: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------------------
// Refusals after parsing

const refuse = (message: string, param: string) => Either.left(new ValidationFailed({ message, param }))

const refusedField = (request: MessagesRequest): Either.Either<void, ValidationFailed> => {
  const reasons: Record<(typeof REFUSED_FIELDS)[number], string> = {
    container: "code-execution containers run on the vendor's side and bill outside the token counts",
    mcp_servers: "MCP servers are called from the vendor's side",
    inference_geo: "the exchange cannot promise where inference runs",
    betas: "send betas as the anthropic-beta header, which the exchange forwards to Anthropic"
  }
  for (const field of REFUSED_FIELDS) {
    const value = request[field]
    if (value !== undefined && value !== null) return refuse(`${field} is not supported: ${reasons[field]}.`, field)
  }
  return Either.right(undefined)
}

/** SPEC "Prompt caching": a breakpoint needs text under it (Anthropic also takes one on tool_use / tool_result blocks). */
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
      if (block.type === "tool_result") {
        if (typeof block.content !== "string") {
          const at = block.content?.findIndex(emptyText) ?? -1
          if (at >= 0) return onEmpty(`${here}.content.${at}.cache_control`)
        }
      }
    }
  }
  return Either.right(undefined)
}

/** Anthropic's effort levels in the canonical three: the two above `high` are its deepest. */
const canonicalEffort = (effort: string | null | undefined): ReasoningEffort | undefined =>
  effort == null ? undefined : effort === "low" || effort === "medium" ? effort : "high"

const reasoningOf = (
  thinking: ThinkingParam | undefined,
  maxTokens: number,
  requestedEffort: string | null | undefined
): Either.Either<ReasoningRequest | null | undefined, ValidationFailed> => {
  const exclude = thinking !== undefined && "display" in thinking && thinking.display === "omitted"
  const withExclude = (r: ReasoningRequest | null | undefined) => (r != null && exclude ? { ...r, exclude } : r)
  if (thinking?.type === "adaptive") {
    const effort = canonicalEffort(requestedEffort) ?? "medium"
    const budgetTokens = budgetOfEffort(effort, maxTokens)
    return budgetTokens < maxTokens
      ? Either.right(withExclude({ effort, budgetTokens, exclude: false, adaptive: true }))
      : refuse(
        `thinking.type=adaptive reasons at a ${effort} budget of ${budgetTokens} tokens, which must be below max_tokens=${maxTokens}; raise max_tokens or send {type:"enabled", budget_tokens}.`,
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

const withCache = <T extends object>(value: T, control: CacheControl | null | undefined): T => {
  const cache = cacheOf(control)
  return cache === undefined ? value : { ...value, cache }
}

/**
 * A user turn's tool_result blocks become `tool` messages and its text blocks `user` messages, in the turn's own
 * order (Anthropic puts results first); an assistant turn is one message with its text and its tool calls.
 */
const messagesOf = (message: MessageParam): ReadonlyArray<CanonicalMessage> => {
  if (message.role === "system") {
    const effort = message.output_config?.effort ?? undefined
    return [{ role: "system", parts: partsOf(message.content), ...(effort === undefined ? {} : { turnEffort: effort }) }]
  }
  if (typeof message.content === "string") {
    const parts = [textPart(message.content)]
    return [message.role === "user" ? { role: "user", parts } : { role: "assistant", parts, toolCalls: [] }]
  }
  if (message.role === "assistant") {
    const parts: Array<TextPart> = []
    const toolCalls: Array<ToolCall> = []
    const reasoningBlocks: Array<ReasoningBlock> = []
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          parts.push(textPart(block.text, block.cache_control))
          break
        case "tool_use":
          toolCalls.push(withCache({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) }, block.cache_control))
          break
        case "thinking":
          reasoningBlocks.push({ type: "thinking", thinking: block.thinking, signature: block.signature })
          break
        case "redacted_thinking":
          reasoningBlocks.push({ type: "redacted_thinking", data: block.data })
          break
      }
    }
    if (reasoningBlocks.length === 0) return [{ role: "assistant", parts, toolCalls }]
    // The readable reasoning of the turn is what another vendor can take back as its own (DeepSeek's reasoning_content).
    const reasoning = reasoningBlocks.map((b) => (b.type === "thinking" ? b.thinking : "")).join("")
    return [{ role: "assistant", parts, toolCalls, reasoning, reasoningBlocks }]
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
    out.push(withCache({
      role: "tool" as const,
      toolCallId: block.tool_use_id,
      parts: partsOf(block.content),
      ...(block.is_error === undefined ? {} : { isError: block.is_error })
    }, block.cache_control))
  }
  flush()
  return out
}

const toolChoiceOf = (choice: ToolChoiceParam): ToolChoice =>
  choice.type === "any" ? { type: "required" } : choice.type === "tool" ? { type: "tool", name: choice.name } : { type: choice.type }

const toolsOf = (request: MessagesRequest): ReadonlyArray<ToolDefinition> =>
  (request.tools ?? []).map((tool) => {
    const cache = cacheOf(tool.cache_control)
    const extras: AnthropicToolFields = {
      ...(tool.defer_loading === undefined ? {} : { defer_loading: tool.defer_loading }),
      ...(tool.input_examples === undefined ? {} : { input_examples: tool.input_examples }),
      ...(tool.strict === undefined ? {} : { strict: tool.strict }),
      ...(tool.eager_input_streaming === undefined ? {} : { eager_input_streaming: tool.eager_input_streaming })
    }
    return {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      parameters: tool.input_schema,
      ...(cache === undefined ? {} : { cache }),
      ...(Object.keys(extras).length === 0 ? {} : { anthropicFields: extras })
    }
  })

/** output_config.format (or the older output_format): the reply follows a JSON Schema. */
const responseFormatOf = (request: MessagesRequest): Either.Either<ResponseFormat | undefined, ValidationFailed> => {
  const configured = request.output_config?.format ?? undefined
  const older = request.output_format ?? undefined
  if (configured !== undefined && older !== undefined) {
    return refuse("output_format and output_config.format both set the reply's schema; send only output_config.format.", "output_format")
  }
  const format = configured ?? older
  return Either.right(format === undefined ? undefined : { type: "json_schema", name: "response", schema: format.schema })
}

/** The `anthropic-beta` header's values: comma-separated, possibly repeated. */
export const betasOf = (header: string | ReadonlyArray<string> | undefined): ReadonlyArray<string> =>
  (header === undefined ? [] : typeof header === "string" ? [header] : header)
    .flatMap((value) => value.split(","))
    .map((beta) => beta.trim())
    .filter((beta) => beta !== "")

const passthroughOf = (request: MessagesRequest, betas: ReadonlyArray<string>): AnthropicPassthrough => {
  const display = request.thinking !== undefined && "display" in request.thinking ? request.thinking.display ?? undefined : undefined
  const effort = request.output_config?.effort ?? undefined
  return {
    betas,
    inlineSystem: request.messages.some((message) => message.role === "system"),
    ...(request.context_management == null ? {} : { contextManagement: request.context_management }),
    ...(request.cache_control == null ? {} : { cacheControl: request.cache_control }),
    ...(effort === undefined ? {} : { effort }),
    ...(display === undefined ? {} : { thinkingDisplay: display })
  }
}

const systemOf = (system: MessagesRequest["system"]): ReadonlyArray<CanonicalMessage> => {
  if (system === undefined || system === "" || system.length === 0) return []
  return [{ role: "system", parts: partsOf(system) }]
}

/** The body of `POST /v1/messages` -> canonical request, routing directive, stream flag and end user. */
const parseMessagesRequest = decodeBody(MessagesRequest)

export const decodeMessagesRequest = (body: unknown, betas: ReadonlyArray<string> = []): Either.Either<DecodedMessages, ValidationFailed> =>
  Either.flatMap(parseMessagesRequest(body), (request) => toCanonical(request, betas))

/**
 * Without `max_tokens`, a thinking budget is checked against this limit only: the count is of the prompt, and the
 * send refuses a budget not below the request's own limit.
 */
const COUNT_MAX_TOKENS = 1_000_000

const parseCountTokensRequest = decodeBody(CountTokensRequest)

/** The body of `POST /v1/messages/count_tokens` -> the canonical request whose input is counted, and its route. */
export const decodeCountTokensRequest = (
  body: unknown,
  betas: ReadonlyArray<string> = []
): Either.Either<Pick<DecodedMessages, "chat" | "route">, ValidationFailed> =>
  Either.flatMap(parseCountTokensRequest(body), (request) =>
    Either.map(toCanonical({ ...request, max_tokens: request.max_tokens ?? COUNT_MAX_TOKENS }, betas), ({ chat, route }) => ({
      chat: { ...chat, maxOutputTokens: request.max_tokens },
      route
    })))

const toCanonical = (request: MessagesRequest, betas: ReadonlyArray<string>): Either.Either<DecodedMessages, ValidationFailed> =>
  Either.gen(function*() {
    yield* refusedField(request)
    yield* misplacedCache(request)
    if (request.messages[0]?.role === "system") {
      yield* refuse("A system turn cannot open messages: put the opening instructions in the top-level system field.", "messages.0.role")
    }
    const reasoning = yield* reasoningOf(request.thinking, request.max_tokens, request.output_config?.effort)
    const responseFormat = yield* responseFormatOf(request)
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
      reasoning,
      ...(responseFormat === undefined ? {} : { responseFormat }),
      anthropic: passthroughOf(request, betas)
    }
    const route: RouteRequest = {
      model: request.model,
      models: request.models,
      routingBias: request.routing_bias,
      conversationId: request.conversation_id
    }
    const endUser = request.metadata?.user_id
    const dropped = [
      ...DROPPED_FIELDS.filter((field) => request[field] != null),
      ...(request.tool_choice !== undefined && choice === undefined ? ["tool_choice"] : [])
    ]
    return { chat, route, stream: request.stream === true, endUser: endUser === null || endUser === "" ? undefined : endUser, dropped }
  })
