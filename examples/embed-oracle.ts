/**
 * Another Effect program embedding the oracle's reads: no HTTP, no chain client, its own connection to the
 * PostgreSQL database a Compute Exchange service keeps (its scans and chain sync fill it). It prints the SCU in force
 * and each family's representative model.
 *
 *   DATABASE_URL=postgres://user@host:5432/db node --import tsx examples/embed-oracle.ts
 */
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { OracleReads, OracleReadsLive, pgClientLayer } from "compute-exchange/oracle"

/** Our program's own database connection, with the name mapping the oracle's repositories expect. */
const Database = Layer.unwrapEffect(
  Effect.map(Config.redacted("DATABASE_URL"), (url) => pgClientLayer({ url, poolSize: 2, connectTimeoutMs: 5_000 }))
)

const program = Effect.gen(function* () {
  const oracle = yield* OracleReads
  const scu = yield* oracle.scu
  if (Option.isNone(scu)) {
    console.log("no confirmed revision yet: the oracle has no SCU to give")
    return
  }
  console.log(
    `SCU ${scu.value.scuUsd} USD (compute index ${scu.value.computeIndex ?? "n/a"}, methodology ${scu.value.methodologyVersion}, updated ${scu.value.updatedAt})`
  )
  for (const member of scu.value.breakdown.familyRepresentatives) console.log(`  ${member.family}: ${member.modelKey}`)
})

program.pipe(
  Effect.provide(OracleReadsLive.pipe(Layer.provide(Database))),
  // The services say what they start (and that no inference provider is configured, which the oracle does not need).
  Logger.withMinimumLogLevel(LogLevel.Error),
  NodeRuntime.runMain
)
