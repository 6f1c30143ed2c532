/**
 * `GET /v1/usage` (SPEC "Usage response"): what the calling key's (or app grant's) account holds and has spent, the
 * key's own caps and what their windows used, and the budget left under the tightest of the key's, its holder's
 * spending pool's and the account's caps.
 */
import { Clock, Effect, Option } from "effect"
import {
  type CapCheck,
  capLeft,
  type CapWindows,
  capWindowEnds,
  capWindows,
  earliestWindowStart,
  remainingBudget,
  spendWindows
} from "../../domain/accounts/ledger.ts"
import type { Credential } from "../../domain/accounts/credential.ts"
import { Generations } from "../exchange/Generations.ts"
import { Ledger } from "./Ledger.ts"
import { LedgerRepository } from "./LedgerRepository.ts"

export interface UsageReport {
  readonly balanceWei: bigint
  readonly spentWei: bigint
  readonly key: {
    readonly id: string
    readonly dailyLimitWei: bigint | null
    readonly monthlyLimitWei: bigint | null
    readonly dailyUsedWei: bigint
    readonly monthlyUsedWei: bigint
  }
  readonly remainingWei: bigint
  /** Cumulative cache token counts; null until a settled request recorded a non-zero count of that kind. */
  readonly cachedInputTokens: number | null
  readonly cacheWrite5mTokens: number | null
  readonly cacheWrite1hTokens: number | null
}

/** One account cap, what its window used (live holds included, as reservation counts them) and what it leaves. */
export interface CapStanding {
  readonly window: "day" | "week" | "month"
  readonly limitWei: bigint | null
  readonly usedWei: bigint
  readonly leftWei: bigint | null
  readonly resetsAt: Date
}

/** The console's overview of an account's spending: recent spend and the standing of each cap. */
export interface AccountSpend {
  readonly asOf: Date
  readonly todayWei: bigint
  readonly last7DaysWei: bigint
  readonly last30DaysWei: bigint
  readonly caps: ReadonlyArray<CapStanding>
}

export class Usage extends Effect.Service<Usage>()("Usage", {
  effect: Effect.gen(function* () {
    const ledger = yield* Ledger
    const repository = yield* LedgerRepository
    const generations = yield* Generations

    /** The key's own caps and what their windows used (its live holds counted): all the X-Key-* headers need. */
    const keyFigures = (key: Credential, windows: CapWindows) =>
      Effect.map(repository.keyUsage(key.id, { day: windows.dayStart, month: windows.monthStart }), (keyUsed) => ({
        id: key.id,
        dailyLimitWei: key.dailyLimitWei,
        monthlyLimitWei: key.monthlyLimitWei,
        dailyUsedWei: keyUsed.day + keyUsed.live,
        monthlyUsedWei: keyUsed.month + keyUsed.live
      }))
    const now = Effect.map(Clock.currentTimeMillis, (ms) => capWindows(new Date(ms)))

    const of = Effect.fn("Usage.of")(function* (key: Credential) {
      const windows = yield* now
      // A key always belongs to an account (a foreign key says so): its absence would be a defect, not a 404.
      const account = yield* ledger.account(key.accountId).pipe(Effect.catchTag("NotFound", Effect.die))
      const keyReport = yield* keyFigures(key, windows)
      const charged = yield* repository.accountCharges(key.accountId, {
        day: windows.dayStart,
        week: windows.weekStart,
        month: windows.monthStart,
        since: earliestWindowStart(windows)
      })
      // The holder's spending pool in an organization binds as well (migration 0014).
      const pool =
        key.holderCfId === null
          ? Option.none()
          : yield* repository.poolUsage(key.accountId, key.holderCfId, {
            day: windows.dayStart,
            week: windows.weekStart,
            month: windows.monthStart,
            since: earliestWindowStart(windows)
          })
      const poolChecks: ReadonlyArray<CapCheck> = Option.match(pool, {
        onNone: () => [],
        onSome: (p) => [
          { scope: "pool_daily", limitWei: p.dailyLimitWei, usedWei: p.day },
          { scope: "pool_weekly", limitWei: p.weeklyLimitWei, usedWei: p.week },
          { scope: "pool_monthly", limitWei: p.monthlyLimitWei, usedWei: p.month }
        ]
      })
      // Live holds count against every window, as they do at reservation.
      const checks: ReadonlyArray<CapCheck> = [
        ...poolChecks,
        { scope: "key_daily", limitWei: key.dailyLimitWei, usedWei: keyReport.dailyUsedWei },
        { scope: "key_monthly", limitWei: key.monthlyLimitWei, usedWei: keyReport.monthlyUsedWei },
        { scope: "account_daily", limitWei: account.limits.dailyWei, usedWei: charged.day + account.reservedWei },
        { scope: "account_weekly", limitWei: account.limits.weeklyWei, usedWei: charged.week + account.reservedWei },
        { scope: "account_monthly", limitWei: account.limits.monthlyWei, usedWei: charged.month + account.reservedWei }
      ]
      const cache = yield* generations.cacheTotals(key.accountId)
      return {
        balanceWei: account.balanceWei,
        spentWei: account.spentWei,
        key: keyReport,
        remainingWei: remainingBudget(account.balanceWei - account.reservedWei, checks),
        ...cache
      } satisfies UsageReport
    })

    const accountSpend = Effect.fn("Usage.accountSpend")(function* (accountId: string) {
      const at = new Date(yield* Clock.currentTimeMillis)
      const windows = capWindows(at)
      const recent = spendWindows(at)
      const account = yield* ledger.account(accountId)
      const spent = yield* repository.accountCharges(accountId, { day: recent.today, week: recent.last7Days, month: recent.last30Days, since: recent.last30Days })
      const capped = yield* repository.accountCharges(accountId, { day: windows.dayStart, week: windows.weekStart, month: windows.monthStart, since: earliestWindowStart(windows) })
      const ends = capWindowEnds(windows)
      const standing = (window: CapStanding["window"], limitWei: bigint | null, chargedWei: bigint, resetsAt: Date): CapStanding => {
        const usedWei = chargedWei + account.reservedWei
        return { window, limitWei, usedWei, leftWei: capLeft({ limitWei, usedWei }), resetsAt }
      }
      return {
        asOf: at,
        todayWei: spent.day,
        last7DaysWei: spent.week,
        last30DaysWei: spent.month,
        caps: [
          standing("day", account.limits.dailyWei, capped.day, ends.dayStart),
          standing("week", account.limits.weeklyWei, capped.week, ends.weekStart),
          standing("month", account.limits.monthlyWei, capped.month, ends.monthStart)
        ]
      } satisfies AccountSpend
    })

    return {
      of,
      accountSpend,
      key: Effect.fn("Usage.key")(function* (key: Credential) {
        return yield* Effect.flatMap(now, (windows) => keyFigures(key, windows))
      })
    } as const
  })
}) {}
