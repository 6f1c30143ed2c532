/**
 * The HTTP server: the API with its handlers, the request pipeline, and a Node listener.
 */
import { Headers, HttpApiBuilder, type HttpApi, type HttpApiGroup, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { SIGNED_REQUEST_HEADERS } from "../domain/accounts/signedRequest.ts"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, Option } from "effect"
import { Providers } from "../services/exchange/Providers.ts"
import { OracleReads } from "../services/oracle/OracleReads.ts"
import { OracleSnapshot } from "../services/oracle/OracleSnapshot.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { RateLimits } from "../services/platform/RateLimits.ts"
import { ServiceStatus } from "../services/platform/ServiceStatus.ts"
import { ServerApi } from "../src/api/ServerApi.ts"
import { AccountHandlers } from "../src/handlers/account.ts"
import { AdminHandlers } from "../src/handlers/admin.ts"
import { AccountToolsHandlers, AppsHandlers } from "../src/handlers/apps.ts"
import { AuthHandlers } from "../src/handlers/auth.ts"
import { DocsHandlers } from "../src/handlers/docs.ts"
import { KeysHandlers } from "../src/handlers/keys.ts"
import { OracleHandlers } from "../src/handlers/oracle.ts"
import { InvitationPageHandlers, OrgsHandlers } from "../src/handlers/orgs.ts"
import { PagesGroupLive } from "../src/handlers/pages.ts"
import { PublicPages } from "../services/oracle/PublicPages.ts"
import { PoolsHandlers } from "../src/handlers/pools.ts"
import { PointsHandlers } from "../src/handlers/points.ts"
import { ServiceHandlers } from "../src/handlers/service.ts"
import { ChatHandlers, EmbeddingsHandlers, EstimateHandlers, MessagesHandlers, ModelsHandlers, ResponsesHandlers } from "../src/handlers/exchange.ts"
import { ActivityHandlers, GenerationsHandlers } from "../src/handlers/generations.ts"
import { UsageHandlers } from "../src/handlers/usage.ts"
import { ApiDocumentsService } from "../src/http/ApiDocumentsService.ts"
import { makeNodeServer } from "../src/http/nodeServer.ts"
import { requestPipeline } from "../src/http/pipeline.ts"
import { makeRouteTable } from "../src/http/routeTable.ts"
import { makeRoleTable, serviceRoleGate } from "../src/http/serviceRoles.ts"
import { pathOf } from "../src/http/paths.ts"
import { AccountsLive } from "./Accounts.ts"
import { ExchangeLive } from "./Exchange.ts"
import { RateLimitsLive } from "./RateLimit.ts"
import { WebPagesForRolesLive } from "./Roles.ts"

/** Handlers of every group of ServerApi. */
export const HandlersLive = Layer.mergeAll(
  DocsHandlers,
  ServiceHandlers,
  AdminHandlers,
  OracleHandlers,
  AuthHandlers,
  KeysHandlers,
  AccountHandlers,
  PointsHandlers,
  OrgsHandlers,
  AppsHandlers,
  AccountToolsHandlers,
  PoolsHandlers,
  InvitationPageHandlers,
  UsageHandlers,
  ChatHandlers,
  MessagesHandlers,
  ResponsesHandlers,
  EmbeddingsHandlers,
  ModelsHandlers,
  EstimateHandlers,
  GenerationsHandlers,
  ActivityHandlers,
  // The pages are built only on a replica that runs the web role (SERVICE_ROLES); elsewhere their routes answer 404.
  PagesGroupLive.pipe(Layer.provide(WebPagesForRolesLive))
).pipe(
  Layer.provide([ApiDocumentsService.Default, ServiceStatus.Default, PublicPages.Default.pipe(Layer.provideMerge(OracleReads.Default))]),
  Layer.provide(ExchangeLive),
  Layer.provide(AccountsLive)
)

/**
 * Serves `api` (ServerApi, or in tests ServerApi plus extra groups under the same id) on whatever
 * HttpServer is provided.
 */
export const serveApi = <Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<"server", Groups, E, R>
) => {
  const routes = makeRouteTable(api)
  const pipeline = Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = yield* AppConfig
      const rateLimits = yield* RateLimits
      const snapshot = yield* OracleSnapshot
      const providers = yield* Providers
      return HttpApiBuilder.middleware(
        requestPipeline({
          trustProxy: config.trustProxy,
          routes,
          rateLimits,
          methodologyVersion: Effect.map(snapshot.current, (s) => s.methodologyVersion),
          simulatedUpstream: providers.simulated
        })
      )
    })
  ).pipe(Layer.provide(RateLimitsLive))
  // A route of a role this replica does not run (SERVICE_ROLES) answers 404 there (src/http/serviceRoles.ts). Added
  // before the pipeline, so it runs inside it: the request id, CORS and the log line as on any answer.
  const roles = makeRoleTable(api)
  const roleGate = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) => HttpApiBuilder.middleware(serviceRoleGate(config.roles, roles)))
  )
  // With traces on, each request's span is named by its route's template; off, the span is not made at all (it
  // would be built and thrown away: a third of the request cost on the oracle's hot reads).
  const traced = Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      Option.isNone(config.tracing.url)
        ? HttpMiddleware.withTracerDisabledWhen(HttpApiBuilder.serve(), () => true)
        : HttpMiddleware.withSpanNameGenerator(HttpApiBuilder.serve(), (request) => `${request.method} ${routes.templateOf(pathOf(request.url)) ?? "unmatched"}`).pipe(
          // The span records the request's headers: every credential this service reads is redacted there.
          Layer.provide(Layer.locallyScoped(Headers.currentRedactedNames, ["authorization", "cookie", "set-cookie", "x-api-key", SIGNED_REQUEST_HEADERS.signature, "proxy-authorization"]))
        )
    )
  )
  return traced.pipe(
    // The router's default refuses path parameters over 100 characters with its own 404; model keys may be longer
    // (keys.ts refuses them with the key-level answer) and the request-head limit bounds the rest.
    Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: 8192 })),
    Layer.provide(pipeline),
    Layer.provide(roleGate),
    Layer.provide(HttpApiBuilder.api(api)),
    Layer.provide(AppConfig.Default)
  )
}

/** The Node listener on HOST:PORT (src/http/nodeServer.ts says how it serves and closes). */
export const NodeListenerLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const server = yield* makeNodeServer
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
).pipe(
  Layer.orDie,
  Layer.provide(RateLimitsLive),
  // The inference route ahead of the router serves with the handlers' own Exchange and credential cache: the same
  // layers, so the same instances.
  Layer.provide(ExchangeLive.pipe(Layer.provideMerge(AccountsLive)))
)

export const HttpServerLive = serveApi(ServerApi).pipe(
  Layer.provide(HandlersLive),
  Layer.provide(NodeListenerLive),
  Layer.provide(AppConfig.Default)
)
