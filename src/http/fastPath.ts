/**
 * The oracle's hottest reads answered straight from the snapshot's bytes, ahead of the Effect request stack
 * (which costs most of a request on these endpoints: see docs/performance.md). It serves only what it can answer
 * exactly as the stack would: a GET of a pre-serialized body (no query, or the default daily history), as JSON, with
 * a current snapshot and a rate limit decided synchronously and allowed. Everything else (a 204, a refusal, Redis-backed limits, any query)
 * falls through to the stack, which remains the reference behaviour. Headers come from the same helpers.
 */
import type * as Http from "node:http"
import type { Snapshot } from "../../services/oracle/OracleSnapshot.ts"
import type { TrustProxy } from "../../services/platform/AppConfig.ts"
import type { RateLimitDecision } from "../../services/platform/RateLimits.ts"
import { SERVICE_DESC_LINK } from "./apiDocuments.ts"
import { METHODOLOGY_HEADER } from "./methodologyHeader.ts"
import { rateLimitHeaders } from "./rateLimit.ts"
import { clientAddressOf, REQUEST_ID_HEADER, requestIdOf } from "./requestContext.ts"

type BodyName = keyof Snapshot["bodies"]

/** Path -> body and the extra headers SPEC fixes for it. */
const HOT: Readonly<Record<string, { readonly body: BodyName; readonly headers?: Record<string, string> }>> = {
  "/v1/oracle/scu": { body: "scu" },
  "/v1/oracle/basket": { body: "basket" },
  "/v1/oracle/latest": { body: "latest" },
  "/v1/oracle/baseline": { body: "baseline" },
  "/v1/oracle/models": { body: "models" },
  "/v1/oracle/catalog": { body: "catalog", headers: { "cache-control": "public, max-age=60" } },
  "/v1/oracle/pricing": { body: "pricing" },
  "/v1/oracle/reconstitutions": { body: "reconstitutions" },
  "/v1/oracle/stats": { body: "stats" },
  "/v1/oracle/methodology": { body: "methodology" },
  "/v1/oracle/history": { body: "historyDefault" },
  "/v1/oracle/history?granularity=daily": { body: "historyDailyDefault" }
}

export interface FastPathDependencies {
  readonly snapshot: () => Snapshot | undefined
  /** The rate-limit decision, or undefined when it cannot be made synchronously; null when limits are off. */
  readonly rateLimit: (clientKey: string) => RateLimitDecision | undefined | null
  readonly trustProxy: TrustProxy
  readonly logRequest: (fields: Record<string, string | number>) => void
}

/** Answers the request and returns true, or returns false to let the Effect stack answer it. */
export const makeFastPath =
  (deps: FastPathDependencies) =>
  (request: Http.IncomingMessage, response: Http.ServerResponse): boolean => {
    if (request.method !== "GET" || request.url === undefined) return false
    const hot = HOT[request.url]
    // A client asking for CSV gets it from the stack.
    if (hot === undefined || /\btext\/csv\b/i.test(request.headers.accept ?? "")) return false
    const snapshot = deps.snapshot()
    const body = snapshot?.bodies[hot.body]
    if (snapshot === undefined || body === undefined || !(body instanceof Uint8Array)) return false
    const started = performance.now()
    const clientIp = clientAddressOf(request.socket.remoteAddress, request.headers["x-forwarded-for"] as string | undefined, deps.trustProxy)
    const decision = deps.rateLimit(clientIp ?? "unknown")
    if (decision === undefined || (decision !== null && !decision.allowed)) return false
    const requestId = requestIdOf(request.headers[REQUEST_ID_HEADER] as string | undefined)
    response.writeHead(200, {
      "content-type": "application/json",
      "content-length": body.byteLength,
      ...hot.headers,
      ...(decision === null ? {} : rateLimitHeaders(decision)),
      [METHODOLOGY_HEADER]: String(snapshot.methodologyVersion),
      link: SERVICE_DESC_LINK,
      [REQUEST_ID_HEADER]: requestId
    })
    response.end(body)
    deps.logRequest({
      requestId,
      method: "GET",
      path: request.url,
      clientIp: clientIp ?? "unknown",
      status: 200,
      durationMs: Math.round((performance.now() - started) * 100) / 100
    })
    return true
  }
