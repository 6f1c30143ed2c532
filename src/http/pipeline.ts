/**
 * The request pipeline around the router, outermost first: request id, client address and the log line;
 * the request body (JSON only, within the ceiling); the service-desc link; and the translation of every failure into the error envelope.
 */
import type { HttpApp } from "@effect/platform"
import type { TrustProxy } from "../../services/platform/AppConfig.ts"
import { requestBody } from "./requestBody.ts"
import { translateErrors } from "./errorTranslation.ts"
import { requestContext } from "./requestContext.ts"
import type { RouteTable } from "./routeTable.ts"
import { serviceDescLink } from "./serviceDescLink.ts"

export const requestPipeline =
  (options: { readonly trustProxy: TrustProxy; readonly routes: RouteTable }) =>
  (app: HttpApp.Default): HttpApp.Default =>
    requestContext(options.trustProxy)(requestBody(serviceDescLink(translateErrors(options.routes)(app))))
