/**
 * SPEC "Oracle endpoints": every oracle response except 429 carries X-Methodology-Version, the methodology in force
 * now. It sits inside the rate limiter, so a 429 (answered before this runs) never carries it.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { isOraclePath, pathOf } from "./paths.ts"

export const METHODOLOGY_HEADER = "x-methodology-version"

export const methodologyHeader =
  (activeVersion: Effect.Effect<number>) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      if (!isOraclePath(pathOf(request.url))) return app
      return Effect.flatMap(activeVersion, (version) =>
        Effect.zipRight(
          HttpApp.appendPreResponseHandler((_request, response) =>
            Effect.succeed(HttpServerResponse.setHeader(response, METHODOLOGY_HEADER, String(version)))
          ),
          app
        )
      )
    })
