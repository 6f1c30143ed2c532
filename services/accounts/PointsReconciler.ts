/**
 * Reconciles `identities.points_balance` (SPEC: "denormalized sum of the ledger, reconciled periodically") with the
 * points ledger: on one replica at a time (the `points-reconcile` job, recorded in job_runs), every
 * POINTS_RECONCILE_INTERVAL_SECONDS, each balance that differs from its ledger sum is set to it.
 */
import { Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.ts"
import { Jobs } from "../platform/Jobs.ts"
import { Points, POINTS_RECONCILE_JOB } from "./Points.ts"

/** One reconciliation as a job run: None when another replica was running it. */
export const reconcilePointsOnce = Effect.gen(function* () {
  const jobs = yield* Jobs
  const points = yield* Points
  return yield* jobs.runExclusive(POINTS_RECONCILE_JOB, points.reconcile, (corrected) => `${corrected} points balance(s) corrected`)
})

export const PointsReconcilerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const seconds = (yield* AppConfig).points.reconcileIntervalSeconds
    if (seconds <= 0) return yield* Effect.logInfo("points reconciliation is off (POINTS_RECONCILE_INTERVAL_SECONDS=0)")
    const once = reconcilePointsOnce.pipe(
      Effect.catchAllCause((cause) => Effect.logError("reconciling points balances failed; retrying at the next interval", cause))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.seconds(seconds)), once)))
  })
)
