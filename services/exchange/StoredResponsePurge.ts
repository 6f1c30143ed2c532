/**
 * Purges expired stored responses (DESIGN.md section 10: kept 30 days, "purged by a job"): on one replica at a time
 * (the `stored-response-purge` job, recorded in job_runs), every STORED_RESPONSE_PURGE_INTERVAL_SECONDS (an hour by
 * default), the responses expired by then are deleted in batches.
 */
import { Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.ts"
import { Jobs } from "../platform/Jobs.ts"
import { StoredResponses } from "./StoredResponses.ts"

export const STORED_RESPONSE_PURGE_JOB = "stored-response-purge"

/** One purge as a job run: Some(deleted) when it ran, None when another replica was purging. */
export const purgeStoredResponses = Effect.gen(function* () {
  const jobs = yield* Jobs
  const stored = yield* StoredResponses
  const purge = stored.purge.pipe(
    Effect.tap((deleted) => (deleted > 0 ? Effect.logInfo(`purged ${deleted} expired stored response(s)`) : Effect.void))
  )
  return yield* jobs.runExclusive(STORED_RESPONSE_PURGE_JOB, purge, (deleted) => `${deleted} expired stored response(s) purged`)
})

export const StoredResponsePurgeLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const seconds = (yield* AppConfig).exchange.storedResponsePurgeIntervalSeconds
    if (seconds <= 0) return yield* Effect.logInfo("the stored-response purge is off (STORED_RESPONSE_PURGE_INTERVAL_SECONDS=0)")
    const once = purgeStoredResponses.pipe(
      Effect.catchAllCause((cause) => Effect.logError("purging expired stored responses failed; retrying at the next interval", cause))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.seconds(seconds)), once)))
  })
)
