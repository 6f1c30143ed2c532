/**
 * The oracle's background work, one replica at a time per job (Jobs takes the locks):
 * - on the embedded chain, once: the boot scan and the replay of the index's history;
 * - every PRICE_SCAN_INTERVAL_HOURS: the price scan, then a revision if the basket changed;
 * - every CHAIN_SYNC_INTERVAL_SECONDS: the chain sync.
 * Either interval set to 0 switches that loop off.
 */
import { Clock, Deferred, Duration, Effect, Layer, Option } from "effect"
import { EmbeddedChainTag } from "../chain/EmbeddedChain.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { Jobs } from "../platform/Jobs.ts"
import { ChainSync } from "./ChainSync.ts"
import { HistoryReplay } from "./HistoryReplay.ts"
import { PRICE_SCAN_JOB, PriceScan, type ScanTrigger } from "./PriceScan.ts"
import { Publisher, PUBLISH_JOB } from "./Publisher.ts"

// The scan and the publication take their job locks themselves, so that every caller gets them.
export { PRICE_SCAN_JOB, PUBLISH_JOB }
export const HISTORY_REPLAY_JOB = "history-replay"
export const CHAIN_SYNC_JOB = "chain-sync"

/** After a skipped or failed attempt, wait this long (or the interval, if shorter) before looking again. */
const RETRY_AFTER = Duration.minutes(1)

export class OracleCycle extends Effect.Service<OracleCycle>()("OracleCycle", {
  effect: Effect.gen(function* () {
    const jobs = yield* Jobs
    const priceScan = yield* PriceScan
    const publisher = yield* Publisher
    const replay = yield* HistoryReplay
    const embedded = yield* EmbeddedChainTag
    const booted = yield* Deferred.make<void>()

    const scan = (trigger: ScanTrigger) => priceScan.runIfIdle(trigger)

    const publish = Effect.flatMap(Clock.currentTimeMillis, (now) => publisher.publishIfIdle(new Date(now)))

    /**
     * On a new embedded chain: load the catalog (unless scans are switched off), then replay history, once.
     * Without a catalog there is no history to replay yet; the replay then waits for the next start.
     */
    const bootstrap = (scansEnabled: boolean) =>
      Effect.gen(function* () {
        if (Option.isNone(embedded)) return
        if (Option.isSome(yield* jobs.lastSucceeded(HISTORY_REPLAY_JOB))) return
        if (Option.isNone(yield* jobs.lastSucceeded(PRICE_SCAN_JOB))) {
          if (!scansEnabled) return yield* Effect.logInfo("no catalog yet and scans are off: history replay skipped")
          yield* scan("boot")
        }
        // The replay publishes: it holds the publish lock too, so no maintainer publish can slip between its revisions
        // (if one holds it, the replay waits for the next start, as after an interruption).
        yield* jobs.runExclusive(
          PUBLISH_JOB,
          jobs.runExclusive(HISTORY_REPLAY_JOB, replay.replay, (n) => `${n} revisions published`),
          (ran) => (Option.isSome(ran) ? "history replay" : "history replay already running")
        )
      })

    return {
      scan,
      publish,
      bootstrap,
      /** Completes once the scheduler's boot work (the boot scan and the history replay) is over, however it ended. */
      awaitBoot: Deferred.await(booted),
      markBooted: Deferred.succeed(booted, undefined)
    } as const
  })
}) {}

export const OracleSchedulerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const jobs = yield* Jobs
    const cycle = yield* OracleCycle
    const chainSync = yield* ChainSync

    const intervalHours = config.oracle.scanIntervalHours
    const intervalMs = intervalHours * 3_600_000
    // A scan skipped because another replica held it is looked at again soon: if that replica died mid-run, this one
    // takes the schedule over within this delay.
    const retryAfter = Duration.min(RETRY_AFTER, Duration.millis(intervalMs))
    const scanLoop = Effect.gen(function* () {
      const last = yield* jobs.lastSucceeded(PRICE_SCAN_JOB)
      const now = yield* Clock.currentTimeMillis
      const dueAt = Option.match(last, { onNone: () => now, onSome: (run) => run.startedAt.getTime() + intervalMs })
      if (dueAt > now) return Duration.millis(dueAt - now)
      const ran = yield* cycle.scan(Option.isNone(last) ? "boot" : "schedule")
      if (Option.isNone(ran)) return retryAfter
      yield* cycle.publish.pipe(
        Effect.catchAll((failure) => Effect.logWarning(`publication deferred: ${failure.reason}`))
      )
      return Duration.zero
    }).pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logError("scheduled price scan failed; retrying shortly", cause), retryAfter))
    )

    const syncEvery = Duration.seconds(config.chain.syncIntervalSeconds)
    const syncLoop = jobs.runExclusive(CHAIN_SYNC_JOB, chainSync.sync).pipe(
      Effect.catchAllCause((cause) => Effect.logError("chain sync failed", cause)),
      Effect.zipRight(Effect.sleep(syncEvery))
    )

    const bootstrap = cycle.bootstrap(intervalHours > 0).pipe(
      Effect.catchAllCause((cause) => Effect.logError("replaying the index history failed; it resumes at the next start", cause))
    )

    yield* Effect.forkScoped(
      Effect.gen(function* () {
        yield* bootstrap
        yield* cycle.markBooted
        if (config.chain.syncIntervalSeconds > 0) yield* Effect.forkScoped(Effect.forever(syncLoop))
        else yield* Effect.logInfo("scheduled chain sync is off (CHAIN_SYNC_INTERVAL_SECONDS=0)")
        if (intervalHours > 0) yield* Effect.forever(Effect.flatMap(scanLoop, (wait) => Effect.sleep(wait)))
        else yield* Effect.logInfo("scheduled price scans are off (PRICE_SCAN_INTERVAL_HOURS=0)")
      }).pipe(Effect.scoped)
    )
  })
)
