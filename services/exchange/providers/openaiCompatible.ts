/**
 * OpenAI chat completions, the format of OpenAI and of every OpenAI-compatible vendor (xAI, DeepSeek, Mistral ...):
 * the vendor's quirks live in the pure translator (domain/exchange/translate/openaiChatUpstream.ts). These vendors
 * publish no token counter for chat completions, so this adapter has none. Their embeddings are `/embeddings`.
 */
import { Effect, Redacted } from "effect"
import type { ChatRequest } from "../../../domain/exchange/canonical.ts"
import type { UpstreamKey } from "../../../domain/exchange/providers.ts"
import { openaiChatOptionsOf } from "../../../domain/exchange/traits.ts"
import { buildOpenaiChatRequest, makeOpenaiChatStreamParser, parseOpenaiChatResponse } from "../../../domain/exchange/translate/openaiChatUpstream.ts"
import { openaiEmbeddingsRequest, parseVendorEmbeddings } from "../../../domain/exchange/translate/embeddings.ts"
import type { ProviderAdapter, UpstreamTarget } from "./ProviderAdapter.ts"
import { callJson, completeJson, type SseParser, streamSse } from "./shared.ts"

const headersOf = (key: UpstreamKey): Record<string, string> => ({ authorization: `Bearer ${Redacted.value(key.secret)}` })

const requestOf = (chat: ChatRequest, target: UpstreamTarget, stream: boolean) =>
  buildOpenaiChatRequest(chat, { upstreamModel: target.upstreamModel, vendor: target.vendor, stream, ...openaiChatOptionsOf(target.traits) })

/**
 * The format names no SSE events: every message is a `data:` chunk (or the `[DONE]` terminator). Usage is read in the
 * catalog vendor's terms (xAI counts reasoning beside `completion_tokens`, the others inside it).
 */
const streamParser = (vendor: string): SseParser => {
  const parse = makeOpenaiChatStreamParser(vendor)
  return (_event, data) => parse(data)
}

export const openaiCompatible: ProviderAdapter = {
  format: "openai-chat",
  complete: (chat, target) =>
    Effect.suspend(() =>
      completeJson(target, headersOf(target.key), requestOf(chat, target, false), (json) => parseOpenaiChatResponse(json, target.vendor))
    ),
  stream: (chat, target) =>
    Effect.suspend(() => streamSse(target, headersOf(target.key), requestOf(chat, target, true), streamParser(target.vendor))),
  embed: (inputs, dimensions, target) =>
    Effect.suspend(() =>
      callJson(target, headersOf(target.key), openaiEmbeddingsRequest(inputs, target.upstreamModel, dimensions), (json) =>
        parseVendorEmbeddings(json, inputs.length))
    )
}
