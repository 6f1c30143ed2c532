/**
 * Cross-origin reads (issue 8): a browser page on any origin may read the public API. Every response on a public
 * path (the oracle, the documents and their viewers, readiness; errors included) carries `PUBLIC_CORS_HEADERS`, and a
 * preflight `OPTIONS` of a public GET route is answered 204 here, before the body checks, the rate limit and
 * routing. Credentials are never allowed cross-origin: the origin is always `*`, never an echo of the caller's, and
 * `Access-Control-Allow-Credentials` is never sent, so a browser never attaches cookies to these reads.
 * Paths outside the public set (the maintainer API under /v1/admin) get no CORS headers at all.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { ORACLE_PATH_PREFIX, pathOf } from "./paths.ts"
import type { RouteTable } from "./routeTable.ts"

/**
 * Response headers a script may read besides the CORS-safelisted ones. `X-RateLimit-*` is spelled out: a wildcard
 * in this header means "every header" (and only without credentials), not a prefix.
 */
const EXPOSED_HEADERS = [
  "X-Request-Id",
  "X-Methodology-Version",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
  "ETag",
  "Link",
  "Allow"
]

/**
 * The exact headers every response on a public path carries. The fast path (src/http/fastPath.ts) sends this record
 * as is, so its answers stay byte-identical to the stack's.
 */
export const PUBLIC_CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "access-control-allow-origin": "*",
  "access-control-expose-headers": EXPOSED_HEADERS.join(", ")
})

/** Request headers a preflight always allows; others the browser asks for are allowed too (see preflightHeaders). */
const BASE_ALLOWED_HEADERS = ["Accept", "Authorization", "Content-Type", "If-None-Match", "X-Request-Id"]
const PREFLIGHT_METHODS = "GET, HEAD, OPTIONS"
/** One day; browsers cap it lower (Chromium at 2 hours), which only means they ask again sooner. */
const PREFLIGHT_MAX_AGE_SECONDS = 86_400
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/
const MAX_ECHOED_HEADERS = 32

/**
 * Paths under these prefixes, and these exact paths, are public reads: the oracle, the documents and their viewers
 * (`/openapi*`, `/v1/openapi*`, `/v1/docs*`), readiness. The inference API's public reads join here as they are built.
 */
const PUBLIC_PREFIXES = [ORACLE_PATH_PREFIX, "/v1/openapi", "/openapi", "/v1/docs"]
const PUBLIC_PATHS = new Set(["/v1/status"])

export const isPublicPath = (path: string): boolean =>
  PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix)) || PUBLIC_PATHS.has(path)

/**
 * Preflight answer headers. The headers the browser asks for are allowed back (nothing of ours depends on a request
 * header being absent, and without credentials there is nothing to protect), as long as they are well-formed names;
 * the base list is always allowed, so a cached preflight never refuses our own headers.
 */
export const preflightHeaders = (requested: string | undefined): Record<string, string> => {
  const allowed = [...BASE_ALLOWED_HEADERS]
  const seen = new Set(allowed.map((name) => name.toLowerCase()))
  for (const name of (requested ?? "").split(",").map((part) => part.trim()).slice(0, MAX_ECHOED_HEADERS)) {
    if (TOKEN.test(name) && !seen.has(name.toLowerCase())) {
      seen.add(name.toLowerCase())
      allowed.push(name)
    }
  }
  return {
    ...PUBLIC_CORS_HEADERS,
    "access-control-allow-methods": PREFLIGHT_METHODS,
    "access-control-allow-headers": allowed.join(", "),
    "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
    allow: PREFLIGHT_METHODS,
    vary: "Access-Control-Request-Headers"
  }
}

const withCorsHeaders = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeaders(response, PUBLIC_CORS_HEADERS))
)

/**
 * An `OPTIONS` of a public path that has a GET route is answered here (not counted against the oracle's rate limit:
 * a browser sends one per URL and header set per max-age, and counting it would halve a page's budget). An `OPTIONS`
 * of a path no route has goes on to routing and is a 404, with the CORS headers so the page can read it.
 */
export const cors =
  (routes: RouteTable) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const path = pathOf(request.url)
      if (!isPublicPath(path)) return app
      if (request.method === "OPTIONS" && routes.methodsAt(path).includes("GET")) {
        return Effect.succeed(
          HttpServerResponse.empty({
            status: 204,
            headers: preflightHeaders(request.headers["access-control-request-headers"])
          })
        )
      }
      return Effect.zipRight(withCorsHeaders, app)
    })
