/**
 * The inference endpoints' one request program (`POST /v1/chat/completions`, `POST /v1/messages`): check the
 * credential may spend, decode the body by its wire format's rules, call the Exchange, and render its reply: a JSON
 * body with the routing and billing headers, or server-sent events (src/http/sse.ts). Both ways in run this: the
 * HttpApi handlers (src/handlers/exchange.ts, which the OpenAPI document describes) and the inference route ahead of
 * the router (src/http/inferenceRoute.ts).
 */
import { Effect, type Stream } from "effect"
import type { ValidationFailed } from "../../domain/errors.ts"
import { betasOf, decodeMessagesRequest } from "../../domain/exchange/translate/anthropicInbound.ts"
import { renderMessage } from "../../domain/exchange/translate/anthropicRender.ts"
import { decodeChatCompletionsRequest, renderChatCompletion } from "../../domain/exchange/translate/openaiChatInbound.ts"
import { type Credential, requireScope } from "../../services/accounts/Credentials.ts"
import { Exchange, type InboundFormat, type Reply, type RouteFacts } from "../../services/exchange/Exchange.ts"
import { rateLimitHeaders } from "../../services/platform/RateLimits.ts"
import { SSE_HEADERS, sseFrames } from "./sse.ts"

export type InferenceResponse =
  | { readonly _tag: "Whole"; readonly headers: Readonly<Record<string, string>>; readonly json: string }
  | { readonly _tag: "Stream"; readonly headers: Readonly<Record<string, string>>; readonly frames: Stream.Stream<string> }

/** What the request's head adds to its body: Anthropic clients name their betas in a header. */
export interface InferenceHead {
  readonly anthropicBeta?: string | ReadonlyArray<string> | undefined
}

const decoders = {
  chat: (json: unknown, _head: InferenceHead) => decodeChatCompletionsRequest(json),
  messages: (json: unknown, head: InferenceHead) => decodeMessagesRequest(json, betasOf(head.anthropicBeta))
} as const

/** SPEC "Response headers": the routing decision, the key's rate and caps. */
export const routeHeaders = (route: RouteFacts): Record<string, string> => {
  const headers: Record<string, string> = {
    "x-request-id": route.requestId,
    "x-model-used": route.modelUsed,
    "x-model-requested": route.modelRequested,
    "x-fallback-used": String(route.modelUsed !== route.modelRequested),
    "x-provider": route.provider,
    "x-routing-strategy": route.strategy,
    "x-key-daily-remaining": route.keyRemaining.daily,
    "x-key-weekly-remaining": "unlimited",
    "x-key-monthly-remaining": route.keyRemaining.monthly
  }
  if (route.chooser !== undefined) headers["x-model-chooser"] = route.chooser
  if (route.dropped.length > 0) headers["x-dropped-parameters"] = route.dropped.join(", ")
  if (route.rate !== undefined) Object.assign(headers, rateLimitHeaders(route.rate))
  return headers
}

/** The reply's wire form: the whole body is the format's reply object, written as JSON as it is. */
export const renderReply = (format: InboundFormat, reply: Reply): InferenceResponse => {
  if (reply._tag === "Stream") {
    return { _tag: "Stream", headers: { ...routeHeaders(reply.route), ...SSE_HEADERS }, frames: sseFrames(format, reply) }
  }
  const body = format === "chat"
    ? renderChatCompletion(reply.result, reply.meta, reply.settled.bill)
    : renderMessage(reply.result, reply.meta, reply.settled.bill)
  return {
    _tag: "Whole",
    headers: {
      ...routeHeaders(reply.route),
      "content-type": "application/json",
      "x-compute-used": reply.settled.chargeWei.toString(),
      "x-compute-remaining": reply.settled.balanceWei.toString()
    },
    json: JSON.stringify(body)
  }
}

/**
 * The request, from its credential to its reply. `body` is read only once the credential may spend, so a read-only
 * grant learns what it lacks whatever it sent.
 */
export const answerInference = <E, R>(
  format: InboundFormat,
  credential: Credential,
  body: Effect.Effect<unknown, E | ValidationFailed, R>,
  head: InferenceHead = {}
) =>
  Effect.gen(function* () {
    yield* requireScope(credential, "account:act")
    const decoded = yield* Effect.flatMap(body, (json) => decoders[format](json, head))
    const exchange = yield* Exchange
    return renderReply(format, yield* exchange.serve({ format, ...decoded, apiKey: credential }))
  })
