/**
 * The HTTP server: the API with its handlers, the request pipeline, and a Node listener.
 */
import { HttpApiBuilder, type HttpApi, type HttpApiGroup, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, LogLevel, Runtime } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { OracleSnapshot } from "../services/oracle/OracleSnapshot.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { RateLimits } from "../services/platform/RateLimits.ts"
import { ServiceStatus } from "../services/platform/ServiceStatus.ts"
import { ServerApi } from "../src/api/ServerApi.ts"
import { AdminHandlers } from "../src/handlers/admin.ts"
import { DocsHandlers } from "../src/handlers/docs.ts"
import { OracleHandlers } from "../src/handlers/oracle.ts"
import { ServiceHandlers } from "../src/handlers/service.ts"
import { ApiDocumentsService } from "../src/http/ApiDocumentsService.ts"
import { makeFastPath } from "../src/http/fastPath.ts"
import { requestPipeline } from "../src/http/pipeline.ts"
import { makeRouteTable } from "../src/http/routeTable.ts"
import { RateLimitsLive } from "./RateLimit.ts"

/** Handlers of every group of ServerApi. */
export const HandlersLive = Layer.mergeAll(DocsHandlers, ServiceHandlers, AdminHandlers, OracleHandlers).pipe(
  Layer.provide([ApiDocumentsService.Default, ServiceStatus.Default])
)

/**
 * Serves `api` (ServerApi, or in tests ServerApi plus extra groups under the same id) on whatever
 * HttpServer is provided.
 */
export const serveApi = <Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<"server", Groups, E, R>
) => {
  const pipeline = Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = yield* AppConfig
      const rateLimits = yield* RateLimits
      const snapshot = yield* OracleSnapshot
      return HttpApiBuilder.middleware(
        requestPipeline({
          trustProxy: config.trustProxy,
          routes: makeRouteTable(api),
          rateLimits,
          methodologyVersion: Effect.map(snapshot.current, (s) => s.methodologyVersion)
        })
      )
    })
  ).pipe(Layer.provide(RateLimitsLive))
  return HttpApiBuilder.serve().pipe(
    // No tracer is configured, so the per-request span would be built and thrown away: a third of the
    // request cost on the oracle's hot reads. Enable it with the exporter, when one is added.
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(pipeline),
    Layer.provide(HttpApiBuilder.api(api)),
    Layer.provide(AppConfig.Default)
  )
}

/**
 * The oracle's hot reads, answered before a request enters the Effect stack (src/http/fastPath.ts). It shares the
 * snapshot and the rate-limit store with the stack, and logs through the service's logger.
 */
const installFastPath = (server: Server, config: AppConfig) =>
  Effect.gen(function* () {
    const snapshot = yield* OracleSnapshot
    const limits = yield* RateLimits
    const runtime = yield* Effect.runtime<never>()
    const runSyncExit = Runtime.runSyncExit(runtime)
    const fastPath = makeFastPath({
      snapshot: snapshot.peek,
      trustProxy: config.trustProxy,
      rateLimit: (clientKey) => {
        if (!limits.enabled) return null
        // A store that needs I/O (Redis) cannot answer synchronously: the stack handles those requests.
        const exit = runSyncExit(limits.check(clientKey))
        return Exit.isSuccess(exit) ? exit.value : undefined
      },
      // Only pay for the log line when it will be written.
      logRequest: LogLevel.greaterThanEqual(LogLevel.Info, config.logLevel)
        ? (fields) => void runSyncExit(Effect.logInfo("request").pipe(Effect.annotateLogs(fields)))
        : () => {}
    })
    const emit = server.emit.bind(server) as (event: string, ...args: Array<unknown>) => boolean
    server.emit = ((event: string, ...args: Array<unknown>) =>
      event === "request" && fastPath(args[0] as IncomingMessage, args[1] as ServerResponse)
        ? true
        : emit(event, ...args)) as typeof server.emit
  })

/**
 * The Node listener on HOST:PORT. On shutdown it stops accepting, lets in-flight requests finish, and
 * after SHUTDOWN_TIMEOUT_MS cuts whatever connections remain.
 */
export const NodeListenerLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const server = createServer({ keepAliveTimeout: 5_000 })
    yield* installFastPath(server, config)
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
    return NodeHttpServer.layer(() => server, { port: config.port, host: config.host }).pipe(
      Layer.tap((context) =>
        Effect.gen(function* () {
          const address = Context.get(context, HttpServer.HttpServer).address
          if (address._tag === "TcpAddress") {
            yield* Effect.logInfo(`listening on http://${address.hostname}:${address.port}`)
          }
        })
      )
    )
  })
).pipe(Layer.orDie, Layer.provide(RateLimitsLive))

export const HttpServerLive = serveApi(ServerApi).pipe(
  Layer.provide(HandlersLive),
  Layer.provide(NodeListenerLive),
  Layer.provide(AppConfig.Default)
)
