/**
 * The daily scan (PRICE_SCAN_INTERVAL_HOURS, 0 to switch off): at start, and whenever the last successful scan
 * is older than the interval, one replica scans (Jobs takes the lock; the others skip).
 */
import { Clock, Duration, Effect, Layer, Option } from "effect"
import { AppConfig } from "../platform/AppConfig.ts"
import { Jobs } from "../platform/Jobs.ts"
import { PriceScan } from "./PriceScan.ts"

export const PRICE_SCAN_JOB = "price-scan"

/** After a skipped or failed attempt, wait this long before looking again. */
const RETRY_AFTER = Duration.minutes(1)

export const PriceScanSchedulerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const jobs = yield* Jobs
    const priceScan = yield* PriceScan
    const intervalHours = config.oracle.scanIntervalHours
    if (intervalHours === 0) {
      yield* Effect.logInfo("scheduled price scans are off (PRICE_SCAN_INTERVAL_HOURS=0)")
      return
    }
    const intervalMs = intervalHours * 3_600_000

    const attempt = Effect.gen(function* () {
      const last = yield* jobs.lastSucceeded(PRICE_SCAN_JOB)
      const now = yield* Clock.currentTimeMillis
      const dueAt = Option.match(last, { onNone: () => now, onSome: (run) => run.startedAt.getTime() + intervalMs })
      if (dueAt > now) return Duration.millis(dueAt - now)
      const ran = yield* jobs.runExclusive(
        PRICE_SCAN_JOB,
        priceScan.run(Option.isNone(last) ? "boot" : "schedule"),
        (report) => `${report.outcome}: ${report.changes.length} catalog changes, ${report.basket.changes.length} basket changes`
      )
      return Option.isSome(ran) ? Duration.zero : RETRY_AFTER
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logError("scheduled price scan failed; retrying shortly", cause), RETRY_AFTER)
      )
    )

    yield* attempt.pipe(
      Effect.flatMap((wait) => Effect.sleep(wait)),
      Effect.forever,
      Effect.forkScoped
    )
  })
)
