import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ServiceStatus } from "../../services/platform/ServiceStatus.ts"
import { ServerApi } from "../api/ServerApi.ts"
import { SERVICE_VERSION } from "../version.ts"

export const ServiceHandlers = HttpApiBuilder.group(ServerApi, "service", (handlers) =>
  handlers.handle("status", () =>
    Effect.flatMap(ServiceStatus, (service) => service.check).pipe(Effect.map((status) => ({ status: "ok" as const, version: SERVICE_VERSION, ...status })))
  )
)
