/**
 * Runs pending migrations under the migrator's table lock, so several replicas booting at once apply
 * each migration exactly once; then the repeatable migrations whose text changed, under the same lock.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { MigrationError } from "@effect/sql/Migrator"
import { NodeContext } from "@effect/platform-node"
import { PgMigrator } from "@effect/sql-pg"
import { Clock, Effect, Layer, Schema } from "effect"
import { createHash } from "node:crypto"
import { migrations, repeatable, type RepeatableMigration } from "../../migrations/index.ts"

/** The numbered migrations' table; the migrator locks it (ACCESS EXCLUSIVE) for the transaction that applies them. */
const MIGRATIONS_TABLE = "schema_migrations"

/** The numbered migrations not yet applied, in id order, in one transaction (the history: append-only). */
export const runNumberedMigrations = PgMigrator.run({
  loader: PgMigrator.fromRecord(migrations),
  table: MIGRATIONS_TABLE
}).pipe(Effect.provide(NodeContext.layer))

const RecordedRow = Schema.Struct({ name: Schema.String, revision: Schema.Number, sha256: Schema.String })

/** The hex sha256 of a repeatable migration's text, as `repeatable_migrations` records it. */
export const repeatableHash = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/**
 * Applies each repeatable migration whose revision is newer than the one recorded (or that was never applied), in
 * order, and records its revision and hash with the time from the Clock. A database holding a newer revision keeps it
 * (an older build restarting during a rolling deploy must not put its older text back: it says so in a warning); the
 * same revision with another text fails the start (the text changed without its revision). One transaction, which
 * first takes the lock the numbered migrator takes: two replicas starting together queue there, and the second finds
 * the first one's revision recorded and applies nothing; a replica running numbered migrations is never interleaved
 * with it. A text that fails leaves everything as it was (the transaction rolls back) and fails the start. Answers the
 * names applied.
 */
export const applyRepeatableMigrations = (entries: ReadonlyArray<RepeatableMigration> = repeatable) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`LOCK TABLE ${sql(MIGRATIONS_TABLE)} IN ACCESS EXCLUSIVE MODE`
        const rows = yield* SqlSchema.findAll({
          Request: Schema.Void,
          Result: RecordedRow,
          execute: () => sql`SELECT name, revision, sha256 FROM repeatable_migrations`
        })(undefined).pipe(Effect.catchTag("ParseError", Effect.die))
        const recorded = new Map(rows.map((row) => [row.name, row]))
        const applied: Array<string> = []
        for (const migration of entries) {
          const hash = repeatableHash(migration.sql)
          const before = recorded.get(migration.name)
          if (before !== undefined && before.revision > migration.revision) {
            yield* Effect.logWarning(
              `repeatable migration "${migration.name}": the database holds revision ${before.revision}, newer than this build's ${migration.revision}; left as it is`
            )
            continue
          }
          if (before !== undefined && before.revision === migration.revision) {
            if (before.sha256 === hash) continue
            return yield* new MigrationError({
              reason: "failed",
              message: `Repeatable migration "${migration.name}" changed without its revision (${migration.revision} is recorded with another text): raise its revision`
            })
          }
          yield* sql.unsafe(migration.sql).pipe(
            Effect.mapError((cause) =>
              new MigrationError({ reason: "failed", message: `Repeatable migration "${migration.name}" failed`, cause })
            )
          )
          const at = new Date(yield* Clock.currentTimeMillis)
          yield* sql`
            INSERT INTO repeatable_migrations (name, revision, sha256, applied_at) VALUES (${migration.name}, ${migration.revision}, ${hash}, ${at})
            ON CONFLICT (name) DO UPDATE SET revision = excluded.revision, sha256 = excluded.sha256, applied_at = excluded.applied_at`
          applied.push(migration.name)
        }
        return applied
      })
    )
  })

/** The numbered migrations, then the repeatable ones; answers the numbered migrations applied. */
export const runMigrations = Effect.gen(function* () {
  const applied = yield* runNumberedMigrations
  const reapplied = yield* applyRepeatableMigrations()
  yield* applied.length === 0
    ? Effect.logInfo("database schema is current")
    : Effect.logInfo(`applied ${applied.length} migration(s)`).pipe(
        Effect.annotateLogs("migrations", applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", "))
      )
  if (reapplied.length > 0) {
    yield* Effect.logInfo(`applied ${reapplied.length} repeatable migration(s)`).pipe(
      Effect.annotateLogs("repeatable_migrations", reapplied.join(", "))
    )
  }
  return applied
}).pipe(Effect.withSpan("migrations"))

/** A layer that completes once the schema is current. */
export const MigrationsLive = Layer.effectDiscard(runMigrations)
