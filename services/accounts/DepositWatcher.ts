/**
 * The deposit watcher: on one replica at a time (the `deposit-watch` job), every FUNDING_SCAN_INTERVAL_SECONDS,
 * credits the treasury's confirmed `Deposited` events (Funding.scanDeposits), then settles the withdrawals still
 * pending (Withdrawals.settlePending). Off without funding contracts.
 */
import { Duration, Effect, Layer, Option } from "effect"
import { FundingContractsTag } from "../chain/funding.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { Jobs } from "../platform/Jobs.ts"
import { Funding } from "./Funding.ts"
import { Withdrawals } from "./Withdrawals.ts"

export const DEPOSIT_WATCH_JOB = "deposit-watch"

/** One scan as a job run: None when another replica was scanning. */
export const watchDepositsOnce = Effect.gen(function* () {
  const jobs = yield* Jobs
  const funding = yield* Funding
  const withdrawals = yield* Withdrawals
  return yield* jobs.runExclusive(
    DEPOSIT_WATCH_JOB,
    Effect.zip(funding.scanDeposits, withdrawals.settlePending),
    ([d, w]) =>
      `blocks ${d.fromBlock}-${d.toBlock}: ${d.credited} credited, ${d.alreadyCredited} already credited, ${d.unmatched} unmatched; ` +
      `withdrawals: ${w.confirmed} confirmed, ${w.refunded} refunded, ${w.pending} pending`
  )
})

export const DepositWatcherLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const seconds = config.ledger.fundingScanIntervalSeconds
    if (Option.isNone(yield* FundingContractsTag)) return yield* Effect.logInfo("the deposit watcher is off: no funding contracts")
    if (seconds <= 0) return yield* Effect.logInfo("the deposit watcher is off (FUNDING_SCAN_INTERVAL_SECONDS=0)")
    const once = watchDepositsOnce.pipe(
      Effect.catchAllCause((cause) => Effect.logError("scanning deposits failed; retrying at the next interval", cause))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.seconds(seconds)), once)))
  })
)
