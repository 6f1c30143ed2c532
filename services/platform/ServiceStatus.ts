/**
 * Readiness: the process answers and its database answers a trivial query in time.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { ServiceUnavailable } from "../../domain/errors.ts"
import { AppConfig } from "./AppConfig.ts"
import { DatabaseInfo, orDieUnlessUnavailable } from "./Database.ts"

const PING_TIMEOUT = Duration.seconds(3)

export class ServiceStatus extends Effect.Service<ServiceStatus>()("ServiceStatus", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { backend } = yield* DatabaseInfo
    // The roles this replica runs (SERVICE_ROLES): what a load balancer may send it.
    const { roles } = yield* AppConfig
    const startedAt = new Date(yield* Clock.currentTimeMillis).toISOString()

    const check = Effect.gen(function* () {
      const before = performance.now()
      yield* orDieUnlessUnavailable(sql`SELECT 1`).pipe(
        Effect.timeoutFail({
          duration: PING_TIMEOUT,
          onTimeout: () => new ServiceUnavailable({ message: "The database did not answer in time." })
        })
      )
      const latencyMs = Math.round((performance.now() - before) * 100) / 100
      return { startedAt, roles, database: { backend, latencyMs } }
    })
    return { check } as const
  })
}) {}
