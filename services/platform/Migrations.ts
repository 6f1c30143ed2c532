/**
 * Runs pending migrations under the migrator's table lock, so several replicas booting at once apply
 * each migration exactly once.
 */
import { NodeContext } from "@effect/platform-node"
import { PgMigrator } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import { migrations } from "../../migrations/index.ts"

export const runMigrations = PgMigrator.run({
  loader: PgMigrator.fromRecord(migrations),
  table: "schema_migrations"
}).pipe(
  Effect.tap((applied) =>
    applied.length === 0
      ? Effect.logInfo("database schema is current")
      : Effect.logInfo(`applied ${applied.length} migration(s)`).pipe(
          Effect.annotateLogs("migrations", applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", "))
        )
  ),
  Effect.provide(NodeContext.layer),
  Effect.withSpan("migrations")
)

/** A layer that completes once the schema is current. */
export const MigrationsLive = Layer.effectDiscard(runMigrations)
