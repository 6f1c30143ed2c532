/**
 * Our `/v1/chat/completions` endpoint's side of the OpenAI chat format: the request into the canonical model, the
 * canonical reply back out (the stream renderer is in openaiChatStream.ts). Pure.
 *
 * Fields beyond SPEC's list, decided here (SPEC "Parameter policy": each takes effect, is refused naming it, or is
 * dropped under policy; `null` on an optional field counts as absent, as OpenAI's types allow it):
 * - refused (422 invalid_request_error, `param` = the field), because they would change the answer and no path
 *   here can honour them: `n` > 1 (n = 1 is fine), `functions`, `function_call` (legacy; use `tools`), `audio`,
 *   `modalities` other than ["text"], `prediction`, `web_search_options`, `verbosity`;
 *   `max_tokens` and `max_completion_tokens` both set and different; `top_logprobs` without `logprobs: true`
 *   (OpenAI's own rule); a `tool_choice` naming a function not in `tools`;
 * - accepted and dropped (they never change the text of the answer): `store`, `metadata`, `service_tier`,
 *   `prompt_cache_key`, `prompt_cache_retention`, `safety_identifier`, `stream_options` (usage is always sent);
 *   `name` on a message; an assistant message's `annotations`; a tool's `function.strict` and a tool call's
 *   `index` (the canonical model has no place for them);
 * - used: `user` becomes `endUser` (the service fingerprints it); an assistant `refusal` stands for its content;
 * - any other field, top level or inside a message, tool or part: 422 validation_error naming it.
 * Empty text parts are dropped (vendors refuse empty text blocks); `tool_choice` / `parallel_tool_calls` without a
 * non-empty `tools` are dropped (SPEC).
 */
import { Either } from "effect"
import { ValidationFailed } from "../../errors.ts"
import {
  type CanonicalMessage,
  type ChatRequest,
  type ChatResult,
  type ReplyBill,
  type ReplyMeta,
  type RouteRequest,
  type TextPart,
  type ToolChoice,
  type ToolDefinition
} from "../canonical.ts"
import { reconcileChatReasoning } from "../reasoning.ts"
import {
  type ChatCompletion,
  ChatCompletionsRequest,
  type InboundContent,
  type InboundMessage
} from "../wire/openaiChat.ts"
import { decodeBody } from "./parseIssues.ts"

import { renderBill, renderChatUsage } from "./openaiChatStream.ts"

export { makeChatCompletionStream } from "./openaiChatStream.ts"

export interface DecodedChat {
  readonly chat: ChatRequest
  readonly route: RouteRequest
  readonly stream: boolean
  /** The `user` field as sent; the service fingerprints it into `chat.userFingerprint`. */
  readonly endUser: string | undefined
}

const refuse = (param: string, message: string) => new ValidationFailed({ message, param })

const isSet = (value: unknown) => value !== undefined && value !== null

/** The refusals of a request that parsed: the first one found, naming its field. */
const refusalOf = (request: ChatCompletionsRequest): ValidationFailed | undefined => {
  if (request.n != null && request.n > 1) {
    return refuse("n", `n=${request.n} is not supported: one choice is returned per request; send n=1 or omit it.`)
  }
  if (isSet(request.functions)) return refuse("functions", "The legacy `functions` parameter is not supported; send `tools` instead.")
  if (isSet(request.function_call)) {
    return refuse("function_call", "The legacy `function_call` parameter is not supported; send `tool_choice` instead.")
  }
  if (isSet(request.audio)) return refuse("audio", "Audio output is not supported; omit `audio`.")
  if (request.modalities != null && request.modalities.some((modality) => modality !== "text")) {
    return refuse("modalities", "Only text output is supported; send modalities [\"text\"] or omit it.")
  }
  if (isSet(request.prediction)) return refuse("prediction", "Predicted outputs are not supported; omit `prediction`.")
  if (isSet(request.web_search_options)) {
    return refuse("web_search_options", "Web search is not supported; omit `web_search_options`.")
  }
  if (isSet(request.verbosity)) return refuse("verbosity", "`verbosity` is not supported on every provider; omit it.")
  const { max_tokens: maxTokens, max_completion_tokens: maxCompletion } = request
  if (maxTokens != null && maxCompletion != null && maxTokens !== maxCompletion) {
    return refuse(
      "max_tokens",
      `max_tokens=${maxTokens} and max_completion_tokens=${maxCompletion} contradict each other; send max_completion_tokens only.`
    )
  }
  if (request.top_logprobs != null && request.logprobs !== true) {
    return refuse("top_logprobs", "top_logprobs needs logprobs: true.")
  }
  const tools = request.tools ?? []
  const choice = request.tool_choice
  if (tools.length > 0 && typeof choice === "object" && choice !== null && !tools.some((t) => t.function.name === choice.function.name)) {
    return refuse("tool_choice.function.name", `tool_choice names ${JSON.stringify(choice.function.name)}, which is not in tools.`)
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// Into the canonical model

const partsOf = (content: InboundContent | null | undefined): ReadonlyArray<TextPart> => {
  if (content == null) return []
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }]
  return content
    .filter((part) => part.text !== "")
    .map((part): TextPart =>
      part.cache_control === undefined
        ? { type: "text", text: part.text }
        : { type: "text", text: part.text, cache: { ttl: part.cache_control.ttl ?? "5m" } }
    )
}

const messageOf = (message: InboundMessage): CanonicalMessage => {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", parts: partsOf(message.content) }
    case "user":
      return { role: "user", parts: partsOf(message.content) }
    case "assistant":
      return {
        role: "assistant",
        parts: message.content == null && message.refusal != null ? partsOf(message.refusal) : partsOf(message.content),
        toolCalls: (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })),
        ...(message.reasoning != null && message.reasoning !== "" ? { reasoning: message.reasoning } : {})
      }
    case "tool":
      return { role: "tool", toolCallId: message.tool_call_id, parts: partsOf(message.content) }
  }
}

/** OpenAI: a function without `parameters` takes none. The canonical model always carries a schema. */
const NO_PARAMETERS = { type: "object", properties: {} }

const toolsOf = (request: ChatCompletionsRequest): ReadonlyArray<ToolDefinition> =>
  (request.tools ?? []).map((tool) => ({
    name: tool.function.name,
    ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
    parameters: tool.function.parameters ?? NO_PARAMETERS,
    ...(tool.cache_control !== undefined ? { cache: { ttl: tool.cache_control.ttl ?? "5m" } } : {})
  }))

const toolChoiceOf = (choice: ChatCompletionsRequest["tool_choice"]): ToolChoice | undefined => {
  if (choice == null) return undefined
  return typeof choice === "string" ? { type: choice } : { type: "tool", name: choice.function.name }
}

const responseFormatOf = (format: ChatCompletionsRequest["response_format"]): ChatRequest["responseFormat"] => {
  if (format == null) return undefined
  if (format.type !== "json_schema") return { type: format.type }
  const { name, schema, strict, description } = format.json_schema
  return {
    type: "json_schema",
    name,
    schema,
    ...(strict != null ? { strict } : {}),
    ...(description !== undefined ? { description } : {})
  }
}

const stopOf = (stop: ChatCompletionsRequest["stop"]): ReadonlyArray<string> =>
  stop == null ? [] : typeof stop === "string" ? [stop] : stop

const orUndefined = <A>(value: A | null | undefined): A | undefined => value ?? undefined

/** Decodes, refuses what cannot be honoured, and translates a chat-completions body. */
const parseChatCompletionsRequest = decodeBody(ChatCompletionsRequest)

export const decodeChatCompletionsRequest = (body: unknown): Either.Either<DecodedChat, ValidationFailed> => {
  const decoded = parseChatCompletionsRequest(body)
  if (Either.isLeft(decoded)) return Either.left(decoded.left)
  const request = decoded.right
  const refusal = refusalOf(request)
  if (refusal !== undefined) return Either.left(refusal)

  const maxOutputTokens = orUndefined(request.max_completion_tokens ?? request.max_tokens)
  const limitField = request.max_completion_tokens == null && request.max_tokens != null ? "max_tokens" : "max_completion_tokens"
  const reasoning = reconcileChatReasoning(
    { reasoningEffort: orUndefined(request.reasoning_effort), reasoning: orUndefined(request.reasoning) },
    maxOutputTokens,
    limitField
  )
  if (Either.isLeft(reasoning)) return Either.left(reasoning.left)

  const tools = toolsOf(request)
  const chat: ChatRequest = {
    messages: request.messages.map(messageOf),
    maxOutputTokens,
    temperature: orUndefined(request.temperature),
    topP: orUndefined(request.top_p),
    stop: stopOf(request.stop),
    frequencyPenalty: orUndefined(request.frequency_penalty),
    presencePenalty: orUndefined(request.presence_penalty),
    seed: orUndefined(request.seed),
    logitBias: orUndefined(request.logit_bias),
    logprobs: orUndefined(request.logprobs),
    topLogprobs: orUndefined(request.top_logprobs),
    tools,
    // SPEC "Parameter policy": without tools these are dropped.
    toolChoice: tools.length > 0 ? toolChoiceOf(request.tool_choice) : undefined,
    parallelToolCalls: tools.length > 0 ? orUndefined(request.parallel_tool_calls) : undefined,
    responseFormat: responseFormatOf(request.response_format),
    reasoning: reasoning.right
  }
  const route: RouteRequest = {
    model: request.model,
    models: request.models,
    routingBias: request.routing_bias,
    conversationId: request.conversation_id
  }
  return Either.right({ chat, route, stream: request.stream === true, endUser: orUndefined(request.user) })
}

// ---------------------------------------------------------------------------------------------------------
// Out of the canonical model

/** The non-streaming reply. */
export const renderChatCompletion = (result: ChatResult, meta: ReplyMeta, bill: ReplyBill): ChatCompletion => ({
  id: meta.id,
  object: "chat.completion",
  created: meta.created,
  model: meta.model,
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        // OpenAI's convention: null content on a turn that is only tool calls.
        content: result.text === "" && result.toolCalls.length > 0 ? null : result.text,
        refusal: null,
        ...(result.reasoning !== "" ? { reasoning: result.reasoning } : {}),
        ...(result.toolCalls.length > 0
          ? {
            tool_calls: result.toolCalls.map((call) => ({
              id: call.id,
              type: "function" as const,
              function: { name: call.name, arguments: call.arguments }
            }))
          }
          : {})
      },
      finish_reason: result.stopReason,
      logprobs: null
    }
  ],
  usage: renderChatUsage(result.usage),
  ...renderBill(bill)
})
