/**
 * Sessions in time (DESIGN.md section 11: a session lives 30 days, sliding; a use extends it once the last extension is
 * SESSION_REFRESH_AFTER_MS old, so the cookie is not re-sent on every request), driven by TestClock over the live
 * Sessions service on a scratch PostgreSQL database.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import { SESSION_LIFETIME_MS, SESSION_REFRESH_AFTER_MS } from "../domain/accounts/policies.ts"
import { TestAppConfig } from "../layers/Test.ts"
import { Sessions } from "../services/accounts/Sessions.ts"
import { ScratchDatabase } from "./support/database.ts"
import { createIdentity } from "./support/ledger.ts"

const SessionsOnScratch = Sessions.Default.pipe(
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const extension = (token: string) =>
  Effect.flatMap(Sessions, (sessions) =>
    Effect.match(sessions.authenticate(token), {
      onSuccess: (used) => Option.match(used.extendedUntil, { onNone: () => "used", onSome: (until) => `extended to ${until.toISOString()}` }),
      onFailure: (refused) => refused.message
    }))

layer(SessionsOnScratch, { timeout: 60_000 })("sessions in time", (it) => {
  it.effect("a use extends the session once the last extension is old enough; unused for its lifetime, it expires", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-07-01T00:00:00Z"))
      const sessions = yield* Sessions
      const { cfId } = yield* createIdentity
      const { expiresAt, token } = yield* sessions.create(cfId, "email", undefined)
      expect(expiresAt.toISOString()).toBe(new Date(Date.parse("2026-07-01T00:00:00Z") + SESSION_LIFETIME_MS).toISOString())

      yield* TestClock.adjust(SESSION_REFRESH_AFTER_MS)
      expect(yield* extension(token)).toBe("used")
      yield* TestClock.adjust(1)
      const now = yield* TestClock.currentTimeMillis
      expect(yield* extension(token)).toBe(`extended to ${new Date(now + SESSION_LIFETIME_MS).toISOString()}`)
      expect(Option.isSome(yield* sessions.peek(token))).toBe(true)

      // A whole lifetime without a use, less a millisecond: still live. Then expired, for authenticate and peek alike.
      yield* TestClock.adjust(SESSION_LIFETIME_MS - 1)
      expect(Option.isSome(yield* sessions.peek(token))).toBe(true)
      yield* TestClock.adjust(1)
      expect(yield* sessions.peek(token)).toEqual(Option.none())
      expect(yield* extension(token)).toBe("The session has expired; sign in again.")
    }))
})
