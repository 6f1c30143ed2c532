/**
 * Sign-ups per address in time (SPEC "Limits": one address creates at most 10 CF IDs in 24 hours), driven by TestClock
 * over the live Identities service on a scratch PostgreSQL database.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, TestClock } from "effect"
import { TestAppConfig } from "../layers/Test.ts"
import { Identities } from "../services/accounts/Identity.ts"
import { Points } from "../services/accounts/Points.ts"
import { Referrals } from "../services/accounts/Referrals.ts"
import { Sessions } from "../services/accounts/Sessions.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { ScratchDatabase } from "./support/database.ts"

const IdentitiesOnScratch = Identities.Default.pipe(
  Layer.provideMerge(Referrals.Default),
  Layer.provideMerge(Points.Default),
  Layer.provideMerge(Layer.mergeAll(Sessions.Default, Jobs.Default)),
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

layer(IdentitiesOnScratch, { timeout: 60_000 })("sign-ups per address in time", (it) => {
  it.effect("the eleventh CF ID from one address in 24 hours is refused until the first is a day old", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-09-01T08:00:00Z"))
      const identities = yield* Identities
      const signUp = (n: number, clientIp = "192.0.2.10") =>
        Effect.match(identities.createIdentity({ email: `signup-${n}@example.com`, clientIp, referralCodes: [] }), {
          onSuccess: () => "created",
          onFailure: (refused) => `${refused._tag} ${JSON.stringify(refused.details)}`
        })
      expect(yield* signUp(1)).toBe("created")
      yield* TestClock.adjust("6 hours")
      for (let n = 2; n <= 10; n++) expect(yield* signUp(n)).toBe("created")
      // The first leaves the window 18 hours from now.
      expect(yield* signUp(11)).toBe(`RateLimited {"retryAfterSeconds":${18 * 3600}}`)
      expect(yield* signUp(12, "192.0.2.11")).toBe("created")
      yield* TestClock.adjust(18 * 3_600_000 - 1)
      expect(yield* signUp(13)).toMatch(/^RateLimited/)
      yield* TestClock.adjust(1)
      expect(yield* signUp(14)).toBe("created")
    }))
})
