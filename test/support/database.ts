/**
 * Databases for tests. Each suite gets its own: a fresh database on the PostgreSQL server chosen by
 * globalSetup, or an in-memory PGlite behind its own loopback socket when no server can be had.
 *
 * A suite whose services migrate their database as they start (every server and layer harness here) can take a
 * copy of a template migrated once per run instead (createMigratedDatabase): the services then find the schema
 * current, as on any restart, and skip the ~0.7 s the 19 migrations take on an empty database. The suites about
 * migrating an empty database keep createTestDatabase.
 */
import { Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"

// The migrations' layer and the embedded database are imported when first needed, not with this module: a suite that
// only hands a database to a service process (the browser suites) then loads neither (about 1.5 s of collection).
const testLayers = () => import("../../layers/Test.ts")
const embeddedPostgres = () => import("../../services/platform/EmbeddedPostgres.ts")

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

const databaseUrl = (name: string) => {
  const url = new URL(inject("postgresAdminUrl"))
  url.pathname = `/${name}`
  return url.toString()
}

const createPostgresDatabase = async (template?: string): Promise<TestDatabase> => {
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}${template === undefined ? "" : ` TEMPLATE ${template}`}`))
  return {
    backend: "postgres",
    url: databaseUrl(name),
    close: () =>
      withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)
  }
}

/** Serializes the building of the run's template across the workers (an advisory lock on the admin database). */
const TEMPLATE_LOCK = 0x7e57_da7a

let template: Promise<string> | undefined

/**
 * The run's migrated template (globalSetup names it and drops it at the end): built by the first worker that asks,
 * under a name of its own and renamed when complete, so a template that exists is whole; no connection to it stays
 * open, as copying it requires.
 */
const migratedTemplate = (): Promise<string> =>
  (template ??= withAdmin(async (client) => {
    const name = inject("postgresTemplate")
    await client.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK])
    try {
      const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
      if (existing.rowCount === 0) {
        const building = `${name}_building`
        await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)
        await client.query(`CREATE DATABASE ${building}`)
        try {
          const { TestDatabase } = await testLayers()
          await Effect.runPromise(
            Layer.build(TestDatabase(databaseUrl(building), 1)).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))
          )
          await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
        } catch (error) {
          await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)
          throw error
        }
      }
      return name
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK])
    }
  }))

const createPgliteDatabase = async (): Promise<TestDatabase> => {
  const { acquireEmbeddedPostgres } = await embeddedPostgres()
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

/**
 * A new database for services that migrate it as they start: on PostgreSQL a copy of the run's migrated template
 * (the schema current, no rows), on PGlite an empty one (its services migrate it, as they do any database).
 */
export const createMigratedDatabase = async (): Promise<TestDatabase> =>
  availableBackend() === "postgres" ? createPostgresDatabase(await migratedTemplate()) : createPgliteDatabase()

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
 * when its scope closes (layers/Test.ts `TestDatabase` over createMigratedDatabase: its migrations find the schema
 * current on PostgreSQL, and apply it on PGlite).
 */
export const ScratchDatabase = (poolSize = 4) =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.all([
        Effect.acquireRelease(Effect.promise(() => createMigratedDatabase()), (database) => Effect.promise(() => database.close())),
        Effect.promise(testLayers)
      ]),
      ([database, { TestDatabase }]) => TestDatabase(database.url, poolSize)
    )
  )
