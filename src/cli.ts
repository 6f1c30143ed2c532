/**
 * Operator commands: `npm run migrate` (and, as later parts land, `npm run oracle -- <command>`).
 * Each command prints what it is doing and exits non-zero when it fails.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { SqlLive } from "../layers/Database.ts"
import { LoggingLive } from "../layers/Logging.ts"
import { DatabaseInfo } from "../services/platform/Database.ts"
import { runMigrations } from "../services/platform/Migrations.ts"

const usage = `usage: node --import tsx src/cli.ts <command>

commands:
  migrate   apply pending database migrations (DATABASE_URL, or the embedded database under DATA_DIR)
  help      show this text`

const migrate = Effect.gen(function* () {
  const { backend } = yield* DatabaseInfo
  yield* Console.log(`migrating the ${backend === "pglite" ? "embedded (PGlite)" : "PostgreSQL"} database...`)
  const applied = yield* runMigrations
  yield* Console.log(
    applied.length === 0
      ? "schema is current; nothing to apply"
      : `applied ${applied.length} migration(s): ${applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", ")}`
  )
}).pipe(Effect.provide(SqlLive), Effect.provide(LoggingLive))

const [command = "help"] = process.argv.slice(2)

if (command === "migrate") {
  migrate.pipe(NodeRuntime.runMain({ disablePrettyLogger: true }))
} else if (command === "help" || command === "--help") {
  console.log(usage)
} else {
  console.error(`unknown command "${command}"\n\n${usage}`)
  process.exitCode = 2
}
