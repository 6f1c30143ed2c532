/**
 * The request pipeline around the router, outermost first: request id, client address and the log line;
 * the service-desc link (on every API response, errors and 429 included); CORS on public paths (and the preflight
 * answered there); a target that percent-decodes; the request body (to a route that takes it, JSON only, within the
 * ceiling); the oracle API's rate limits; X-Methodology-Version on oracle responses (never on a 429); a model key
 * written with a plain slash read as one path segment; X-Upstream-Simulated on the exchange's answers when the vendors are simulated;
 * and the translation of every failure into the error envelope.
 */
import type { HttpApp } from "@effect/platform"
import type { Effect } from "effect"
import type { TrustProxy } from "../../services/platform/AppConfig.ts"
import type { RateLimits } from "../../services/platform/RateLimits.ts"
import { wellFormedTarget } from "./clientLimits.ts"
import { cors } from "./cors.ts"
import { translateErrors } from "./errorTranslation.ts"
import { methodologyHeader } from "./methodologyHeader.ts"
import { modelKeyPath } from "./modelKeyPath.ts"
import { oracleRateLimit } from "./rateLimit.ts"
import { requestBody } from "./requestBody.ts"
import { requestContext } from "./requestContext.ts"
import type { RouteTable } from "./routeTable.ts"
import { serviceDescLink } from "./serviceDescLink.ts"
import { simulatedUpstreamHeader } from "./simulatedUpstream.ts"

export const requestPipeline =
  (options: {
    readonly trustProxy: TrustProxy
    readonly routes: RouteTable
    readonly rateLimits: RateLimits
    readonly methodologyVersion: Effect.Effect<number>
    /** Every vendor is the simulator: the exchange's answers say so. */
    readonly simulatedUpstream: boolean
  }) =>
  (app: HttpApp.Default): HttpApp.Default =>
    requestContext(options.trustProxy, options.routes)(
      serviceDescLink(
        cors(options.routes)(
          wellFormedTarget(
            requestBody(options.routes)(
              oracleRateLimit(options.rateLimits)(
                methodologyHeader(options.methodologyVersion)(
                  simulatedUpstreamHeader(options.simulatedUpstream)(modelKeyPath(translateErrors(options.routes)(app)))
                )
              )
            )
          )
        )
      )
    )
