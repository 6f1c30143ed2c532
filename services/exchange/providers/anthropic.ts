/**
 * Anthropic messages (domain/exchange/translate/anthropicUpstream.ts): the key goes in `x-api-key` with the API
 * version pinned; the vendor publishes a token counter (`/v1/messages/count_tokens`).
 */
import { Effect, Redacted } from "effect"
import type { ChatRequest } from "../../../domain/exchange/canonical.ts"
import type { UpstreamKey } from "../../../domain/exchange/providers.ts"
import { anthropicOptionsOf } from "../../../domain/exchange/traits.ts"
import {
  anthropicBetaHeader,
  buildAnthropicCountTokensRequest,
  buildAnthropicRequest,
  makeAnthropicStreamParser,
  parseAnthropicCountTokens,
  parseAnthropicResponse
} from "../../../domain/exchange/translate/anthropicUpstream.ts"
import type { ProviderAdapter, UpstreamTarget } from "./ProviderAdapter.ts"
import { completeJson, callJson, streamSse } from "./shared.ts"

/** The key, the pinned API version, and the betas an Anthropic client named (forwarded as it sent them). */
const headersOf = (key: UpstreamKey, chat: ChatRequest): Record<string, string> => ({
  "x-api-key": Redacted.value(key.secret),
  "anthropic-version": "2023-06-01",
  ...anthropicBetaHeader(chat)
})

const requestOf = (chat: ChatRequest, target: UpstreamTarget, stream: boolean) =>
  buildAnthropicRequest(chat, {
    upstreamModel: target.upstreamModel,
    stream,
    defaultMaxTokens: target.defaultMaxTokens,
    ...anthropicOptionsOf(target.traits)
  })

export const anthropic: ProviderAdapter = {
  format: "anthropic-messages",
  complete: (chat, target) =>
    Effect.suspend(() => completeJson(target, headersOf(target.key, chat), requestOf(chat, target, false), parseAnthropicResponse)),
  // Anthropic names its SSE events (message_start, content_block_delta ...): the parser reads the name and the data.
  stream: (chat, target) =>
    Effect.suspend(() => streamSse(target, headersOf(target.key, chat), requestOf(chat, target, true), makeAnthropicStreamParser())),
  countTokens: (chat, target) =>
    Effect.suspend(() =>
      callJson(
        target,
        headersOf(target.key, chat),
        buildAnthropicCountTokensRequest(chat, { upstreamModel: target.upstreamModel, ...anthropicOptionsOf(target.traits) }),
        parseAnthropicCountTokens
      )
    )
}
