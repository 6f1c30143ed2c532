/**
 * RFC 8631: every API response points at the service description, except the documentation itself.
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { isDocumentationPath, SERVICE_DESC_LINK } from "./apiDocuments.ts"

export const serviceDescLink = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((request, response) => {
      const path = request.url.split("?")[0] ?? request.url
      return Effect.succeed(
        path.startsWith("/v1/") && !isDocumentationPath(path)
          ? HttpServerResponse.setHeader(response, "link", SERVICE_DESC_LINK)
          : response
      )
    }),
    app
  )
