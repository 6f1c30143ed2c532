/**
 * The ledger's rules in time, driven by TestClock over the live Ledger, Jobs and sweeper on a scratch PostgreSQL
 * database: a hold lives HOLD_TTL_SECONDS and is released by the sweep at its expiry, not before; the background
 * sweeper runs every HOLD_SWEEP_INTERVAL_SECONDS of the service's clock; the caps' windows turn over at UTC midnight,
 * on Monday and on the 1st. No row is back-dated and nothing sleeps: the clock is moved.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import { TestAppConfig } from "../layers/Test.ts"
import { HoldSweeperLive, sweepHolds } from "../services/accounts/HoldSweeper.ts"
import { Ledger } from "../services/accounts/Ledger.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { ScratchDatabase } from "./support/database.ts"
import { createIdentity } from "./support/ledger.ts"

const LedgerOnScratch = Layer.mergeAll(Ledger.Default, Jobs.Default).pipe(
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig({ HOLD_TTL_SECONDS: "600", HOLD_SWEEP_INTERVAL_SECONDS: "60" })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const funded = (wei: bigint) =>
  Effect.gen(function* () {
    const identity = yield* createIdentity
    yield* (yield* Ledger).grant(identity.accountId, wei, null)
    return identity
  })

/** Lets the I/O a woken fiber started (its statements) finish: turns of the event loop, not time. */
const settleIo = <E, R>(until: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function* () {
    for (let turn = 0; turn < 20_000; turn++) {
      if (yield* until) return
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    }
  })

layer(LedgerOnScratch, { timeout: 60_000 })("holds in time", (it) => {
  it.effect("a hold expires HOLD_TTL_SECONDS after it was made; the sweep releases it then and not a millisecond before", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-01-10T12:00:00Z"))
      const ledger = yield* Ledger
      const { accountId } = yield* funded(100n)
      const hold = yield* ledger.reserve({ accountId, requestId: `req_ttl_${accountId}`, amountWei: 30n })
      expect(hold.expiresAt.toISOString()).toBe("2026-01-10T12:10:00.000Z")
      yield* TestClock.adjust("9 minutes")
      const later = yield* ledger.reserve({ accountId, requestId: `req_later_${accountId}`, amountWei: 20n })

      yield* TestClock.adjust("59999 millis")
      expect(yield* sweepHolds).toEqual(Option.some(0))
      expect(yield* ledger.account(accountId)).toMatchObject({ balanceWei: 100n, reservedWei: 50n })
      yield* TestClock.adjust("1 millis")
      expect(yield* sweepHolds).toEqual(Option.some(1))
      expect(yield* ledger.account(accountId)).toMatchObject({ balanceWei: 100n, reservedWei: 20n })
      // The swept hold cannot be released or settled again; the other is still live.
      expect(yield* ledger.release(hold.requestId)).toEqual({ released: false })
      expect(yield* ledger.release(later.requestId)).toEqual({ released: true })
    }))

  it.scoped("the background sweeper runs on the service's clock: an abandoned hold is given back within one interval of its expiry", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-02-01T08:00:00Z"))
      const ledger = yield* Ledger
      const sql = yield* SqlClient.SqlClient
      const { accountId } = yield* funded(100n)
      const hold = yield* ledger.reserve({ accountId, requestId: `req_abandoned_${accountId}`, amountWei: 40n })
      yield* Layer.build(HoldSweeperLive)
      const released = sql<{ n: number }>`SELECT count(*)::int AS n FROM holds WHERE request_id = ${hold.requestId} AND released_at IS NOT NULL`.pipe(
        Effect.map((rows) => rows[0]!.n === 1)
      )
      const sweepsFinished = sql<{ n: number }>`SELECT count(*)::int AS n FROM job_runs WHERE job = 'hold-sweep' AND finished_at IS NOT NULL`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )
      const before = yield* sweepsFinished
      // Nine minutes on: the sweeper has run, and the hold is not due.
      yield* TestClock.adjust("9 minutes")
      yield* settleIo(Effect.map(sweepsFinished, (n) => n > before))
      expect(yield* sweepsFinished).toBeGreaterThan(before)
      expect(yield* released).toBe(false)
      // The sweep at 10 minutes (every 60 s) finds it expired.
      yield* TestClock.adjust("1 minute")
      yield* settleIo(released)
      expect(yield* released).toBe(true)
      expect(yield* ledger.account(accountId)).toMatchObject({ balanceWei: 100n, reservedWei: 0n })
    }))

  it.effect("caps count charges in UTC windows that the clock crosses: the day at midnight, the week on Monday, the month on the 1st", () =>
    Effect.gen(function* () {
      const ledger = yield* Ledger
      const { accountId } = yield* funded(10_000n)
      yield* ledger.setLimits(accountId, { dailyWei: 100n, weeklyWei: 150n, monthlyWei: 200n })
      let n = 0
      const spend = (wei: bigint) =>
        Effect.flatMap(ledger.reserve({ accountId, requestId: `req_cap_${accountId}_${n++}`, amountWei: wei }), (hold) =>
          ledger.settle({ requestId: hold.requestId, chargeWei: wei }))
      const refusedScope = (wei: bigint) =>
        Effect.map(Effect.flip(ledger.reserve({ accountId, requestId: `req_cap_${accountId}_${n++}`, amountWei: wei })), (error) =>
          error._tag === "SpendingLimitReached" ? error.details.scope : error._tag)

      // Saturday 2026-02-28, one millisecond before midnight: 90 charged today, this week (from Monday the 23rd) and
      // this month.
      yield* TestClock.setTime(Date.parse("2026-02-28T23:59:59.999Z"))
      yield* spend(90n)
      expect(yield* refusedScope(11n)).toBe("account_daily")
      // Midnight: Sunday, a new day and a new month, the same week.
      yield* TestClock.adjust(1)
      expect(yield* refusedScope(61n)).toBe("account_weekly")
      yield* spend(60n)
      yield* TestClock.adjust("23 hours")
      expect(yield* refusedScope(1n)).toBe("account_weekly")
      // Monday 00:00: a new week. March has 60 charged: 140 left of the month, 100 of the day.
      yield* TestClock.adjust("1 hour")
      expect(yield* refusedScope(101n)).toBe("account_daily")
      yield* spend(100n)
      // Tuesday: a new day, but the month has 40 left.
      yield* TestClock.adjust("1 day")
      expect(yield* refusedScope(41n)).toBe("account_monthly")
      yield* spend(40n)
    }))
})
