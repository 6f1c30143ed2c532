/**
 * Where the oracle rate limits count: in this process's memory by default, or in Redis (`REDIS_URL`) so
 * every replica draws on one budget per client. With `RATE_LIMIT_ENABLED=false` nothing connects anywhere.
 */
import { RateLimiter } from "@effect/experimental"
import * as RedisRateLimiter from "@effect/experimental/RateLimiter/Redis"
import { Cause, Context, Duration, Effect, Exit, Layer, Option, Redacted, Schedule, Scope } from "effect"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { RateLimits } from "../services/platform/RateLimits.ts"
import { reconnectDelay, redisOptionsFromUrl } from "../services/platform/redisOptions.ts"

/** How long a start waits for Redis to answer before it goes on without it (failing open). */
const REDIS_STARTUP_WAIT = Duration.seconds(2)

const redisStore = (url: Redacted.Redacted, prefix: string) =>
  Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.gen(function* () {
      const options = yield* Effect.try({
        try: () => redisOptionsFromUrl(Redacted.value(url)),
        catch: (error) => (error instanceof Error ? error : new Error(String(error)))
      }).pipe(Effect.orDie)
      const where = `${options.host}:${options.port}`

      // The library owns the client and closes it with QUIT, which fails while Redis is unreachable: then
      // the client must stop reconnecting (no retry once we are closing) and the failure must not turn
      // the shutdown into an error.
      let closing = false
      const clientScope = yield* Scope.make()
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          closing = true
        }).pipe(
          Effect.zipRight(Scope.close(clientScope, Exit.void)),
          Effect.catchAllCause((cause) =>
            Effect.logDebug("the rate-limit Redis client closed without QUIT").pipe(
              Effect.annotateLogs({ cause: Cause.pretty(cause) })
            )
          )
        )
      )
      const context = yield* Layer.buildWithScope(
        RedisRateLimiter.layerStore({
          ...options,
          prefix,
          retryStrategy: (attempt) => (closing ? null : reconnectDelay(attempt))
        }),
        clientScope
      )
      const store = Context.get(context, RateLimiter.RateLimiterStore)

      // The client connects in the background: wait briefly so the first requests are counted, but never
      // hold the start on it.
      yield* store.fixedWindow({ key: "startup-probe", tokens: 1, refillRate: Duration.millis(1), limit: undefined }).pipe(
        Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(REDIS_STARTUP_WAIT))),
        Effect.matchEffect({
          onSuccess: () => Effect.logInfo(`oracle rate limits are shared through Redis at ${where}`),
          onFailure: () =>
            Effect.logWarning(`Redis at ${where} does not answer: oracle requests go through unlimited until it does`)
        })
      )
      return store
    })
  )

const StoreLive = Layer.unwrapEffect(
  Effect.map(AppConfig, ({ rateLimit }) =>
    rateLimit.enabled && Option.isSome(rateLimit.redisUrl)
      ? redisStore(rateLimit.redisUrl.value, rateLimit.keyPrefix)
      : RateLimiter.layerStoreMemory
  )
)

export const RateLimitsLive = RateLimits.Default.pipe(Layer.provide(RateLimiter.layer), Layer.provide(StoreLive))
