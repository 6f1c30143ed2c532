/**
 * With simulated vendors (services/exchange/SimulatedVendors.ts) every answer of the exchange's routes says so, so
 * no client mistakes a synthetic completion, its usage or its bill for a vendor's. The oracle's answers do not
 * depend on the upstream and carry nothing.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { isExchangePath, pathOf } from "./paths.ts"

export const SIMULATED_UPSTREAM_HEADER = "x-upstream-simulated"

export const simulatedUpstreamHeader =
  (simulated: boolean) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    !simulated
      ? app
      : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          isExchangePath(pathOf(request.url))
            ? Effect.zipRight(
                HttpApp.appendPreResponseHandler((_request, response) =>
                  Effect.succeed(HttpServerResponse.setHeader(response, SIMULATED_UPSTREAM_HEADER, "true"))
                ),
                app
              )
            : app
        )
