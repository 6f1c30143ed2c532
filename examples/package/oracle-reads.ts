/**
 * The oracle's reads embedded in another program, from the installed package (no tsx: `npm run build` output):
 * it migrates the database it is given, loads the bundled price cards into the catalog with one scan, and reads the
 * catalog and its billed prices back through `OracleReads`, as the service's `/v1/oracle/*` routes serve them.
 * Without a chain nothing is anchored yet, so the SCU is reported as absent. test/package-install.test.ts runs it on a scratch database.
 *
 *   DATABASE_URL=postgres://user@host:5432/scratch node oracle-reads.js
 */
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { migrate, OracleLive, OracleReads, OracleReadsLive, pgClientLayer, PriceScan } from "compute-exchange/oracle"

const MODEL = "openai/gpt-4.1"

/** Our program's own connection, with the name mapping the oracle's repositories expect. */
const Database = Layer.unwrapEffect(
  Effect.map(Config.redacted("DATABASE_URL"), (url) => pgClientLayer({ url, poolSize: 2, connectTimeoutMs: 5_000 }))
)

/** The catalog's side: the schema, then one scan of the bundled price cards. */
const fill = Effect.gen(function* () {
  yield* migrate
  const report = yield* (yield* PriceScan).run("cli")
  console.log(`scan: ${report.outcome}, ${report.changes.length} catalog changes`)
}).pipe(Effect.provide(OracleLive))

interface Leg {
  readonly weiPerMillion: string
  readonly usdPerMillion: number
}

/** The reads, over a snapshot taken after the scan: the catalog and the billed prices (`/v1/oracle/catalog`, `/pricing`). */
const read = Effect.gen(function* () {
  const oracle = yield* OracleReads
  // A body is absent only for the SCU's own reads before a confirmed revision; the catalog's are always there.
  const json = (bytes: Uint8Array | undefined) => JSON.parse(new TextDecoder().decode(bytes)) as unknown
  const catalog = json(yield* oracle.body("catalog")) as { models: ReadonlyArray<{ modelKey: string; displayName: string }> }
  console.log(`catalog: ${catalog.models.length} models`)
  const pricing = json(yield* oracle.body("pricing")) as { models: Record<string, { input: Leg; output: Leg } | undefined> }
  const price = pricing.models[MODEL]
  if (price === undefined) return yield* Effect.dieMessage(`${MODEL} has no price`)
  console.log(`${MODEL}: input ${price.input.weiPerMillion} wei, output ${price.output.weiPerMillion} wei per million tokens (billed, markup included)`)
  const scu = yield* oracle.scu
  console.log(Option.isNone(scu) ? "scu: none confirmed yet" : `scu: ${scu.value.scuUsd} USD`)
}).pipe(Effect.provide(OracleReadsLive))

Effect.zipRight(fill, read).pipe(
  Effect.provide(Database),
  Logger.withMinimumLogLevel(LogLevel.Error),
  NodeRuntime.runMain
)
