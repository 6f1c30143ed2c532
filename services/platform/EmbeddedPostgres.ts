/**
 * Embedded PostgreSQL for `npm start` with no DATABASE_URL: PGlite persisted under DATA_DIR, served on a
 * loopback socket so the same PgClient (and so the same SQL) runs against it as against a real server.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { keepProtocolExchangesTogether } from "./pgliteQueue.ts"
import { Clock, Data, Effect, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { processAlive } from "./processes.ts"

export interface EmbeddedPostgresOptions {
  /** Directory holding the database files; undefined keeps the database in memory (tests). */
  readonly dataDir: string | undefined
  /** Connections the socket accepts: at least the client's pool size. */
  readonly maxConnections: number
}

export interface EmbeddedPostgresHandle {
  readonly url: Redacted.Redacted<string>
  readonly dataDir: string | undefined
}

export class EmbeddedDatabaseInUse extends Data.TaggedError("EmbeddedDatabaseInUse")<{ readonly message: string }> {}

/**
 * PGlite files must have one writer: a lock file next to them names the process that has them open. A lock left
 * by a process that is gone is taken over.
 */
const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const lockFile = `${dataDir}.lock`
        try {
          Fs.writeFileSync(lockFile, String(process.pid), { flag: "wx" })
        } catch {
          const holder = Number(Fs.readFileSync(lockFile, "utf8"))
          if (Number.isInteger(holder) && holder !== process.pid && processAlive(holder)) {
            throw new EmbeddedDatabaseInUse({
              message: `the embedded database ${dataDir} is open in process ${holder} (is the service running on this DATA_DIR?)`
            })
          }
          Fs.writeFileSync(lockFile, String(process.pid))
        }
        return lockFile
      },
      catch: (error) => (error instanceof EmbeddedDatabaseInUse ? error : new EmbeddedDatabaseInUse({ message: String(error) }))
    }),
    (lockFile) => Effect.sync(() => Fs.rmSync(lockFile, { force: true }))
  )

/** Opens the database and its socket for the lifetime of the scope; closing it flushes PGlite to disk. */
export const acquireEmbeddedPostgres = (options: EmbeddedPostgresOptions) =>
  Effect.gen(function* () {
    const dataDir = options.dataDir === undefined ? undefined : Path.resolve(options.dataDir)
    if (dataDir !== undefined) {
      Fs.mkdirSync(dataDir, { recursive: true })
      yield* lockDataDir(dataDir)
    }
    const started = yield* Clock.currentTimeMillis
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create(dataDir === undefined ? {} : { dataDir })),
      (db) =>
        Effect.promise(() => db.close()).pipe(
          Effect.tap(() => Effect.logInfo("embedded database closed")),
          Effect.catchAllDefect((defect) => Effect.logWarning("embedded database did not close cleanly", defect))
        )
    )
    const server = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const server = new PGLiteSocketServer({
          db,
          host: "127.0.0.1",
          port: 0,
          maxConnections: options.maxConnections
        })
        keepProtocolExchangesTogether(server)
        await server.start()
        return server
      }),
      (server) => Effect.promise(() => server.stop())
    )
    const address = server.getServerConn()
    const ready = yield* Clock.currentTimeMillis
    yield* Effect.logInfo("embedded database ready").pipe(
      Effect.annotateLogs({ address, dataDir: dataDir ?? "(memory)", openedInMs: ready - started })
    )
    return {
      url: Redacted.make(`postgres://postgres@${address}/postgres?sslmode=disable`),
      dataDir
    } satisfies EmbeddedPostgresHandle
  })
