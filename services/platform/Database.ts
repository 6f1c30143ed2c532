/**
 * The database boundary shared by every repository. Infrastructure failures are not part of any domain
 * error type: a lost connection becomes ServiceUnavailable (503) and anything else a defect (500).
 */
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted, String as Str } from "effect"
import { ServiceUnavailable } from "../../domain/errors.ts"

export interface PgConnectionOptions {
  readonly url: Redacted.Redacted<string>
  readonly poolSize: number
  readonly connectTimeoutMs: number
}

/** The one PgClient configuration: camelCase in TypeScript, snake_case in SQL. */
export const pgClientLayer = (options: PgConnectionOptions) =>
  PgClient.layer({
    url: options.url,
    maxConnections: options.poolSize,
    connectTimeout: Duration.millis(options.connectTimeoutMs),
    idleTimeout: Duration.seconds(30),
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
