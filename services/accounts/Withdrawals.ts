/**
 * Withdrawals through the relayer (DESIGN.md section 11, "Funding"). The ledger debit and the withdrawal's row are
 * written in one transaction; the transaction is signed and recorded before it is sent, so a withdrawal is never
 * refunded while it could still be paid:
 * - refused before it reached a node (the treasury refused the call, the relayer has no gas, the chain was
 *   unreachable before sending): refunded at once, `contract_error` with the reason;
 * - sent but not confirmed in CHAIN_CONFIRMATION_TIMEOUT_MS, or the node did not answer the send: left `pending`,
 *   `contract_error` confirmation_pending; the deposit watcher's pass (`settlePending`) later marks it `confirmed`,
 *   or refunds it once it provably cannot land (it reverted, or the relayer's nonce it was signed with went to
 *   another confirmed transaction while the treasury has not paid its reference).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, Option, Redacted, Schema } from "effect"
import {
  type Account,
  BaseError,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  HttpRequestError,
  keccak256,
  recoverTransactionAddress,
  TimeoutError,
  TransactionReceiptNotFoundError
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { ContractError, type ChainFailureReason, ServiceUnavailable } from "../../domain/errors.ts"
import { type FundingContracts, treasuryAbi } from "../chain/funding.ts"
import { ChainFailure, classifyChainError, Registry } from "../chain/Registry.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { Funding, withdrawalRefOf } from "./Funding.ts"
import { Ledger } from "./Ledger.ts"

export type WithdrawalStatus = "pending" | "confirmed" | "refunded"

export interface Withdrawal {
  readonly id: string
  readonly to: Hex
  readonly amountWei: bigint
  readonly status: WithdrawalStatus
  readonly txHash: Hex | null
  readonly failureReason: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface WithdrawalInput {
  readonly accountId: string
  readonly to: Hex
  readonly amountWei: bigint
}

export interface SettleOutcome {
  readonly confirmed: number
  readonly refunded: number
  readonly pending: number
}

/** A `sending` row older than this was left by a crash before its transaction was signed: it was never sent. */
const ABANDONED_SENDING = Duration.minutes(10)

const HexText = Schema.TemplateLiteral("0x", Schema.String)

/** A stored withdrawal as SELECT_ROW reads it; a row that does not decode is a defect at the boundary. */
const WithdrawalRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  to: Schema.String,
  amountWei: Schema.String,
  withdrawalRef: HexText,
  status: Schema.Literal("sending", "pending", "confirmed", "refunded"),
  txHash: Schema.NullOr(HexText),
  nonce: Schema.NullOr(Schema.String),
  rawTx: Schema.NullOr(HexText),
  failureReason: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf,
  seq: Schema.String
})
type WithdrawalRow = typeof WithdrawalRow.Type

const toWithdrawal = (row: WithdrawalRow): Withdrawal => ({
  id: row.id,
  to: row.to as Hex,
  amountWei: BigInt(row.amountWei),
  status: row.status === "sending" ? "pending" : row.status,
  txHash: row.txHash,
  failureReason: row.failureReason,
  createdAt: new Date(row.createdAt),
  updatedAt: new Date(row.updatedAt)
})

const newWithdrawalId = () => {
  const bytes = new Uint8Array(12)
  crypto.getRandomValues(bytes)
  return `wd_${Buffer.from(bytes).toString("hex")}`
}

/** A treasury refusing the relayer is a refusal of the call, not a frozen contributor as on the registry. */
const chainFailureOf = (error: unknown, stage: "broadcast" | "confirm" | "read") => {
  const failure = classifyChainError(error, stage)
  const message = failure.message.replace("the registry refused", "the treasury refused")
  return new ChainFailure({ reason: failure.reason === "contributor_frozen" ? "contract_rejected" : failure.reason, message })
}

/** A send whose answer never came: the node may hold the transaction, so it is not refused. */
const ambiguousSend = (error: unknown) =>
  error instanceof BaseError ? error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null : true

const SELECT_ROW = `id, seq::text AS seq, account_id::text AS "accountId", to_address AS "to", amount_wei::text AS "amountWei",
  withdrawal_ref AS "withdrawalRef", status, tx_hash AS "txHash", nonce::text AS nonce, raw_tx AS "rawTx",
  failure_reason AS "failureReason", created_at AS "createdAt", updated_at AS "updatedAt"`

export class Withdrawals extends Effect.Service<Withdrawals>()("Withdrawals", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const funding = yield* Funding
    const registry = yield* Registry
    const config = yield* AppConfig
    const client = registry.client
    const endpoint = registry.endpoint
    const sendLock = yield* Effect.makeSemaphore(1)
    const db = <A, E, R>(effect: Effect.Effect<A, E, R>) => orDieUnlessUnavailable(effect)
    const selectRow = sql.unsafe(SELECT_ROW)

    const relayerOf = (key: Redacted.Redacted<Hex>) =>
      createWalletClient({
        chain: client.chain,
        transport: http(endpoint.rpcUrl, { retryCount: 1, timeout: 10_000 }),
        account: privateKeyToAccount(Redacted.value(key))
      })
    // Decided once: funding and its relayer key are fixed for the life of the process.
    const relayer: Effect.Effect<{ contracts: FundingContracts; wallet: ReturnType<typeof relayerOf> }, ServiceUnavailable> = yield* Effect.either(
      Effect.gen(function* () {
        const contracts = yield* funding.configured
        if (Option.isNone(contracts.relayerKey)) {
          return yield* new ServiceUnavailable({ message: "Withdrawals are not available: no relayer key is configured." })
        }
        return { contracts, wallet: relayerOf(contracts.relayerKey.value) }
      })
    )

    const chainCall = <A>(stage: "broadcast" | "confirm" | "read", run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (error) => chainFailureOf(error, stage) })

    const findRow = (id: string) =>
      orDieAtRepository(
        SqlSchema.single({ Request: Schema.String, Result: WithdrawalRow, execute: (i) => sql`SELECT ${selectRow} FROM funding_withdrawals WHERE id = ${i}` })(id)
      )

    const contractError = (row: WithdrawalRow, reason: ChainFailureReason, message: string) =>
      new ContractError({
        message,
        details: {
          chainFailure: { reason },
          withdrawal: { id: row.id, status: row.status === "refunded" ? "refunded" : "pending", txHash: row.txHash }
        }
      })

    /** The refund and the row's new state in one transaction; a second call changes nothing. */
    const refund = (id: string, reason: string) =>
      db(
        sql.withTransaction(
          Effect.gen(function* () {
            const now = new Date(yield* Clock.currentTimeMillis)
            yield* Effect.orDie(ledger.refundWithdrawal(id))
            yield* sql`
              UPDATE funding_withdrawals SET status = 'refunded', failure_reason = ${reason}, updated_at = ${now}::timestamptz
              WHERE id = ${id} AND status <> 'refunded'
            `
          })
        )
      ).pipe(Effect.zipRight(findRow(id)))

    const confirm = (id: string) =>
      Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) =>
          db(sql`UPDATE funding_withdrawals SET status = 'confirmed', updated_at = ${new Date(now)}::timestamptz WHERE id = ${id} AND status = 'pending'`)
        ),
        Effect.zipRight(findRow(id))
      )

    /** Signs the treasury call with the next relayer nonce and records it as pending, then sends it; one at a time. */
    const signRecordSend = (row: WithdrawalRow, wallet: ReturnType<typeof relayerOf>, treasury: Hex) =>
      sendLock.withPermits(1)(
        Effect.gen(function* () {
          const account = wallet.account as Account
          const nonce = yield* chainCall("broadcast", () => client.getTransactionCount({ address: account.address, blockTag: "pending" }))
          const prepared = yield* chainCall("broadcast", () =>
            wallet.prepareTransactionRequest({
              account,
              chain: client.chain,
              to: treasury,
              nonce,
              data: encodeFunctionData({ abi: treasuryAbi, functionName: "withdraw", args: [row.to as Hex, BigInt(row.amountWei), row.withdrawalRef] })
            })
          )
          const rawTx = yield* chainCall("broadcast", () => wallet.signTransaction(prepared as never))
          const txHash = keccak256(rawTx)
          const now = new Date(yield* Clock.currentTimeMillis)
          yield* db(sql`
            UPDATE funding_withdrawals SET status = 'pending', tx_hash = ${txHash}, nonce = ${nonce.toString()}, raw_tx = ${rawTx}, updated_at = ${now}::timestamptz
            WHERE id = ${row.id}
          `)
          const sent = yield* Effect.either(
            Effect.tryPromise({ try: () => client.sendRawTransaction({ serializedTransaction: rawTx }), catch: (error) => error })
          )
          return { txHash, sent }
        })
      )

    /**
     * Debits the ledger and records the withdrawal (one transaction), checks the call against the treasury, then signs,
     * records and sends it and waits for its confirmations. Failures are `contract_error` naming the withdrawal.
     */
    const withdraw = Effect.fn("Withdrawals.withdraw")(function* (input: WithdrawalInput) {
      const { contracts, wallet } = yield* relayer
      const id = newWithdrawalId()
      const withdrawalRef = withdrawalRefOf(id)
      const debited = yield* db(
        sql.withTransaction(
          Effect.gen(function* () {
            const written = yield* ledger.withdraw(input.accountId, input.amountWei, id)
            yield* sql`
              INSERT INTO funding_withdrawals (id, account_id, to_address, amount_wei, withdrawal_ref, status)
              VALUES (${id}, ${input.accountId}, ${input.to.toLowerCase()}, ${input.amountWei.toString()}, ${withdrawalRef}, 'sending')
            `
            return written
          })
        )
      )
      const row = yield* findRow(id)
      const refundWith = (failure: ChainFailure) =>
        Effect.gen(function* () {
          const refunded = yield* refund(id, `${failure.reason}: ${failure.message}`)
          yield* Effect.logWarning("a withdrawal was refused; refunded").pipe(
            Effect.annotateLogs({ withdrawalId: id, reason: failure.reason, message: failure.message })
          )
          return yield* Effect.fail(contractError(refunded, failure.reason, failure.message))
        })
      const leavePending = (message: string) =>
        Effect.gen(function* () {
          const pending = yield* findRow(id)
          yield* Effect.logWarning("a withdrawal was sent but is not confirmed; it stays pending").pipe(
            Effect.annotateLogs({ withdrawalId: id, txHash: pending.txHash, message })
          )
          return yield* Effect.fail(contractError(pending, "confirmation_pending", `${message} Withdrawal ${id} stays pending until the chain settles it; it is paid or refunded, never both.`))
        })

      const checked = yield* Effect.either(
        chainCall("broadcast", () =>
          client.simulateContract({
            address: contracts.treasury,
            abi: treasuryAbi,
            functionName: "withdraw",
            args: [input.to, input.amountWei, withdrawalRef],
            account: wallet.account
          })
        ).pipe(Effect.zipRight(Effect.either(signRecordSend(row, wallet, contracts.treasury))))
      )
      if (checked._tag === "Left") return yield* refundWith(checked.left)
      if (checked.right._tag === "Left") return yield* refundWith(checked.right.left)
      const { txHash, sent } = checked.right.right
      if (sent._tag === "Left") {
        if (ambiguousSend(sent.left)) return yield* leavePending("The node did not answer the send.")
        return yield* refundWith(chainFailureOf(sent.left, "broadcast"))
      }
      const receipt = yield* Effect.either(
        chainCall("confirm", () =>
          client.waitForTransactionReceipt({
            hash: txHash,
            confirmations: endpoint.confirmations,
            timeout: config.chain.confirmationTimeoutMs,
            pollingInterval: endpoint.embedded ? 50 : 1_000
          })
        )
      )
      if (receipt._tag === "Left") return yield* leavePending(`Transaction ${txHash} is not confirmed yet.`)
      if (receipt.right.status !== "success") {
        return yield* refundWith(new ChainFailure({ reason: "contract_rejected", message: `withdrawal transaction ${txHash} reverted` }))
      }
      return { withdrawal: toWithdrawal(yield* confirm(id)), balanceWei: debited.balanceWei }
    })

    /** Settles one open withdrawal from what the chain shows at its confirmed depth; Some(status) when it changed. */
    const settleOne = (row: WithdrawalRow, treasury: Hex) =>
      Effect.gen(function* () {
        if (row.status === "sending") {
          const age = (yield* Clock.currentTimeMillis) - new Date(row.createdAt).getTime()
          if (age < Duration.toMillis(ABANDONED_SENDING)) return Option.none<WithdrawalStatus>()
          yield* refund(row.id, "abandoned before it was signed")
          return Option.some<WithdrawalStatus>("refunded")
        }
        const txHash = row.txHash!
        const head = yield* chainCall("read", () => client.getBlockNumber())
        const safe = head - BigInt(endpoint.confirmations - 1)
        const receipt = yield* chainCall("read", () =>
          client.getTransactionReceipt({ hash: txHash }).then(
            (r) => Option.some(r),
            (error) => (error instanceof TransactionReceiptNotFoundError ? Option.none() : Promise.reject(error))
          )
        )
        if (Option.isSome(receipt)) {
          if (receipt.value.blockNumber > safe) return Option.none<WithdrawalStatus>()
          if (receipt.value.status === "success") {
            yield* confirm(row.id)
            return Option.some<WithdrawalStatus>("confirmed")
          }
          yield* refund(row.id, `contract_rejected: withdrawal transaction ${txHash} reverted`)
          return Option.some<WithdrawalStatus>("refunded")
        }
        // The sender from the signed transaction itself: a replica without the relayer key settles it as well.
        const sender = yield* chainCall("read", () => recoverTransactionAddress({ serializedTransaction: row.rawTx! as never }))
        const usedNonces = yield* chainCall("read", () => client.getTransactionCount({ address: sender, blockNumber: safe }))
        if (BigInt(usedNonces) <= BigInt(row.nonce!)) {
          // Not mined and its nonce still free: make sure a node holds it (a restarted node forgets its pool).
          yield* Effect.ignore(chainCall("broadcast", () => client.sendRawTransaction({ serializedTransaction: row.rawTx! })))
          return Option.none<WithdrawalStatus>()
        }
        const paid = yield* chainCall("read", () =>
          client.readContract({ address: treasury, abi: treasuryAbi, functionName: "isWithdrawalRefUsed", args: [row.withdrawalRef], blockNumber: safe })
        )
        if (paid) {
          yield* confirm(row.id)
          return Option.some<WithdrawalStatus>("confirmed")
        }
        yield* refund(row.id, `its relayer nonce ${row.nonce} went to another transaction; ${txHash} can never be mined`)
        return Option.some<WithdrawalStatus>("refunded")
      })

    /** The deposit watcher's second half: every open withdrawal, oldest first. */
    const settlePending = Effect.gen(function* () {
      const rows = yield* orDieAtRepository(
        SqlSchema.findAll({
          Request: Schema.Void,
          Result: WithdrawalRow,
          execute: () => sql`SELECT ${selectRow} FROM funding_withdrawals WHERE status IN ('sending', 'pending') ORDER BY seq`
        })(undefined)
      )
      const outcome = { confirmed: 0, refunded: 0, pending: 0 }
      if (rows.length === 0) return outcome satisfies SettleOutcome
      const contracts = yield* funding.configured.pipe(Effect.orDie)
      for (const row of rows) {
        const changed = yield* settleOne(row, contracts.treasury)
        if (Option.isNone(changed)) outcome.pending += 1
        else outcome[changed.value === "confirmed" ? "confirmed" : "refunded"] += 1
        if (Option.isSome(changed)) {
          yield* Effect.logInfo(`withdrawal ${row.id} settled: ${changed.value}`)
        }
      }
      return outcome satisfies SettleOutcome
    }).pipe(Effect.withSpan("Withdrawals.settlePending"))

    const list = Effect.fn("Withdrawals.list")(function* (accountId: string, page: { readonly limit: number; readonly cursor: string | undefined }) {
      const rows = yield* orDieAtRepository(
        SqlSchema.findAll({
          Request: Schema.Void,
          Result: WithdrawalRow,
          execute: () => sql`
            SELECT ${selectRow} FROM funding_withdrawals
            WHERE account_id = ${accountId} ${page.cursor === undefined ? sql`` : sql`AND seq < ${page.cursor}`}
            ORDER BY seq DESC LIMIT ${page.limit + 1}`
        })(undefined)
      )
      const shown = rows.slice(0, page.limit)
      return {
        withdrawals: shown.map(toWithdrawal),
        nextCursor: rows.length > page.limit ? shown[shown.length - 1]!.seq : null
      }
    })

    return { withdraw, settlePending, list } as const
  })
}) {}
