/**
 * The Node HTTP server the API is served on. Each request meets, in order: the request-head limits (414/431 in the
 * envelope), the oracle's fast path, the inference route, then the Effect stack; what Node's own parser refuses is answered in the
 * envelope too. On shutdown it stops accepting, lets in-flight requests finish, and after SHUTDOWN_TIMEOUT_MS cuts
 * whatever connections remain.
 */
import { Effect } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { runsRole } from "../../domain/serviceRoles.ts"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import { guardRequestHead, installClientErrorHandler, SERVER_OPTIONS } from "./clientLimits.ts"
import { makeServiceFastPath } from "./fastPath.ts"
import { makeServiceInferenceRoute } from "./inferenceRoute.ts"

export const makeNodeServer = Effect.gen(function* () {
  const config = yield* AppConfig
  const server: Server = createServer({ ...SERVER_OPTIONS, keepAliveTimeout: 5_000 })
  installClientErrorHandler(server)
  // A front of a role this replica does not run (SERVICE_ROLES) is not built: its requests reach the stack's 404.
  const fastPath = runsRole(config.roles, "oracle") ? yield* makeServiceFastPath : undefined
  const inferenceRoute = runsRole(config.roles, "exchange") ? yield* makeServiceInferenceRoute : undefined
  // The socket listens before the stack attaches its "request" listener: a request arriving in between waits for it
  // rather than being left unanswered.
  const waiting: Array<readonly [IncomingMessage, ServerResponse]> = []
  const emit = server.emit.bind(server) as (event: string, ...args: Array<unknown>) => boolean
  server.on("newListener", (event) => {
    if (event === "request") setImmediate(() => waiting.splice(0).forEach(([request, response]) => emit("request", request, response)))
  })
  // Ahead of the stack's own "request" listener: a request answered here never reaches it.
  server.emit = ((event: string, ...args: Array<unknown>) => {
    if (event === "request") {
      const request = args[0] as IncomingMessage
      const response = args[1] as ServerResponse
      if (
        guardRequestHead(request, response) ||
        (fastPath !== undefined && fastPath(request, response)) ||
        (inferenceRoute !== undefined && inferenceRoute(request, response))
      ) return true
      if (server.listenerCount("request") === 0) {
        waiting.push([request, response])
        return true
      }
    }
    return emit(event, ...args)
  }) as typeof server.emit
  // Keep-alive connections would hold server.close() open: close each as soon as it falls idle
  // (once its in-flight response is sent), and cut any left when the timeout runs out.
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      const sweep = setInterval(() => server.closeIdleConnections(), 50)
      const deadline = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs)
      sweep.unref()
      deadline.unref()
      server.once("close", () => {
        clearInterval(sweep)
        clearTimeout(deadline)
      })
    })
  )
  return server
})
