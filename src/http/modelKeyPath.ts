/**
 * Model keys in paths (COMPAT.md: clients send `openai%2Fgpt-5.5` in one segment). People also type the slash
 * plainly: `/v1/oracle/models/openai/gpt-5.5`, its `/price-history` and `/price-at`, `/v1/oracle/resolve/openai/gpt-5.5`.
 * Before routing, such a path is rewritten to the one-segment form, so both spellings get the same answer. An empty
 * key segment (`/v1/oracle/models//price-at`) is a blank key, refused like any other (the router would otherwise
 * collapse the double slash and read `price-at` as the key).
 */
import { HttpServerRequest } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Effect } from "effect"
import { ValidationFailed } from "../../domain/errors.ts"
import { renderError } from "./errorEnvelope.ts"

const KEYED_ROUTES: ReadonlyArray<{ readonly prefix: string; readonly subRoutes: ReadonlyArray<string> }> = [
  { prefix: "/v1/oracle/models/", subRoutes: ["price-history", "price-at"] },
  { prefix: "/v1/oracle/resolve/", subRoutes: [] }
]

export type KeyPath =
  | { readonly _tag: "Unchanged" }
  | { readonly _tag: "Rewritten"; readonly target: string }
  | { readonly _tag: "BlankKey" }

/**
 * How a request target reads once its key is one segment. A last segment naming a sub-route is the sub-route
 * (so `/models/openai/price-at` is the bare key `openai`'s price-at, never a model called `price-at`).
 */
export const keyPathOf = (target: string): KeyPath => {
  const queryAt = target.indexOf("?")
  const path = queryAt === -1 ? target : target.slice(0, queryAt)
  const route = KEYED_ROUTES.find((r) => path.startsWith(r.prefix))
  if (route === undefined) return { _tag: "Unchanged" }
  const segments = path.slice(route.prefix.length).split("/")
  // `/v1/oracle/models/` (a trailing slash) is the list itself.
  if (segments.length === 1) return { _tag: "Unchanged" }
  const last = segments[segments.length - 1]!
  const sub = route.subRoutes.includes(last) ? last : undefined
  const keySegments = sub === undefined ? segments : segments.slice(0, -1)
  if (keySegments.every((segment) => segment === "")) return { _tag: "BlankKey" }
  if (keySegments.length === 1) return { _tag: "Unchanged" }
  const key = keySegments.join("%2F")
  return {
    _tag: "Rewritten",
    target: `${route.prefix}${key}${sub === undefined ? "" : `/${sub}`}${queryAt === -1 ? "" : target.slice(queryAt)}`
  }
}

const blankKey = () =>
  renderError(
    new ValidationFailed({
      message: "Invalid request: key: the model key is blank",
      param: "key",
      issues: [{ param: "key", path: ["key"], message: "the model key is blank" }]
    })
  )

export const modelKeyPath = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const keyPath = keyPathOf(request.url)
    switch (keyPath._tag) {
      case "Unchanged":
        return app
      case "BlankKey":
        return Effect.succeed(blankKey())
      case "Rewritten":
        return Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ url: keyPath.target }))
    }
  })
