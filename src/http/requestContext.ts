/**
 * Per-request context established before routing: the request id (an incoming X-Request-Id is kept,
 * otherwise one is made), the client address (the socket's, or X-Forwarded-For's when the proxy is
 * trusted), and one structured log line per request.
 */
import { HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as Net from "node:net"
import type { TrustProxy } from "../../services/platform/AppConfig.ts"
import { pathOf } from "./paths.ts"
import { recordHttpRequest } from "../../services/platform/metrics.ts"
import type { RouteTable } from "./routeTable.ts"

export const REQUEST_ID_HEADER = "x-request-id"

const acceptableRequestId = /^[A-Za-z0-9._:@/+=-]{1,128}$/

export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && acceptableRequestId.test(incoming) ? incoming : randomUUID()

/** `::ffff:10.0.0.1` and `10.0.0.1` are one client. */
const normalizeAddress = (address: string): string => {
  const trimmed = address.trim()
  return trimmed.startsWith("::ffff:") && Net.isIPv4(trimmed.slice(7)) ? trimmed.slice(7) : trimmed
}

export const clientAddressOf = (
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trust: TrustProxy
): string | undefined => {
  const socket = socketAddress === undefined ? undefined : normalizeAddress(socketAddress)
  if (trust._tag === "None" || forwardedFor === undefined) return socket
  const forwarded = forwardedFor.split(",").map(normalizeAddress).filter((address) => Net.isIP(address) !== 0)
  if (forwarded.length === 0) return socket
  if (trust._tag === "All") return forwarded[0]
  // With N trusted proxies, the client is the address the outermost of them saw: N from the right,
  // counting the socket's own peer (the nearest proxy) as the first.
  const chain = socket === undefined ? forwarded : [...forwarded, socket]
  return chain[Math.max(0, chain.length - 1 - trust.hops)]
}

export const requestContext =
  (trust: TrustProxy, routes: RouteTable) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.gen(function* () {
      const original = yield* HttpServerRequest.HttpServerRequest
      const requestId = requestIdOf(original.headers[REQUEST_ID_HEADER])
      const clientAddress = clientAddressOf(
        original.remoteAddress._tag === "Some" ? original.remoteAddress.value : undefined,
        original.headers["x-forwarded-for"],
        trust
      )
      const request = original.modify({
        headers: { ...original.headers, [REQUEST_ID_HEADER]: requestId },
        ...(clientAddress === undefined ? {} : { remoteAddress: clientAddress })
      })
      const started = performance.now()
      const path = pathOf(request.url)
      // An inference answer names its routing decision (the id of its bill) instead (SPEC "Response headers").
      yield* HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.succeed(response.headers[REQUEST_ID_HEADER] === undefined ? HttpServerResponse.setHeader(response, REQUEST_ID_HEADER, requestId) : response)
      )
      // The request line carries everything; other log lines inside the request carry its id (one annotation
      // keeps the per-request cost low).
      const logCompletion = (status: number) =>
        Effect.suspend(() => {
          const seconds = (performance.now() - started) / 1000
          recordHttpRequest(request.method, routes.templateOf(path) ?? "unmatched", status, seconds)
          return Effect.logInfo("request").pipe(
            Effect.annotateLogs({
              method: request.method,
              path,
              clientIp: clientAddress ?? "unknown",
              status,
              durationMs: Math.round(seconds * 100_000) / 100
            })
          )
        })
      return yield* app.pipe(
        Effect.tap((response) => logCompletion(response.status)),
        // Anything escaping is a 500; 499, the client gone before an answer (nginx's convention), is recorded by
        // onInterrupt, which runs where a failure handler is skipped (the request's fiber itself interrupted).
        Effect.tapErrorCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : logCompletion(500))),
        Effect.onInterrupt(() => logCompletion(499)),
        Effect.provideService(HttpServerRequest.HttpServerRequest, request),
        Effect.annotateLogs("requestId", requestId)
      )
    })
