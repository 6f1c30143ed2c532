/**
 * The database boundary shared by every repository. Infrastructure failures are not part of any domain
 * error type: a lost connection becomes ServiceUnavailable (503) and anything else a defect (500).
 */
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Clock, Duration, Effect, Layer, Redacted, Schedule, String as Str } from "effect"
import * as Pg from "pg"
import { ServiceUnavailable } from "../../domain/errors.ts"
import { recordDbPool } from "./metrics.ts"

export interface PgConnectionOptions {
  readonly url: Redacted.Redacted<string>
  readonly poolSize: number
  readonly connectTimeoutMs: number
}

/** How often the pool's counts are copied into `cx_db_pool_connections` (three property reads). */
const POOL_SAMPLE_INTERVAL = Duration.seconds(2)

/**
 * The one PgClient configuration: camelCase in TypeScript, snake_case in SQL. The pool is built here rather than by
 * `PgClient.layer` (the same settings) because the client does not expose it, and its counts are a metric.
 */
export const pgClientLayer = (options: PgConnectionOptions) =>
  PgClient.layerFromPool({
    acquire: Effect.gen(function* () {
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const pool = new Pg.Pool({
            connectionString: Redacted.value(options.url),
            connectionTimeoutMillis: options.connectTimeoutMs,
            idleTimeoutMillis: 30_000,
            max: options.poolSize,
            application_name: "compute-exchange"
          })
          // A connection's error reaches its query; an idle one's would otherwise crash the process.
          pool.on("error", () => undefined)
          return pool
        }),
        (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
      )
      yield* Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(options.connectTimeoutMs),
          onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        })
      )
      // On the wall clock, as the pool's own timers are: a test clock moved by hours would otherwise step the
      // sampler through every interval it skips.
      yield* Effect.forkScoped(
        Effect.repeat(Effect.sync(() => recordDbPool(pool)), Schedule.spaced(POOL_SAMPLE_INTERVAL)).pipe(Effect.withClock(Clock.make()))
      )
      return pool
    }),
    applicationName: "compute-exchange",
    transformQueryNames: Str.camelToSnake,
    transformResultNames: Str.snakeToCamel
  })

// SQLSTATE class 08 (connection exception), shutdown and overload codes, and the node-postgres/socket
// messages that mean the server cannot be reached.
const unavailableSqlStates = /^(08|57P0[1-3]|53300)/
const unavailableMessages =
  /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|ETIMEDOUT|EPIPE|Connection terminated|timeout exceeded when trying to connect|Connection timed out|Failed to connect|Client has encountered a connection error|Too many connections|Handler disconnected/i

const describeCause = (cause: unknown): { code?: string; message: string } => {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code
    return typeof code === "string" ? { code, message: cause.message } : { message: cause.message }
  }
  return { message: String(cause) }
}

export const isDatabaseUnavailable = (error: SqlError): boolean => {
  const { code, message } = describeCause(error.cause)
  if (code !== undefined && (unavailableSqlStates.test(code) || unavailableMessages.test(code))) return true
  return unavailableMessages.test(message) || unavailableMessages.test(error.message)
}

/** Ends the SqlError channel at a repository: 503 when the database is unreachable, else a defect. */
export const orDieUnlessUnavailable = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError>, R> =>
  Effect.catchIf(
    effect,
    (error): error is SqlError => error instanceof SqlError,
    (error) =>
      isDatabaseUnavailable(error)
        ? Effect.die(new ServiceUnavailable({ message: "The database is unreachable; retry shortly." }))
        : Effect.die(error)
  ) as Effect.Effect<A, Exclude<E, SqlError>, R>

export type DatabaseBackend = "postgres" | "pglite"

/** Which backend serves this process, for logs and the status endpoint. */
export class DatabaseInfo extends Effect.Tag("DatabaseInfo")<DatabaseInfo, { readonly backend: DatabaseBackend }>() {
  static layer = (backend: DatabaseBackend) => Layer.succeed(DatabaseInfo, { backend })
}
