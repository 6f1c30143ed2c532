/**
 * The canonical model to and from OpenAI-compatible upstreams (OpenAI, xAI, DeepSeek, Mistral, Alibaba, Moonshot,
 * Zhipu, MiniMax, Cohere compat). Pure: the adapter (services/exchange) does the HTTP and the SSE framing.
 *
 * Out: text parts joined into one string per message, cache markers dropped (SPEC "Prompt caching": only
 * Anthropic-served models take them); a tool result's error flag has no place in this format and is dropped; `top_k`
 * has none either: the planner refuses it with 422 before the request gets here (domain/exchange/traits.ts), and it
 * is never sent. Reasoning switched off is sent as the model's traits say (`reasoningOff`): `reasoning_effort` none or
 * minimal, or `thinking:{type:"disabled"}`; with no traits, nothing (the vendor's default).
 * In: vendors' extras are read where they carry something (DeepSeek `reasoning_content`, OpenRouter `reasoning`,
 * Mistral typed content chunks, Moonshot's usage inside the choice); every other extra field and every null is
 * ignored. Usage is read per catalog vendor (usageOf): the cache fields each vendor names, and whether its
 * `reasoning_tokens` sit inside `completion_tokens` (OpenAI and the others) or beside them (xAI).
 */
import { Either, ParseResult, Schema } from "effect"
import type { CanonicalMessage, ChatEvent, ChatRequest, StopReason, TextPart, Usage } from "../canonical.ts"
import type { OpenaiChatTraitOptions } from "../traits.ts"
import { parseStreamJson, UpstreamProtocolError, UpstreamStreamError } from "../upstreamErrors.ts"
import {
  type OpenaiChatRequestBody,
  type UpstreamChatMessage,
  VendorChatChunk,
  VendorChatCompletion,
  type VendorContent,
  VendorError,
  type VendorMessage,
  type VendorToolCall,
  type VendorUsage
} from "../wire/openaiChatVendor.ts"

export interface OpenaiChatTarget extends OpenaiChatTraitOptions {
  readonly upstreamModel: string
  /** The catalog vendor (`openai`, `deepseek`, `mistral` ...): decides the few per-vendor field names. */
  readonly vendor: string
  readonly stream: boolean
}

// ---------------------------------------------------------------------------------------------------------
// Request

/** Vendors that take a replayed turn's reasoning back, as `reasoning_content` (DeepSeek's thinking + tools). */
const REPLAYS_REASONING = new Set(["deepseek"])

/** Whether the vendor takes a replayed turn's reasoning back (its continuity across turns). */
export const replaysReasoning = (vendor: string): boolean => REPLAYS_REASONING.has(vendor)

/** Parts are one string on this format; a newline keeps parts split at a cache breakpoint from running together. */
const joined = (parts: ReadonlyArray<TextPart>): string => parts.map((part) => part.text).join("\n")

/**
 * DeepSeek in thinking mode refuses a tool-calling assistant turn without `reasoning_content`. A Messages client had
 * the reasoning of another vendor rendered without a signature, or withheld at its own asking (`display: "omitted"`),
 * so it may have none to replay: its turn carries an empty one, as does a Responses client's (shown no summary, or
 * its sealed reasoning dropped). A chat client that left its reasoning out gets the
 * vendor's refusal, which tells it what to send.
 */
const reasoningReplay = (message: Extract<CanonicalMessage, { role: "assistant" }>, emptyWhenMissing: boolean): { reasoning_content?: string } =>
  message.reasoning !== undefined
    ? { reasoning_content: message.reasoning }
    : emptyWhenMissing && message.toolCalls.length > 0 ? { reasoning_content: "" } : {}

const messageOf = (message: CanonicalMessage, vendor: string, messagesClient: boolean): UpstreamChatMessage => {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: joined(message.parts) }
    case "assistant":
      return {
        role: "assistant",
        content: message.parts.length === 0 && message.toolCalls.length > 0 ? null : joined(message.parts),
        ...(message.toolCalls.length > 0
          ? {
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: "function" as const,
              function: { name: call.name, arguments: call.arguments }
            }))
          }
          : {}),
        ...(REPLAYS_REASONING.has(vendor) ? reasoningReplay(message, messagesClient) : {})
      }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: joined(message.parts) }
  }
}

const toolChoiceOf = (choice: ChatRequest["toolChoice"]): OpenaiChatRequestBody["tool_choice"] =>
  choice === undefined ? undefined : choice.type === "tool" ? { type: "function", function: { name: choice.name } } : choice.type

const responseFormatOf = (format: ChatRequest["responseFormat"]): OpenaiChatRequestBody["response_format"] => {
  if (format === undefined || format.type !== "json_schema") return format
  const { name, schema, strict, description } = format
  return { type: "json_schema", json_schema: { name, schema, strict, description } }
}

/** `reasoning_effort` and `thinking` for the request's reasoning: its effort, or the model's way of switching it off. */
const reasoningFields = (
  reasoning: ChatRequest["reasoning"],
  off: OpenaiChatTarget["reasoningOff"]
): Pick<OpenaiChatRequestBody, "reasoning_effort" | "thinking"> => {
  // SPEC "Reasoning controls": an explicit budget was already mapped to its closest effort.
  if (reasoning != null) return { reasoning_effort: reasoning.effort }
  if (reasoning === undefined) return {}
  switch (off) {
    case "none":
    case "minimal":
      return { reasoning_effort: off }
    case "disabled":
      return { thinking: { type: "disabled" } }
    default:
      // No known switch (or `refuse`, which the planner answers with 422 before a request is built): nothing is sent.
      return {}
  }
}

export const buildOpenaiChatRequest = (
  chat: ChatRequest,
  target: OpenaiChatTarget
): { readonly path: "/chat/completions"; readonly body: OpenaiChatRequestBody } => {
  const hasTools = chat.tools.length > 0
  return {
    path: "/chat/completions",
    body: {
      model: target.upstreamModel,
      messages: chat.messages.map((message) => messageOf(message, target.vendor, chat.anthropic !== undefined || chat.reasoningWithheld === true)),
      // OpenAI deprecated max_tokens (its reasoning models refuse it); the compatible vendors mostly know only it.
      ...(target.vendor === "openai" ? { max_completion_tokens: chat.maxOutputTokens } : { max_tokens: chat.maxOutputTokens }),
      temperature: chat.temperature,
      top_p: chat.topP,
      stop: chat.stop.length > 0 ? chat.stop : undefined,
      frequency_penalty: chat.frequencyPenalty,
      presence_penalty: chat.presencePenalty,
      seed: chat.seed,
      logit_bias: chat.logitBias,
      logprobs: chat.logprobs,
      top_logprobs: chat.topLogprobs,
      tools: hasTools
        ? chat.tools.map((tool) => ({
          type: "function" as const,
          function: { name: tool.name, description: tool.description, parameters: tool.parameters }
        }))
        : undefined,
      tool_choice: hasTools ? toolChoiceOf(chat.toolChoice) : undefined,
      parallel_tool_calls: hasTools ? chat.parallelToolCalls : undefined,
      response_format: responseFormatOf(chat.responseFormat),
      ...reasoningFields(chat.reasoning, target.reasoningOff),
      // Always ask for usage: the bill is the vendor's counts (DESIGN.md section 10).
      ...(target.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      user: chat.userFingerprint
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Replies

/** Finish reasons that mean the vendor broke off (DeepSeek, Mistral, Zhipu): a failure, not an answer. */
const FAILED = new Set(["insufficient_system_resource", "error", "network_error"])

const STOP_REASONS: Record<string, StopReason> = {
  stop: "stop",
  eos: "stop",
  end_turn: "stop",
  stop_sequence: "stop",
  length: "length",
  model_length: "length",
  max_tokens: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  tool_use: "tool_calls",
  content_filter: "content_filter",
  sensitive: "content_filter"
}

/** An unknown finish reason ends the answer normally: vendors invent names for it. */
const stopReasonOf = (reason: string): StopReason => STOP_REASONS[reason] ?? "stop"

/**
 * Vendors whose `completion_tokens` leave `completion_tokens_details.reasoning_tokens` out (prompt + completion +
 * reasoning = total): xAI. Every other OpenAI-compatible vendor counts reasoning inside `completion_tokens`, as OpenAI
 * does. Keys are catalog vendors (the model key's first segment) and provider names.
 */
const REASONING_BESIDE_COMPLETION = new Set(["x-ai", "xai"])

/** The largest of the counts a vendor reported; undefined when it reported none. */
const largest = (...counts: ReadonlyArray<number | null | undefined>): number | undefined => {
  const reported = counts.filter((n): n is number => n != null)
  return reported.length === 0 ? undefined : Math.max(...reported)
}

/**
 * The vendor's counts into disjoint buckets that sum to the vendor's whole input, and the whole output with the
 * part of it that was reasoning (docs/decisions.md "Usage per OpenAI-compatible vendor"); an unreported count stays
 * undefined, never 0.
 * - Input: every vendor's `prompt_tokens` includes its cache reads and writes. The read is
 *   `prompt_tokens_details.cached_tokens` (OpenAI, xAI, Mistral, Z.ai, Alibaba, MiniMax, Moonshot's K2 models),
 *   DeepSeek's `prompt_cache_hit_tokens` (its `cached_tokens`, when filled, is the same count) or Moonshot's top-level
 *   `cached_tokens`: these name one count, so the largest reported is the read. The write is Alibaba's
 *   `cache_creation_input_tokens` (5 minutes, its only lifetime) or our own `cache_creation_tokens`. With no
 *   `prompt_tokens`, DeepSeek's miss count plus the read is the whole input.
 * - Output: `completion_tokens`, plus `reasoning_tokens` for a vendor that counts reasoning beside it.
 */
export const usageOf = (usage: VendorUsage, vendor: string): Usage => {
  const details = usage.prompt_tokens_details
  const cacheRead = largest(details?.cached_tokens, usage.prompt_cache_hit_tokens, usage.cached_tokens)
  const cacheWrite = details?.cache_creation_tokens ?? details?.cache_creation_input_tokens ??
    details?.cache_creation?.ephemeral_5m_input_tokens ?? undefined
  const miss = usage.prompt_cache_miss_tokens ?? undefined
  const prompt = usage.prompt_tokens ?? (miss === undefined ? undefined : miss + (cacheRead ?? 0))
  const completion = usage.completion_tokens ?? undefined
  const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? undefined
  return {
    freshInput: prompt === undefined ? undefined : Math.max(0, prompt - (cacheRead ?? 0) - (cacheWrite ?? 0)),
    cacheRead,
    // Lifetimes are summed on this wire; 5m is the default lifetime.
    cacheWrite5m: cacheWrite,
    output: completion !== undefined && REASONING_BESIDE_COMPLETION.has(vendor) ? completion + (reasoning ?? 0) : completion,
    reasoning
  }
}

const contentOf = (content: VendorContent | null | undefined): { text: string; reasoning: string } => {
  if (content == null) return { text: "", reasoning: "" }
  if (typeof content === "string") return { text: content, reasoning: "" }
  let text = ""
  let reasoning = ""
  for (const chunk of content) {
    if (chunk.type === "text") text += chunk.text ?? ""
    if (chunk.type === "thinking") reasoning += (chunk.thinking ?? []).map((part) => part.text ?? "").join("")
  }
  return { text, reasoning }
}

/** Reasoning, then text: the order the canonical stream requires. */
const deltaEvents = (message: VendorMessage): Array<ChatEvent> => {
  const content = contentOf(message.content)
  const reasoning = (message.reasoning_content ?? message.reasoning ?? "") + content.reasoning
  const text = content.text === "" ? (message.refusal ?? "") : content.text
  const events: Array<ChatEvent> = []
  if (reasoning !== "") events.push({ type: "reasoning_delta", text: reasoning })
  if (text !== "") events.push({ type: "text_delta", text })
  return events
}

const nonEmpty = (value: string | null | undefined): string | undefined => (value == null || value === "" ? undefined : value)

const statusOf = (error: VendorError["error"]): { status?: number } => {
  if (typeof error === "string") return {}
  const status = error.status ?? (typeof error.code === "number" ? error.code : /^\d{3}$/.test(error.code ?? "") ? Number(error.code) : undefined)
  return status == null ? {} : { status }
}

const messageOfError = (error: VendorError["error"]): string =>
  typeof error === "string" ? error : [error.type, error.code, error.message].filter((s) => s != null && s !== "").join(": ") || "the vendor reported an error"

/** The vendor's error object, when the payload is one. */
const vendorError = (json: unknown): VendorError["error"] | undefined => {
  if (typeof json !== "object" || json === null || !("error" in json) || json.error == null) return undefined
  const decoded = Schema.decodeUnknownEither(VendorError)(json)
  return Either.isRight(decoded) ? decoded.right.error : undefined
}

const undecodable = (what: string, error: ParseResult.ParseError) =>
  new UpstreamProtocolError({ message: `${what}: ${ParseResult.TreeFormatter.formatErrorSync(error)}` })

const brokeOff = (reason: string) => `the vendor ended the reply with finish_reason "${reason}"`

/** A whole (non-streaming) reply as the events a stream of it would have given; `vendor` is the catalog vendor. */
export const parseOpenaiChatResponse = (
  json: unknown,
  vendor: string
): Either.Either<ReadonlyArray<ChatEvent>, UpstreamProtocolError> => {
  const error = vendorError(json)
  if (error !== undefined) return Either.left(new UpstreamProtocolError({ message: messageOfError(error), ...statusOf(error) }))
  const decoded = Schema.decodeUnknownEither(VendorChatCompletion)(json)
  if (Either.isLeft(decoded)) return Either.left(undecodable("Unexpected chat completion", decoded.left))
  const reply = decoded.right
  const choice = reply.choices[0]
  if (choice === undefined) return Either.left(new UpstreamProtocolError({ message: "The chat completion has no choices." }))
  const reason = choice.finish_reason ?? "stop"
  if (FAILED.has(reason)) return Either.left(new UpstreamProtocolError({ message: brokeOff(reason) }))
  const events: Array<ChatEvent> = [{ type: "start", upstreamId: nonEmpty(reply.id) }, ...deltaEvents(choice.message)]
  ;(choice.message.tool_calls ?? []).forEach((call, index) =>
    events.push({
      type: "tool_call_delta",
      index,
      id: nonEmpty(call.id) ?? `call_${index}`,
      name: call.function?.name ?? undefined,
      argumentsDelta: call.function?.arguments ?? ""
    })
  )
  events.push({ type: "stop", reason: stopReasonOf(reason) })
  const usage = reply.usage ?? choice.usage
  if (usage != null) events.push({ type: "usage", usage: usageOf(usage, vendor) })
  return Either.right(events)
}

/**
 * A stream's parser: one call per SSE `data:` payload; `vendor` is the catalog vendor. Stateful: `start` comes once,
 * `stop` once, and tool calls are numbered by the vendor's index (a vendor that reuses an index for a call with a new
 * id gets a fresh one).
 */
export const makeOpenaiChatStreamParser = (vendor: string): ((
  data: string
) => Either.Either<ReadonlyArray<ChatEvent>, UpstreamProtocolError | UpstreamStreamError>) => {
  let started = false
  let stopped = false
  const slots = new Map<number, { readonly index: number; readonly id: string | undefined }>()
  let calls = 0

  const toolCallEvent = (call: VendorToolCall, position: number): ChatEvent => {
    const vendorIndex = call.index ?? position
    const id = nonEmpty(call.id)
    let slot = slots.get(vendorIndex)
    const isNew = slot === undefined || (id !== undefined && slot.id !== undefined && id !== slot.id)
    if (slot === undefined || isNew) {
      slot = { index: calls++, id }
      slots.set(vendorIndex, slot)
    }
    return {
      type: "tool_call_delta",
      index: slot.index,
      // The canonical rule: the first delta of a call carries its id.
      id: isNew ? (id ?? `call_${slot.index}`) : id,
      name: call.function?.name ?? undefined,
      argumentsDelta: call.function?.arguments ?? ""
    }
  }

  return (data) => {
    const text = data.trim()
    if (text === "" || text === "[DONE]") return Either.right([])
    const parsed = parseStreamJson(text, "Stream chunk")
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    const json = parsed.right
    const error = vendorError(json)
    if (error !== undefined) return Either.left(new UpstreamStreamError({ message: messageOfError(error), ...statusOf(error) }))
    const decoded = Schema.decodeUnknownEither(VendorChatChunk)(json)
    if (Either.isLeft(decoded)) return Either.left(undecodable("Unexpected chat completion chunk", decoded.left))
    const chunk = decoded.right
    const events: Array<ChatEvent> = []
    if (!started) {
      started = true
      events.push({ type: "start", upstreamId: nonEmpty(chunk.id) })
    }
    let usage = chunk.usage
    // We ask for one choice; another index would be a second answer.
    for (const choice of (chunk.choices ?? []).filter((c) => (c.index ?? 0) === 0)) {
      if (choice.delta != null) {
        events.push(...deltaEvents(choice.delta))
        ;(choice.delta.tool_calls ?? []).forEach((call, position) => events.push(toolCallEvent(call, position)))
      }
      const reason = choice.finish_reason
      if (reason != null && FAILED.has(reason)) return Either.left(new UpstreamStreamError({ message: brokeOff(reason) }))
      if (reason != null && !stopped) {
        stopped = true
        events.push({ type: "stop", reason: stopReasonOf(reason) })
      }
      usage ??= choice.usage
    }
    if (usage != null) events.push({ type: "usage", usage: usageOf(usage, vendor) })
    return Either.right(events)
  }
}
