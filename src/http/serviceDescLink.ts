/**
 * RFC 8631: every API response points at the service description, except the documentation itself.
 */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { isDocumentationPath, SERVICE_DESC_LINK } from "./apiDocuments.ts"
import { pathOf } from "./paths.ts"

/** Whether a response to this path carries the link (writers outside the stack ask too). */
export const carriesServiceDescLink = (path: string): boolean => path.startsWith("/v1/") && !isDocumentationPath(path)

export const serviceDescLink = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((request, response) => {
      const path = pathOf(request.url)
      return Effect.succeed(
        carriesServiceDescLink(path) ? HttpServerResponse.setHeader(response, "link", SERVICE_DESC_LINK) : response
      )
    }),
    app
  )
