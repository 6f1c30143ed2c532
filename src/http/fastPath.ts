/**
 * The oracle's hot reads (src/http/hotReads.ts) answered straight from the snapshot's bytes, ahead of the Effect
 * request stack, which costs most of a request on these endpoints (docs/performance.md). It serves only what it can
 * answer exactly as the stack would: a GET naming a hot read, wanting JSON, with a current snapshot and, when rate
 * limits are on, a decision the memory store took synchronously and that allows it. Everything else (a 204, a
 * refusal, a shared Redis store, any other query, CSV) falls through to the stack, which stays the reference:
 * `ORACLE_FAST_PATH=false` turns this off, and a test compares the two servers byte for byte (test/fast-path.test.ts).
 */
import { Effect, LogLevel, Option, Runtime } from "effect"
import type * as Http from "node:http"
import { OracleSnapshot, type Snapshot } from "../../services/oracle/OracleSnapshot.ts"
import { AppConfig, type TrustProxy } from "../../services/platform/AppConfig.ts"
import { type RateLimitDecision, RateLimits } from "../../services/platform/RateLimits.ts"
import { SERVICE_DESC_LINK } from "./apiDocuments.ts"
import { PUBLIC_CORS_HEADERS } from "./cors.ts"
import { hotReadOf, wantsCsv } from "./hotReads.ts"
import { METHODOLOGY_HEADER } from "./methodologyHeader.ts"
import { rateLimitHeaders } from "../../services/platform/RateLimits.ts"
import { clientAddressOf, REQUEST_ID_HEADER, requestIdOf } from "./requestContext.ts"
import { recordHttpRequest } from "../../services/platform/metrics.ts"
import { pathOf } from "./paths.ts"
import { epochNanos, traceAnsweredRequest } from "../../services/platform/Tracing.ts"

export interface FastPathDependencies {
  readonly snapshot: () => Snapshot | undefined
  /** The rate-limit decision, undefined when it cannot be taken synchronously; null when limits are off. */
  readonly rateLimit: ((clientKey: string) => RateLimitDecision | undefined) | null
  readonly trustProxy: TrustProxy
  /** Writes the request line; null when the log level drops it. */
  readonly logRequest: ((fields: Record<string, string | number>) => void) | null
  /** Traces the answered request (its `server` span from `startTime`); null when traces are off. */
  readonly traceRequest: ((request: Http.IncomingMessage, route: string, startTime: bigint) => void) | null
}

/** Answers the request and returns true, or returns false to let the Effect stack answer it. */
export const makeFastPath = (deps: FastPathDependencies) => {
  return (request: Http.IncomingMessage, response: Http.ServerResponse): boolean => {
    if (request.method !== "GET" || request.url === undefined) return false
    const hot = hotReadOf(request.url)
    if (hot === undefined || wantsCsv(request.headers.accept)) return false
    const snapshot = deps.snapshot()
    const body = snapshot?.bodies[hot.body]
    if (snapshot === undefined || body === undefined) return false
    const started = performance.now()
    const startTime = deps.traceRequest === null ? 0n : epochNanos()
    // The client's address only matters to the rate limit and the log line; without either it is not worked out.
    const clientIp =
      deps.rateLimit === null && deps.logRequest === null
        ? undefined
        : (clientAddressOf(request.socket.remoteAddress, request.headers["x-forwarded-for"] as string | undefined, deps.trustProxy) ??
          "unknown")
    const decision = deps.rateLimit === null ? null : deps.rateLimit(clientIp!)
    if (decision === undefined || (decision !== null && !decision.allowed)) return false
    const requestId = requestIdOf(request.headers[REQUEST_ID_HEADER] as string | undefined)
    // A fresh literal each time: writeHead takes an object as it is (a name/value list is re-checked pair by pair),
    // and building one is cheaper than copying a cached one.
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "content-length": String(body.byteLength),
      [METHODOLOGY_HEADER]: String(snapshot.methodologyVersion),
      link: SERVICE_DESC_LINK,
      [REQUEST_ID_HEADER]: requestId
    }
    for (const name in PUBLIC_CORS_HEADERS) headers[name] = PUBLIC_CORS_HEADERS[name]!
    for (const name in hot.headers) headers[name] = hot.headers[name]!
    if (decision !== null) Object.assign(headers, rateLimitHeaders(decision))
    response.writeHead(200, headers)
    response.end(body)
    recordHttpRequest("GET", pathOf(request.url!), 200, (performance.now() - started) / 1000)
    deps.traceRequest?.(request, pathOf(request.url!), startTime)
    deps.logRequest?.({
      requestId,
      method: "GET",
      path: request.url,
      clientIp: clientIp!,
      status: 200,
      durationMs: Math.round((performance.now() - started) * 100) / 100
    })
    return true
  }
}

/**
 * The fast path of this service, sharing the snapshot and the rate-limit store with the stack and logging through the
 * service's logger; undefined when `ORACLE_FAST_PATH` is false.
 */
export const makeServiceFastPath = Effect.gen(function* () {
  const config = yield* AppConfig
  if (!config.oracle.fastPath) return undefined
  const snapshot = yield* OracleSnapshot
  const limits = yield* RateLimits
  const runSyncExit = Runtime.runSyncExit(yield* Effect.runtime<never>())
  const decideNow = limits.decideNow
  const tracer = yield* Effect.tracer
  return makeFastPath({
    snapshot: snapshot.peek,
    trustProxy: config.trustProxy,
    rateLimit: !limits.enabled ? null : decideNow === undefined ? () => undefined : decideNow,
    // Only pay for the log line when it will be written.
    logRequest: LogLevel.greaterThanEqual(LogLevel.Info, config.logLevel)
      ? (fields) => void runSyncExit(Effect.logInfo("request").pipe(Effect.annotateLogs(fields)))
      : null,
    traceRequest: Option.isNone(config.tracing.url)
      ? null
      : (request, route, startTime) =>
        traceAnsweredRequest(tracer, { method: "GET", route, path: route, headers: request.headers, status: 200, startTime })
  })
})
