/**
 * What each operator command does, written once: the command line runs it here on the database and chain it opens
 * itself, or, while the service runs on the same DATA_DIR, the service runs it on its own (src/handlers/admin.ts)
 * and streams back what it says. A command speaks only through `CommandOutput`, so both places show the same lines.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Either, Option, Redacted, Schema } from "effect"
import { createWalletClient, type Hex, http as viemHttp } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { formatCredits, parseCredits } from "../../domain/accounts/ledger.ts"
import { formatProvenanceReport, provenanceReport } from "../../domain/catalog/provenanceReport.ts"
import { formatBasket, formatScanReport } from "../../domain/catalog/scanReport.ts"
import { computeIndex18 } from "../../domain/index/scu.ts"
import { formatUsd18, type Usd18 } from "../../domain/money.ts"
import { makeKeyIndex } from "../../domain/oracle/keys.ts"
import { Ledger } from "../../services/accounts/Ledger.ts"
import { Mailer } from "../../services/accounts/Mailer.ts"
import { EmbeddedChainTag } from "../../services/chain/EmbeddedChain.ts"
import { creditTokenAbi, FundingContractsTag } from "../../services/chain/funding.ts"
import { ChainEndpointTag, Registry } from "../../services/chain/Registry.ts"
import { AutoRouter, type AutoListView } from "../../services/exchange/AutoRouter.ts"
import { CardSources } from "../../services/oracle/CardSources.ts"
import { ChainSync } from "../../services/oracle/ChainSync.ts"
import { SyncHealth } from "../../services/oracle/SyncHealth.ts"
import { PriceScan } from "../../services/oracle/PriceScan.ts"
import { Publisher } from "../../services/oracle/Publisher.ts"
import { RevisionRepository, type StoredRevision } from "../../services/oracle/RevisionRepository.ts"
import { Verify } from "../../services/oracle/Verify.ts"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import { DatabaseInfo } from "../../services/platform/Database.ts"
import { runMigrations } from "../../services/platform/Migrations.ts"
import { decodedRows } from "../../services/platform/RepositoryBoundary.ts"
import type { OperatorCommand } from "./commandLine.ts"
import { CommandFailure } from "./protocol.ts"

/** Where a command's lines go: the terminal, or the response streamed to the command line that sent it. */
export class CommandOutput extends Context.Tag("CommandOutput")<CommandOutput, { readonly line: (text: string) => Effect.Effect<void> }>() {}


const say = (text: string) => Effect.flatMap(CommandOutput, (output) => output.line(text))
const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

const describeDatabase = Effect.map(DatabaseInfo, ({ backend }) =>
  backend === "pglite" ? "the embedded (PGlite) database" : "the PostgreSQL database"
)

const describeRevision = (r: StoredRevision, baseline: bigint | null) => {
  const index = baseline === null ? "" : `, index ${formatUsd18(computeIndex18(baseline as Usd18, r.scuUsd18 as Usd18) as Usd18)}`
  const members = Option.match(r.manifest, { onNone: () => "manifest unavailable", onSome: (m) => `${m.models.length} members` })
  return `revision ${r.revisionVersion} (${r.status}) published ${r.publishedAt?.toISOString() ?? "-"}: SCU ${formatUsd18(r.scuUsd18 as Usd18)} USD${index}, ${members}, ${r.summary}\n  metadataHash ${r.metadataHash}  tx ${r.txHash ?? "-"}`
}

export const migrate = Effect.gen(function* () {
  yield* say(`migrating ${yield* describeDatabase}...`)
  const applied = yield* runMigrations
  yield* say(
    applied.length === 0
      ? "schema is current; nothing to apply"
      : `applied ${applied.length} migration(s): ${applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`).join(", ")}`
  )
})

export const scan = (verbose: boolean) =>
  Effect.gen(function* () {
    yield* say(`scanning price cards into ${yield* describeDatabase}...`)
    const priceScan = yield* PriceScan
    // A scan already running (the service's schedule, another replica) is a refusal: exit 1 with its reason.
    const report = yield* priceScan.run("cli")
    yield* say(formatScanReport(report, { verbose }))
    if (report.outcome === "failed") return yield* Effect.fail(new CommandFailure("no price card could be read"))
  })

/** Reads the price cards as a scan would (nothing is written) and reports the marks of the prices in force today. */
export const provenance = (verbose: boolean) =>
  Effect.gen(function* () {
    const sources = yield* CardSources
    yield* say(`reading the price cards (${sources.cardsDir} and any PRICE_CARD_URLS)...`)
    const outcomes = yield* sources.readAll
    const unread = outcomes.flatMap((o) =>
      o._tag === "Read" ? [] : o._tag === "Unreachable" ? [`${o.source}: unreachable: ${o.reason}`] : o.problems
    )
    const cards = outcomes.flatMap((o) => (o._tag === "Read" ? [o.card] : []))
    yield* say(formatProvenanceReport(provenanceReport(cards, yield* now), { verbose }).join("\n"))
    if (unread.length > 0) {
      yield* say(`\n${unread.length} problem(s) kept cards out of this report:\n${unread.map((line) => `  ${line}`).join("\n")}`)
      return yield* Effect.fail(new CommandFailure("some price cards could not be read; the report leaves them out"))
    }
  }).pipe(Effect.provide(CardSources.DefaultWithoutDependencies))

export const basket = Effect.gen(function* () {
  const priceScan = yield* PriceScan
  yield* say(formatBasket(yield* priceScan.currentBasket).join("\n"))
})

export const status = Effect.gen(function* () {
  const registry = yield* Registry
  const repository = yield* RevisionRepository
  const endpoint = registry.endpoint
  yield* say(
    `chain: ${endpoint.embedded ? "embedded anvil" : "configured network"} (chain id ${endpoint.chainId}) at ${endpoint.embedded ? endpoint.rpcUrl : "RPC_URL"}, registry ${endpoint.registryAddress}`
  )
  const onChain = yield* registry.lastRevisionVersion.pipe(Effect.map(String), Effect.catchAll((f) => Effect.succeed(`unreachable (${f.reason})`)))
  const confirmed = yield* repository.confirmed
  const inFlight = yield* repository.inFlight
  yield* say(`revisions on chain: ${onChain}; confirmed in the database: ${confirmed.length}`)
  yield* say(
    `in flight: ${Option.match(inFlight, { onNone: () => "none", onSome: (r) => `revision ${r.revisionVersion} ${r.status}${r.requiresApproval ? " (awaiting approval)" : ""}${r.failureReason ? `, last failure ${r.failureReason}: ${r.failureMessage}` : ""}` })}`
  )
  const baseline = confirmed[0]?.scuUsd18 ?? null
  if (confirmed.length > 0) {
    yield* say(`genesis: ${describeRevision(confirmed[0]!, baseline)}`)
    yield* say(`latest:  ${describeRevision(confirmed[confirmed.length - 1]!, baseline)}`)
  }
  const sync = yield* repository.syncState
  yield* say(
    `last sync: ${Option.match(sync, { onNone: () => "never", onSome: (s) => `${s.lastSyncAt?.toISOString() ?? "never"}${s.lastError ? ` (last error: ${s.lastError})` : ""}` })}`
  )
})

export const publish = Effect.gen(function* () {
  const publisher = yield* Publisher
  yield* say("proposing the basket and publishing if it changed...")
  const revision = yield* publisher.publish(yield* now)
  yield* say(
    Option.match(revision, { onNone: () => "the basket is unchanged: nothing to publish", onSome: (r) => describeRevision(r, null) })
  )
})

export const maintain = (action: "approve" | "discard", version: number) =>
  Effect.gen(function* () {
    const publisher = yield* Publisher
    const revision = action === "approve" ? yield* publisher.approve(version) : yield* publisher.discard(version)
    yield* say(`${action === "approve" ? "approved and published" : "discarded"}: ${describeRevision(revision, null)}`)
  })

export const refork = Effect.gen(function* () {
  const publisher = yield* Publisher
  const revision = yield* publisher.refork(yield* now)
  yield* say(Option.match(revision, { onNone: () => "the basket is unchanged: nothing pending", onSome: (r) => describeRevision(r, null) }))
})

export const sync = Effect.gen(function* () {
  const chainSync = yield* ChainSync
  yield* say("reading the registry...")
  const result = yield* chainSync.sync
  const health = yield* (yield* SyncHealth).health
  yield* say(
    Option.match(result, {
      onNone: () => "the chain could not be read; see the log",
      onSome: (r) => `synced: ${r.onChain} revisions on chain at block ${r.block}`
    })
  )
  yield* say(`health: ${JSON.stringify(health)}`)
})

export const verify = Effect.gen(function* () {
  const verifier = yield* Verify
  const output = yield* CommandOutput
  yield* output.line("verifying every confirmed revision against its manifest and the chain...")
  const outcome = yield* verifier.verifyAll(output.line)
  yield* say(
    `${outcome.checked} revisions checked: ${outcome.checked - outcome.failed.length - outcome.unavailable.length} verified, ` +
      `${outcome.failed.length} mismatched, ${outcome.unavailable.length} without a manifest`
  )
  if (outcome.failed.length > 0) return yield* Effect.fail(new CommandFailure("verification failed"))
})

const credits = (text: string) => Either.match(parseCredits(text), { onLeft: (message) => Effect.fail(new CommandFailure(message)), onRight: Effect.succeed })

export const grant = (who: string, amount: string) =>
  Effect.gen(function* () {
    const amountWei = yield* credits(amount)
    const ledger = yield* Ledger
    const { accountId, cfId } = yield* ledger.resolveAccount(who)
    const { entry, balanceWei } = yield* ledger.grant(accountId, amountWei, "operator grant (CLI)")
    yield* say(
      `granted ${formatCredits(amountWei)} credits (${amountWei} wei) to ${cfId} (account ${accountId}), ledger entry ${entry.id}; ` +
        `balance now ${formatCredits(balanceWei)} credits (${balanceWei} wei)`
    )
  })

/** Mints test tokens with the minter key: the embedded chain only (a configured network has no minter). */
export const faucet = (to: string, amount: string) =>
  Effect.gen(function* () {
    const amountWei = yield* credits(amount)
    if (!/^0x[0-9a-fA-F]{40}$/.test(to)) return yield* Effect.fail(new CommandFailure(`${to} is not an address (0x and 40 hex digits)`))
    const endpoint = yield* ChainEndpointTag
    const funding = yield* FundingContractsTag
    if (!endpoint.embedded || Option.isNone(funding) || Option.isNone(funding.value.minterKey)) {
      return yield* Effect.fail(new CommandFailure("the faucet mints on the embedded chain only; this service uses a configured network (RPC_URL)"))
    }
    const contracts = funding.value
    const minterKey = Option.getOrThrow(contracts.minterKey)
    const registry = yield* Registry
    const minter = createWalletClient({
      chain: registry.client.chain,
      transport: viemHttp(endpoint.rpcUrl),
      account: privateKeyToAccount(Redacted.value(minterKey))
    })
    yield* say(`minting ${formatCredits(amountWei)} credits (${amountWei} wei) of the CreditToken ${contracts.token} to ${to}...`)
    const txHash = yield* Effect.tryPromise(() =>
      minter.writeContract({ address: contracts.token, abi: creditTokenAbi, functionName: "mint", args: [to as Hex, amountWei], chain: registry.client.chain })
    )
    const receipt = yield* Effect.tryPromise(() => registry.client.waitForTransactionReceipt({ hash: txHash }))
    if (receipt.status !== "success") return yield* Effect.fail(new CommandFailure(`the mint ${txHash} reverted`))
    // The embedded chain saves its state on a clean exit; a mint is saved now, so a crash cannot take it back.
    const embedded = yield* EmbeddedChainTag
    if (Option.isSome(embedded)) yield* embedded.value.persist
    const balance = yield* Effect.tryPromise(() =>
      registry.client.readContract({ address: contracts.token, abi: creditTokenAbi, functionName: "balanceOf", args: [to as Hex] })
    )
    yield* say(
      `minted in ${txHash} (block ${receipt.blockNumber}); ${to} holds ${formatCredits(balance)} credits (${balance} wei). ` +
        `Approve the treasury ${contracts.treasury}, then deposit(accountRef, amount) with the accountRef of GET /v1/account/funding.`
    )
  })

/** The latest sign-in code kept for an address in the local outbox (no SMTP_URL): what the log also showed. */
export const signInCode = (email: string) =>
  Effect.gen(function* () {
    const mailer = yield* Mailer
    if (mailer.delivers) {
      return yield* Effect.fail(new CommandFailure("codes are mailed through SMTP_URL and kept nowhere else: read them in the inbox"))
    }
    const address = email.trim().toLowerCase()
    const kept = yield* mailer.latestKeptCode(address)
    return yield* Option.match(kept, {
      onNone: () => Effect.fail(new CommandFailure(`no code was sent to ${address}: POST /v1/auth/email/start first`)),
      onSome: ({ code }) => say(code)
    })
  })

/** The operator's `auto` list, read or replaced in the database (every replica re-reads it within seconds). */
export const routing = (models: ReadonlyArray<string> | "show" | "clear") =>
  Effect.gen(function* () {
    const router = yield* AutoRouter
    const print = (list: AutoListView) =>
      say(
        list.models.length === 0
          ? "the auto list is empty: auto requests go to the routing engine (cheapest, or as routing_bias leans)"
          : `the auto list (set ${list.updatedAt}):\n${list.models.map((m, i) => `  ${i + 1}. ${m}`).join("\n")}`
      )
    if (models === "show") return yield* print(yield* router.getList)
    const sql = yield* SqlClient.SqlClient
    const keys = (yield* decodedRows(Schema.Struct({ id: Schema.String }), sql`SELECT id FROM models WHERE deleted_at IS NULL`)).map((row) => row.id)
    const index = makeKeyIndex(new Set(keys.map((key) => key.slice(0, key.indexOf("/")))), keys)
    yield* say(models === "clear" ? "emptying the auto list..." : `setting the auto list to ${models.join(", ")}...`)
    yield* print(yield* router.setList(models === "clear" ? [] : models, { resolve: index.resolve, routable: () => true }))
  })

/** What the commands run on, together. */
export type OperatorServices =
  | CommandOutput
  | DatabaseInfo
  | SqlClient.SqlClient
  | PriceScan
  | Registry
  | RevisionRepository
  | Publisher
  | ChainSync
  | SyncHealth
  | Verify
  | Ledger
  | ChainEndpointTag
  | FundingContractsTag
  | EmbeddedChainTag
  | Mailer
  | AutoRouter
  | AppConfig

/** Every command, as the running service runs it with its own services. */
export const commandEffect = (command: OperatorCommand): Effect.Effect<void, unknown, OperatorServices> => {
  switch (command._tag) {
    case "Migrate":
      return migrate
    case "Scan":
      return scan(command.verbose)
    case "Basket":
      return basket
    case "Status":
      return status
    case "Publish":
      return publish
    case "Approve":
      return maintain("approve", command.revision)
    case "Discard":
      return maintain("discard", command.revision)
    case "Refork":
      return refork
    case "Sync":
      return sync
    case "Verify":
      return verify
    case "Provenance":
      return provenance(command.verbose)
    case "Grant":
      return grant(command.who, command.credits)
    case "Faucet":
      return faucet(command.to, command.credits)
    case "SignInCode":
      return signInCode(command.email)
    case "RoutingShow":
      return routing("show")
    case "RoutingSet":
      return routing(command.models)
    case "RoutingClear":
      return routing("clear")
  }
}
