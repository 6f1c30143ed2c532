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

const RecordedRow = Schema.Struct({ name: Schema.String, sha256: Schema.String })

/** The hex sha256 of a repeatable migration's text, as `repeatable_migrations` records it. */
export const repeatableHash = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/**
 * Applies each repeatable migration whose text's sha256 differs from the one recorded (or that was never applied),
 * in order, and records the new hash with the time from the Clock. One transaction, which first takes the lock the
 * numbered migrator takes: two replicas starting together queue there, and the second finds the first one's hashes
 * recorded and applies nothing; a replica running numbered migrations is never interleaved with it. A text that
 * fails leaves everything as it was (the transaction rolls back) and fails the start. Answers the names applied.
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
          execute: () => sql`SELECT name, sha256 FROM repeatable_migrations`
        })(undefined).pipe(Effect.catchTag("ParseError", Effect.die))
        const recorded = new Map(rows.map((row) => [row.name, row.sha256]))
        const applied: Array<string> = []
        for (const migration of entries) {
          const hash = repeatableHash(migration.sql)
          if (recorded.get(migration.name) === hash) continue
          yield* sql.unsafe(migration.sql).pipe(
            Effect.mapError((cause) =>
              new MigrationError({ reason: "failed", message: `Repeatable migration "${migration.name}" failed`, cause })
            )
          )
          const at = new Date(yield* Clock.currentTimeMillis)
          yield* sql`
            INSERT INTO repeatable_migrations (name, sha256, applied_at) VALUES (${migration.name}, ${hash}, ${at})
            ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, applied_at = excluded.applied_at`
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
