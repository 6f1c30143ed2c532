/**
 * Operator commands: `npm run migrate`, `npm run oracle -- <command>`. Each command prints what it is doing
 * and exits non-zero when it fails.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Option } from "effect"
import { DatabaseLive, SqlLive } from "../layers/Database.ts"
import { LoggingLive } from "../layers/Logging.ts"
import { OracleLive } from "../layers/Oracle.ts"
import { formatBasket, formatScanReport } from "../domain/catalog/scanReport.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { PRICE_SCAN_JOB } from "../services/oracle/OracleScheduler.ts"
import { DatabaseInfo } from "../services/platform/Database.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { runMigrations } from "../services/platform/Migrations.ts"

const usage = `usage: npm run migrate
       npm run oracle -- <command> [--verbose]

commands:
  migrate         apply pending database migrations (DATABASE_URL, or the embedded database under DATA_DIR)
  oracle scan     read every price card (data/cards, PRICE_CARD_URLS), record what changed, print the basket
  oracle basket   print the basket the catalog supports now, with the reason for every change
  help            show this text`

const describeDatabase = Effect.map(DatabaseInfo, ({ backend }) =>
  backend === "pglite" ? "the embedded (PGlite) database" : "the PostgreSQL database"
)

const migrate = Effect.gen(function* () {
  yield* Console.log(`migrating ${yield* describeDatabase}...`)
  const applied = yield* runMigrations
  yield* Console.log(
    applied.length === 0
      ? "schema is current; nothing to apply"
      : `applied ${applied.length} migration(s): ${applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", ")}`
  )
}).pipe(Effect.provide(SqlLive))

const scan = (verbose: boolean) =>
  Effect.gen(function* () {
    yield* Console.log(`scanning price cards into ${yield* describeDatabase}...`)
    const jobs = yield* Jobs
    const priceScan = yield* PriceScan
    const ran = yield* jobs.runExclusive(PRICE_SCAN_JOB, priceScan.run("cli"), (report) => `${report.outcome}`)
    if (Option.isNone(ran)) {
      yield* Console.log("a price scan is already running on another instance; nothing done")
      return
    }
    yield* Console.log(formatScanReport(ran.value, { verbose }))
    if (ran.value.outcome === "failed") return yield* Effect.fail(new Error("no price card could be read"))
  }).pipe(Effect.provide(OracleLive), Effect.provide(DatabaseLive))

const basket = Effect.gen(function* () {
  const priceScan = yield* PriceScan
  yield* Console.log(formatBasket(yield* priceScan.currentBasket).join("\n"))
}).pipe(Effect.provide(OracleLive), Effect.provide(DatabaseLive))

const args = process.argv.slice(2)
const verbose = args.includes("--verbose")
const [command = "help", subcommand] = args.filter((arg) => !arg.startsWith("--"))

const program: Effect.Effect<void, unknown> | undefined =
  command === "migrate"
    ? migrate
    : command === "oracle" && subcommand === "scan"
      ? scan(verbose)
      : command === "oracle" && subcommand === "basket"
        ? basket
        : undefined

/** A command that fails says why in one line and exits 1; a defect still prints its whole cause. */
const reportFailure = (error: unknown) =>
  Console.error(`error: ${error instanceof Error ? error.message : String(error)}`).pipe(
    Effect.zipRight(Effect.sync(() => void (process.exitCode = 1)))
  )

if (program !== undefined) {
  program.pipe(
    Effect.catchAll(reportFailure),
    Effect.provide(LoggingLive),
    NodeRuntime.runMain({ disablePrettyLogger: true })
  )
} else if (command === "help" || command === "--help") {
  console.log(usage)
} else {
  console.error(`unknown command "${args.join(" ")}"\n\n${usage}`)
  process.exitCode = 2
}

