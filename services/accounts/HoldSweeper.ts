/**
 * Releases holds left open by a crash (a request that never settled nor released its reservation): on one replica
 * at a time (the `hold-sweep` job), every HOLD_SWEEP_INTERVAL_SECONDS, holds past their expiry give their credit back.
 * At the same interval every replica reads the open holds into the `cx_ledger_holds_*` gauges: one indexed statement
 * per interval, so the inference path carries no statement for them.
 */
import { Duration, Effect, Layer } from "effect"
import { AppConfig } from "../platform/AppConfig.ts"
import { Jobs } from "../platform/Jobs.ts"
import { Ledger } from "./Ledger.ts"
import { recordHoldsExpiredReleased, recordLiveHolds } from "../platform/metrics.ts"

export const HOLD_SWEEP_JOB = "hold-sweep"

/** One sweep as a job run: None when another replica was sweeping. */
export const sweepHolds = Effect.gen(function* () {
  const jobs = yield* Jobs
  const ledger = yield* Ledger
  return yield* jobs.runExclusive(HOLD_SWEEP_JOB, Effect.tap(ledger.sweepExpired, (released) => Effect.sync(() => recordHoldsExpiredReleased(released))), (released) => `${released} expired hold(s) released`)
})

/** The open holds into their gauges (after a sweep, so what it released is no longer counted). */
export const readLiveHolds = Effect.flatMap(Ledger, (ledger) => ledger.liveHolds).pipe(
  Effect.tap((holds) => Effect.sync(() => recordLiveHolds(holds.count, holds.reservedWei)))
)

export const HoldSweeperLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const seconds = config.ledger.holdSweepIntervalSeconds
    if (seconds <= 0) return yield* Effect.logInfo("the expired-hold sweeper is off (HOLD_SWEEP_INTERVAL_SECONDS=0)")
    const once = Effect.zipRight(
      sweepHolds.pipe(Effect.catchAllCause((cause) => Effect.logError("sweeping expired holds failed; retrying at the next interval", cause))),
      readLiveHolds.pipe(Effect.catchAllCause((cause) => Effect.logWarning("reading the open holds failed; the gauges keep their last value", cause)))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.seconds(seconds)), once)))
  })
)
