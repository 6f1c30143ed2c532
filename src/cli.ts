/**
 * Operator commands: `npm run migrate`, `npm run oracle -- <command>` and `npm run accounts -- <command>`. Each prints what it is doing and exits
 * non-zero when it fails. With the embedded defaults they open DATA_DIR's database and chain, so the service must
 * not be running on the same DATA_DIR at the same time (use the admin endpoints while it runs).
 */
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Console, Effect, Either, Layer, Option, Redacted } from "effect"
import { formatCredits, parseCredits } from "../domain/accounts/ledger.ts"
import { formatBasket, formatScanReport } from "../domain/catalog/scanReport.ts"
import { computeIndex18 } from "../domain/index/scu.ts"
import { formatUsd18, type Usd18 } from "../domain/money.ts"
import { makeKeyIndex } from "../domain/oracle/keys.ts"
import { DatabaseLive, SqlLive } from "../layers/Database.ts"
import { LoggingLive } from "../layers/Logging.ts"
import { createWalletClient, type Hex, http as viemHttp } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { ChainLive } from "../layers/Chain.ts"
import { AnchoringLive, OracleLive } from "../layers/Oracle.ts"
import { creditTokenAbi, FundingContractsTag } from "../services/chain/funding.ts"
import { ChainEndpointTag } from "../services/chain/Registry.ts"
import { Ledger } from "../services/accounts/Ledger.ts"
import { AutoRouter, type AutoListView } from "../services/exchange/AutoRouter.ts"
import { Registry } from "../services/chain/Registry.ts"
import { ChainSync } from "../services/oracle/ChainSync.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { Publisher } from "../services/oracle/Publisher.ts"
import { RevisionRepository, type StoredRevision } from "../services/oracle/RevisionRepository.ts"
import { Verify } from "../services/oracle/Verify.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { DatabaseInfo } from "../services/platform/Database.ts"
import { runMigrations } from "../services/platform/Migrations.ts"

const usage = `usage: npm run migrate
       npm run oracle -- <command> [arguments] [--verbose]
       npm run accounts -- <command> [arguments]

commands:
  migrate            apply pending database migrations (DATABASE_URL, or the embedded database under DATA_DIR)
  oracle scan        read every price card (data/cards, PRICE_CARD_URLS), record what changed, print the basket
  oracle basket      print the basket the catalog supports now, with the reason for every change
  oracle status      revisions in the database and on the chain, the latest one, the last sync
  oracle publish     publish a revision now if the basket changed (or follow up the one in flight)
  oracle approve N   publish revision N, held for approval (REVISION_APPROVAL=manual)
  oracle discard N   drop pending revision N, never sent; its number is free again
  oracle refork      rebuild the pending revision from the catalog as it is now
  oracle sync        read the registry into the database once
  oracle verify      check every confirmed revision against its manifest and the chain; non-zero on a mismatch
  accounts grant <email|cf_id|wallet|org_id> <credits>
                     credit an account with credits (a decimal, 18 decimals: 25, 0.5) as an operator grant
  accounts faucet <address> <credits>
                     mint test CreditTokens to an address (embedded chain only), to deposit them
  accounts routing show
                     print the operator's auto preference list (empty: the routing engine chooses)
  accounts routing set <model> [<model>...]
                     replace the auto preference list with these catalog models, in this order
  accounts routing clear
                     empty the auto preference list
  help               show this text`

class CliFailure extends Error {}

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

const catalogCommand = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(OracleLive), Effect.provide(DatabaseLive))

const chainCommand = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(Verify.Default.pipe(Layer.provideMerge(AnchoringLive))), Effect.provide(DatabaseLive))

const scan = (verbose: boolean) =>
  catalogCommand(
    Effect.gen(function* () {
      yield* Console.log(`scanning price cards into ${yield* describeDatabase}...`)
      const priceScan = yield* PriceScan
      // A scan already running (the service's schedule, another replica) is a refusal: exit 1 with its reason.
      const report = yield* priceScan.run("cli")
      yield* Console.log(formatScanReport(report, { verbose }))
      if (report.outcome === "failed") return yield* Effect.fail(new CliFailure("no price card could be read"))
    })
  )

const basket = catalogCommand(
  Effect.gen(function* () {
    const priceScan = yield* PriceScan
    yield* Console.log(formatBasket(yield* priceScan.currentBasket).join("\n"))
  })
)

const describeRevision = (r: StoredRevision, baseline: bigint | null) => {
  const index = baseline === null ? "" : `, index ${formatUsd18(computeIndex18(baseline as Usd18, r.scuUsd18 as Usd18) as Usd18)}`
  const members = Option.match(r.manifest, { onNone: () => "manifest unavailable", onSome: (m) => `${m.models.length} members` })
  return `revision ${r.revisionVersion} (${r.status}) published ${r.publishedAt?.toISOString() ?? "-"}: SCU ${formatUsd18(r.scuUsd18 as Usd18)} USD${index}, ${members}, ${r.summary}\n  metadataHash ${r.metadataHash}  tx ${r.txHash ?? "-"}`
}

const status = chainCommand(
  Effect.gen(function* () {
    const registry = yield* Registry
    const repository = yield* RevisionRepository
    const endpoint = registry.endpoint
    yield* Console.log(
      `chain: ${endpoint.embedded ? "embedded anvil" : "configured network"} (chain id ${endpoint.chainId}) at ${endpoint.embedded ? endpoint.rpcUrl : "RPC_URL"}, registry ${endpoint.registryAddress}`
    )
    const onChain = yield* registry.lastRevisionVersion.pipe(Effect.map(String), Effect.catchAll((f) => Effect.succeed(`unreachable (${f.reason})`)))
    const confirmed = yield* repository.confirmed
    const inFlight = yield* repository.inFlight
    yield* Console.log(`revisions on chain: ${onChain}; confirmed in the database: ${confirmed.length}`)
    yield* Console.log(
      `in flight: ${Option.match(inFlight, { onNone: () => "none", onSome: (r) => `revision ${r.revisionVersion} ${r.status}${r.requiresApproval ? " (awaiting approval)" : ""}${r.failureReason ? `, last failure ${r.failureReason}: ${r.failureMessage}` : ""}` })}`
    )
    const baseline = confirmed[0]?.scuUsd18 ?? null
    if (confirmed.length > 0) {
      yield* Console.log(`genesis: ${describeRevision(confirmed[0]!, baseline)}`)
      yield* Console.log(`latest:  ${describeRevision(confirmed[confirmed.length - 1]!, baseline)}`)
    }
    const sync = yield* repository.syncState
    yield* Console.log(
      `last sync: ${Option.match(sync, { onNone: () => "never", onSome: (s) => `${s.lastSyncAt?.toISOString() ?? "never"}${s.lastError ? ` (last error: ${s.lastError})` : ""}` })}`
    )
  })
)

const publish = chainCommand(
  Effect.gen(function* () {
    const publisher = yield* Publisher
    yield* Console.log("proposing the basket and publishing if it changed...")
    const revision = yield* publisher.publish(new Date())
    yield* Console.log(
      Option.match(revision, {
        onNone: () => "the basket is unchanged: nothing to publish",
        onSome: (r) => describeRevision(r, null)
      })
    )
  })
)

const maintain = (action: "approve" | "discard", version: number) =>
  chainCommand(
    Effect.gen(function* () {
      const publisher = yield* Publisher
      const revision = action === "approve" ? yield* publisher.approve(version) : yield* publisher.discard(version)
      yield* Console.log(`${action === "approve" ? "approved and published" : "discarded"}: ${describeRevision(revision, null)}`)
    })
  )

const refork = chainCommand(
  Effect.gen(function* () {
    const publisher = yield* Publisher
    const revision = yield* publisher.refork(new Date())
    yield* Console.log(
      Option.match(revision, { onNone: () => "the basket is unchanged: nothing pending", onSome: (r) => describeRevision(r, null) })
    )
  })
)

const sync = chainCommand(
  Effect.gen(function* () {
    const chainSync = yield* ChainSync
    yield* Console.log("reading the registry...")
    const result = yield* chainSync.sync
    const health = yield* chainSync.health
    yield* Console.log(
      Option.match(result, {
        onNone: () => "the chain could not be read; see the log",
        onSome: (r) => `synced: ${r.onChain} revisions on chain at block ${r.block}`
      })
    )
    yield* Console.log(`health: ${JSON.stringify(health)}`)
  })
)

const verify = chainCommand(
  Effect.gen(function* () {
    const verifier = yield* Verify
    yield* Console.log("verifying every confirmed revision against its manifest and the chain...")
    const outcome = yield* verifier.verifyAll((line) => Console.log(line))
    yield* Console.log(
      `${outcome.checked} revisions checked: ${outcome.checked - outcome.failed.length - outcome.unavailable.length} verified, ` +
        `${outcome.failed.length} mismatched, ${outcome.unavailable.length} without a manifest`
    )
    if (outcome.failed.length > 0) return yield* Effect.fail(new CliFailure("verification failed"))
  })
)

const ledgerCommand = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provide(Ledger.Default), Effect.provide(DatabaseLive), Effect.provide(AppConfig.Default))

const grant = (who: string, credits: string) =>
  Either.match(parseCredits(credits), {
    onLeft: (message) => Effect.fail(new CliFailure(message)),
    onRight: (amountWei) =>
      ledgerCommand(
        Effect.gen(function* () {
          const ledger = yield* Ledger
          const { accountId, cfId } = yield* ledger.resolveAccount(who)
          const { entry, balanceWei } = yield* ledger.grant(accountId, amountWei, "operator grant (CLI)")
          yield* Console.log(
            `granted ${formatCredits(amountWei)} credits (${amountWei} wei) to ${cfId} (account ${accountId}), ledger entry ${entry.id}; ` +
              `balance now ${formatCredits(balanceWei)} credits (${balanceWei} wei)`
          )
        })
      )
  })

/** Mints test tokens with the minter key: the embedded chain only (a configured network has no minter). */
const faucet = (to: string, credits: string) =>
  Either.match(parseCredits(credits), {
    onLeft: (message) => Effect.fail(new CliFailure(message)),
    onRight: (amountWei) =>
      !/^0x[0-9a-fA-F]{40}$/.test(to)
        ? Effect.fail(new CliFailure(`${to} is not an address (0x and 40 hex digits)`))
        : Effect.gen(function* () {
            const endpoint = yield* ChainEndpointTag
            const funding = yield* FundingContractsTag
            if (!endpoint.embedded || Option.isNone(funding) || Option.isNone(funding.value.minterKey)) {
              return yield* Effect.fail(new CliFailure("the faucet mints on the embedded chain only; this service uses a configured network (RPC_URL)"))
            }
            const contracts = funding.value
            const minterKey = Option.getOrThrow(contracts.minterKey)
            const registry = yield* Registry
            const minter = createWalletClient({
              chain: registry.client.chain,
              transport: viemHttp(endpoint.rpcUrl),
              account: privateKeyToAccount(Redacted.value(minterKey))
            })
            yield* Console.log(`minting ${formatCredits(amountWei)} credits (${amountWei} wei) of the CreditToken ${contracts.token} to ${to}...`)
            const txHash = yield* Effect.tryPromise(() =>
              minter.writeContract({ address: contracts.token, abi: creditTokenAbi, functionName: "mint", args: [to as Hex, amountWei], chain: registry.client.chain })
            )
            const receipt = yield* Effect.tryPromise(() => registry.client.waitForTransactionReceipt({ hash: txHash }))
            if (receipt.status !== "success") return yield* Effect.fail(new CliFailure(`the mint ${txHash} reverted`))
            const balance = yield* Effect.tryPromise(() =>
              registry.client.readContract({ address: contracts.token, abi: creditTokenAbi, functionName: "balanceOf", args: [to as Hex] })
            )
            yield* Console.log(
              `minted in ${txHash} (block ${receipt.blockNumber}); ${to} holds ${formatCredits(balance)} credits (${balance} wei). ` +
                `Approve the treasury ${contracts.treasury}, then deposit(accountRef, amount) with the accountRef of GET /v1/account/funding.`
            )
          }).pipe(Effect.provide(ChainLive))
  })

/** The operator's `auto` list, read or replaced in the database (a running service re-reads it within seconds). */
const routing = (action: string | undefined, models: ReadonlyArray<string>) => {
  if (action !== "show" && action !== "set" && action !== "clear") return undefined
  if ((action === "set") !== (models.length > 0)) return undefined
  return Effect.gen(function* () {
    const router = yield* AutoRouter
    const print = (list: AutoListView) =>
      Console.log(
        list.models.length === 0
          ? "the auto list is empty: auto requests go to the routing engine (cheapest, or as routing_bias leans)"
          : `the auto list (set ${list.updatedAt}):\n${list.models.map((m, i) => `  ${i + 1}. ${m}`).join("\n")}`
      )
    if (action === "show") return yield* print(yield* router.getList)
    const sql = yield* SqlClient.SqlClient
    const keys = (yield* sql<{ id: string }>`SELECT id FROM models WHERE deleted_at IS NULL`).map((row) => row.id)
    const index = makeKeyIndex(new Set(keys.map((key) => key.slice(0, key.indexOf("/")))), keys)
    yield* Console.log(action === "clear" ? "emptying the auto list..." : `setting the auto list to ${models.join(", ")}...`)
    yield* print(yield* router.setList(action === "clear" ? [] : models, { resolve: index.resolve, routable: () => true }))
  }).pipe(Effect.provide(AutoRouter.Default), Effect.provide(DatabaseLive), Effect.provide(AppConfig.Default))
}

const args = process.argv.slice(2)
const verbose = args.includes("--verbose")
const [command = "help", subcommand, argument, secondArgument] = args.filter((arg) => !arg.startsWith("--"))
const revisionArgument = argument !== undefined && /^[1-9][0-9]*$/.test(argument) ? Number(argument) : undefined

const program: Effect.Effect<void, unknown> | undefined = (() => {
  if (command === "migrate") return migrate
  if (command === "accounts") {
    if (subcommand === "routing") return routing(argument, args.filter((arg) => !arg.startsWith("--")).slice(3))
    if (argument === undefined || secondArgument === undefined) return undefined
    if (subcommand === "grant") return grant(argument, secondArgument)
    return subcommand === "faucet" ? faucet(argument, secondArgument) : undefined
  }
  if (command !== "oracle") return undefined
  switch (subcommand) {
    case "scan":
      return scan(verbose)
    case "basket":
      return basket
    case "status":
      return status
    case "publish":
      return publish
    case "approve":
    case "discard":
      return revisionArgument === undefined ? undefined : maintain(subcommand, revisionArgument)
    case "refork":
      return refork
    case "sync":
      return sync
    case "verify":
      return verify
    default:
      return undefined
  }
})()

/** A command that fails says why in one line and exits 1; a defect still prints its whole cause. */
const reportFailure = (error: unknown) =>
  Console.error(`error: ${error instanceof Error || (typeof error === "object" && error !== null && "message" in error) ? (error as { message: string }).message : String(error)}`).pipe(
    Effect.zipRight(Effect.sync(() => void (process.exitCode = 1)))
  )

if (program !== undefined) {
  program.pipe(Effect.catchAll(reportFailure), Effect.provide(LoggingLive), NodeRuntime.runMain({ disablePrettyLogger: true }))
} else if (command === "help" || command === "--help") {
  console.log(usage)
} else {
  console.error(`unknown command "${args.join(" ")}"\n\n${usage}`)
  process.exitCode = 2
}
