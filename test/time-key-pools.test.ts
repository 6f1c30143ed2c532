/**
 * The upstream key pools' rules in time (SPEC "Capacity"; domain/exchange/keyPool.ts), driven by TestClock over the
 * live KeyPools and Providers services with this process's memory as the store: a key rests after a failure for its
 * kind's cooldown or the vendor's Retry-After, and a key at its RPM takes requests again as the sliding minute moves.
 * No socket and no sleep: time moves only by `TestClock.adjust`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { retryAfterMs } from "../domain/exchange/keyPool.ts"
import { TestAppConfig } from "../layers/Test.ts"
import { KeyPools } from "../services/exchange/KeyPools.ts"
import { Providers } from "../services/exchange/Providers.ts"
import { acmeProvidersFile } from "./support/providersFile.ts"

// One vendor with two keys: `acme#1` without limits, `acme#2` at 2 requests a minute.
const providersFile = acmeProvidersFile(["{ secret: acme-first }", "{ secret: acme-second, rpm: 2 }"])

/** Fresh pools for each test, built at the test's clock (TestClock starts at the epoch: minute 0). */
const Pools = KeyPools.Default.pipe(Layer.provideMerge(Providers.Default), Layer.provide(TestAppConfig({ PROVIDERS_FILE: providersFile })))

const admitOn = (keyId: string) =>
  Effect.flatMap(KeyPools, (pools) =>
    Effect.map(pools.admit("acme", 10, new Set(["acme#1", "acme#2"].filter((id) => id !== keyId))), (admission) => admission?.key.id))

describe("key pool cooldowns", () => {
  it.scoped("a rate-limited key rests 30 s, a failing one 5 s, a slow one 10 s, then takes requests again", () =>
    Effect.gen(function* () {
      const pools = yield* KeyPools
      for (const [kind, ms] of [["rateLimited", 30_000], ["serverError", 5_000], ["timeout", 10_000]] as const) {
        expect(yield* admitOn("acme#1")).toBe("acme#1")
        yield* pools.cooldown("acme", "acme#1", kind)
        expect(yield* admitOn("acme#1")).toBeUndefined()
        yield* TestClock.adjust(ms - 1)
        expect(yield* admitOn("acme#1")).toBeUndefined()
        yield* TestClock.adjust(1)
        expect(yield* admitOn("acme#1")).toBe("acme#1")
      }
    }).pipe(Effect.provide(Pools)))

  it.scoped("the vendor's Retry-After wins over the default, in seconds or as an HTTP date; a later cooldown never shortens it", () =>
    Effect.gen(function* () {
      const pools = yield* KeyPools
      yield* pools.cooldown("acme", "acme#1", "rateLimited", 90_000)
      yield* TestClock.adjust(30_000)
      expect(yield* admitOn("acme#1")).toBeUndefined()
      // A shorter cooldown meanwhile leaves the longer one standing.
      yield* pools.cooldown("acme", "acme#1", "serverError")
      yield* TestClock.adjust(59_999)
      expect(yield* admitOn("acme#1")).toBeUndefined()
      yield* TestClock.adjust(1)
      expect(yield* admitOn("acme#1")).toBe("acme#1")

      // Retry-After as an HTTP date two minutes ahead of the clock.
      const now = yield* TestClock.currentTimeMillis
      const header = new Date(now + 120_000).toUTCString()
      yield* pools.cooldown("acme", "acme#1", "rateLimited", retryAfterMs(header, now))
      yield* TestClock.adjust(119_000)
      expect(yield* admitOn("acme#1")).toBeUndefined()
      yield* TestClock.adjust(1_000)
      expect(yield* admitOn("acme#1")).toBe("acme#1")
      expect(retryAfterMs("7", now)).toBe(7_000)
    }).pipe(Effect.provide(Pools)))

  it.scoped("the planner's capacity view follows the same clock", () =>
    Effect.gen(function* () {
      const pools = yield* KeyPools
      const providers = yield* Providers
      yield* pools.cooldown("acme", "acme#1", "timeout")
      yield* pools.cooldown("acme", "acme#2", "timeout")
      expect(providers.hasCapacity("acme", 10, yield* TestClock.currentTimeMillis)).toBe(false)
      yield* TestClock.adjust(10_000)
      expect(providers.hasCapacity("acme", 10, yield* TestClock.currentTimeMillis)).toBe(true)
    }).pipe(Effect.provide(Pools)))
})

describe("a key's requests per minute", () => {
  it.scoped("a key at its RPM is refused until the sliding minute has let enough of its requests go", () =>
    Effect.gen(function* () {
      expect(yield* admitOn("acme#2")).toBe("acme#2")
      expect(yield* admitOn("acme#2")).toBe("acme#2")
      expect(yield* admitOn("acme#2")).toBeUndefined()
      // At the next minute's start the previous minute still counts whole (weight 1).
      yield* TestClock.adjust(60_000)
      expect(yield* admitOn("acme#2")).toBeUndefined()
      // Half-way through it counts half: 2 x 0.5 = 1 request, room for one more.
      yield* TestClock.adjust(30_000)
      expect(yield* admitOn("acme#2")).toBe("acme#2")
      expect(yield* admitOn("acme#2")).toBeUndefined()
      // The key without limits was never refused meanwhile.
      expect(yield* admitOn("acme#1")).toBe("acme#1")
    }).pipe(Effect.provide(Pools)))
})
