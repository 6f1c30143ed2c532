/**
 * Admission to the upstream key pools (DESIGN.md section 10; issue 11 item 6). Without REDIS_URL each replica counts
 * in its own memory (domain/exchange/keyPool.ts). With it, every replica draws on one budget per key: each admission
 * is one Lua script that checks the key's cooldown and its sliding minute (the same two-bucket approximation as the
 * memory pool) against RPM and TPM and counts the request and its estimated tokens, atomically; the estimate is
 * reconciled to the vendor's count afterwards, and cooldowns are shared too. The replica's own pool is kept in step
 * (it answers `hasCapacity` for planning without a round trip). A Redis that fails falls back to the replica's own
 * pool, as the rate limits fail open, with a warning at most once a minute.
 */
import { Clock, Duration, Effect, Option, Redacted } from "effect"
import { Redis } from "ioredis"
import { type Admission, COOLDOWN_MS, type FailureKind } from "../../domain/exchange/keyPool.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { recordKeyCooldown } from "../platform/metrics.ts"
import { reconnectDelay, redisOptionsFromUrl } from "../platform/redisOptions.ts"
import { Providers } from "./Providers.ts"

/** A request admitted on a provider's key: what `reconcile` corrects afterwards, once. */
export interface PoolAdmission extends Admission {
  readonly provider: string
  /** Whether this replica's own pool counted it (always in memory mode; in shared mode, when it still had room). */
  readonly countedLocally: boolean
  /** The shared minute bucket (a Redis hash) that counted it; undefined in memory mode. */
  readonly sharedBucket: string | undefined
}

const MINUTE_MS = 60_000
const WARNING_INTERVAL_MS = 60_000

/**
 * KEYS: the current minute's bucket, the previous one, the cooldown marker. ARGV: now, the current minute's start,
 * rpm (-1: none), tpm (-1: none), the estimated tokens. Answers 1 when admitted (and counted), 0 when not.
 */
const ADMIT = `
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local now = tonumber(ARGV[1])
local start = tonumber(ARGV[2])
local rpm = tonumber(ARGV[3])
local tpm = tonumber(ARGV[4])
local tokens = tonumber(ARGV[5])
local cr = tonumber(redis.call('HGET', KEYS[1], 'r') or '0')
local ct = tonumber(redis.call('HGET', KEYS[1], 't') or '0')
local pr = tonumber(redis.call('HGET', KEYS[2], 'r') or '0')
local pt = tonumber(redis.call('HGET', KEYS[2], 't') or '0')
local weight = 1 - (now - start) / 60000
if rpm >= 0 and pr * weight + cr + 1 > rpm then return 0 end
if tpm >= 0 and pt * weight + ct + tokens > tpm then return 0 end
redis.call('HINCRBY', KEYS[1], 'r', 1)
redis.call('HINCRBY', KEYS[1], 't', tokens)
redis.call('PEXPIRE', KEYS[1], 180000)
return 1
`

/** KEYS: the cooldown marker. ARGV: milliseconds. Never shortens a longer cooldown already set. */
const COOLDOWN = `
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
return 1
`

export class KeyPools extends Effect.Service<KeyPools>()("KeyPools", {
  scoped: Effect.gen(function* () {
    const config = yield* AppConfig
    const providers = yield* Providers
    const prefix = `${config.rateLimit.keyPrefix}pool:`
    let lastWarning = Number.NEGATIVE_INFINITY
    const next = new Map<string, number>()

    const redis = yield* Option.match(config.rateLimit.redisUrl, {
      onNone: () => Effect.succeed(undefined),
      onSome: (url) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            let closing = false
            const client = new Redis({ ...redisOptionsFromUrl(Redacted.value(url)), retryStrategy: (attempt) => (closing ? null : reconnectDelay(attempt)) })
            client.on("error", () => undefined)
            client.defineCommand("cxPoolAdmit", { numberOfKeys: 3, lua: ADMIT })
            client.defineCommand("cxPoolCooldown", { numberOfKeys: 1, lua: COOLDOWN })
            return { client, close: () => void ((closing = true), client.disconnect()) }
          }),
          (handle) => Effect.sync(handle.close)
        ).pipe(Effect.map((handle) => handle.client as Redis & SharedCommands))
    })

    const warn = (error: unknown) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (now - lastWarning < WARNING_INTERVAL_MS) return Effect.void
        lastWarning = now
        return Effect.logWarning("the upstream key pools' Redis is unavailable: admitting on this replica's own counts").pipe(
          Effect.annotateLogs({ cause: error instanceof Error ? error.message : String(error) })
        )
      })

    const keyName = (provider: string, keyId: string) => `${prefix}${provider}:${keyId}`

    /** The local pool's admission: memory mode, or Redis down. */
    const admitLocally = (provider: string, tokens: number, exclude: ReadonlySet<string>, prefer?: string) =>
      Effect.map(Clock.currentTimeMillis, (now): PoolAdmission | undefined => {
        const admitted = providers.pool(provider)?.admit(tokens, now, exclude, prefer)
        return admitted === undefined ? undefined : { ...admitted, provider, countedLocally: true, sharedBucket: undefined }
      })

    const admitShared = (client: Redis & SharedCommands, provider: string, tokens: number, exclude: ReadonlySet<string>, prefer?: string) =>
      Effect.gen(function* () {
        const pool = providers.pool(provider)
        const keys = providers.providers.find((p) => p.name === provider)?.keys ?? []
        if (pool === undefined || keys.length === 0) return undefined
        const offset = next.get(provider) ?? 0
        const order = keys.map((_, i) => keys[(offset + i) % keys.length]!)
        const preferred = order.find((k) => k.id === prefer)
        const tried = preferred === undefined ? order : [preferred, ...order.filter((k) => k !== preferred)]
        for (const key of tried) {
          if (exclude.has(key.id)) continue
          const now = yield* Clock.currentTimeMillis
          const start = now - (now % MINUTE_MS)
          const base = keyName(provider, key.id)
          const current = `${base}:${start}`
          const admitted = yield* Effect.tryPromise(() =>
            client.cxPoolAdmit(current, `${base}:${start - MINUTE_MS}`, `${base}:cooldown`, now, start, key.rpm ?? -1, key.tpm ?? -1, tokens)
          )
          if (admitted !== 1) continue
          next.set(provider, (keys.indexOf(key) + 1) % keys.length)
          // This replica's pool counts it too, so its own capacity view stays close.
          const local = pool.admit(tokens, now, new Set(keys.filter((k) => k !== key).map((k) => k.id)), key.id)
          return { key, tokens, minuteStart: start, provider, countedLocally: local !== undefined, sharedBucket: current } satisfies PoolAdmission
        }
        return undefined
      })

    /** Admits a request of `tokens` estimated tokens on a key of `provider` (skipping `exclude`, `prefer` first). */
    const admit = (provider: string, tokens: number, exclude: ReadonlySet<string>, prefer?: string): Effect.Effect<PoolAdmission | undefined> =>
      redis === undefined
        ? admitLocally(provider, tokens, exclude, prefer)
        : admitShared(redis, provider, tokens, exclude, prefer).pipe(
          Effect.timeout(Duration.seconds(1)),
          Effect.catchAll((error) => Effect.zipRight(warn(error), admitLocally(provider, tokens, exclude, prefer)))
        )

    /** Rests a key after a failure (a vendor's Retry-After wins), on every replica when they share Redis. */
    const cooldown = (provider: string, keyId: string, kind: FailureKind, retryAfterMs?: number): Effect.Effect<void> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        providers.pool(provider)?.cooldown(keyId, kind, now, retryAfterMs)
        recordKeyCooldown(provider, keyId, kind)
        if (redis === undefined) return Effect.void
        const ms = Math.max(1, Math.round(retryAfterMs !== undefined && retryAfterMs >= 0 ? retryAfterMs : COOLDOWN_MS[kind]))
        return Effect.tryPromise(() => redis.cxPoolCooldown(`${keyName(provider, keyId)}:cooldown`, ms)).pipe(Effect.asVoid, Effect.catchAll(warn))
      })

    /**
     * Replaces an admission's token estimate by the vendor's count (0 when nothing was served); once per admission.
     * The shared bucket's correction is sent without waiting for it (a failure is the warning above, at most once a
     * minute): no request waits on it.
     */
    const reconcile = (admission: PoolAdmission, actualTokens: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (admission.countedLocally) providers.pool(admission.provider)?.reconcile(admission, actualTokens)
        const delta = actualTokens - admission.tokens
        const bucket = admission.sharedBucket
        if (redis === undefined || bucket === undefined || delta === 0) return Effect.void
        return Effect.asVoid(Effect.forkDaemon(Effect.tryPromise(() => redis.hincrby(bucket, "t", delta)).pipe(Effect.catchAll(warn))))
      })

    return { admit, reconcile, cooldown, shared: redis !== undefined } as const
  })
}) {}

interface SharedCommands {
  cxPoolAdmit(current: string, previous: string, cooldown: string, now: number, start: number, rpm: number, tpm: number, tokens: number): Promise<number>
  cxPoolCooldown(key: string, ms: number): Promise<number>
}
