/**
 * On-chain funding of accounts (DESIGN.md section 11, "Funding"): each account's deposit reference, the scan of the
 * treasury's `Deposited` events that credits them (see DepositWatcher.ts for the job), and withdrawals sent through
 * the relayer. Chain failures are classified by `classifyChainError` (services/chain/Registry.ts), the same as
 * publishing's; the Ledger stays the only writer of balances.
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option, Redacted } from "effect"
import { createWalletClient, type Hex, http, keccak256, toHex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { ServiceUnavailable } from "../../domain/errors.ts"
import { type FundingContracts, FundingContractsTag, treasuryAbi } from "../chain/funding.ts"
import { ChainFailure, classifyChainError, Registry } from "../chain/Registry.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
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

export interface WithdrawalInput {
  readonly accountId: string
  readonly to: Hex
  readonly amountWei: bigint
}

const notConfigured = () => new ServiceUnavailable({ message: "On-chain funding is not configured on this service." })

/** A treasury refusing the relayer is a refusal of the call, not a frozen contributor as on the registry. */
const withdrawalFailure = (error: unknown, stage: "broadcast" | "confirm" | "read") => {
  const failure = classifyChainError(error, stage)
  const message = failure.message.replace("the registry refused", "the treasury refused")
  return new ChainFailure({ reason: failure.reason === "contributor_frozen" ? "contract_rejected" : failure.reason, message })
}

const newWithdrawalId = () => {
  const bytes = new Uint8Array(12)
  crypto.getRandomValues(bytes)
  return `wd_${Buffer.from(bytes).toString("hex")}`
}

export class Funding extends Effect.Service<Funding>()("Funding", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const registry = yield* Registry
    const contracts = yield* FundingContractsTag
    const client = registry.client
    const endpoint = registry.endpoint
    const db = <A, E, R>(effect: Effect.Effect<A, E, R>) => orDieUnlessUnavailable(effect)

    const configured: Effect.Effect<FundingContracts, ServiceUnavailable> = Option.match(contracts, {
      onNone: () => Effect.fail(notConfigured()),
      onSome: Effect.succeed
    })

    /** Records (once) and returns the account's deposit reference. */
    const accountRef = (accountId: string) =>
      Effect.gen(function* () {
        const ref = accountRefOf(accountId)
        yield* db(sql`INSERT INTO funding_account_refs (account_ref, account_id) VALUES (${ref}, ${accountId}) ON CONFLICT DO NOTHING`)
        return ref
      })

    const info = (accountId: string) =>
      Effect.gen(function* () {
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

    const chainCall = <A>(stage: "broadcast" | "confirm" | "read", run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (error) => withdrawalFailure(error, stage) })

    /**
     * Credits every confirmed `Deposited` event after the last scanned block: each once, by `<txHash>:<logIndex>`
     * (a re-scan or a second replica finds the entry and credits nothing). A reference no account owns is recorded in
     * funding_unmatched_deposits with a warning. The scan position moves only after the range is handled.
     */
    const scanDeposits = Effect.gen(function* () {
      const funding = yield* configured
      const treasury = funding.treasury.toLowerCase()
      const head = yield* chainCall("read", () => client.getBlockNumber())
      const safe = head - BigInt(endpoint.confirmations - 1)
      const [stored] = yield* db(sql<{ nextBlock: string }>`SELECT next_block::text AS "nextBlock" FROM funding_scan_state WHERE treasury = ${treasury}`)
      // Without a known deployment block (a configured network) the first scan starts at the confirmed head.
      const start = stored !== undefined ? BigInt(stored.nextBlock) : Option.getOrElse(funding.treasuryDeployedBlock, () => safe < 0n ? 0n : safe)
      const outcome = { fromBlock: start, toBlock: safe, credited: 0, alreadyCredited: 0, unmatched: 0 }
      for (let from = start; from <= safe; from += LOG_RANGE) {
        const to = from + LOG_RANGE - 1n < safe ? from + LOG_RANGE - 1n : safe
        const logs = yield* chainCall("read", () =>
          client.getContractEvents({ address: funding.treasury, abi: treasuryAbi, eventName: "Deposited", fromBlock: from, toBlock: to, strict: true })
        )
        for (const log of logs) {
          const reference = `${log.transactionHash}:${log.logIndex}`
          const ref = log.args.accountRef.toLowerCase()
          const [owner] = yield* db(sql<{ accountId: string }>`SELECT account_id::text AS "accountId" FROM funding_account_refs WHERE account_ref = ${ref}`)
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
        yield* db(sql`
          INSERT INTO funding_scan_state (treasury, next_block, updated_at) VALUES (${treasury}, ${(to + 1n).toString()}, now())
          ON CONFLICT (treasury) DO UPDATE SET next_block = GREATEST(funding_scan_state.next_block, EXCLUDED.next_block), updated_at = now()
        `)
      }
      return outcome satisfies ScanOutcome
    })

    /**
     * Debits the ledger (its own transaction, reference = a new withdrawal id), then sends `Treasury.withdraw` with the
     * relayer key and waits for the confirmations. A refusal or an unreachable chain refunds the debit (one
     * transaction); confirmation_pending does not: the transfer may still land, and its reference can pay only once.
     */
    const withdraw = (input: WithdrawalInput) =>
      Effect.gen(function* () {
        const funding = yield* configured
        if (Option.isNone(funding.relayerKey)) {
          return yield* Effect.fail(new ServiceUnavailable({ message: "Withdrawals are not available: no relayer key is configured." }))
        }
        const relayer = createWalletClient({
          chain: client.chain,
          transport: http(endpoint.rpcUrl, { retryCount: 1, timeout: 10_000 }),
          account: privateKeyToAccount(Redacted.value(funding.relayerKey.value))
        })
        const withdrawalId = newWithdrawalId()
        const debited = yield* ledger.withdraw(input.accountId, input.amountWei, withdrawalId)
        const send = Effect.gen(function* () {
          const { request } = yield* chainCall("broadcast", () =>
            client.simulateContract({
              address: funding.treasury,
              abi: treasuryAbi,
              functionName: "withdraw",
              args: [input.to, input.amountWei, withdrawalRefOf(withdrawalId)],
              account: relayer.account
            })
          )
          const txHash = yield* chainCall("broadcast", () => relayer.writeContract(request))
          const receipt = yield* chainCall("confirm", () =>
            client.waitForTransactionReceipt({
              hash: txHash,
              confirmations: endpoint.confirmations,
              timeout: Duration.toMillis(endpoint.embedded ? Duration.seconds(30) : Duration.minutes(3)),
              pollingInterval: endpoint.embedded ? 50 : 1_000
            })
          )
          if (receipt.status !== "success") {
            return yield* new ChainFailure({ reason: "contract_rejected", message: `withdrawal transaction ${txHash} reverted` })
          }
          return txHash
        })
        const txHash = yield* send.pipe(
          Effect.tapError((failure) =>
            failure.reason === "confirmation_pending"
              ? Effect.logWarning("a withdrawal was sent but is not confirmed; not refunded").pipe(
                  Effect.annotateLogs({ withdrawalId, reason: failure.reason, message: failure.message })
                )
              : Effect.zipRight(
                  ledger.refundWithdrawal(withdrawalId).pipe(Effect.orDie),
                  Effect.logWarning("a withdrawal failed on chain; refunded").pipe(
                    Effect.annotateLogs({ withdrawalId, reason: failure.reason, message: failure.message })
                  )
                )
          )
        )
        return { id: withdrawalId, to: input.to, amountWei: input.amountWei, txHash, balanceWei: debited.balanceWei }
      })

    return { configured, accountRef, info, scanDeposits, withdraw } as const
  })
}) {}
