/**
 * The three upstream adapters behind one interface (DESIGN.md section 10): each builds its vendor's request from the
 * canonical one (domain/exchange/translate/*Upstream.ts), sends it with the key's credentials, and yields the reply as
 * canonical events. A failure before the reply starts (status, timeout, network, an unreadable non-streaming body) is
 * an `UpstreamFailure` of the call itself, which the exchange answers by trying the next key or candidate; a failure
 * inside a started stream is a failure of the event stream.
 */
import { Effect, Either, Redacted, Stream } from "effect"
import type { ChatEvent, ChatRequest } from "../../domain/exchange/canonical.ts"
import type { ProviderConfig, UpstreamFormat, UpstreamKey } from "../../domain/exchange/providers.ts"
import {
  buildAnthropicCountTokensRequest,
  buildAnthropicRequest,
  makeAnthropicStreamParser,
  parseAnthropicCountTokens,
  parseAnthropicResponse
} from "../../domain/exchange/translate/anthropicUpstream.ts"
import {
  buildGeminiCountTokensRequest,
  buildGeminiRequest,
  makeGeminiStreamParser,
  parseGeminiCountTokens,
  parseGeminiResponse
} from "../../domain/exchange/translate/geminiUpstream.ts"
import { buildOpenaiChatRequest, makeOpenaiChatStreamParser, parseOpenaiChatResponse } from "../../domain/exchange/translate/openaiChatUpstream.ts"
import type { UpstreamProtocolError, UpstreamStreamError } from "../../domain/exchange/upstreamErrors.ts"
import { anthropicOptionsOf, geminiOptionsOf, type ModelTraits, openaiChatOptionsOf } from "../../domain/exchange/traits.ts"
import { openSse, postJson, readText, UpstreamFailure } from "./upstreamHttp.ts"

export interface UpstreamTarget {
  readonly provider: ProviderConfig
  readonly key: UpstreamKey
  /** The vendor's own model id (the card's sdkId). */
  readonly upstreamModel: string
  /** The catalog vendor (quirks of OpenAI-compatible vendors). */
  readonly vendor: string
  /** `max_tokens` when the client set none and the format requires one (Anthropic). */
  readonly defaultMaxTokens: number
  readonly firstByteTimeoutMs: number
  /** How the model takes reasoning and what it refuses (data/exchange/model-traits.yaml). */
  readonly traits: ModelTraits
}

const headersOf = (format: UpstreamFormat, key: UpstreamKey): Record<string, string> => {
  const secret = Redacted.value(key.secret)
  switch (format) {
    case "openai-chat":
      return { authorization: `Bearer ${secret}` }
    case "anthropic-messages":
      return { "x-api-key": secret, "anthropic-version": "2023-06-01" }
    case "gemini":
      return { "x-goog-api-key": secret }
  }
}

const protocol = (error: UpstreamProtocolError | UpstreamStreamError) =>
  new UpstreamFailure({
    kind: error._tag === "UpstreamStreamError" ? "stream" : "protocol",
    message: error.message,
    status: error.status
  })

const built = (chat: ChatRequest, target: UpstreamTarget, stream: boolean): { path: string; body: unknown } => {
  switch (target.provider.format) {
    case "openai-chat":
      return buildOpenaiChatRequest(chat, { upstreamModel: target.upstreamModel, vendor: target.vendor, stream, ...openaiChatOptionsOf(target.traits) })
    case "anthropic-messages":
      return buildAnthropicRequest(chat, {
        upstreamModel: target.upstreamModel,
        stream,
        defaultMaxTokens: target.defaultMaxTokens,
        ...anthropicOptionsOf(target.traits)
      })
    case "gemini":
      return buildGeminiRequest(chat, { upstreamModel: target.upstreamModel, stream, ...geminiOptionsOf(target.traits) })
  }
}

const parseWhole = (format: UpstreamFormat, json: unknown) => {
  switch (format) {
    case "openai-chat":
      return parseOpenaiChatResponse(json)
    case "anthropic-messages":
      return parseAnthropicResponse(json)
    case "gemini":
      return parseGeminiResponse(json)
  }
}

/** A stateful parser of one stream's SSE messages into events. */
const streamParser = (format: UpstreamFormat) => {
  switch (format) {
    case "openai-chat": {
      const parse = makeOpenaiChatStreamParser()
      return (_event: string | undefined, data: string) => parse(data)
    }
    case "anthropic-messages":
      return makeAnthropicStreamParser()
    case "gemini": {
      const parse = makeGeminiStreamParser()
      return (_event: string | undefined, data: string) => parse(data)
    }
  }
}

/**
 * Calls the upstream. Non-streaming: the whole answer is read and parsed before this succeeds. Streaming: this succeeds
 * once the response head (2xx) and its first event arrived; the events follow on the returned stream.
 */
export const callUpstream = (
  chat: ChatRequest,
  target: UpstreamTarget,
  stream: boolean
): Effect.Effect<Stream.Stream<ChatEvent, UpstreamFailure>, UpstreamFailure> =>
  Effect.gen(function* () {
    const format = target.provider.format
    const request = built(chat, target, stream)
    const response = yield* postJson(
      `${target.provider.baseUrl}${request.path}`,
      headersOf(format, target.key),
      JSON.stringify(request.body),
      target.firstByteTimeoutMs
    )
    if (!stream) {
      const text = yield* readText(response)
      const json = yield* Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => new UpstreamFailure({ kind: "protocol", message: "the upstream answer is not JSON" })
      })
      const events = yield* Either.mapLeft(parseWhole(format, json), protocol)
      return Stream.fromIterable(events)
    }
    const parse = streamParser(format)
    const messages = yield* openSse(response, target.firstByteTimeoutMs)
    return messages.pipe(
      Stream.mapEffect((message) => Either.mapLeft(parse(message.event, message.data), protocol)),
      Stream.flattenIterables
    )
  })

/**
 * The vendor's own count of the request's input, where it publishes a counter (Anthropic, Gemini): None for
 * OpenAI-shaped vendors, which publish none for chat completions.
 */
export const countUpstream = (
  chat: ChatRequest,
  target: Pick<UpstreamTarget, "provider" | "key" | "upstreamModel" | "firstByteTimeoutMs" | "traits">
): Effect.Effect<number | undefined, UpstreamFailure> =>
  Effect.gen(function* () {
    const format = target.provider.format
    if (format === "openai-chat") return undefined
    const request = format === "anthropic-messages"
      ? buildAnthropicCountTokensRequest(chat, { upstreamModel: target.upstreamModel, ...anthropicOptionsOf(target.traits) })
      : buildGeminiCountTokensRequest(chat, { upstreamModel: target.upstreamModel })
    const response = yield* postJson(`${target.provider.baseUrl}${request.path}`, headersOf(format, target.key), JSON.stringify(request.body), target.firstByteTimeoutMs)
    const text = yield* readText(response)
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new UpstreamFailure({ kind: "protocol", message: "the token count is not JSON" })
    })
    const counted = format === "anthropic-messages" ? parseAnthropicCountTokens(json) : parseGeminiCountTokens(json)
    return yield* Either.mapLeft(counted, protocol)
  })
