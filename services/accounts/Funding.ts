/**
 * On-chain funding of accounts (DESIGN.md section 11, "Funding"): each account's deposit reference, the scan of the
 * treasury's `Deposited` events that credits them (see DepositWatcher.ts for the job); withdrawals are
 * Withdrawals.ts. Chain failures are classified by `classifyChainError` (services/chain/Registry.ts), the same as
 * publishing's; the Ledger stays the only writer of balances.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { type Hex, keccak256, toHex } from "viem"
import { ServiceUnavailable } from "../../domain/errors.ts"
import { type FundingContracts, FundingContractsTag, treasuryAbi } from "../chain/funding.ts"
import { classifyChainError, Registry } from "../chain/Registry.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { Ledger } from "./Ledger.ts"

/** The reference an account deposits with: public like a deposit address, so derived, not secret (docs/decisions.md). */
export const accountRefOf = (accountId: string): Hex => keccak256(toHex(`cf-funding/account-ref/v1/${accountId}`))

/** The on-chain reference of a withdrawal: one per withdrawal id, so the treasury pays it at most once. */
export const withdrawalRefOf = (withdrawalId: string): Hex => keccak256(toHex(`cf-funding/withdrawal/v1/${withdrawalId}`))

/** Blocks per `eth_getLogs` call: providers refuse wide ranges. */
const LOG_RANGE = 2_000n

export interface ScanOutcome {
  readonly fromBlock: bigint
  readonly toBlock: bigint
  readonly credited: number
  readonly alreadyCredited: number
  readonly unmatched: number
}

const notConfigured = () => new ServiceUnavailable({ message: "On-chain funding is not configured on this service." })

const chainFailureOf = (error: unknown) => classifyChainError(error, "read")

export class Funding extends Effect.Service<Funding>()("Funding", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const registry = yield* Registry
    const contracts = yield* FundingContractsTag
    const client = registry.client
    const endpoint = registry.endpoint
    const db = <A, E, R>(effect: Effect.Effect<A, E, R>) => orDieUnlessUnavailable(effect)

    const nextBlockOf = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ nextBlock: Schema.String }),
      execute: (treasury) => sql`SELECT next_block::text AS "nextBlock" FROM funding_scan_state WHERE treasury = ${treasury}`
    })
    const ownerOfRef = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ accountId: Schema.String }),
      execute: (ref) => sql`SELECT account_id::text AS "accountId" FROM funding_account_refs WHERE account_ref = ${ref}`
    })

    const configured: Effect.Effect<FundingContracts, ServiceUnavailable> = Option.match(contracts, {
      onNone: () => Effect.fail(notConfigured()),
      onSome: Effect.succeed
    })

    /** Records (once) and returns the account's deposit reference. */
    const accountRef = Effect.fn("Funding.accountRef")(function* (accountId: string) {
      const ref = accountRefOf(accountId)
      yield* db(sql`INSERT INTO funding_account_refs (account_ref, account_id) VALUES (${ref}, ${accountId}) ON CONFLICT DO NOTHING`)
      return ref
    })

    const info = Effect.fn("Funding.info")(function* (accountId: string) {
      const funding = yield* configured
      return {
        chainId: funding.chainId,
        token: funding.token,
        treasury: funding.treasury,
        accountRef: yield* accountRef(accountId),
        decimals: funding.decimals,
        confirmations: endpoint.confirmations
      }
    })

    const chainCall = <A>(run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: chainFailureOf })

    /**
     * Credits every confirmed `Deposited` event after the last scanned block: each once, by `<txHash>:<logIndex>`
     * (a re-scan or a second replica finds the entry and credits nothing). A reference no account owns is recorded in
     * funding_unmatched_deposits with a warning. The scan position moves only after the range is handled.
     */
    const scanDeposits = Effect.gen(function* () {
      const funding = yield* configured
      const treasury = funding.treasury.toLowerCase()
      const head = yield* chainCall(() => client.getBlockNumber())
      const safe = head - BigInt(endpoint.confirmations - 1)
      const stored = yield* orDieAtRepository(nextBlockOf(treasury))
      // Without a known deployment block (a configured network) the first scan starts at the confirmed head.
      const start = Option.match(stored, {
        onSome: (row) => BigInt(row.nextBlock),
        onNone: () => Option.getOrElse(funding.treasuryDeployedBlock, () => safe < 0n ? 0n : safe)
      })
      const outcome = { fromBlock: start, toBlock: safe, credited: 0, alreadyCredited: 0, unmatched: 0 }
      for (let from = start; from <= safe; from += LOG_RANGE) {
        const to = from + LOG_RANGE - 1n < safe ? from + LOG_RANGE - 1n : safe
        const logs = yield* chainCall(() =>
          client.getContractEvents({ address: funding.treasury, abi: treasuryAbi, eventName: "Deposited", fromBlock: from, toBlock: to, strict: true })
        )
        for (const log of logs) {
          const reference = `${log.transactionHash}:${log.logIndex}`
          const ref = log.args.accountRef.toLowerCase()
          const owner = Option.getOrUndefined(yield* orDieAtRepository(ownerOfRef(ref)))
          if (owner === undefined) {
            const recorded = yield* db(sql`
              INSERT INTO funding_unmatched_deposits (tx_hash, log_index, account_ref, from_address, amount_wei, block_number)
              VALUES (${log.transactionHash}, ${log.logIndex}, ${ref}, ${log.args.from.toLowerCase()}, ${log.args.amount.toString()}, ${log.blockNumber.toString()})
              ON CONFLICT DO NOTHING RETURNING tx_hash
            `)
            outcome.unmatched += 1
            if (recorded.length === 0) continue
            yield* Effect.logWarning("a deposit names no known account reference; recorded as unmatched, not credited").pipe(
              Effect.annotateLogs({ reference, accountRef: ref, amountWei: log.args.amount.toString() })
            )
            continue
          }
          const written = yield* ledger.deposit(owner.accountId, log.args.amount, reference)
          if (written.applied) outcome.credited += 1
          else outcome.alreadyCredited += 1
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* db(sql`
          INSERT INTO funding_scan_state (treasury, next_block, updated_at) VALUES (${treasury}, ${(to + 1n).toString()}, ${now}::timestamptz)
          ON CONFLICT (treasury) DO UPDATE SET next_block = GREATEST(funding_scan_state.next_block, EXCLUDED.next_block), updated_at = EXCLUDED.updated_at
        `)
      }
      return outcome satisfies ScanOutcome
    }).pipe(Effect.withSpan("Funding.scanDeposits"))

    return { configured, accountRef, info, scanDeposits } as const
  })
}) {}
