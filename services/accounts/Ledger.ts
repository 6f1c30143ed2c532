/**
 * The credit ledger (DESIGN.md section 10, "Ledger"): the only writer of accounts' balances. Every change is one
 * transaction that locks the account row first (`SELECT ... FOR UPDATE`), so concurrent reservations, charges and
 * credits of one account queue behind each other and the checks they make stay true until they commit. Everything a
 * transaction reads goes through its own connection: the embedded database has one session, and a transaction
 * waiting on a query from another connection would wait forever.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import {
  capWindows,
  type CapCheck,
  coversAmount,
  earliestWindowStart,
  exceededCap,
  identifierKind,
  insufficientBalance,
  type LedgerEntryKind
} from "../../domain/accounts/ledger.ts"
import { Conflict, NotFound, SpendingLimitReached } from "../../domain/errors.ts"
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
}

export interface SettleInput {
  readonly requestId: string
  /** The actual cost; it may exceed the hold (the balance may then go negative). */
  readonly chargeWei: bigint
}

export type LedgerEntry = EntryRow
export type Hold = HoldRow

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

    const grant = (accountId: string, amountWei: bigint, note: string | null, reference?: string) =>
      credit(accountId, "grant", amountWei, reference ?? null, note)

    const deposit = (accountId: string, amountWei: bigint, reference: string) => credit(accountId, "deposit", amountWei, reference, null)

    /** Debits a withdrawal of `amountWei`, refused when the available credit (balance minus holds) is short. */
    const withdraw = (accountId: string, amountWei: bigint, reference: string) =>
      positive(amountWei).pipe(
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

    /** Gives back a withdrawal the chain refused, once: the refund carries the withdrawal's reference. */
    const refundWithdrawal = (reference: string) =>
      Effect.flatMap(now, (at) =>
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

    /** The caps that apply to this reservation, key caps first, with what each window has used already. */
    const capChecks = (account: AccountRow, apiKey: ApiKeyCaps | undefined, at: Date) =>
      Effect.gen(function* () {
        const windows = capWindows(at)
        const checks: Array<CapCheck> = []
        if (apiKey !== undefined && (apiKey.dailyLimitWei !== null || apiKey.monthlyLimitWei !== null)) {
          const used = yield* repository.keyUsage(apiKey.id, { day: windows.dayStart, month: windows.monthStart })
          checks.push(
            { scope: "key_daily", limitWei: apiKey.dailyLimitWei, usedWei: used.day + used.live },
            { scope: "key_monthly", limitWei: apiKey.monthlyLimitWei, usedWei: used.month + used.live }
          )
        }
        if (account.dailyLimitWei !== null || account.weeklyLimitWei !== null || account.monthlyLimitWei !== null) {
          const charged = yield* repository.accountCharges(account.id, {
            day: windows.dayStart,
            week: windows.weekStart,
            month: windows.monthStart,
            since: earliestWindowStart(windows)
          })
          // Every live hold of the account will be charged at or after now, inside the current windows.
          const live = account.reservedWei
          checks.push(
            { scope: "account_daily", limitWei: account.dailyLimitWei, usedWei: charged.day + live },
            { scope: "account_weekly", limitWei: account.weeklyLimitWei, usedWei: charged.week + live },
            { scope: "account_monthly", limitWei: account.monthlyLimitWei, usedWei: charged.month + live }
          )
        }
        return checks
      })

    /**
     * Sets `amountWei` aside for request `requestId`: one transaction that locks the account, checks the available
     * credit (402 insufficient_balance; a negative balance refuses everything) and every cap that applies (429
     * spending_limit_reached naming the scope), inserts the hold and raises the reserved total.
     */
    const reserve = (input: ReserveInput) =>
      positive(input.amountWei).pipe(
        Effect.zipRight(now),
        Effect.flatMap((at) =>
          transaction(
            Effect.gen(function* () {
              const account = yield* lockAccount(input.accountId)
              if (Option.isSome(yield* repository.findHold(input.requestId, false))) {
                return yield* Effect.fail(new Conflict({ message: `Request ${input.requestId} already holds credit.` }))
              }
              if (!coversAmount(account.balanceWei, account.reservedWei, input.amountWei)) {
                return yield* Effect.fail(insufficientBalance(account.balanceWei, account.reservedWei, input.amountWei))
              }
              const scope = exceededCap(input.amountWei, yield* capChecks(account, input.apiKey, at))
              if (scope !== undefined) {
                return yield* Effect.fail(
                  new SpendingLimitReached({
                    message: `This request would exceed the ${scope.replace("_", " ")} spending cap.`,
                    details: { scope }
                  })
                )
              }
              const hold = yield* repository.insertHold({
                requestId: input.requestId,
                accountId: account.id,
                apiKeyId: input.apiKey?.id ?? null,
                amountWei: input.amountWei,
                createdAt: at,
                expiresAt: new Date(at.getTime() + holdTtlMs)
              })
              yield* repository.moveBalance(account.id, 0n, input.amountWei)
              return hold
            })
          )
        )
      )

    /** The hold of `requestId` with its account locked first (the same order as reserve takes them). */
    const lockHold = (requestId: string) =>
      Effect.gen(function* () {
        const found = yield* repository.findHold(requestId, false)
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ message: `No hold for request ${requestId}.` }))
        const account = yield* lockAccount(found.value.accountId)
        const hold = Option.getOrThrow(yield* repository.findHold(requestId, true))
        return { account, hold, live: hold.releasedAt === null && hold.settledAt === null }
      })

    /**
     * Charges the actual cost of `requestId` and closes its hold, in one transaction. Settling twice charges once.
     * A hold already released (by the sweeper, after a long request) is still charged: the work was done.
     */
    const settle = (input: SettleInput) =>
      (input.chargeWei < 0n ? Effect.dieMessage(`a charge cannot be negative (${input.chargeWei})`) : now).pipe(
        Effect.flatMap((at) =>
          transaction(
            Effect.gen(function* () {
              const { account, hold, live } = yield* lockHold(input.requestId)
              if (hold.settledAt !== null) {
                return {
                  requestId: input.requestId,
                  chargedWei: hold.chargedWei ?? 0n,
                  balanceWei: account.balanceWei,
                  alreadySettled: true
                } satisfies Settlement
              }
              const posted = yield* post(account, "charge", -input.chargeWei, {
                reference: input.requestId,
                apiKeyId: hold.apiKeyId,
                reservedDelta: live ? -hold.amountWei : 0n,
                at
              })
              yield* repository.markSettled(hold.id, at, input.chargeWei)
              return {
                requestId: input.requestId,
                chargedWei: input.chargeWei,
                balanceWei: posted.balanceWei,
                alreadySettled: false
              } satisfies Settlement
            })
          )
        )
      )

    /** Gives a live hold back without charging; false when it was already released or settled. */
    const release = (requestId: string) =>
      Effect.flatMap(now, (at) =>
        transaction(
          Effect.gen(function* () {
            const { account, hold, live } = yield* lockHold(requestId)
            if (!live) return { released: false }
            yield* repository.markReleased(hold.id, at)
            yield* repository.moveBalance(account.id, 0n, -hold.amountWei)
            return { released: true }
          })
        )
      )

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
    })

    const account = (accountId: string) =>
      Effect.gen(function* () {
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
    const entries = (accountId: string, page: { readonly limit: number; readonly cursor?: string | undefined }) =>
      Effect.map(repository.entriesPage(accountId, page.cursor ?? null, page.limit + 1), (rows): EntriesPage => {
        const shown = rows.slice(0, page.limit)
        return { entries: shown, nextCursor: rows.length > page.limit ? (shown[shown.length - 1]?.id ?? null) : null }
      })

    const setLimits = (accountId: string, limits: AccountLimits) =>
      Effect.gen(function* () {
        const updated = yield* repository.updateLimits(accountId, {
          daily: limits.dailyWei,
          weekly: limits.weeklyWei,
          monthly: limits.monthlyWei
        })
        if (!updated) return yield* Effect.fail(accountNotFound(accountId))
        return yield* account(accountId)
      })

    /** The personal account of the identity an operator names by CF ID, e-mail or wallet address. */
    const resolveAccount = (identifier: string) =>
      Effect.flatMap(
        repository.accountOfIdentity(identifierKind(identifier), identifier),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `No account belongs to ${identifier}.` })),
          onSome: Effect.succeed
        })
      )

    return {
      grant,
      deposit,
      withdraw,
      refundWithdrawal,
      reserve,
      settle,
      release,
      sweepExpired,
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
