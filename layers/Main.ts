/**
 * The whole service: HTTP server over the database, with logging. One place picks every implementation.
 */
import type { HttpApi, HttpApiGroup } from "@effect/platform"
import { Layer } from "effect"
import { ServerApi } from "../src/api/ServerApi.ts"
import { DatabaseLive } from "./Database.ts"
import { HandlersLive, NodeListenerLive, serveApi } from "./HttpServer.ts"
import { LoggingLive } from "./Logging.ts"
import { OracleWithScheduleLive } from "./Oracle.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"

export const makeMainLayer = <Groups extends HttpApiGroup.HttpApiGroup.Any, E, R, Extra = never>(
  api: HttpApi.HttpApi<"server", Groups, E, R>,
  extraHandlers: Layer.Layer<Extra> = Layer.empty as Layer.Layer<Extra>
) =>
  serveApi(api).pipe(
    Layer.provide(Layer.merge(HandlersLive, extraHandlers)),
    Layer.provide(NodeListenerLive),
    Layer.provide(OracleWithScheduleLive),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(AppConfig.Default),
    Layer.provide(LoggingLive)
  )

export const MainLive = makeMainLayer(ServerApi)
