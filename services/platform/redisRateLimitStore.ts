/**
 * The rate limiter's Redis store over a client this service owns.
 *
 * `@effect/experimental/RateLimiter/Redis` only takes connection options and builds its own ioredis client, with no
 * 'error' listener: while Redis is unreachable every reconnection attempt then prints "[ioredis] Unhandled error event"
 * on stderr, outside the service's log. This is the same store (the library's two Lua scripts, unchanged, and the same
 * key layout `prefix + key`, so replicas on either version count in the same keys) over a client that the caller
 * makes, listens to and closes (layers/RateLimit.ts).
 */
import { RateLimiter } from "@effect/experimental"
import { type Context, Duration, Effect } from "effect"
import type { Redis } from "ioredis"

// From @effect/experimental 0.61 (src/RateLimiter/Redis.ts, MIT licence): keep in step with it.
const FIXED_WINDOW = `
local key = KEYS[1]
local tokens = tonumber(ARGV[1])
local refillms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local current = tonumber(redis.call("GET", key))

if not current then
  local nextpttl = refillms * tokens
  redis.call("SET", key, tokens, "PX", nextpttl)
  return { tokens, nextpttl }
end

local currentpttl = tonumber(redis.call("PTTL", key) or "0")
local next = current + tokens
if limit and next > limit then
  return { next, currentpttl }
end

local nextpttl = currentpttl + (refillms * tokens)
redis.call("SET", key, next, "PX", nextpttl)
return { next, nextpttl }
`

const TOKEN_BUCKET = `
local key = KEYS[1]
local last_refill_key = key .. ":refill"
local tokens = tonumber(ARGV[1])
local refill_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local overflow = ARGV[5] == "1"
local current = tonumber(redis.call("GET", key))
local last_refill = tonumber(redis.call("GET", last_refill_key))

if not current then
  current = limit
  last_refill = now
  redis.call("SET", key, current)
  redis.call("SET", last_refill_key, last_refill)
end

local elapsed = now - last_refill
local refill_amount = math.floor(elapsed / refill_ms)
if refill_amount > 0 then
  current = math.min(current + refill_amount, limit)
  last_refill = last_refill + (refill_amount * refill_ms)
  redis.call("SET", last_refill_key, last_refill)
end

local next = current - tokens
if next < 0 and not overflow then
  redis.call("SET", key, current)
  return next
end

redis.call("SET", key, next)
return next
`

interface StoreCommands {
  cxRateLimitFixedWindow(key: string, tokens: number, refillMs: number, limit: number | undefined): Promise<[number, number]>
  cxRateLimitTokenBucket(key: string, tokens: number, refillMs: number, limit: number, now: number, overflow: 0 | 1): Promise<number>
}

/**
 * The store's commands on `client` (defined on it here). A command that fails (Redis unreachable, a timeout) fails
 * with `RateLimitStoreError`, exactly as the library's store does; what happens then is RateLimits' decision.
 */
export const redisRateLimitStore = (client: Redis, prefix: string): Context.Tag.Service<typeof RateLimiter.RateLimiterStore> => {
  client.defineCommand("cxRateLimitFixedWindow", { lua: FIXED_WINDOW, numberOfKeys: 1, readOnly: false })
  client.defineCommand("cxRateLimitTokenBucket", { lua: TOKEN_BUCKET, numberOfKeys: 1, readOnly: false })
  const redis = client as Redis & StoreCommands
  return RateLimiter.RateLimiterStore.of({
    fixedWindow: (options) =>
      Effect.tryPromise({
        try: () =>
          redis.cxRateLimitFixedWindow(`${prefix}${options.key}`, options.tokens, Duration.toMillis(options.refillRate), options.limit),
        catch: (cause) => new RateLimiter.RateLimitStoreError({ message: "Failed to execute fixedWindow rate limiting command", cause })
      }),
    tokenBucket: (options) =>
      Effect.clockWith((clock) =>
        Effect.tryPromise({
          try: () =>
            redis.cxRateLimitTokenBucket(
              `${prefix}${options.key}`,
              options.tokens,
              Duration.toMillis(options.refillRate),
              options.limit,
              clock.unsafeCurrentTimeMillis(),
              options.allowOverflow ? 1 : 0
            ),
          catch: (cause) => new RateLimiter.RateLimitStoreError({ message: "Failed to execute tokenBucket rate limiting command", cause })
        })
      )
  })
}
