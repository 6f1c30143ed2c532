/**
 * The request pipeline around the router, outermost first: request id, client address and the log line;
 * the request body (JSON only, within the ceiling); the service-desc link (on every API response, 429 included);
 * the oracle API's rate limits; X-Methodology-Version on oracle responses (never on a 429);
 * and the translation of every failure into the error envelope.
 */
import type { HttpApp } from "@effect/platform"
import type { Effect } from "effect"
import type { TrustProxy } from "../../services/platform/AppConfig.ts"
import type { RateLimits } from "../../services/platform/RateLimits.ts"
import { translateErrors } from "./errorTranslation.ts"
import { methodologyHeader } from "./methodologyHeader.ts"
import { oracleRateLimit } from "./rateLimit.ts"
import { requestBody } from "./requestBody.ts"
import { requestContext } from "./requestContext.ts"
import type { RouteTable } from "./routeTable.ts"
import { serviceDescLink } from "./serviceDescLink.ts"

export const requestPipeline =
  (options: {
    readonly trustProxy: TrustProxy
    readonly routes: RouteTable
    readonly rateLimits: RateLimits
    readonly methodologyVersion: Effect.Effect<number>
  }) =>
  (app: HttpApp.Default): HttpApp.Default =>
    requestContext(options.trustProxy)(
      requestBody(
        serviceDescLink(
          oracleRateLimit(options.rateLimits)(methodologyHeader(options.methodologyVersion)(translateErrors(options.routes)(app)))
        )
      )
    )
