/**
 * Login streaks in time (SPEC "Points and referrals": daily login points on the first sign-in of a UTC day, a bonus
 * when a run of consecutive days reaches 7, 14, ...), driven by TestClock over the live Points service on a scratch
 * PostgreSQL database. The days turn at UTC midnight whatever the hour of the sign-in.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, TestClock } from "effect"
import { TestAppConfig } from "../layers/Test.ts"
import { Points } from "../services/accounts/Points.ts"
import { Sessions } from "../services/accounts/Sessions.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { ScratchDatabase } from "./support/database.ts"
import { createIdentity } from "./support/ledger.ts"

const PointsOnScratch = Points.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(Sessions.Default, Jobs.Default)),
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

layer(PointsOnScratch, { timeout: 60_000 })("login streaks in time", (it) => {
  it.effect("one login a UTC day counts once; seven days in a row earn the bonus; a missed day starts the run over", () =>
    Effect.gen(function* () {
      const points = yield* Points
      const { cfId } = yield* createIdentity
      // Day 1 at 23:59:59.999 UTC, then a second sign-in a millisecond later: that is day 2 already.
      yield* TestClock.setTime(Date.parse("2026-06-01T23:59:59.999Z"))
      expect(yield* points.recordLogin(cfId)).toEqual({ dailyLogin: true, streakBonus: false })
      expect(yield* points.recordLogin(cfId)).toEqual({ dailyLogin: false, streakBonus: false })
      yield* TestClock.adjust(1)
      expect(yield* points.recordLogin(cfId)).toEqual({ dailyLogin: true, streakBonus: false })
      // Days 3 to 7 at 20:00 UTC: the seventh completes the run.
      const outcomes = []
      for (let day = 3; day <= 7; day++) {
        yield* TestClock.adjust(`${day === 3 ? 44 : 24} hours`)
        outcomes.push(yield* points.recordLogin(cfId))
      }
      expect(outcomes.map((o) => o.streakBonus)).toEqual([false, false, false, false, true])
      expect(yield* points.summary(cfId)).toMatchObject({ currentStreak: 7, longestStreak: 7 })
      // Day 8 is missed: on day 9 the current run is 1, the longest stays 7.
      yield* TestClock.adjust("48 hours")
      expect(yield* points.recordLogin(cfId)).toEqual({ dailyLogin: true, streakBonus: false })
      expect(yield* points.summary(cfId)).toMatchObject({ currentStreak: 1, longestStreak: 7 })
    }))
})
