/**
 * The credit ledger (DESIGN.md section 10, "Ledger"): the only writer of accounts' balances. Every change is one
 * transaction that locks the account row first (`SELECT ... FOR UPDATE`), so concurrent reservations, charges and
 * credits of one account queue behind each other and the checks they make stay true until they commit. Everything a
 * transaction reads goes through its own connection: the embedded database has one session, and a transaction
 * waiting on a query from another connection would wait forever.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Either, Option } from "effect"
import {
  capWindows,
  coversAmount,
  identifierKind,
  insufficientBalance,
  type LedgerEntryKind
} from "../../domain/accounts/ledger.ts"
import { Conflict, type InsufficientBalance, NotFound, SpendingLimitReached } from "../../domain/errors.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { type AccountRow, type EntryRow, type HoldRow, LedgerRepository } from "./LedgerRepository.ts"

/** A key's own caps, passed by the caller that authenticated the key; checked in the reservation's transaction. */
export interface ApiKeyCaps {
  readonly id: string
  readonly dailyLimitWei: bigint | null
  readonly monthlyLimitWei: bigint | null
}

export interface ReserveInput {
  readonly accountId: string
  readonly requestId: string
  readonly amountWei: bigint
  readonly apiKey?: ApiKeyCaps
  /** Who issued the request's key or grant: in an organization, that member's spending pool applies. */
  readonly memberCfId?: string | null
}

export interface SettleInput {
  readonly requestId: string
  /** The actual cost; it may exceed the hold (the balance may then go negative). */
  readonly chargeWei: bigint
  /**
   * Whom to charge when the hold is gone (a reservation commits asynchronously, so a database crash can drop it): the
   * account, the credential, and the member whose spending pool counts the charge. Without it, no hold is NotFound.
   */
  readonly chargeTo?: { readonly accountId: string; readonly apiKeyId: string | null; readonly memberCfId: string | null }
}

export type LedgerEntry = EntryRow
export type Hold = HoldRow

/**
 * A hold just made, and what the account could still reserve after it when its balance is the only budget that
 * applied (no key, pool or account cap): the replica's last-seen headroom. Null when a cap applied.
 */
export interface ReservedHold extends Hold {
  readonly headroomWei: bigint | null
}

/** A credit or debit asked for by reference: `applied` is false when that reference was recorded before. */
export interface LedgerWrite {
  readonly applied: boolean
  readonly entry: LedgerEntry
  readonly balanceWei: bigint
}

export interface Settlement {
  readonly requestId: string
  readonly chargedWei: bigint
  readonly balanceWei: bigint
  /** True when this request was settled before: nothing was charged this time. */
  readonly alreadySettled: boolean
  /** False when the hold was gone and the charge went to `chargeTo`. */
  readonly holdFound: boolean
}

export interface AccountLimits {
  readonly dailyWei: bigint | null
  readonly weeklyWei: bigint | null
  readonly monthlyWei: bigint | null
}

export interface AccountSummary {
  readonly balanceWei: bigint
  readonly reservedWei: bigint
  readonly spentWei: bigint
  readonly limits: AccountLimits
}

export interface EntriesPage {
  readonly entries: ReadonlyArray<LedgerEntry>
  /** Pass back as `cursor` for the next (older) page; null on the last page. */
  readonly nextCursor: string | null
}

const SWEEP_BATCH = 500

const accountNotFound = (accountId: string) => new NotFound({ message: `No account ${accountId}.` })

export class Ledger extends Effect.Service<Ledger>()("Ledger", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repository = yield* LedgerRepository
    const config = yield* AppConfig
    const holdTtlMs = config.ledger.holdTtlSeconds * 1000

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => orDieUnlessUnavailable(sql.withTransaction(effect))

    const lockAccount = (accountId: string) =>
      Effect.flatMap(
        repository.findAccount(accountId, true),
        Option.match({ onNone: () => Effect.fail(accountNotFound(accountId)), onSome: Effect.succeed })
      )

    /** Moves the balance (and the reserved total) and records the entry; a zero amount moves only the reserve. */
    const post = (
      account: AccountRow,
      kind: LedgerEntryKind,
      amountWei: bigint,
      options: { reference: string | null; note?: string | null; apiKeyId?: string | null; reservedDelta?: bigint; at: Date }
    ) =>
      Effect.gen(function* () {
        const moved = yield* repository.moveBalance(account.id, amountWei, options.reservedDelta ?? 0n)
        if (amountWei === 0n) return { entry: Option.none<LedgerEntry>(), balanceWei: moved.balanceWei }
        const entry = yield* repository.insertEntry({
          accountId: account.id,
          kind,
          amountWei,
          balanceAfterWei: moved.balanceWei,
          reference: options.reference,
          apiKeyId: options.apiKeyId ?? null,
          note: options.note ?? null,
          createdAt: options.at
        })
        return { entry: Option.some(entry), balanceWei: moved.balanceWei }
      })

    /** A credit recorded once per (kind, reference): a second call finds the first entry and credits nothing. */
    const credit = (accountId: string, kind: "grant" | "deposit", amountWei: bigint, reference: string | null, note: string | null) =>
      positive(amountWei).pipe(
        Effect.zipRight(now),
        Effect.flatMap((at) =>
          transaction(
            Effect.gen(function* () {
              const account = yield* lockAccount(accountId)
              if (reference !== null) {
                const earlier = yield* repository.findEntry(kind, reference)
                if (Option.isSome(earlier)) {
                  return { applied: false, entry: earlier.value, balanceWei: account.balanceWei } satisfies LedgerWrite
                }
              }
              const posted = yield* post(account, kind, amountWei, { reference, note, at })
              return { applied: true, entry: Option.getOrThrow(posted.entry), balanceWei: posted.balanceWei } satisfies LedgerWrite
            })
          )
        )
      )

    const grant = Effect.fn("Ledger.grant")(function* (accountId: string, amountWei: bigint, note: string | null, reference?: string) {
      return yield* credit(accountId, "grant", amountWei, reference ?? null, note)
    })

    const deposit = Effect.fn("Ledger.deposit")(function* (accountId: string, amountWei: bigint, reference: string) {
      return yield* credit(accountId, "deposit", amountWei, reference, null)
    })

    /** Debits a withdrawal of `amountWei`, refused when the available credit (balance minus holds) is short. */
    const withdraw = Effect.fn("Ledger.withdraw")(function* (accountId: string, amountWei: bigint, reference: string) {
      return yield* positive(amountWei).pipe(
        Effect.zipRight(now),
        Effect.flatMap((at) =>
          transaction(
            Effect.gen(function* () {
              const account = yield* lockAccount(accountId)
              const earlier = yield* repository.findEntry("withdrawal", reference)
              if (Option.isSome(earlier)) {
                return { applied: false, entry: earlier.value, balanceWei: account.balanceWei } satisfies LedgerWrite
              }
              if (!coversAmount(account.balanceWei, account.reservedWei, amountWei)) {
                return yield* Effect.fail(insufficientBalance(account.balanceWei, account.reservedWei, amountWei))
              }
              const posted = yield* post(account, "withdrawal", -amountWei, { reference, at })
              return { applied: true, entry: Option.getOrThrow(posted.entry), balanceWei: posted.balanceWei } satisfies LedgerWrite
            })
          )
        )
      )
    })

    /** Gives back a withdrawal the chain refused, once: the refund carries the withdrawal's reference. */
    const refundWithdrawal = Effect.fn("Ledger.refundWithdrawal")(function* (reference: string) {
      return yield* Effect.flatMap(now, (at) =>
        transaction(
          Effect.gen(function* () {
            const withdrawal = yield* Effect.flatMap(
              repository.findEntry("withdrawal", reference),
              Option.match({
                onNone: () => Effect.fail(new NotFound({ message: `No withdrawal ${reference}.` })),
                onSome: Effect.succeed
              })
            )
            const account = yield* lockAccount(withdrawal.accountId)
            const earlier = yield* repository.findEntry("withdrawal_refund", reference)
            if (Option.isSome(earlier)) {
              return { applied: false, entry: earlier.value, balanceWei: account.balanceWei } satisfies LedgerWrite
            }
            const posted = yield* post(account, "withdrawal_refund", -withdrawal.amountWei, { reference, at })
            return { applied: true, entry: Option.getOrThrow(posted.entry), balanceWei: posted.balanceWei } satisfies LedgerWrite
          })
        )
      )
    })

    /**
     * Moves `amountWei` of available credit from one account to another: a `transfer_out` and a `transfer_in` entry
     * with one reference, in one transaction that locks both rows in id order (so two opposite transfers cannot
     * deadlock). Refused with 402 when the source's available credit (balance minus holds) is short. A reference seen
     * before moves nothing again.
     */
    const transfer = Effect.fn("Ledger.transfer")(function* (fromAccountId: string, toAccountId: string, amountWei: bigint, reference: string, note: string | null) {
      return yield* positive(amountWei).pipe(
        Effect.zipRight(fromAccountId === toAccountId ? Effect.dieMessage("a transfer needs two accounts") : now),
        Effect.flatMap((at) =>
          transaction(
            Effect.gen(function* () {
              const [first, second] = BigInt(fromAccountId) < BigInt(toAccountId) ? [fromAccountId, toAccountId] : [toAccountId, fromAccountId]
              const locked = [yield* lockAccount(first), yield* lockAccount(second)]
              const source = locked.find((a) => a.id === fromAccountId)!
              const target = locked.find((a) => a.id === toAccountId)!
              const earlier = yield* repository.findEntry("transfer_out", reference)
              if (Option.isSome(earlier)) {
                return { applied: false, fromBalanceWei: source.balanceWei, toBalanceWei: target.balanceWei }
              }
              if (!coversAmount(source.balanceWei, source.reservedWei, amountWei)) {
                return yield* Effect.fail(insufficientBalance(source.balanceWei, source.reservedWei, amountWei))
              }
              const out = yield* post(source, "transfer_out", -amountWei, { reference, note, at })
              const into = yield* post(target, "transfer_in", amountWei, { reference, note, at })
              return { applied: true, fromBalanceWei: out.balanceWei, toBalanceWei: into.balanceWei }
            })
          )
        )
      )
    })

    /**
     * Sets `amountWei` aside for request `requestId`: one statement (`ledger_reserve`, migrations/repeatable/ledger.ts)
     * that locks the account, checks the available credit (402 insufficient_balance; a negative balance refuses
     * everything) and every cap that applies, the key's before the account's (429 spending_limit_reached naming the
     * scope), inserts the hold and raises the reserved total.
     */
    const reserve = Effect.fn("Ledger.reserve")(function* (input: ReserveInput) {
      return yield* positive(input.amountWei).pipe(
        Effect.zipRight(now),
        Effect.flatMap((at) => {
          const windows = capWindows(at)
          const expiresAt = new Date(at.getTime() + holdTtlMs)
          const wei = (value: bigint | null | undefined) => (value == null ? null : value.toString())
          return Effect.flatMap(
            repository.reserve({
                accountId: input.accountId,
                requestId: input.requestId,
                amountWei: input.amountWei.toString(),
                keyId: input.apiKey?.id ?? null,
                keyDailyWei: wei(input.apiKey?.dailyLimitWei),
                keyMonthlyWei: wei(input.apiKey?.monthlyLimitWei),
                day: windows.dayStart,
                week: windows.weekStart,
                month: windows.monthStart,
                at,
                expiresAt,
                memberCfId: input.memberCfId ?? null
              }),
            (row): Effect.Effect<ReservedHold, NotFound | Conflict | InsufficientBalance | SpendingLimitReached> => {
              switch (row.outcome) {
                case "reserved":
                  return Effect.succeed({
                    headroomWei: row.capped ? null : row.balanceWei! - row.reservedWei!,
                    id: row.holdId!,
                    requestId: input.requestId,
                    accountId: input.accountId,
                    apiKeyId: input.apiKey?.id ?? null,
                    amountWei: input.amountWei,
                    createdAt: at,
                    expiresAt,
                    releasedAt: null,
                    settledAt: null,
                    chargedWei: null
                  })
                case "no_account":
                  return Effect.fail(accountNotFound(input.accountId))
                case "duplicate":
                  return Effect.fail(new Conflict({ message: `Request ${input.requestId} already holds credit.` }))
                case "insufficient":
                  return Effect.fail(insufficientBalance(row.balanceWei!, row.reservedWei!, input.amountWei))
                default: {
                  const pool = row.poolId === null || row.poolName === null ? undefined : { id: row.poolId, name: row.poolName }
                  const cap = row.outcome.replace("_", " ")
                  return Effect.fail(
                    new SpendingLimitReached({
                      message: pool === undefined
                        ? `This request would exceed the ${cap} spending cap.`
                        : `This request would exceed the ${cap.replace("pool ", "")} cap of the spending pool "${pool.name}".`,
                      details: pool === undefined ? { scope: row.outcome } : { scope: row.outcome, pool }
                    })
                  )
                }
              }
            }
          )
        })
      )
    })

    /**
     * Charges the actual cost of each request and closes its hold, all in one statement (`ledger_settle_batch`): one
     * transaction, one WAL flush, each account locked once. Settling twice charges once. A hold already released (by
     * the sweeper, after a long request) is still charged: the work was done; so is a hold that is gone, to the
     * item's `chargeTo`. One result per item, in order: NotFound when there was no hold and nobody to charge.
     * `alongside` is a data-modifying statement run in the same statement (so the same transaction) that reads the
     * function's rows as `settled` (columns request_id, outcome, charged_wei, balance_wei, account_id): the exchange's
     * stored bills.
     */
    const settleBatch = Effect.fn("Ledger.settleBatch")(function* (
      inputs: ReadonlyArray<SettleInput>,
      alongside?: Statement.Fragment
    ): Effect.fn.Return<ReadonlyArray<Either.Either<Settlement, NotFound>>> {
      const negative = inputs.find((input) => input.chargeWei < 0n)
      if (negative !== undefined) return yield* Effect.dieMessage(`a charge cannot be negative (${negative.chargeWei})`)
      const rows = yield* repository.settleBatch(
        inputs.map((input) => ({
          requestId: input.requestId,
          chargeWei: input.chargeWei,
          accountId: input.chargeTo?.accountId ?? null,
          apiKeyId: input.chargeTo?.apiKeyId ?? null,
          memberCfId: input.chargeTo?.memberCfId ?? null
        })),
        yield* now,
        alongside
      )
      if (rows.length !== inputs.length) return yield* Effect.dieMessage(`a batch of ${inputs.length} settlements answered ${rows.length} rows`)
      return rows.map((row, i) =>
        row.outcome === "no_hold" || row.outcome === "no_account"
          ? Either.left(
            new NotFound({
              message: row.outcome === "no_hold"
                ? `No hold for request ${inputs[i]!.requestId}.`
                : `No account ${inputs[i]!.chargeTo?.accountId} to charge request ${inputs[i]!.requestId} to.`
            })
          )
          : Either.right({
            requestId: row.requestId,
            chargedWei: row.chargedWei ?? 0n,
            balanceWei: row.balanceWei ?? 0n,
            alreadySettled: row.outcome === "already_settled",
            holdFound: row.holdFound
          } satisfies Settlement)
      )
    })

    /** One settlement, as a batch of one. */
    const settle = Effect.fn("Ledger.settle")(function* (input: SettleInput, alongside?: Statement.Fragment) {
      return yield* Effect.flatMap(settleBatch([input], alongside), ([result]) => result!)
    })

    /** Gives a live hold back without charging (`ledger_release`); false when it was already released or settled. */
    const release = Effect.fn("Ledger.release")(function* (requestId: string) {
      return yield* Effect.flatMap(now, (at) => repository.release(requestId, at)).pipe(
        Effect.flatMap((row) =>
          row.outcome === "no_hold"
            ? Effect.fail(new NotFound({ message: `No hold for request ${requestId}.` }))
            : Effect.succeed({ released: row.outcome === "released" })
        )
      )
    })

    /** Releases holds past their expiry (left by a crash): how many it released. */
    const sweepExpired = Effect.gen(function* () {
      const expired = yield* repository.expiredHolds(yield* now, SWEEP_BATCH)
      let released = 0
      for (const requestId of expired) {
        // A hold settled or released between the listing and here is simply skipped.
        const outcome = yield* release(requestId).pipe(Effect.catchTag("NotFound", () => Effect.succeed({ released: false })))
        if (outcome.released) released += 1
      }
      return released
    }).pipe(Effect.withSpan("Ledger.sweepExpired"))

    const account = Effect.fn("Ledger.account")(function* (accountId: string) {
      const row = yield* Effect.flatMap(
        repository.findAccount(accountId, false),
        Option.match({ onNone: () => Effect.fail(accountNotFound(accountId)), onSome: Effect.succeed })
      )
      return {
        balanceWei: row.balanceWei,
        reservedWei: row.reservedWei,
        spentWei: yield* repository.totalSpent(accountId),
        limits: { dailyWei: row.dailyLimitWei, weeklyWei: row.weeklyLimitWei, monthlyWei: row.monthlyLimitWei }
      } satisfies AccountSummary
    })

    /** Newest first; `cursor` is the `nextCursor` of the previous page. */
    const entries = Effect.fn("Ledger.entries")(function* (accountId: string, page: { readonly limit: number; readonly cursor?: string | undefined }) {
      return yield* Effect.map(repository.entriesPage(accountId, page.cursor ?? null, page.limit + 1), (rows): EntriesPage => {
        const shown = rows.slice(0, page.limit)
        return { entries: shown, nextCursor: rows.length > page.limit ? (shown[shown.length - 1]?.id ?? null) : null }
      })
    })

    const setLimits = Effect.fn("Ledger.setLimits")(function* (accountId: string, limits: AccountLimits) {
      const updated = yield* repository.updateLimits(accountId, {
        daily: limits.dailyWei,
        weekly: limits.weeklyWei,
        monthly: limits.monthlyWei
      })
      if (!updated) return yield* Effect.fail(accountNotFound(accountId))
      return yield* account(accountId)
    })

    /** The personal account of the identity an operator names by CF ID, e-mail or wallet address. */
    const resolveAccount = Effect.fn("Ledger.resolveAccount")(function* (identifier: string) {
      return yield* Effect.flatMap(
        repository.accountOfIdentity(identifierKind(identifier), identifier),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `No account belongs to ${identifier}.` })),
          onSome: Effect.succeed
        })
      )
    })

    return {
      grant,
      deposit,
      withdraw,
      refundWithdrawal,
      transfer,
      reserve,
      settle,
      settleBatch,
      release,
      sweepExpired,
      /** How many holds are open and what they reserve, database-wide. */
      liveHolds: repository.liveHolds,
      account,
      entries,
      setLimits,
      resolveAccount
    } as const
  }),
  dependencies: [LedgerRepository.Default]
}) {}

/** A non-positive amount here is a caller's bug (requests are validated at the edge): a defect, not a refusal. */
const positive = (amountWei: bigint) =>
  amountWei > 0n ? Effect.void : Effect.dieMessage(`a ledger amount must be positive (${amountWei})`)
