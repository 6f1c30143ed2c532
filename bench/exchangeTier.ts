/**
 * The exchange tier in bench:exchange (DESIGN.md section 14, "Roles"): an exchange-only replica (`SERVICE_ROLES=
 * exchange`: no chain client, no replay, no jobs, no pages) started beside the full service on its database, sent
 * the latency phase's requests and one load run on an account of its own, then its RSS read as the full service's
 * is. Its billing is checked as the other accounts' are: the account's spentWei grew by at least the plain request's
 * charge times the 2xx answers it got.
 */
import { log } from "./common.ts"
import type { Charges } from "./exchangeBilling.ts"
import { drained } from "./exchangeBilling.ts"
import { load, rssMb, sequentialPhase, type SequentialFigures, type Throughput } from "./exchangeMeasure.ts"
import { makeTarget } from "./exchangeRequests.ts"
import { EXCHANGE_MODEL, settings } from "./exchangeSettings.ts"
import type { ServiceLog } from "./exchangeLog.ts"
import { type Exchange, startExchangeTier } from "./exchangeTargets.ts"

export interface TierFigures {
  readonly latency: SequentialFigures
  readonly throughput: Throughput
  readonly rssMb: number
  /** 2xx answers, and what billing found wrong with them (empty: every one charged at least its price). */
  readonly answered: number
  readonly problems: ReadonlyArray<string>
}

export const measureExchangeTier = async (
  simulatorUrl: string,
  databaseUrl: string,
  serviceLog: ServiceLog,
  exchange: Exchange,
  accountIndex: number,
  charges: Charges
): Promise<TierFigures> => {
  log("the exchange tier: an exchange-only replica (SERVICE_ROLES=exchange) on the service's database, an account of its own...")
  const tier = await startExchangeTier(simulatorUrl, databaseUrl, serviceLog)
  const account = await exchange.newAccount("bench-exchange-tier", accountIndex)
  const target = makeTarget("exchange", "exchange-only replica", tier.baseUrl, { authorization: `Bearer ${account.apiKey}` }, EXCHANGE_MODEL, tier.child)
  const latency = (await sequentialPhase([target], false, settings.latencyRequests)).get("exchange")!
  log(`  exchange-only replica: load, ${settings.connections} connections, ${settings.durationSeconds} s...`)
  const throughput = await load(target, settings.durationSeconds)
  log(`  exchange-only replica: ${throughput.requestsPerSecond.toFixed(0)} req/s (${throughput.ok} 2xx, non-2xx ${throughput.non2xx}, errors ${throughput.errors})`)
  const rss = await rssMb(tier.child.pid)
  log(`  exchange-only replica: RSS ${rss.toFixed(0)} MB after the runs`)
  const state = await drained(account, 30_000)
  // The sequential phase and the load run both count their 2xx answers there.
  const answered = target.answered.plain
  const spent = state.spentWei - account.startSpentWei
  const problems: Array<string> = []
  if (throughput.non2xx > 0 || throughput.errors > 0 || throughput.timeouts > 0) {
    problems.push(`exchange-only replica: ${throughput.non2xx} non-2xx, ${throughput.errors} errors, ${throughput.timeouts} timeouts under load`)
  }
  if (spent < BigInt(answered) * charges.perPlainWei) {
    problems.push(`exchange-only replica: spentWei grew by ${spent} wei for ${answered} answers of at least ${charges.perPlainWei} wei each`)
  }
  if (state.reservedWei !== 0n) problems.push(`exchange-only replica: ${state.reservedWei} wei still reserved 30 s after its last request`)
  log(`  exchange-only replica billing: ${answered} answers, ${spent} wei spent (at least ${BigInt(answered) * charges.perPlainWei})${problems.length === 0 ? ": PASS" : ""}`)
  await tier.child.stop()
  return { latency, throughput, rssMb: rss, answered, problems }
}
