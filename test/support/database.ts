/**
 * Databases for tests. Each suite gets its own: a fresh database on the PostgreSQL server chosen by
 * globalSetup, or an in-memory PGlite behind its own loopback socket when no server can be had.
 */
import { Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"
import { TestDatabase } from "../../layers/Test.ts"
import { acquireEmbeddedPostgres } from "../../services/platform/EmbeddedPostgres.ts"

export type Backend = "postgres" | "pglite"

export interface TestDatabase {
  readonly backend: Backend
  readonly url: string
  readonly close: () => Promise<void>
}

export const availableBackend = (): Backend => inject("databaseBackend")

const withAdmin = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: inject("postgresAdminUrl") })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const createPostgresDatabase = async (): Promise<TestDatabase> => {
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(inject("postgresAdminUrl"))
  url.pathname = `/${name}`
  return {
    backend: "postgres",
    url: url.toString(),
    close: () =>
      withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)
  }
}

const createPgliteDatabase = async (): Promise<TestDatabase> => {
  const scope = Effect.runSync(Scope.make())
  const handle = await Effect.runPromise(
    acquireEmbeddedPostgres({ dataDir: undefined, maxConnections: 32 }).pipe(
      Scope.extend(scope),
      Logger.withMinimumLogLevel(LogLevel.Warning)
    )
  )
  return {
    backend: "pglite",
    url: Redacted.value(handle.url),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** A new, empty database on `backend` (default: the one globalSetup chose). */
export const createTestDatabase = (backend: Backend = availableBackend()): Promise<TestDatabase> =>
  backend === "postgres" ? createPostgresDatabase() : createPgliteDatabase()

/** One statement on its own connection, for a test to look at (or tamper with) what the service stored. */
export const queryDatabase = async (database: TestDatabase, text: string, values: ReadonlyArray<unknown> = []): Promise<Array<any>> => {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return (await client.query(text, [...values])).rows
  } finally {
    await client.end()
  }
}

/**
 * A scratch database for an Effect suite: created when the layer is built, the product's migrations applied, dropped
 * when its scope closes (layers/Test.ts `TestDatabase` over createTestDatabase).
 */
export const ScratchDatabase = (poolSize = 4) =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(Effect.promise(() => createTestDatabase()), (database) => Effect.promise(() => database.close())),
      (database) => TestDatabase(database.url, poolSize)
    )
  )
