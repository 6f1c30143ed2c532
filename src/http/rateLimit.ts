/**
 * SPEC "Limits": the public oracle API (every path under `/v1/oracle/`) and the estimate endpoint are rate limited per client address
 * (the one requestContext resolved, per TRUST_PROXY). Every response of an oracle path carries
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (epoch seconds) for the tightest
 * budget; over any budget the answer is 429 `rate_limited` with `Retry-After`, given here before the
 * request reaches routing or any handler. Other paths pass untouched.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { RateLimited } from "../../domain/errors.ts"
import { rateLimitHeaders, type RateLimits } from "../../services/platform/RateLimits.ts"
import { renderError } from "./errorEnvelope.ts"
import { ESTIMATE_PATH, isOraclePath, pathOf } from "./paths.ts"
import { recordRateLimitRefusal } from "../../services/platform/metrics.ts"

export const oracleRateLimit =
  (limits: RateLimits) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.gen(function* () {
      if (!limits.enabled) return yield* app
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = pathOf(request.url)
      const policy = isOraclePath(path) ? "oracle" : path === ESTIMATE_PATH ? "estimate" : undefined
      if (policy === undefined) return yield* app

      const decision = yield* limits.check(Option.getOrElse(request.remoteAddress, () => "unknown"), policy)
      const headers = rateLimitHeaders(decision)
      if (!decision.allowed) {
        recordRateLimitRefusal(policy)
        const seconds = decision.retryAfterSeconds
        return HttpServerResponse.setHeaders(
          renderError(
            new RateLimited({
              message: `Too many requests to the ${policy === "oracle" ? "oracle API" : "estimate endpoint"} from this address: retry after ${seconds} second${seconds === 1 ? "" : "s"}.`,
              details: { retryAfterSeconds: seconds }
            })
          ),
          headers
        )
      }
      // Also on whatever an inner layer or the server itself ends up writing (a failure rendered later).
      yield* HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(HttpServerResponse.setHeaders(response, headers))
      )
      return HttpServerResponse.setHeaders(yield* app, headers)
    })
