/**
 * The inference endpoints' one request program (`POST /v1/chat/completions`, `/v1/messages`, `/v1/responses`): check
 * the credential may spend, decode the body by its format's rules (src/http/inbound/), call the Exchange, and render
 * its reply: a JSON body with the routing and billing headers, or server-sent events. Both ways in run this: the
 * HttpApi handlers (src/handlers/exchange.ts, which the OpenAPI document describes) and the inference route ahead of
 * the router (src/http/inferenceRoute.ts).
 */
import { Effect, Stream } from "effect"
import type { NotFound, ValidationFailed } from "../../domain/errors.ts"
import type { Credential } from "../../domain/accounts/credential.ts"
import { requireScope } from "../../services/accounts/Credentials.ts"
import { Exchange, type Reply, type RouteFacts } from "../../services/exchange/Exchange.ts"
import type { Responses } from "../../services/exchange/Responses.ts"
import { rateLimitHeaders } from "../../services/platform/RateLimits.ts"
import { chatCompletionsFormat } from "./inbound/chatCompletions.ts"
import type { DecodedInference, InboundFormat, InferenceHead } from "./inbound/InboundFormat.ts"
import { messagesFormat } from "./inbound/messages.ts"
import { responsesFormat } from "./inbound/responses.ts"
import { SSE_HEADERS } from "./sse.ts"

export type { InferenceHead } from "./inbound/InboundFormat.ts"

/** The services the formats need beside the Exchange. */
export type InferenceFormatServices = Responses

export type RoutedFormat = InboundFormat<DecodedInference, InferenceFormatServices, ValidationFailed | NotFound>

/** Every inbound format by its route. */
export const INFERENCE_ROUTES: Readonly<Record<"/v1/chat/completions" | "/v1/messages" | "/v1/responses", RoutedFormat>> = {
  "/v1/chat/completions": chatCompletionsFormat,
  "/v1/messages": messagesFormat,
  "/v1/responses": responsesFormat
}

export type InferenceResponse =
  | { readonly _tag: "Whole"; readonly headers: Readonly<Record<string, string>>; readonly json: string }
  | { readonly _tag: "Stream"; readonly headers: Readonly<Record<string, string>>; readonly frames: Stream.Stream<string> }

/** SPEC "Response headers": the routing decision, the key's rate and caps. */
export const routeHeaders = (route: RouteFacts): Record<string, string> => {
  const headers: Record<string, string> = {
    "x-request-id": route.requestId,
    "x-model-used": route.modelUsed,
    "x-model-requested": route.modelRequested,
    "x-fallback-used": String(route.modelUsed !== route.modelRequested),
    "x-provider": route.provider,
    "x-routing-strategy": route.strategy
  }
  // Left out only when the caps could not be read after the answer was paid for (services/exchange/admission.ts).
  if (route.keyRemaining !== undefined) {
    headers["x-key-daily-remaining"] = route.keyRemaining.daily
    headers["x-key-weekly-remaining"] = "unlimited"
    headers["x-key-monthly-remaining"] = route.keyRemaining.monthly
  }
  if (route.chooser !== undefined) headers["x-model-chooser"] = route.chooser
  if (route.dropped.length > 0) headers["x-dropped-parameters"] = route.dropped.join(", ")
  if (route.rate !== undefined) Object.assign(headers, rateLimitHeaders(route.rate))
  return headers
}

/** The reply's wire form through its format: the whole body as JSON, or the stream's frames. */
const renderReply = <D extends DecodedInference, R, F extends ValidationFailed | NotFound>(
  format: InboundFormat<D, R, F>,
  reply: Reply,
  decoded: D,
  credential: Credential
): Effect.Effect<InferenceResponse, never, R> => {
  if (reply._tag === "Stream") {
    // The frames carry the services they need, so the response that writes them needs none.
    return Effect.map(Effect.context<R>(), (context) => ({
      _tag: "Stream" as const,
      headers: { ...routeHeaders(reply.route), ...SSE_HEADERS },
      frames: Stream.provideContext(format.frames(reply, decoded, credential), context)
    }))
  }
  return Effect.map(format.whole(reply, decoded, credential), (json) => ({
    _tag: "Whole" as const,
    headers: {
      ...routeHeaders(reply.route),
      "content-type": "application/json",
      "x-compute-used": reply.settled.chargeWei.toString(),
      "x-compute-remaining": reply.settled.balanceWei.toString()
    },
    json
  }))
}

/**
 * The request, from its credential to its reply. `body` is read only once the credential may spend, so a read-only
 * grant learns what it lacks whatever it sent.
 */
export const answerInference = <D extends DecodedInference, R, F extends ValidationFailed | NotFound, E, RB>(
  format: InboundFormat<D, R, F>,
  credential: Credential,
  body: Effect.Effect<unknown, E | ValidationFailed, RB>,
  head: InferenceHead = {}
) =>
  Effect.gen(function* () {
    yield* requireScope(credential, "account:act")
    const decoded = yield* Effect.flatMap(body, (json) => format.decode(json, credential, head))
    const exchange = yield* Exchange
    const reply = yield* exchange.serve({
      format: format.name,
      chat: decoded.chat,
      route: decoded.route,
      stream: decoded.stream,
      endUser: decoded.endUser,
      dropped: decoded.dropped,
      apiKey: credential
    })
    return yield* renderReply(format, reply, decoded, credential)
  })
