/**
 * The exchange's `serve` embedded in another program, from the installed package, with the vendor scripted
 * (`ScriptedUpstream` from `compute-exchange/testing`: no sockets, no vendor key of yours): the catalog is filled by
 * one scan of the bundled price cards, a person signs in, is granted one credit and issues an API key, and one chat
 * request is served, routed, settled and billed at the catalog's rates by the same services the HTTP routes call.
 * test/package-install.test.ts runs it on a scratch database.
 *
 *   DATABASE_URL=postgres://user@host:5432/scratch node exchange-serve.js
 */
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer, Logger, LogLevel } from "effect"
import { AccountsLive, ApiKeys, Credentials, DetachedChainLive, Identities, Ledger } from "compute-exchange/accounts"
import { Exchange, exchangeWithUpstream } from "compute-exchange/exchange"
import { AppConfig, OracleLive, OracleReadsLive, PriceScan } from "compute-exchange/oracle"
import { ConfigFrom, type ScriptedCall, ScriptedUpstream, TestDatabase } from "compute-exchange/testing"

const MODEL = "openai/gpt-4.1"
const CREDIT = 10n ** 18n

/** The vendor, as a script: every call answers the same words and counts, and is remembered. */
const calls: Array<ScriptedCall> = []
const vendor = ScriptedUpstream((call) => {
  calls.push(call)
  return {
    events: [
      { type: "start" },
      { type: "text_delta", text: "Hello from the scripted vendor." },
      { type: "usage", usage: { freshInput: 1200, output: 300 } },
      { type: "stop", reason: "stop" }
    ]
  }
})

/** The scratch database with the product's migrations applied. */
const Database = Layer.unwrapEffect(Effect.map(Config.string("DATABASE_URL"), (url) => TestDatabase(url, 4)))

/** The catalog the exchange prices from: one scan of the bundled cards. */
const fillCatalog = Effect.flatMap(PriceScan, (scan) => scan.run("cli")).pipe(Effect.provide(OracleLive))

const program = Effect.gen(function* () {
  const person = yield* (yield* Identities).signInAs({ email: "builder@example.com", clientIp: undefined })
  const ledger = yield* Ledger
  yield* ledger.grant(person.accountId, CREDIT, "example grant")
  const issued = yield* (yield* ApiKeys).issue(person.accountId, person.cfId, { label: "example" })
  const credential = yield* (yield* Credentials).authenticate(issued.raw)

  const reply = yield* (yield* Exchange).serve({
    format: "chat",
    chat: { messages: [{ role: "user", parts: [{ type: "text", text: "Say hello." }] }], stop: [], tools: [] },
    route: { model: MODEL },
    stream: false,
    endUser: undefined,
    apiKey: credential
  })
  if (reply._tag !== "Whole") return yield* Effect.dieMessage("asked for a whole answer, got a stream")
  console.log(`vendor called ${calls.length} time(s), for ${calls.map((call) => call.target.upstreamModel).join(", ")}`)
  console.log(`served by ${reply.route.modelUsed} (${reply.route.provider}): ${reply.result.text}`)
  console.log(`usage: ${reply.result.usage.freshInput} input, ${reply.result.usage.output} output tokens`)
  const after = yield* ledger.account(person.accountId)
  console.log(`charged ${reply.settled.chargeWei} wei; balance ${after.balanceWei} wei of ${CREDIT}`)
})

const Services = exchangeWithUpstream(vendor).pipe(
  Layer.provideMerge(AccountsLive),
  Layer.provideMerge(Layer.merge(OracleReadsLive, DetachedChainLive)),
  Layer.provideMerge(AppConfig.Default)
)

Effect.zipRight(fillCatalog, program.pipe(Effect.provide(Services))).pipe(
  Effect.provide(Database),
  // The service's configuration from this map alone: a key for the provider makes its models routable (the script
  // answers in its place).
  Effect.provide(ConfigFrom({ DATABASE_URL: process.env.DATABASE_URL ?? "", OPENAI_API_KEY: "sk-scripted" })),
  Logger.withMinimumLogLevel(LogLevel.Error),
  NodeRuntime.runMain
)
