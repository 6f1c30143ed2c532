/**
 * Where the oracle rate limits count: in this process's memory by default, or in Redis (`REDIS_URL`) so
 * every replica draws on one budget per client. With `RATE_LIMIT_ENABLED=false` nothing connects anywhere.
 */
import { RateLimiter } from "@effect/experimental"
import { Duration, Effect, Layer, Option, Redacted, Runtime, Schedule } from "effect"
import { Redis } from "ioredis"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { RateLimits } from "../services/platform/RateLimits.ts"
import { reconnectDelay, redisOptionsFromUrl } from "../services/platform/redisOptions.ts"
import { redisRateLimitStore } from "../services/platform/redisRateLimitStore.ts"

/** How long a start waits for Redis to answer before it goes on without it (failing open). */
const REDIS_STARTUP_WAIT = Duration.seconds(2)

/**
 * Redis as the store, over a client of ours: the library's own Redis store makes a client with no 'error' listener,
 * so an outage printed "[ioredis] Unhandled error event" on every reconnection attempt. Here the outage is logged
 * once when Redis stops answering (WARN) and once when it answers again (INFO); each failed attempt in between goes to
 * DEBUG. What a request meets meanwhile is unchanged: every consume fails with RateLimitStoreError and RateLimits lets
 * the request through (fail open).
 */
const redisStore = (url: Redacted.Redacted, prefix: string) =>
  Layer.scoped(
    RateLimiter.RateLimiterStore,
    Effect.gen(function* () {
      const options = yield* Effect.try({
        try: () => redisOptionsFromUrl(Redacted.value(url)),
        catch: (error) => (error instanceof Error ? error : new Error(String(error)))
      }).pipe(Effect.orDie)
      const where = `${options.host}:${options.port}`
      const runFork = Runtime.runFork(yield* Effect.runtime<never>())

      const client = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const state = { closing: false, reachable: undefined as boolean | undefined }
          // No reconnection once we are closing.
          const client = new Redis({ ...options, retryStrategy: (attempt) => (state.closing ? null : reconnectDelay(attempt)) })
          client.on("error", (error: Error) => {
            if (state.closing) return
            const cause = error.message
            if (state.reachable === false) {
              runFork(Effect.logDebug(`the rate-limit Redis at ${where} is still unavailable`).pipe(Effect.annotateLogs({ cause })))
              return
            }
            state.reachable = false
            runFork(
              Effect.logWarning(
                `the rate-limit Redis at ${where} is unavailable: oracle and inference requests go through unlimited until it answers again`
              ).pipe(Effect.annotateLogs({ cause }))
            )
          })
          client.on("ready", () => {
            if (state.reachable === false) {
              runFork(Effect.logInfo(`the rate-limit Redis at ${where} answers again: rate limits are shared through it again`))
            }
            state.reachable = true
          })
          return { client, state }
        }),
        ({ client, state }) =>
          Effect.sync(() => {
            state.closing = true
          }).pipe(
            // QUIT lets commands in flight finish; it cannot while Redis is unreachable, so only then and not for long.
            Effect.zipRight(
              client.status === "ready"
                ? Effect.tryPromise(() => client.quit()).pipe(Effect.timeout(Duration.seconds(1)), Effect.ignore)
                : Effect.void
            ),
            Effect.zipRight(Effect.sync(() => client.disconnect()))
          )
      )
      const store = redisRateLimitStore(client.client, prefix)

      // The client connects in the background: wait briefly so the first requests are counted, but never
      // hold the start on it.
      yield* store.fixedWindow({ key: "startup-probe", tokens: 1, refillRate: Duration.millis(1), limit: undefined }).pipe(
        Effect.retry(Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(REDIS_STARTUP_WAIT))),
        Effect.matchEffect({
          onSuccess: () => Effect.logInfo(`oracle rate limits are shared through Redis at ${where}`),
          // Already reported by the client's listener when it could not connect; this covers a Redis that accepts
          // the connection but does not answer.
          onFailure: () =>
            client.state.reachable === false
              ? Effect.void
              : Effect.logWarning(`Redis at ${where} does not answer: oracle requests go through unlimited until it does`)
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
