/**
 * Releases holds left open by a crash (a request that never settled nor released its reservation): on one replica
 * at a time (the `hold-sweep` job), every HOLD_SWEEP_INTERVAL_SECONDS, holds past their expiry give their credit back.
 */
import { Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.ts"
import { Jobs } from "../platform/Jobs.ts"
import { Ledger } from "./Ledger.ts"
import { recordHoldsExpiredReleased } from "../platform/metrics.ts"

export const HOLD_SWEEP_JOB = "hold-sweep"

/** One sweep as a job run: None when another replica was sweeping. */
export const sweepHolds = Effect.gen(function* () {
  const jobs = yield* Jobs
  const ledger = yield* Ledger
  return yield* jobs.runExclusive(HOLD_SWEEP_JOB, Effect.tap(ledger.sweepExpired, (released) => Effect.sync(() => recordHoldsExpiredReleased(released))), (released) => `${released} expired hold(s) released`)
})

export const HoldSweeperLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const seconds = config.ledger.holdSweepIntervalSeconds
    if (seconds <= 0) return yield* Effect.logInfo("the expired-hold sweeper is off (HOLD_SWEEP_INTERVAL_SECONDS=0)")
    const once = sweepHolds.pipe(
      Effect.catchAllCause((cause) => Effect.logError("sweeping expired holds failed; retrying at the next interval", cause))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.seconds(seconds)), once)))
  })
)
