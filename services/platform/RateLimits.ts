/**
 * DESIGN.md section 12: the named rate-limit policies. SPEC "Limits", oracle request rate: per client address, three budgets at once — 120 per minute (a token
 * bucket: bursts of up to 120, refilled one every 500 ms), 5 per second and 20 per 10 seconds (fixed windows).
 * The estimate endpoint: 10 per second per address. Inference: INFERENCE_RATE_LIMIT_PER_MINUTE per API key, and
 * token counting (`/v1/messages/count_tokens`) as many again per key, counted apart.
 * A request is refused when any of them is spent. Every answer describes the tightest budget: the one with
 * the fewest requests left, on a tie the one that resets last.
 *
 * The counting itself is `@effect/experimental/RateLimiter` over whichever store layers/RateLimit.ts
 * provides (memory, or Redis shared by every replica). When the store fails (Redis unreachable) the request
 * is let through — rate limiting protects the service, it must not take it down — with a warning at most
 * once a minute.
 */
import { RateLimiter } from "@effect/experimental"
import { Clock, Duration, Effect, Exit, Option, Ref, Runtime } from "effect"
import { AppConfig } from "./AppConfig.ts"

export interface RateLimitDecision {
  /** False when any budget is spent: answer 429. */
  readonly allowed: boolean
  /** The tightest budget's size. */
  readonly limit: number
  /** Requests left in the tightest budget after this one (0 when refused). */
  readonly remaining: number
  /** When the tightest budget is whole again, in epoch seconds (rounded up). */
  readonly resetEpochSeconds: number
  /** When refused: seconds until every spent budget admits a request again (>= 1). 0 when allowed. */
  readonly retryAfterSeconds: number
}

/** The X-RateLimit-* headers of a decision (the tightest budget). */
export const rateLimitHeaders = (decision: RateLimitDecision): Record<string, string> => ({
  "x-ratelimit-limit": String(decision.limit),
  "x-ratelimit-remaining": String(decision.remaining),
  "x-ratelimit-reset": String(decision.resetEpochSeconds)
})

interface Bucket {
  readonly name: string
  readonly limit: number
  readonly windowMs: number
  readonly algorithm: "fixed-window" | "token-bucket"
}

/** One budget after this request, as far as the store could tell. */
interface BucketState {
  readonly exceeded: boolean
  readonly limit: number
  readonly remaining: number
  /** Until the budget is whole again. */
  readonly resetAfterMs: number
  /** Until the budget admits one more request (0 while it has some left). */
  readonly availableAfterMs: number
}

/** How often at most a failing store is reported at warning level (the rest go to debug). */
const STORE_WARNING_INTERVAL_MS = 60_000

/** The fewest remaining; on a tie, the one resetting last. */
export const tightest = <S extends { readonly remaining: number; readonly resetAfterMs: number }>(
  states: ReadonlyArray<S>
): S | undefined =>
  states.reduce<S | undefined>(
    (best, state) =>
      best === undefined ||
      state.remaining < best.remaining ||
      (state.remaining === best.remaining && state.resetAfterMs > best.resetAfterMs)
        ? state
        : best,
    undefined
  )

export type RateLimitPolicy = "oracle" | "estimate" | "inference" | "tokenCount"

/** SPEC "Limits": the estimate endpoint takes 10 requests per second per source IP. */
export const ESTIMATE_PER_SECOND = 10

export class RateLimits extends Effect.Service<RateLimits>()("RateLimits", {
  effect: Effect.gen(function* () {
    const config = (yield* AppConfig).rateLimit
    const sharedStore = Option.isSome(config.redisUrl)
    const limiter = yield* RateLimiter.RateLimiter
    const lastStoreWarning = yield* Ref.make(Number.NEGATIVE_INFINITY)

    // The named policies of DESIGN.md section 12: the oracle's three budgets per IP, the estimate's 10 per second.
    const policies: Record<RateLimitPolicy, ReadonlyArray<Bucket>> = {
      oracle: [
        { name: "1m", limit: config.perMinute, windowMs: 60_000, algorithm: "token-bucket" },
        { name: "1s", limit: config.perSecond, windowMs: 1_000, algorithm: "fixed-window" },
        { name: "10s", limit: config.perTenSeconds, windowMs: 10_000, algorithm: "fixed-window" }
      ],
      estimate: [{ name: "1s", limit: ESTIMATE_PER_SECOND, windowMs: 1_000, algorithm: "fixed-window" }],
      // Per API key: INFERENCE_RATE_LIMIT_PER_MINUTE, bursts up to it.
      inference: [{ name: "1m", limit: config.inferencePerMinute, windowMs: 60_000, algorithm: "token-bucket" }],
      // Per API key, a budget of its own of the same size: counting is free, but each count may reach a vendor.
      tokenCount: [{ name: "1m", limit: config.inferencePerMinute, windowMs: 60_000, algorithm: "token-bucket" }]
    }

    const reportStoreFailure = (error: RateLimiter.RateLimitStoreError) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const warn = yield* Ref.modify(lastStoreWarning, (last) =>
          now - last >= STORE_WARNING_INTERVAL_MS ? [true, now] : [false, last]
        )
        const cause = error.cause instanceof Error ? error.cause.message : String(error.cause ?? error.message)
        const message = "rate-limit store unavailable: letting requests through unlimited"
        yield* (warn ? Effect.logWarning(message) : Effect.logDebug(message)).pipe(Effect.annotateLogs({ cause }))
      })

    const consume = (policy: RateLimitPolicy, bucket: Bucket, clientKey: string): Effect.Effect<Option.Option<BucketState>> =>
      limiter
        .consume({
          key: `${policy}:${clientKey}:${bucket.name}`,
          limit: bucket.limit,
          window: Duration.millis(bucket.windowMs),
          algorithm: bucket.algorithm,
          onExceeded: "fail"
        })
        .pipe(
          Effect.map((result) => {
            const resetAfterMs = Duration.toMillis(result.resetAfter)
            // A token bucket admits the next request after one refill; a fixed window when it ends.
            const nextAfterMs = bucket.algorithm === "token-bucket" ? bucket.windowMs / bucket.limit : resetAfterMs
            return Option.some<BucketState>({
              exceeded: false,
              limit: result.limit,
              remaining: Math.max(0, result.remaining),
              resetAfterMs,
              availableAfterMs: result.remaining > 0 ? 0 : nextAfterMs
            })
          }),
          Effect.catchAll((error) => {
            if (error instanceof RateLimiter.RateLimitExceeded) {
              const retryAfterMs = Duration.toMillis(error.retryAfter)
              return Effect.succeed(
                Option.some<BucketState>({
                  exceeded: true,
                  limit: bucket.limit,
                  remaining: 0,
                  // A spent token bucket is whole again after a full window; a fixed window when it ends.
                  resetAfterMs: bucket.algorithm === "token-bucket" ? bucket.windowMs : retryAfterMs,
                  availableAfterMs: retryAfterMs
                })
              )
            }
            return Effect.as(reportStoreFailure(error), Option.none<BucketState>())
          }),
          // A store that throws instead of failing is a store failure too: fail open.
          Effect.catchAllDefect((defect) =>
            Effect.as(
              reportStoreFailure(new RateLimiter.RateLimitStoreError({ message: "rate-limit store defect", cause: defect })),
              Option.none<BucketState>()
            )
          )
        )

    /** What the budgets look like to a client whose first request this is: reported when the store is down. */
    const fresh = (bucket: Bucket): BucketState => ({
      exceeded: false,
      limit: bucket.limit,
      remaining: bucket.limit - 1,
      resetAfterMs: bucket.windowMs / bucket.limit,
      availableAfterMs: 0
    })

    /** Consumes one request from each of the client's budgets under `policy` and says whether it may proceed. */
    const check = (clientKey: string, policy: RateLimitPolicy = "oracle"): Effect.Effect<RateLimitDecision> =>
      Effect.gen(function* () {
        const buckets = policies[policy]
        const outcomes = yield* Effect.all(
          buckets.map((bucket) => consume(policy, bucket, clientKey)),
          // Redis: three round trips at once. Memory: one after another, with no fiber forked, so the check
          // completes synchronously and the fast path (src/http/fastPath.ts) can use it.
          { concurrency: sharedStore ? "unbounded" : 1 }
        )
        const known = outcomes.flatMap((outcome) => (Option.isSome(outcome) ? [outcome.value] : []))
        const states = known.length > 0 ? known : buckets.map(fresh)
        const shown = tightest(states)!
        const allowed = states.every((state) => !state.exceeded)
        const now = yield* Clock.currentTimeMillis
        const waitMs = Math.max(0, ...states.map((state) => state.availableAfterMs))
        return {
          allowed,
          limit: shown.limit,
          remaining: shown.remaining,
          resetEpochSeconds: Math.ceil((now + shown.resetAfterMs) / 1000),
          retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(waitMs / 1000))
        }
      })

    // The memory store answers without I/O, so its decision can be taken synchronously (the fast path does).
    // A shared store (Redis) cannot: running it synchronously would fork its round trip and consume a unit that
    // nobody waits for, so it offers no synchronous decision at all.
    const runSync = Runtime.runSyncExit(yield* Effect.runtime<never>())
    const decideNow: ((clientKey: string) => RateLimitDecision | undefined) | undefined = sharedStore
      ? undefined
      : (clientKey) => {
          const exit = runSync(check(clientKey))
          return Exit.isSuccess(exit) ? exit.value : undefined
        }

    return { enabled: config.enabled, check, decideNow } as const
  })
}) {}
