/**
 * The exchange's routes: decode the body by its wire format's rules, call the Exchange, answer JSON or server-sent
 * events with the routing headers; the model list.
 */
import { replyBillOf } from "../../domain/exchange/canonical.ts"
import { bearerTokenOf, credentialTokenOf } from "../../domain/accounts/credentialToken.ts"
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Redacted, Stream } from "effect"
import { ValidationFailed } from "../../domain/errors.ts"
import { Credentials, requireScope } from "../../services/accounts/Credentials.ts"
import { betasOf, decodeCountTokensRequest } from "../../domain/exchange/translate/anthropicInbound.ts"
import { ModelCatalog } from "../../services/exchange/ModelCatalog.ts"
import { TokenCounter } from "../../services/exchange/TokenCounter.ts"
import { Quotes } from "../../services/exchange/Quotes.ts"
import { CurrentCredential } from "../../services/accounts/CurrentIdentity.ts"
import { MessagesKeyAuth, MessageTokensCount } from "../api/ExchangeApi.ts"
import { chatCompletionsFormat } from "../http/inbound/chatCompletions.ts"
import { messagesFormat } from "../http/inbound/messages.ts"
import { responsesFormat } from "../http/inbound/responses.ts"
import { Responses } from "../../services/exchange/Responses.ts"
import { InputTokensCount } from "../../domain/exchange/wire/openaiResponsesReply.ts"
import { ServerApi } from "../api/ServerApi.ts"
import { ApiKeyAuthLive } from "../http/apiKeyAuth.ts"
import { answerInference, type InferenceResponse, routeHeaders } from "../http/inference.ts"
import { decodeEmbeddingsRequest, renderEmbeddings } from "../../domain/exchange/translate/embeddings.ts"
import { Embeddings } from "../../services/exchange/Embeddings.ts"

/** A body that is not JSON is refused like any other invalid body: 422 naming the request. */
const jsonBody = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
  Effect.mapError(request.json, () =>
    ValidationFailed.fromIssues([{ param: "", path: [], message: "the body is not valid JSON" }])
  )
)

const respond = (response: InferenceResponse) =>
  response._tag === "Whole"
    ? HttpServerResponse.text(response.json, { headers: response.headers, contentType: "application/json" })
    : HttpServerResponse.stream(response.frames.pipe(Stream.encodeText), { contentType: "text/event-stream", headers: response.headers })

export const ChatHandlers = HttpApiBuilder.group(ServerApi, "chat", (handlers) =>
  handlers.handleRaw("chatCompletions", () =>
    Effect.flatMap(CurrentCredential, (apiKey) => Effect.map(answerInference(chatCompletionsFormat, apiKey, jsonBody), respond))
  )
).pipe(Layer.provide(ApiKeyAuthLive))

/** `POST /v1/embeddings`: as a whole chat answer, JSON with the routing and billing headers. */
export const EmbeddingsHandlers = HttpApiBuilder.group(ServerApi, "embeddings", (handlers) =>
  handlers.handleRaw("embeddings", () =>
    Effect.gen(function* () {
      const apiKey = yield* CurrentCredential
      yield* requireScope(apiKey, "account:act")
      const decoded = yield* Effect.flatMap(jsonBody, decodeEmbeddingsRequest)
      const embeddings = yield* Embeddings
      const reply = yield* embeddings.embed({ decoded, apiKey })
      const json = JSON.stringify(renderEmbeddings(reply.vectors, reply.model, reply.promptTokens, decoded.encoding, replyBillOf(reply)))
      return HttpServerResponse.text(json, {
        contentType: "application/json",
        headers: {
          ...routeHeaders(reply.route),
          "x-compute-used": reply.chargeWei.toString(),
          "x-compute-remaining": reply.balanceWei.toString()
        }
      })
    })
  )
).pipe(Layer.provide(ApiKeyAuthLive))

/** Bearer first, else `x-api-key`; either scheme reads the same request, so a refusal names the key that was sent. */
const MessagesKeyAuthLive = Layer.effect(
  MessagesKeyAuth,
  Effect.map(Credentials, (credentials) => {
    const authenticate = () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        return credentials.authenticate(credentialTokenOf(request.headers, true) ?? "")
      })
    return MessagesKeyAuth.of({ bearer: (_: Redacted.Redacted) => authenticate(), apiKey: (_: Redacted.Redacted) => authenticate() })
  })
)

const encodeCount = HttpServerResponse.schemaJson(MessageTokensCount)

export const MessagesHandlers = HttpApiBuilder.group(ServerApi, "messages", (handlers) =>
  Effect.gen(function* () {
    const counter = yield* TokenCounter
    return handlers
      .handleRaw("messages", () =>
        Effect.gen(function* () {
          const apiKey = yield* CurrentCredential
          const request = yield* HttpServerRequest.HttpServerRequest
          return respond(yield* answerInference(messagesFormat, apiKey, jsonBody, { anthropicBeta: request.headers["anthropic-beta"] }))
        })
      )
      .handleRaw("countTokens", () =>
        Effect.gen(function* () {
          const apiKey = yield* CurrentCredential
          // As the send: a credential that may not spend learns so whatever it sent.
          yield* requireScope(apiKey, "account:act")
          const request = yield* HttpServerRequest.HttpServerRequest
          const decoded = yield* Effect.flatMap(jsonBody, (json) => decodeCountTokensRequest(json, betasOf(request.headers["anthropic-beta"])))
          const inputTokens = yield* counter.count({ ...decoded, format: "messages", apiKey })
          return yield* Effect.orDie(encodeCount({ input_tokens: inputTokens }))
        })
      )
  })
).pipe(Layer.provide(MessagesKeyAuthLive))

const encodeInputTokens = HttpServerResponse.schemaJson(InputTokensCount)

export const ResponsesHandlers = HttpApiBuilder.group(ServerApi, "responses", (handlers) =>
  Effect.gen(function* () {
    const responses = yield* Responses
    return handlers
      .handleRaw("createResponse", () =>
        Effect.flatMap(CurrentCredential, (apiKey) => Effect.map(answerInference(responsesFormat, apiKey, jsonBody), respond))
      )
      .handleRaw("responseInputTokens", () =>
        Effect.gen(function* () {
          const apiKey = yield* CurrentCredential
          // As the send: a credential that may not spend learns so whatever it sent.
          yield* requireScope(apiKey, "account:act")
          const inputTokens = yield* Effect.flatMap(jsonBody, (json) => responses.countInput(apiKey, json))
          return yield* Effect.orDie(encodeInputTokens({ object: "response.input_tokens", input_tokens: inputTokens }))
        })
      )
      .handle("getResponse", ({ path }) =>
        Effect.flatMap(CurrentCredential, (apiKey) => Effect.zipRight(requireScope(apiKey, "account:read"), responses.retrieve(apiKey.accountId, path.id)))
      )
      .handle("deleteResponse", ({ path }) =>
        Effect.flatMap(CurrentCredential, (apiKey) => Effect.zipRight(requireScope(apiKey, "account:act"), responses.remove(apiKey.accountId, path.id)))
      )
      .handle("responseInputItems", ({ path, urlParams }) =>
        Effect.flatMap(CurrentCredential, (apiKey) =>
          Effect.zipRight(requireScope(apiKey, "account:read"), responses.inputItems(apiKey.accountId, path.id, urlParams)))
      )
  })
).pipe(Layer.provide(ApiKeyAuthLive))

export const ModelsHandlers = HttpApiBuilder.group(ServerApi, "models", (handlers) =>
  Effect.gen(function* () {
    const models = yield* ModelCatalog
    const quotes = yield* Quotes
    const credentials = yield* Credentials
    return handlers
      .handle("models", () =>
        Effect.zipLeft(models.list, HttpApp.appendPreResponseHandler((_req, response) => Effect.succeed(HttpServerResponse.setHeader(response, "cache-control", "public, max-age=60"))))
      )
      .handle("availability", () =>
        Effect.gen(function* () {
          // The key is optional (COMPAT.md): without one, the shared capacity; with one, what that key may use.
          const request = yield* HttpServerRequest.HttpServerRequest
          const token = bearerTokenOf(request.headers.authorization)
          const allowed = token === undefined ? [] : (yield* credentials.authenticate(token)).allowedModels
          return yield* quotes.availability(allowed)
        })
      )
  })
)

export const EstimateHandlers = HttpApiBuilder.group(ServerApi, "estimate", (handlers) =>
  Effect.gen(function* () {
    const quotes = yield* Quotes
    return handlers.handle("estimate", ({ urlParams }) =>
      Effect.gen(function* () {
        const { chooser, ...quote } = yield* quotes.quote({
          model: urlParams.model,
          promptTokens: urlParams.promptTokens ?? 1000,
          completionTokens: urlParams.completionTokens ?? 500,
          reasoningRequested: urlParams.reasoningRequested ?? false,
          toolsPresent: urlParams.toolsPresent ?? false,
          routingBias: urlParams.routing_bias
        })
        if (chooser !== undefined) {
          yield* HttpApp.appendPreResponseHandler((_req, response) => Effect.succeed(HttpServerResponse.setHeader(response, "x-model-chooser", chooser)))
        }
        return quote
      })
    )
  })
)

