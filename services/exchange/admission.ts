/**
 * What every inference route (chat's three formats, embeddings) asks of a key before it plans anything, and tells the
 * client after: the key's inference request rate (DESIGN.md section 12) and what its spending caps leave.
 */
import { Effect, Option } from "effect"
import { RateLimited, ServiceUnavailable } from "../../domain/errors.ts"
import type { Credential } from "../../domain/accounts/credential.ts"
import type { Usage as UsageReports } from "../accounts/Usage.ts"
import type { RateLimitDecision, RateLimits } from "../platform/RateLimits.ts"
import { recordRateLimitRefusal } from "../platform/metrics.ts"

/** The key's inference request rate: refused with 429 before anything is planned or reserved; undefined when off. */
export const admitKey = (rateLimits: RateLimits, apiKey: Credential): Effect.Effect<RateLimitDecision | undefined, RateLimited> =>
  !rateLimits.enabled
    ? Effect.succeed(undefined)
    : Effect.flatMap(rateLimits.check(`key:${apiKey.id}`, "inference"), (decision) =>
      decision.allowed
        ? Effect.succeed(decision)
        : Effect.failSync(() => {
          recordRateLimitRefusal("inference")
          return new RateLimited({
            message: `Too many inference requests with this ${apiKey.kind === "app_grant" ? "app grant" : "API key"}: retry after ${decision.retryAfterSeconds} second${decision.retryAfterSeconds === 1 ? "" : "s"}.`,
            details: { retryAfterSeconds: decision.retryAfterSeconds, limit: decision.limit, resetEpochSeconds: decision.resetEpochSeconds }
          })
        })
    )

/**
 * What the key's caps leave, its live holds counted, in wei or "unlimited"; keys have no weekly cap. Read after the
 * charge of a whole answer committed, so a database that stops answering in between must not turn an answer already
 * paid for into a 503: the figures are then left out (undefined), and the answer goes without its X-Key-* headers.
 */
export const keyRemainingOf = (
  usage: UsageReports,
  apiKey: Credential
): Effect.Effect<KeyRemaining | undefined> =>
  apiKey.dailyLimitWei === null && apiKey.monthlyLimitWei === null
    ? Effect.succeed({ daily: "unlimited", monthly: "unlimited" })
    : Effect.map(usage.key(apiKey), (key): KeyRemaining | undefined => {
      const left = (limit: bigint | null, used: bigint) => (limit === null ? "unlimited" : (limit > used ? limit - used : 0n).toString())
      return { daily: left(key.dailyLimitWei, key.dailyUsedWei), monthly: left(key.monthlyLimitWei, key.monthlyUsedWei) }
    }).pipe(
      Effect.catchSomeDefect((defect) =>
        defect instanceof ServiceUnavailable
          ? Option.some(Effect.as(Effect.logWarning("a key's remaining caps could not be read (the database is unreachable); the answer goes without them"), undefined))
          : Option.none()
      )
    )

/** What a key's caps leave, in wei, or "unlimited". */
export interface KeyRemaining {
  readonly daily: string
  readonly monthly: string
}
