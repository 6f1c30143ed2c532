/**
 * Turns whatever a request failed with into one of the domain errors, then renders it. Runs around the
 * whole router (as HttpApi-level middleware), so it sees handler failures, decode failures, unknown routes
 * and defects before the platform's own encoders would answer with their shapes.
 */
import { HttpApiError, HttpServerError, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Cause, Effect } from "effect"
import {
  type ApiError,
  BadRequest,
  InternalError,
  isApiError,
  MethodNotAllowed,
  NotFound,
  ServiceUnavailable,
  ValidationFailed,
  type ValidationIssue
} from "../../domain/errors.ts"
import { renderError } from "./errorEnvelope.ts"
import { pathOf } from "./paths.ts"
import { REQUEST_ID_HEADER } from "./requestContext.ts"
import type { RouteTable } from "./routeTable.ts"

const isStrictPrefix = (prefix: ReadonlyArray<unknown>, path: ReadonlyArray<unknown>) =>
  prefix.length < path.length && prefix.every((segment, i) => segment === path[i])

/**
 * One issue per offending field. When a field failed inside (say `tags.1`), the decoder also reports
 * the field itself against the other members of its union (`tags`: "Expected undefined"); the deeper
 * issue is the one that helps, so the shallower is dropped.
 */
const issuesOf = (error: HttpApiError.HttpApiDecodeError): ReadonlyArray<ValidationIssue> => {
  const all = error.issues.map((issue) => {
    const path = issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)))
    return { param: path.join("."), path, message: issue.message }
  })
  const deepest = all.filter((issue) => !all.some((other) => isStrictPrefix(issue.path, other.path)))
  // An optional or nullable field that failed is also reported against the union's other members ("Expected
  // undefined", "Expected null"), which says nothing the real issue does not; and one field is one issue.
  const isUnionNoise = (message: string) => /^Expected (undefined|null)\b/.test(message)
  const kept = deepest.filter(
    (issue) => !(isUnionNoise(issue.message) && deepest.some((other) => other !== issue && other.param === issue.param && !isUnionNoise(other.message)))
  )
  return kept.filter((issue, index) => kept.findIndex((other) => other.param === issue.param) === index)
}

/**
 * A request no route takes: 405 with the methods the path has, or 404 when no route has the path. Also used
 * before a body is read, so a body sent to the wrong method or path is refused for that, not for its size or type.
 */
export const routeMiss = (method: string, path: string, routes: RouteTable): NotFound | MethodNotAllowed => {
  const allow = routes.methodsAt(path)
  return allow.length === 0 || allow.includes(method)
    ? new NotFound({ message: `No such endpoint: ${method} ${path}` })
    : new MethodNotAllowed({ message: `${method} is not supported on ${path}; use ${allow.join(", ")}`, details: { allow } })
}

const isMalformedBody = (u: unknown): u is HttpServerError.RequestError =>
  HttpServerError.isServerError(u) && u._tag === "RequestError" && u.reason === "Decode"

/** Classifies a failure; `undefined` when the cause is only an interruption (the client went away). */
export const toApiError = (
  cause: Cause.Cause<unknown>,
  request: HttpServerRequest.HttpServerRequest,
  routes: RouteTable
): ApiError | undefined => {
  if (Cause.isInterruptedOnly(cause)) return undefined
  const failure = Cause.squash(cause)
  if (isApiError(failure)) return failure
  if (failure instanceof HttpApiError.HttpApiDecodeError) return ValidationFailed.fromIssues(issuesOf(failure))
  if (failure instanceof HttpServerError.RouteNotFound) return routeMiss(request.method, pathOf(request.url), routes)
  if (isMalformedBody(failure)) {
    return new BadRequest({
      message:
        failure.cause instanceof SyntaxError
          ? "The request body is not valid JSON."
          : "The request body could not be read."
    })
  }
  const reference = request.headers[REQUEST_ID_HEADER]
  return new InternalError({
    message: `An unexpected error occurred.${reference === undefined ? "" : ` Reference: ${reference}.`}`
  })
}

/** What the operator needs to see: a defect in full, an unreachable dependency as a warning. */
const logFailure = (error: ApiError, cause: Cause.Cause<unknown>) =>
  error instanceof InternalError
    ? Effect.logError("unhandled failure", cause)
    : error instanceof ServiceUnavailable
      ? Effect.logWarning(error.message)
      : Effect.void

export const translateErrors =
  (routes: RouteTable) =>
  <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.catchAllCause(app, (cause) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const error = toApiError(cause, request, routes)
        if (error === undefined) return Effect.failCause(cause)
        // A defect's details go to the log with the request id, never to the client.
        return Effect.as(logFailure(error, cause), renderError(error))
      })
    )
