/**
 * Gemini generateContent (domain/exchange/translate/geminiUpstream.ts): the key goes in `x-goog-api-key`; the
 * streaming path is its own endpoint (`:streamGenerateContent?alt=sse`, chosen by the builder); the vendor publishes
 * a token counter (`:countTokens`) and embeddings (`:batchEmbedContents`).
 */
import { Effect, Redacted } from "effect"
import type { ChatRequest } from "../../../domain/exchange/canonical.ts"
import type { UpstreamKey } from "../../../domain/exchange/providers.ts"
import { geminiOptionsOf } from "../../../domain/exchange/traits.ts"
import {
  buildGeminiCountTokensRequest,
  buildGeminiRequest,
  makeGeminiStreamParser,
  parseGeminiCountTokens,
  parseGeminiResponse
} from "../../../domain/exchange/translate/geminiUpstream.ts"
import { geminiEmbeddingsRequest, parseGeminiEmbeddings } from "../../../domain/exchange/translate/embeddings.ts"
import { UpstreamFailure } from "../upstreamHttp.ts"
import type { ProviderAdapter, UpstreamTarget } from "./ProviderAdapter.ts"
import { completeJson, callJson, type SseParser, streamSse } from "./shared.ts"

const headersOf = (key: UpstreamKey): Record<string, string> => ({ "x-goog-api-key": Redacted.value(key.secret) })

const requestOf = (chat: ChatRequest, target: UpstreamTarget, stream: boolean) =>
  buildGeminiRequest(chat, { upstreamModel: target.upstreamModel, stream, ...geminiOptionsOf(target.traits) })

/** Gemini names no SSE events: every message is one `data:` chunk of the reply. */
const streamParser = (): SseParser => {
  const parse = makeGeminiStreamParser()
  return (_event, data) => parse(data)
}

export const gemini: ProviderAdapter = {
  format: "gemini",
  complete: (chat, target) =>
    Effect.suspend(() => completeJson(target, headersOf(target.key), requestOf(chat, target, false), parseGeminiResponse)),
  stream: (chat, target) =>
    Effect.suspend(() => streamSse(target, headersOf(target.key), requestOf(chat, target, true), streamParser())),
  countTokens: (chat, target) =>
    Effect.suspend(() =>
      callJson(target, headersOf(target.key), buildGeminiCountTokensRequest(chat, { upstreamModel: target.upstreamModel }), parseGeminiCountTokens)
    ),
  // Gemini embeds text only; its shortened vectors come back unnormalised and are normalised on reading.
  embed: (inputs, dimensions, target) =>
    Effect.suspend(() => {
      const texts = inputs.flatMap((input) => ("text" in input ? [input] : []))
      if (texts.length !== inputs.length) {
        return Effect.fail(new UpstreamFailure({ kind: "protocol", message: "Gemini embeds text, not token ids" }))
      }
      return callJson(target, headersOf(target.key), geminiEmbeddingsRequest(texts, target.upstreamModel, dimensions), (json) =>
        parseGeminiEmbeddings(json, texts.length, dimensions !== undefined))
    })
}
