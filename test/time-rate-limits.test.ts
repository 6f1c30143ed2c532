/**
 * The rate limits' windows in time (SPEC "Limits", DESIGN.md section 12), driven by TestClock over the live
 * RateLimits service with the in-memory store: a fixed window lets the client in again when it ends, the 10-second
 * window outlasts the per-second one, and a key's per-minute token bucket refills one request at a time.
 * test/rate-limit.test.ts checks the same refusals over HTTP (status, envelope, headers) without waiting for a window.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { RateLimitsInMemory, TestAppConfig } from "../layers/Test.ts"
import { RateLimits } from "../services/platform/RateLimits.ts"

const Limits = RateLimitsInMemory.pipe(
  Layer.provide(TestAppConfig({ RATE_LIMIT_PER_SECOND: "5", RATE_LIMIT_PER_10_SECONDS: "8", RATE_LIMIT_PER_MINUTE: "100", INFERENCE_RATE_LIMIT_PER_MINUTE: "3" }))
)

const checks = (key: string, n: number, policy: "oracle" | "inference" = "oracle") =>
  Effect.flatMap(RateLimits, (limits) => Effect.forEach(Array.from({ length: n }), () => limits.check(key, policy)))

describe("the oracle's windows", () => {
  it.scoped("the sixth request within a second is refused for the rest of that second, then the client is let in again", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(1_000_000)
      const first = yield* checks("203.0.113.2", 5)
      expect(first.every((d) => d.allowed)).toBe(true)
      const [refused] = yield* checks("203.0.113.2", 1)
      expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 1, limit: 5, remaining: 0 })
      yield* TestClock.adjust(999)
      expect((yield* checks("203.0.113.2", 1))[0]!.allowed).toBe(false)
      yield* TestClock.adjust(1)
      const [again] = yield* checks("203.0.113.2", 1)
      // The 10-second window (8) is now the tightest, and it counted the two refused requests too: none left.
      expect(again).toMatchObject({ allowed: true, limit: 8, remaining: 0 })
      // Another address has its own budget throughout.
      expect((yield* checks("203.0.113.3", 5)).every((d) => d.allowed)).toBe(true)
    }).pipe(Effect.provide(Limits)))

  it.scoped("the 10-second window refuses across seconds until it ends", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(2_000_000)
      expect((yield* checks("198.51.100.7", 5)).every((d) => d.allowed)).toBe(true)
      yield* TestClock.adjust(1_000)
      const second = yield* checks("198.51.100.7", 4)
      expect(second.map((d) => d.allowed)).toEqual([true, true, true, false])
      expect(second[3]).toMatchObject({ limit: 8, remaining: 0, retryAfterSeconds: 9 })
      yield* TestClock.adjust(8_999)
      expect((yield* checks("198.51.100.7", 1))[0]!.allowed).toBe(false)
      yield* TestClock.adjust(1)
      expect((yield* checks("198.51.100.7", 1))[0]!.allowed).toBe(true)
    }).pipe(Effect.provide(Limits)))
})

describe("a key's inference rate", () => {
  it.scoped("the per-minute bucket takes a burst of its size, then refills one request every minute / limit", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(3_000_000)
      const burst = yield* checks("key:k1", 4, "inference")
      expect(burst.map((d) => d.allowed)).toEqual([true, true, true, false])
      expect(burst[3]).toMatchObject({ limit: 3, remaining: 0, retryAfterSeconds: 20 })
      yield* TestClock.adjust(19_999)
      expect((yield* checks("key:k1", 1, "inference"))[0]!.allowed).toBe(false)
      yield* TestClock.adjust(1)
      expect((yield* checks("key:k1", 2, "inference")).map((d) => d.allowed)).toEqual([true, false])
    }).pipe(Effect.provide(Limits)))
})
