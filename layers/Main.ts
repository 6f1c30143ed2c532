/**
 * The whole service: HTTP server over the database, with logging. One place picks every implementation, and fixes
 * the order things start in: the ports are checked first, then the database, the chain and the oracle, then the
 * listener; `ready` is logged once the listener is up and the boot work is done.
 */
import { MetricsExporterLive } from "../services/platform/MetricsExporter.ts"
import { TracingLive } from "../services/platform/Tracing.ts"
import { type HttpApi, type HttpApiGroup, HttpServer } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { ServerApi } from "../src/api/ServerApi.ts"
import { OracleCycle } from "../services/oracle/OracleScheduler.ts"
import { RevisionRepository } from "../services/oracle/RevisionRepository.ts"
import { runsEveryRole, runsRole } from "../domain/serviceRoles.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { OperatorCredential, publishOperatorFile } from "../services/platform/OperatorCredential.ts"
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
    // The boot work (the boot scan, the history replay) is the schedule's: a replica without the jobs role has none.
    const roles = (yield* AppConfig).roles
    const runsJobs = runsRole(roles, "jobs")
    if (!runsEveryRole(roles)) yield* Effect.logInfo(`running only the roles ${roles.join(", ")} (SERVICE_ROLES)`).pipe(Effect.annotateLogs({ roles: roles.join(",") }))
    const url =
      address._tag === "TcpAddress"
        ? `http://${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}`
        : `unix:${address.path}`
    yield* Effect.forkScoped(
      announceReady({
        url,
        booted: runsJobs ? cycle.awaitBoot : Effect.void,
        revisionsConfirmed: Effect.map(revisions.confirmed, (rows) => rows.length)
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("could not report readiness", cause)))
    )
  })
)

/**
 * While the service holds embedded state under DATA_DIR (the PGlite database or the anvil chain), the operator
 * command line reaches it through DATA_DIR/operator.json (services/platform/OperatorCredential.ts).
 */
const OperatorFileLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.database.url) && Option.isSome(config.chain.rpcUrl)) return
    // A replica of some roles only holds no embedded state (AppConfig refuses it one), nor the operator's commands.
    if (!runsEveryRole(config.roles)) return
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return
    // The command line runs on this machine: a wildcard listener is reached on loopback.
    const host = address.hostname === "0.0.0.0" ? "127.0.0.1" : address.hostname === "::" ? "[::1]" : address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname
    yield* publishOperatorFile(config.dataDir, `http://${host}:${address.port}`)
  })
).pipe(Layer.provide(OperatorCredential.Default))

export const makeMainLayer = <Groups extends HttpApiGroup.HttpApiGroup.Any, E, R, Extra = never>(
  api: HttpApi.HttpApi<"server", Groups, E, R>,
  extraHandlers: Layer.Layer<Extra> = Layer.empty as Layer.Layer<Extra>
) =>
  Layer.merge(ReadyLive, OperatorFileLive).pipe(
    // Built before ReadyLive: requests are being served when it starts waiting.
    Layer.provide(serveApi(api).pipe(Layer.provide(Layer.merge(HandlersLive, extraHandlers)))),
    Layer.provide(NodeListenerLive),
    Layer.provide(OracleWithScheduleLive),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(PortsPreflightLive),
    Layer.provide(MetricsExporterLive),
    Layer.provide(AppConfig.Default),
    Layer.provide(LoggingLive),
    // Outermost, so every layer's work runs under it: the OTLP tracer, or, with no endpoint, the tracer disabled (each
    // SQL statement and service method makes a span that would otherwise be built and thrown away).
    Layer.provide(TracingLive.pipe(Layer.provide(AppConfig.Default)))
  )

export const MainLive = makeMainLayer(ServerApi)
