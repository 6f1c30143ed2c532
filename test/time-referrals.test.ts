/**
 * Referral links in time (SPEC "Points and referrals": a code counts at most 100 clicks an hour; a visitor who clicked
 * and has not signed up is listed as pending for the 30-day window), driven by TestClock over the live Referrals
 * service on a scratch PostgreSQL database. Nothing is back-dated and nothing sleeps.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, TestClock } from "effect"
import { REFERRAL_CLICKS_PER_CODE, REFERRAL_WINDOW_SECONDS } from "../domain/accounts/referrals.ts"
import { TestAppConfig } from "../layers/Test.ts"
import { Points } from "../services/accounts/Points.ts"
import { Referrals } from "../services/accounts/Referrals.ts"
import { Sessions } from "../services/accounts/Sessions.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { ScratchDatabase } from "./support/database.ts"
import { createIdentity } from "./support/ledger.ts"

const ReferralsOnScratch = Referrals.Default.pipe(
  Layer.provideMerge(Points.Default),
  Layer.provideMerge(Layer.mergeAll(Sessions.Default, Jobs.Default)),
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const codeOf = (cfId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ referralCode: string }>`SELECT referral_code FROM identities WHERE cf_id = ${cfId}`, (rows) => rows[0]!.referralCode))

layer(ReferralsOnScratch, { timeout: 60_000 })("referral links in time", (it) => {
  it.effect("a code counts 100 clicks an hour: the 101st is not recorded until the first is an hour old", () =>
    Effect.gen(function* () {
      const referrals = yield* Referrals
      const code = yield* codeOf((yield* createIdentity).cfId)
      const click = (i: number) => Effect.map(referrals.click({ code, cookie: undefined, clientIp: `198.51.100.${i % 250}`, userAgent: "test" }), (o) => o.recorded)
      expect(yield* click(0)).toBe(true)
      yield* TestClock.adjust("30 minutes")
      for (let i = 1; i < REFERRAL_CLICKS_PER_CODE.limit; i++) expect(yield* click(i)).toBe(true)
      expect(yield* click(100)).toBe(false)
      yield* TestClock.adjust("29 minutes")
      expect(yield* click(101)).toBe(false)
      // An hour after the first click it has left the window: room for one.
      yield* TestClock.adjust("1 minute")
      expect(yield* click(102)).toBe(true)
      expect(yield* click(103)).toBe(false)
    }))

  it.effect("a visitor who clicked and has not signed up is pending for 30 days, then no longer listed", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-05-01T00:00:00Z"))
      const referrals = yield* Referrals
      const referrer = yield* createIdentity
      const code = yield* codeOf(referrer.cfId)
      yield* referrals.click({ code, cookie: undefined, clientIp: "203.0.113.77", userAgent: "test" })
      yield* TestClock.adjust(REFERRAL_WINDOW_SECONDS * 1000 - 1)
      const during = yield* referrals.dashboard(referrer.cfId)
      expect(during.referredUsers.map((u) => u.status)).toEqual(["pending"])
      yield* TestClock.adjust(1)
      const after = yield* referrals.dashboard(referrer.cfId)
      expect(after.referredUsers).toEqual([])
      expect(after.clicks).toBe(1)
    }))
})
