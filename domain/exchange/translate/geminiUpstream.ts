/**
 * Canonical chat <-> Gemini generateContent (REST v1beta), pure. The adapter in services/exchange/providers does the
 * HTTP and the SSE framing; everything vendor-shaped about Gemini is decided here.
 *
 * Dropped on the way up, by policy (SPEC "Parameter policy": dropped, never refused):
 * - cache markers: Gemini has explicit caching only through separately created cachedContents, so a marker has
 *   nothing to attach to (SPEC "Prompt caching": on non-Anthropic providers the text parts are joined into one
 *   string and the marker is dropped without error; parts are joined with "\n" as on the OpenAI-shaped format);
 * - logit_bias: no Gemini equivalent;
 * - logprobs / top_logprobs: Gemini has responseLogprobs, but the canonical reply carries no log-probabilities back;
 * - the user fingerprint: Gemini has no end-user field;
 * - parallel_tool_calls: no switch; Gemini decides;
 * - an assistant turn's replayed reasoning text: Gemini takes thoughts back only as signatures, never as text.
 *
 * Reasoning, by the model's traits (domain/exchange/traits.ts): Gemini 2.5 takes `thinkingBudget` (the default),
 * Gemini 3 and later `thinkingLevel` (the request's effort, or the closest level the model accepts). Switched off:
 * `thinkingBudget: 0` (the default), `thinkingLevel: "minimal"` where that is the model's lowest, and nothing at all
 * for a model that cannot stop thinking (2.5 Pro, the Pro 3.x models; the planner refuses such a request first).
 *
 * Replies: a part's `thoughtSignature` is Gemini's own token for replaying its thinking, not a signature the SPEC
 * passes on (that is Anthropic's only), so it is not surfaced as a canonical `reasoning_signature`.
 */
import { Either, ParseResult, Schema } from "effect"
import type {
  CanonicalMessage,
  ChatEvent,
  ChatRequest,
  StopReason,
  TextPart,
  ToolChoice,
  Usage
} from "../canonical.ts"
import type { GeminiTraitOptions, ThinkingLevel } from "../traits.ts"
import { parseStreamJson, UpstreamProtocolError, UpstreamStreamError } from "../upstreamErrors.ts"
import {
  GeminiCountTokensResponse,
  GeminiResponse,
  type GeminiContent,
  type GeminiCountTokensRequest,
  type GeminiError,
  type GeminiGenerationConfig,
  type GeminiPart,
  type GeminiRequest,
  type GeminiThinkingConfig,
  type GeminiUsageMetadata
} from "../wire/gemini.ts"

/**
 * Gemini 3 refuses a replayed model turn whose first function call lacks its thought signature (400). The canonical
 * history cannot carry the vendor's signature (the inbound formats have no field for it), so every replayed call
 * turn gets the placeholder Google documents for history that did not come from the same Gemini session.
 */
export const THOUGHT_SIGNATURE_PLACEHOLDER = "skip_thought_signature_validator"

export interface GeminiTarget extends GeminiTraitOptions {
  /** The vendor's model id (the card's sdkId), e.g. `gemini-2.5-pro`. */
  readonly upstreamModel: string
  readonly stream: boolean
}

/** Removes undefined-valued keys, so the JSON sent upstream holds only what was asked for. */
const defined = <A extends object>(value: A): A =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as A

/** A Gemini model's path below the provider's base URL (the API version included). */
export const modelPath = (model: string): string => `/v1beta/models/${encodeURIComponent(model.replace(/^models\//, ""))}`

/**
 * A message's text parts as ONE string (SPEC "Prompt caching": joined, the markers dropped), "\n" between parts as
 * on the OpenAI-shaped format so parts split at a breakpoint do not run together. Empty parts carry nothing.
 */
const joinText = (parts: ReadonlyArray<TextPart>): string => parts.filter((part) => part.text !== "").map((part) => part.text).join("\n")

/** The one text part of a message, or none (Gemini refuses an empty text part). */
const textParts = (parts: ReadonlyArray<TextPart>): Array<GeminiPart> => {
  const text = joinText(parts)
  return text === "" ? [] : [{ text }]
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Gemini wants a call's arguments as a JSON object; the canonical call carries the text the model produced.
 * Text that is not a JSON object (a model's slip replayed by the client) is wrapped rather than lost.
 */
const argsOf = (text: string): Record<string, unknown> => {
  if (text.trim() === "") return {}
  try {
    const value: unknown = JSON.parse(text)
    if (isPlainObject(value)) return value
  } catch {
    // fall through: wrapped below
  }
  return { arguments: text }
}

const contentsOf = (messages: ReadonlyArray<CanonicalMessage>): Array<GeminiContent> => {
  const contents: Array<{ role: string; parts: Array<GeminiPart> }> = []
  /** Tool call id -> function name: Gemini answers a call by name, the canonical tool message by id. */
  const callNames = new Map<string, string>()
  let previousWasTool = false
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break
      case "user": {
        const parts = textParts(message.parts)
        if (parts.length > 0) contents.push({ role: "user", parts })
        break
      }
      case "assistant": {
        const parts = textParts(message.parts)
        message.toolCalls.forEach((call, i) => {
          callNames.set(call.id, call.name)
          parts.push({
            functionCall: { name: call.name, args: argsOf(call.arguments) },
            // Parallel calls: only the first of a turn carries a signature (Gemini's own replies do the same).
            ...(i === 0 ? { thoughtSignature: THOUGHT_SIGNATURE_PLACEHOLDER } : {})
          })
        })
        if (parts.length > 0) contents.push({ role: "model", parts })
        break
      }
      case "tool": {
        const text = joinText(message.parts)
        const part: GeminiPart = {
          functionResponse: {
            // An id with no earlier call: the id is the best name we have; Gemini answers for itself if it minds.
            name: callNames.get(message.toolCallId) ?? message.toolCallId,
            response: message.isError === true ? { content: text, isError: true } : { content: text }
          }
        }
        const last = contents[contents.length - 1]
        // The answers to one turn's parallel calls go back in ONE user content, as Gemini expects.
        if (previousWasTool && last !== undefined) last.parts.push(part)
        else contents.push({ role: "user", parts: [part] })
        break
      }
    }
    previousWasTool = message.role === "tool"
  }
  return contents
}

const systemInstructionOf = (messages: ReadonlyArray<CanonicalMessage>): GeminiContent | undefined => {
  const texts = messages.flatMap((m) => (m.role === "system" ? [joinText(m.parts)] : [])).filter((t) => t !== "")
  return texts.length === 0 ? undefined : { parts: [{ text: texts.join("\n\n") }] }
}

const toolsOf = (chat: ChatRequest): GeminiRequest["tools"] =>
  chat.tools.length === 0
    ? undefined
    : [
      {
        functionDeclarations: chat.tools.map((tool) =>
          defined({ name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters })
        )
      }
    ]

const modeOf = (choice: ToolChoice): NonNullable<GeminiRequest["toolConfig"]> => {
  switch (choice.type) {
    case "auto":
      return { functionCallingConfig: { mode: "AUTO" } }
    case "none":
      return { functionCallingConfig: { mode: "NONE" } }
    case "required":
      return { functionCallingConfig: { mode: "ANY" } }
    case "tool":
      return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.name] } }
  }
}

const toolConfigOf = (chat: ChatRequest): GeminiRequest["toolConfig"] =>
  chat.tools.length === 0 || chat.toolChoice === undefined ? undefined : modeOf(chat.toolChoice)

const LEVELS: ReadonlyArray<ThinkingLevel> = ["minimal", "low", "medium", "high"]

/** The effort's level if the model accepts it, else the closest one it does (a tie goes to the deeper level). */
export const thinkingLevelOf = (effort: ThinkingLevel, accepted: ReadonlyArray<ThinkingLevel> = LEVELS): ThinkingLevel => {
  if (accepted.includes(effort)) return effort
  // Reasoning was asked for: the no-thinking-for-most-queries level is the last resort.
  const thinking = accepted.filter((level) => level !== "minimal")
  const pool = thinking.length > 0 ? thinking : accepted
  const at = LEVELS.indexOf(effort)
  const distance = (level: ThinkingLevel) => Math.abs(LEVELS.indexOf(level) - at)
  return [...pool].sort((a, b) => distance(a) - distance(b) || LEVELS.indexOf(b) - LEVELS.indexOf(a))[0] ?? effort
}

const thinkingConfigOf = (chat: ChatRequest, target: GeminiTraitOptions): GeminiThinkingConfig | undefined => {
  const reasoning = chat.reasoning
  if (reasoning === undefined) return undefined
  if (reasoning === null) {
    switch (target.reasoningOff) {
      case undefined:
        return target.thinkingStyle === "level" ? undefined : { thinkingBudget: 0 }
      case "budget0":
        return { thinkingBudget: 0 }
      case "minimal":
        return { thinkingLevel: "minimal" }
      default:
        // The model cannot stop thinking (never thinkingBudget 0 there): the planner refuses this request first.
        return undefined
    }
  }
  return target.thinkingStyle === "level"
    ? { thinkingLevel: thinkingLevelOf(reasoning.effort, target.thinkingLevels), includeThoughts: !reasoning.exclude }
    : { thinkingBudget: reasoning.budgetTokens, includeThoughts: !reasoning.exclude }
}

const generationConfigOf = (chat: ChatRequest, target: GeminiTraitOptions): GeminiGenerationConfig | undefined => {
  const format = chat.responseFormat
  const json = format?.type === "json_object" || format?.type === "json_schema"
  const config = defined<GeminiGenerationConfig>({
    maxOutputTokens: chat.maxOutputTokens,
    temperature: chat.temperature,
    topP: chat.topP,
    topK: chat.topK,
    stopSequences: chat.stop.length > 0 ? [...chat.stop] : undefined,
    seed: chat.seed,
    presencePenalty: chat.presencePenalty,
    frequencyPenalty: chat.frequencyPenalty,
    responseMimeType: json ? "application/json" : undefined,
    responseJsonSchema: format?.type === "json_schema" ? format.schema : undefined,
    thinkingConfig: thinkingConfigOf(chat, target)
  })
  return Object.keys(config).length === 0 ? undefined : config
}

/** The call to make: `:generateContent`, or `:streamGenerateContent?alt=sse` (SSE framing of the same chunks). */
export const buildGeminiRequest = (chat: ChatRequest, target: GeminiTarget): { path: string; body: GeminiRequest } => ({
  path: `${modelPath(target.upstreamModel)}:${target.stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
  body: defined<GeminiRequest>({
    contents: contentsOf(chat.messages),
    systemInstruction: systemInstructionOf(chat.messages),
    tools: toolsOf(chat),
    toolConfig: toolConfigOf(chat),
    generationConfig: generationConfigOf(chat, target)
  })
})

/** The vendor's own count of the prompt (system instruction and tools included), for the pre-request hold. */
export const buildGeminiCountTokensRequest = (
  chat: ChatRequest,
  target: { readonly upstreamModel: string }
): { path: string; body: GeminiCountTokensRequest } => {
  const model = target.upstreamModel.replace(/^models\//, "")
  return {
    path: `${modelPath(model)}:countTokens`,
    body: {
      generateContentRequest: defined({
        model: `models/${model}`,
        contents: contentsOf(chat.messages),
        systemInstruction: systemInstructionOf(chat.messages),
        tools: toolsOf(chat),
        toolConfig: toolConfigOf(chat)
      })
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Replies

const describeError = (error: GeminiError): string =>
  [error.status, error.message].filter((s) => s !== undefined && s !== "").join(": ") || "Gemini reported an error"

const statusOf = (error: GeminiError): { status?: number } => (error.code === undefined ? {} : { status: error.code })

const protocolError = (what: string, error: ParseResult.ParseError) =>
  new UpstreamProtocolError({ message: `${what}: ${ParseResult.TreeFormatter.formatErrorSync(error)}` })

export const parseGeminiCountTokens = (json: unknown): Either.Either<number, UpstreamProtocolError> =>
  Either.flatMap(
    Either.mapLeft(Schema.decodeUnknownEither(GeminiCountTokensResponse)(json), (e) =>
      protocolError("Unexpected Gemini countTokens reply", e)),
    (reply) =>
      reply.error !== undefined
        ? Either.left(new UpstreamProtocolError({ message: describeError(reply.error), ...statusOf(reply.error) }))
        // The vendor's encoding omits a zero count.
        : Either.right(reply.totalTokens ?? 0)
  )

/**
 * Gemini's counts into the disjoint buckets (DESIGN.md section 10): the prompt count includes the cached tokens,
 * the thoughts are outside the candidates count. A count not reported stays undefined.
 */
export const usageOfGemini = (u: GeminiUsageMetadata): Usage => {
  const reportedInput = u.promptTokenCount !== undefined || u.toolUsePromptTokenCount !== undefined
  const reportedOutput = u.candidatesTokenCount !== undefined || u.thoughtsTokenCount !== undefined
  return {
    freshInput: reportedInput
      ? Math.max(0, (u.promptTokenCount ?? 0) - (u.cachedContentTokenCount ?? 0)) + (u.toolUsePromptTokenCount ?? 0)
      : undefined,
    cacheRead: u.cachedContentTokenCount,
    output: reportedOutput ? (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0) : undefined,
    reasoning: u.thoughtsTokenCount
  }
}

/**
 * STOP ends normally (tool_calls when the reply called functions), MAX_TOKENS is the output limit; every other
 * reason (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, LANGUAGE, MALFORMED_FUNCTION_CALL, OTHER, ...) is
 * the vendor withholding or cutting the answer for its own reasons: the canonical model's content_filter.
 */
export const stopReasonOfGemini = (finishReason: string, calledFunctions: boolean): StopReason => {
  switch (finishReason) {
    case "STOP":
    case "FINISH_REASON_UNSPECIFIED":
      return calledFunctions ? "tool_calls" : "stop"
    case "MAX_TOKENS":
      return "length"
    default:
      return "content_filter"
  }
}

interface ReplyState {
  started: boolean
  nextCallIndex: number
  calledFunctions: boolean
  stopped: boolean
}

const newState = (): ReplyState => ({ started: false, nextCallIndex: 0, calledFunctions: false, stopped: false })

/** One reply or chunk into events, advancing the state kept across a stream's chunks. */
const eventsOf = (reply: GeminiResponse, state: ReplyState): Array<ChatEvent> => {
  const events: Array<ChatEvent> = []
  if (!state.started) {
    events.push({ type: "start", upstreamId: reply.responseId })
    state.started = true
  }
  const candidate = reply.candidates?.[0]
  for (const part of candidate?.content?.parts ?? []) {
    // `thoughtSignature` is not surfaced: see the module comment.
    if (part.functionCall !== undefined) {
      const index = state.nextCallIndex++
      state.calledFunctions = true
      events.push({
        type: "tool_call_delta",
        index,
        id: part.functionCall.id ?? `call_${index}`,
        name: part.functionCall.name ?? "",
        // Gemini sends a call whole, never in pieces: one delta carries all of it.
        argumentsDelta: JSON.stringify(part.functionCall.args ?? {})
      })
    } else if (part.text !== undefined && part.text !== "") {
      events.push(part.thought === true ? { type: "reasoning_delta", text: part.text } : { type: "text_delta", text: part.text })
    }
  }
  if (reply.usageMetadata !== undefined) events.push({ type: "usage", usage: usageOfGemini(reply.usageMetadata) })
  const finishReason = candidate?.finishReason ?? (reply.promptFeedback?.blockReason === undefined ? undefined : "PROMPT_BLOCKED")
  if (finishReason !== undefined && !state.stopped) {
    events.push({ type: "stop", reason: stopReasonOfGemini(finishReason, state.calledFunctions) })
    state.stopped = true
  }
  return events
}

const decodeReply = Schema.decodeUnknownEither(GeminiResponse)

/** A whole `:generateContent` reply as events: start, content, usage, stop. */
export const parseGeminiResponse = (json: unknown): Either.Either<ReadonlyArray<ChatEvent>, UpstreamProtocolError> =>
  Either.flatMap(
    Either.mapLeft(decodeReply(json), (e) => protocolError("Unexpected Gemini reply", e)),
    (reply): Either.Either<ReadonlyArray<ChatEvent>, UpstreamProtocolError> => {
      if (reply.error !== undefined) {
        return Either.left(new UpstreamProtocolError({ message: describeError(reply.error), ...statusOf(reply.error) }))
      }
      const state = newState()
      const events = eventsOf(reply, state)
      if (!state.stopped) events.push({ type: "stop", reason: state.calledFunctions ? "tool_calls" : "stop" })
      return Either.right(events)
    }
  )

/**
 * A parser for one `:streamGenerateContent?alt=sse` stream: feed it each SSE `data:` payload in order. Each chunk's
 * usage is the running total so far, passed on as a report (the consumer merges; the later wins), never summed.
 * An `error` object in a chunk is the stream breaking (UpstreamStreamError); an unreadable chunk is a protocol error.
 */
export const makeGeminiStreamParser = (): ((
  data: string
) => Either.Either<ReadonlyArray<ChatEvent>, UpstreamProtocolError | UpstreamStreamError>) => {
  const state = newState()
  return (data) => {
    const text = data.trim()
    // Gemini sends no terminator, but an OpenAI-style one or a keep-alive must not break the stream.
    if (text === "" || text === "[DONE]") return Either.right([])
    const parsed = parseStreamJson(text, "Gemini stream chunk")
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    const json = parsed.right
    const decoded = decodeReply(json)
    if (Either.isLeft(decoded)) return Either.left(protocolError("Unexpected Gemini stream chunk", decoded.left))
    const chunk = decoded.right
    if (chunk.error !== undefined) {
      return Either.left(new UpstreamStreamError({ message: describeError(chunk.error), ...statusOf(chunk.error) }))
    }
    return Either.right(eventsOf(chunk, state))
  }
}
