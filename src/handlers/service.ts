import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AutoRouter } from "../../services/exchange/AutoRouter.ts"
import { ServiceStatus } from "../../services/platform/ServiceStatus.ts"
import { ServerApi } from "../api/ServerApi.ts"
import { SERVICE_VERSION } from "../version.ts"

export const ServiceHandlers = HttpApiBuilder.group(ServerApi, "service", (handlers) =>
  handlers.handle("status", () =>
    Effect.gen(function* () {
      const status = yield* Effect.flatMap(ServiceStatus, (service) => service.check)
      const autoRouting = yield* Effect.flatMap(AutoRouter, (router) => router.health)
      return { status: "ok" as const, version: SERVICE_VERSION, ...status, exchange: { autoRouting } }
    })
  )
)
