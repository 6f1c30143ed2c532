/**
 * Which database backs the service: PostgreSQL at DATABASE_URL, or embedded PGlite under DATA_DIR.
 * Either way the same PgClient, the same migrations and the same queries run against it.
 */
import { Effect, Layer, Option, Schedule } from "effect"
import * as Path from "node:path"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { DatabaseInfo, pgClientLayer } from "../services/platform/Database.ts"
import { acquireEmbeddedPostgres } from "../services/platform/EmbeddedPostgres.ts"
import { MigrationsLive } from "../services/platform/Migrations.ts"

/** A server that is still starting (a fresh container, a failover) gets a few seconds before boot fails. */
const connectRetry = Schedule.exponential("250 millis").pipe(
  Schedule.intersect(Schedule.recurs(6)),
  Schedule.tapOutput(([delay]) => Effect.logWarning(`database not reachable yet; retrying in ${delay}`))
)

const PostgresLive = (config: AppConfig) =>
  Option.match(config.database.url, {
    onNone: () =>
      Layer.unwrapScoped(
        Effect.map(
          acquireEmbeddedPostgres({
            dataDir: Path.join(config.dataDir, "pglite"),
            maxConnections: config.database.poolSize + 2
          }),
          (embedded) => Layer.merge(pgClientLayer({ ...config.database, url: embedded.url }), DatabaseInfo.layer("pglite"))
        )
      ),
    onSome: (url) =>
      Layer.merge(
        pgClientLayer({ ...config.database, url }).pipe(Layer.retry(connectRetry)),
        DatabaseInfo.layer("postgres")
      )
  })

/** The SQL client, schema as found. */
export const SqlLive = Layer.unwrapEffect(Effect.map(AppConfig, PostgresLive)).pipe(Layer.provide(AppConfig.Default))

/** The SQL client with a current schema: what the service runs on. */
export const DatabaseLive = Layer.provideMerge(MigrationsLive, SqlLive)
