/**
 * The whole service: HTTP server over the database, with logging. One place picks every implementation, and fixes
 * the order things start in: the ports are checked first, then the database, the chain and the oracle, then the
 * listener; `ready` is logged once the listener is up and the boot work is done.
 */
import { type HttpApi, type HttpApiGroup, HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import { ServerApi } from "../src/api/ServerApi.ts"
import { OracleCycle } from "../services/oracle/OracleScheduler.ts"
import { RevisionRepository } from "../services/oracle/RevisionRepository.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { announceReady, preflightPorts } from "../services/platform/Startup.ts"
import { DatabaseLive } from "./Database.ts"
import { HandlersLive, NodeListenerLive, serveApi } from "./HttpServer.ts"
import { LoggingLive } from "./Logging.ts"
import { OracleWithScheduleLive } from "./Oracle.ts"

/** A busy port fails the start before the embedded database and chain are opened. */
const PortsPreflightLive = Layer.effectDiscard(preflightPorts)

/** Waits in the background for the boot work, then logs the one `ready` line. */
const ReadyLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const address = (yield* HttpServer.HttpServer).address
    const cycle = yield* OracleCycle
    const revisions = yield* RevisionRepository
    const url =
      address._tag === "TcpAddress"
        ? `http://${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}`
        : `unix:${address.path}`
    yield* Effect.forkScoped(
      announceReady({
        url,
        booted: cycle.awaitBoot,
        revisionsConfirmed: Effect.map(revisions.confirmed, (rows) => rows.length)
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("could not report readiness", cause)))
    )
  })
)

export const makeMainLayer = <Groups extends HttpApiGroup.HttpApiGroup.Any, E, R, Extra = never>(
  api: HttpApi.HttpApi<"server", Groups, E, R>,
  extraHandlers: Layer.Layer<Extra> = Layer.empty as Layer.Layer<Extra>
) =>
  ReadyLive.pipe(
    // Built before ReadyLive: requests are being served when it starts waiting.
    Layer.provide(serveApi(api).pipe(Layer.provide(Layer.merge(HandlersLive, extraHandlers)))),
    Layer.provide(NodeListenerLive),
    Layer.provide(OracleWithScheduleLive),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(PortsPreflightLive),
    Layer.provide(AppConfig.Default),
    Layer.provide(LoggingLive)
  )

export const MainLive = makeMainLayer(ServerApi)
