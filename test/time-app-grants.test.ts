/**
 * An app grant in time: `last_used_at` moves at most once per LAST_USED_RESOLUTION (a minute), and the status stamps
 * are the time of the change. Driven by TestClock over the live AppGrants service on a scratch PostgreSQL database:
 * the service hands SQL the time it reads from Clock, so nothing here is back-dated and nothing sleeps.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, LogLevel, TestClock } from "effect"
import { TestAppConfig } from "../layers/Test.ts"
import { AppGrants, LAST_USED_RESOLUTION } from "../services/accounts/AppGrants.ts"
import { actingAs } from "../services/accounts/CurrentIdentity.ts"
import { ScratchDatabase } from "./support/database.ts"
import { createIdentity } from "./support/ledger.ts"

const Grants = AppGrants.Default.pipe(
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig()),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

/** A new identity with a fresh grant, and a reading of that grant as stored. */
const issued = Effect.gen(function* () {
  const grants = yield* AppGrants
  const owner = yield* createIdentity
  const { grant, token } = yield* grants.create("Dashboard", ["account:read"]).pipe(actingAs(owner))
  const stored = Effect.map(grants.list().pipe(actingAs(owner)), (list) => list.find((g) => g.id === grant.id)!)
  return { grants, owner, grant, token, stored }
})

layer(Grants, { timeout: 60_000 })("app grants in time", (it) => {
  it.effect("a use within a minute of the recorded one leaves last_used_at; the first use after it moves it to now", () =>
    Effect.gen(function* () {
      const start = Date.parse("2026-03-01T09:00:00Z")
      const resolution = Duration.toMillis(LAST_USED_RESOLUTION)
      yield* TestClock.setTime(start)
      const { grants, stored, token } = yield* issued
      expect((yield* stored).lastUsedAt).toBeNull()

      yield* grants.authenticate(token)
      expect((yield* stored).lastUsedAt).toEqual(new Date(start))

      // Within the resolution, and at exactly its end: the recorded use stands.
      yield* TestClock.adjust(resolution - 1)
      yield* grants.authenticate(token)
      expect((yield* stored).lastUsedAt).toEqual(new Date(start))
      yield* TestClock.adjust(1)
      yield* grants.authenticate(token)
      expect((yield* stored).lastUsedAt).toEqual(new Date(start))

      // Past it: the stamp is the clock's time, and the next minute is counted from there.
      yield* TestClock.adjust(1)
      yield* grants.authenticate(token)
      expect((yield* stored).lastUsedAt).toEqual(new Date(start + resolution + 1))
      yield* TestClock.adjust(resolution)
      yield* grants.authenticate(token)
      expect((yield* stored).lastUsedAt).toEqual(new Date(start + resolution + 1))
      yield* TestClock.adjust("1 hour")
      yield* grants.authenticate(token)
      expect((yield* stored).lastUsedAt).toEqual(new Date(start + 2 * resolution + 1 + 3_600_000))
    }))

  it.effect("freezing and revoking stamp the clock's time", () =>
    Effect.gen(function* () {
      const start = Date.parse("2026-03-02T12:00:00Z")
      yield* TestClock.setTime(start)
      const { grants, grant, owner } = yield* issued
      yield* TestClock.adjust("5 minutes")
      const frozen = yield* grants.freeze(grant.id).pipe(actingAs(owner))
      expect(frozen.frozenAt).toEqual(new Date(start + 5 * 60_000))
      yield* TestClock.adjust("2 hours")
      const revoked = yield* grants.revoke(grant.id).pipe(actingAs(owner))
      expect(revoked.revokedAt).toEqual(new Date(start + 5 * 60_000 + 2 * 3_600_000))
      expect(revoked.frozenAt).toBeNull()
    }))
})
