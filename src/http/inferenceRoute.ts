/**
 * The inference endpoints answered ahead of the HttpApi router (DESIGN.md section 10, "Hot path budget"): the request
 * stack around the router (its middlewares, the router, the security middleware, the response encoders) costs more
 * CPU than the exchange's own work on a short completion. This runs the SAME request program as the HttpApi handlers
 * (src/http/inference.ts: credential scope, decoding, the Exchange, rendering) and writes its answer to the socket
 * itself, with what the stack would add: the request id, the service-desc link, X-Upstream-Simulated, the error
 * envelope, the request's log line.
 *
 * It takes only the plain case, decided from the request head before a byte of the body is read: POST on the exact
 * path, a JSON (or unspecified) content type, a declared length within the ceiling, a bearer token (or, on
 * /v1/messages, `x-api-key`), no Origin (a browser's request goes through the stack and its CORS and CSRF rules).
 * Everything else falls through to the stack, which stays the reference: `INFERENCE_FAST_PATH=false` turns this off,
 * and test/inference-route.test.ts compares the two.
 */
import type { HttpServerResponse } from "@effect/platform"
import { Cause, Effect, LogLevel, Option, Runtime, Stream } from "effect"
import type * as Http from "node:http"
import { InternalError, isApiError, PayloadTooLarge, ValidationFailed, BadRequest, type ApiError } from "../../domain/errors.ts"
import { credentialTokenOf } from "../../domain/accounts/credentialToken.ts"
import { Credentials } from "../../services/accounts/Credentials.ts"
import type { Exchange } from "../../services/exchange/Exchange.ts"
import { Providers } from "../../services/exchange/Providers.ts"
import { AppConfig, type TrustProxy } from "../../services/platform/AppConfig.ts"
import { SERVICE_DESC_LINK } from "./apiDocuments.ts"
import { renderError } from "./errorEnvelope.ts"
import { answerInference, INFERENCE_ROUTES, type InferenceFormatServices, type InferenceResponse, type RoutedFormat } from "./inference.ts"
import { isJsonOrUnspecified, MAX_BODY_BYTES, readWithin } from "./requestBody.ts"
import { clientAddressOf, REQUEST_ID_HEADER, requestIdOf } from "./requestContext.ts"
import { SIMULATED_UPSTREAM_HEADER } from "./simulatedUpstream.ts"
import { recordHttpRequest } from "../../services/platform/metrics.ts"
import { pathOf } from "./paths.ts"
import { parentOfHeaders } from "../../services/platform/Tracing.ts"

const FORMATS: Readonly<Record<string, RoutedFormat | undefined>> = INFERENCE_ROUTES

/** The token the request authenticates with, read by the same rule as the stack's security middlewares. */
const tokenOf = (format: RoutedFormat, headers: Http.IncomingHttpHeaders): string | undefined =>
  credentialTokenOf(headers, format.name === "messages")

/** Not JSON: refused by the decoder's rule, as the HttpApi handlers refuse it. */
const notJson = () => ValidationFailed.fromIssues([{ param: "", path: [], message: "the body is not valid JSON" }])

export interface InferenceRouteDependencies {
  readonly trustProxy: TrustProxy
  readonly simulated: boolean
  readonly logRequests: boolean
  /** Traces are exported: each request is a `server` span under the client's `traceparent`. */
  readonly tracing: boolean
  readonly runtime: Runtime.Runtime<Exchange | Credentials | InferenceFormatServices>
}

/**
 * The request's format and token when this route takes it (the plain case, decided from the head alone); undefined
 * when the stack answers it.
 */
export const takenByRoute = (
  method: string | undefined,
  url: string | undefined,
  headers: Http.IncomingHttpHeaders
): { readonly format: RoutedFormat; readonly token: string; readonly route: string } | undefined => {
  if (method !== "POST" || url === undefined) return undefined
  // A query string does not change the route (Claude Code sends `/v1/messages?beta=true`).
  const query = url.indexOf("?")
  const route = query < 0 ? url : url.slice(0, query)
  const format = FORMATS[route]
  if (format === undefined) return undefined
  const declared = headers["content-length"]
  if (declared === undefined || headers["transfer-encoding"] !== undefined || headers.origin !== undefined) return undefined
  if (!isJsonOrUnspecified(headers["content-type"]) || !(Number(declared) <= MAX_BODY_BYTES)) return undefined
  const token = tokenOf(format, headers)
  return token === undefined ? undefined : { format, token, route }
}

/** Answers the request and returns true, or returns false to let the Effect stack answer it. */
export const makeInferenceRoute = (deps: InferenceRouteDependencies) => {
  const runFork = Runtime.runFork(deps.runtime)

  return (request: Http.IncomingMessage, response: Http.ServerResponse): boolean => {
    const taken = takenByRoute(request.method, request.url, request.headers)
    if (taken === undefined) return false
    const { format, route, token } = taken
    const headers = request.headers

    const started = performance.now()
    const requestId = requestIdOf(headers[REQUEST_ID_HEADER] as string | undefined)
    const common: Record<string, string> = { link: SERVICE_DESC_LINK }
    if (deps.simulated) common[SIMULATED_UPSTREAM_HEADER] = "true"

    const logLine = (status: number) =>
      Effect.zipRight(deps.tracing ? Effect.annotateCurrentSpan("http.response.status_code", status) : Effect.void, requestLine(status))
    const requestLine = (status: number) =>
      !deps.logRequests
        ? Effect.sync(() => recordHttpRequest("POST", pathOf(request.url!), status, (performance.now() - started) / 1000))
        : Effect.logInfo("request").pipe(
          Effect.tap(() => recordHttpRequest("POST", pathOf(request.url!), status, (performance.now() - started) / 1000)),
          Effect.annotateLogs({
            method: "POST",
            path: request.url!,
            clientIp: clientAddressOf(request.socket.remoteAddress, headers["x-forwarded-for"] as string | undefined, deps.trustProxy) ?? "unknown",
            status,
            durationMs: Math.round((performance.now() - started) * 100) / 100
          })
        )

    const body = readWithin(request, MAX_BODY_BYTES).pipe(
      Effect.mapError(() => new BadRequest({ message: "The request body could not be read." })),
      Effect.flatMap((outcome): Effect.Effect<unknown, PayloadTooLarge | ValidationFailed> =>
        outcome._tag === "TooLarge"
          ? Effect.fail(new PayloadTooLarge({ message: `The request body exceeds the ${MAX_BODY_BYTES}-byte limit.`, details: { limitBytes: MAX_BODY_BYTES } }))
          : Effect.try({ try: () => (outcome.body.length === 0 ? null : (JSON.parse(outcome.body.toString("utf8")) as unknown)), catch: notJson })
      )
    )

    const program: Effect.Effect<void, never, Exchange | Credentials | InferenceFormatServices> = Effect.gen(function* () {
      // The stack reads the body before its router and security middleware run: the same order here.
      const json = yield* body
      const credential = yield* Effect.flatMap(Credentials, (credentials) => credentials.authenticate(token))
      return yield* answerInference(format, credential, Effect.succeed(json), { anthropicBeta: headers["anthropic-beta"] })
    }).pipe(
      Effect.matchCauseEffect({
        onSuccess: (answer) => Effect.zipRight(write(answer, response, common), logLine(200)),
        onFailure: (cause) => {
          // Recorded once, by onInterrupt below (a handler here is skipped when the fiber itself is interrupted).
          if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
          const failure = Cause.failureOption(cause)
          const error: ApiError = Option.isSome(failure) && isApiError(failure.value)
            ? failure.value
            : new InternalError({ message: `An unexpected error occurred. Reference: ${requestId}.` })
          const logged = error instanceof InternalError ? Effect.logError("unhandled failure", cause) : Effect.void
          const rendered = renderError(error)
          return Effect.zipRight(
            logged,
            Effect.zipRight(Effect.sync(() => writeRendered(rendered, response, { ...common, [REQUEST_ID_HEADER]: requestId })), logLine(rendered.status))
          )
        }
      }),
      // 499: the client left before the answer was whole (nginx's convention), its stream cut or its answer unsent.
      Effect.onInterrupt(() => logLine(499)),
      Effect.annotateLogs("requestId", requestId)
    )

    const fiber = runFork(
      !deps.tracing ? program : Effect.withSpan(program, `POST ${route}`, {
        kind: "server",
        parent: parentOfHeaders(headers),
        attributes: { "http.request.method": "POST", "http.route": route, "url.path": pathOf(request.url!), "cx.request_id": requestId }
      })
    )
    // A client that leaves stops its stream (the exchange drains the vendor and settles on its own).
    response.once("close", () => {
      if (!response.writableFinished) fiber.unsafeInterruptAsFork(fiber.id())
    })
    return true
  }
}

/** The answer as the stack would write it: JSON with its length, or server-sent events pulled frame by frame. */
const write = (answer: InferenceResponse, response: Http.ServerResponse, common: Record<string, string>) => {
  if (answer._tag === "Whole") {
    return Effect.sync(() => {
      const headers: Record<string, string> = { ...answer.headers, ...common, "content-length": String(Buffer.byteLength(answer.json)) }
      response.writeHead(200, headers)
      response.end(answer.json)
    })
  }
  return Effect.suspend(() => {
    response.writeHead(200, { ...answer.headers, ...common })
    // Frames go out as they come; a full socket buffer pauses the pull until it drains.
    return Stream.runForEach(answer.frames, (frame) =>
      response.write(frame) ? Effect.void : Effect.async<void>((resume) => {
        const go = () => resume(Effect.void)
        response.once("drain", go)
        response.once("close", go)
        return Effect.sync(() => {
          response.off("drain", go)
          response.off("close", go)
        })
      })
    ).pipe(Effect.ensuring(Effect.sync(() => response.end())))
  })
}

/** An envelope rendered by the one renderer (src/http/errorEnvelope.ts), written to the socket. */
const writeRendered = (rendered: HttpServerResponse.HttpServerResponse, response: Http.ServerResponse, common: Record<string, string>) => {
  const body = rendered.body
  const bytes = body._tag === "Uint8Array" ? body.body : new Uint8Array(0)
  const headers: Record<string, string> = { ...rendered.headers, ...common, "content-length": String(bytes.byteLength) }
  if (body._tag === "Uint8Array") headers["content-type"] = body.contentType
  response.writeHead(rendered.status, headers)
  response.end(bytes)
}

/** The route of this service, sharing the Exchange and the credential cache with the stack; undefined when off. */
export const makeServiceInferenceRoute = Effect.gen(function* () {
  const config = yield* AppConfig
  if (!config.exchange.fastPath) return undefined
  const providers = yield* Providers
  return makeInferenceRoute({
    trustProxy: config.trustProxy,
    simulated: providers.simulated,
    logRequests: LogLevel.greaterThanEqual(LogLevel.Info, config.logLevel),
    tracing: Option.isSome(config.tracing.url),
    runtime: yield* Effect.runtime<Exchange | Credentials | InferenceFormatServices>()
  })
})
