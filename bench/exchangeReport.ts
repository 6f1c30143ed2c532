/** `npm run bench:exchange`: the tables it prints and its verdicts on the targets of the issue. */
import { settings, TARGET_ADDED_P50_MS, TARGET_CPU_VS_PORTKEY, TARGET_VS_BARE, TARGET_VS_PORTKEY } from "./exchangeSettings.ts"
import type { LoadKey, SequentialFigures, Throughput } from "./exchangeMeasure.ts"
import type { Target, TargetKey } from "./exchangeRequests.ts"
import type { ServiceLog } from "./exchangeLog.ts"

export const ms = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "n/a" : value.toFixed(2))
const signedMs = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "n/a" : `${value >= 0 ? "+" : ""}${value.toFixed(2)}`)

export interface Results {
  readonly latency: Map<TargetKey, SequentialFigures>
  readonly ttfb: Map<TargetKey, SequentialFigures>
  /** By target (BENCH_CONNECTIONS connections, the exchange on one account), and "exchange-accounts" (as many accounts). */
  readonly throughput: Map<LoadKey, Throughput>
  readonly rss: Map<TargetKey, number>
}

const rate = (throughput: Throughput | undefined) => (throughput === undefined ? "n/a" : String(Math.round(throughput.requestsPerSecond)))

export const table = (targets: ReadonlyArray<Target>, results: Results) => {
  const direct = results.latency.get("direct")
  const directTtfb = results.ttfb.get("direct")
  const n = settings.connections
  const lines = [
    `| target | p50 ms | p99 ms | added p50 | added p99 | stream TTFB p50 | TTFB p99 | added TTFB p50 | req/s (${n} conn, 1 account) | req/s (${n} conn, ${n} accounts) | RSS MB | CPU ms/req |`,
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const target of targets) {
    if (target.notMeasured !== undefined) {
      lines.push(`| ${target.label} | not measured: ${target.notMeasured} | | | | | | | | | | |`)
      continue
    }
    const latency = results.latency.get(target.key)
    const ttfb = results.ttfb.get(target.key)
    const throughput = results.throughput.get(target.key)
    const rss = results.rss.get(target.key)
    const isDirect = target.key === "direct"
    // The Responses rows are the exchange's process again: a phase they are not run in is "-", their RSS the exchange's.
    const responses = target.kind === "responses"
    const streamCells =
      target.streamNotMeasured !== undefined
        ? [`not measured: ${target.streamNotMeasured}`, "", ""]
        : responses && ttfb === undefined
          ? ["-", "-", "-"]
          : [ms(ttfb?.p50), ms(ttfb?.p99), isDirect ? "-" : signedMs((ttfb?.p50 ?? Number.NaN) - (directTtfb?.p50 ?? Number.NaN))]
    // The references have no accounts: over many accounts they are what they are over one.
    const accounts =
      target.key === "exchange"
        ? rate(results.throughput.get("exchange-accounts"))
        : responses || target.key === "exchange-traced"
          ? "-"
          : throughput === undefined
            ? "n/a"
            : `= ${rate(throughput)}`
    lines.push(
      `| ${[
        target.label,
        ms(latency?.p50),
        ms(latency?.p99),
        isDirect ? "-" : signedMs((latency?.p50 ?? Number.NaN) - (direct?.p50 ?? Number.NaN)),
        isDirect ? "-" : signedMs((latency?.p99 ?? Number.NaN) - (direct?.p99 ?? Number.NaN)),
        ...streamCells,
        responses && throughput === undefined ? "-" : rate(throughput),
        accounts,
        responses ? "(exchange's)" : rss === undefined || Number.isNaN(rss) ? "n/a" : rss.toFixed(0),
        ms(latency?.cpuMsPerRequest)
      ].join(" | ")} |`
    )
  }
  return lines.join("\n")
}

export const mixTable = (targets: ReadonlyArray<Target>, latency: Results["latency"], ttfb: Results["ttfb"]) => {
  const direct = latency.get("direct")
  const directTtfb = ttfb.get("direct")
  const lines = ["| target | mix p50 ms | mix p99 ms | added p50 | mix TTFB p50 | added TTFB p50 |", "|---|---:|---:|---:|---:|---:|"]
  for (const target of targets) {
    const l = latency.get(target.key)
    const t = ttfb.get(target.key)
    if (l === undefined) continue
    const isDirect = target.key === "direct"
    lines.push(
      `| ${[
        target.label,
        ms(l.p50),
        ms(l.p99),
        isDirect ? "-" : signedMs(l.p50 - (direct?.p50 ?? Number.NaN)),
        t === undefined ? `not measured${target.streamNotMeasured === undefined ? "" : `: ${target.streamNotMeasured}`}` : ms(t.p50),
        isDirect || t === undefined ? "-" : signedMs(t.p50 - (directTtfb?.p50 ?? Number.NaN))
      ].join(" | ")} |`
    )
  }
  return lines.join("\n")
}

export interface Verdict {
  readonly name: string
  /** INFO: a figure the issue asks for as information (no target to pass). */
  readonly outcome: "PASS" | "MISS" | "INFO" | "not evaluated"
  readonly detail: string
}

export interface Checks {
  /** Billing over every 2xx answer of every phase: the answers covered and what was wrong, if anything. */
  readonly billing: { readonly answered: number; readonly problems: ReadonlyArray<string> }
  readonly serviceLog: ServiceLog
}

/** The issue's targets for the exchange, each PASS or MISS (or why it could not be evaluated), in the issue's order. */
export const verdicts = (targets: ReadonlyArray<Target>, results: Results, checks: Checks): Array<Verdict> => {
  const out: Array<Verdict> = []
  const portkey = targets.find((target) => target.key === "portkey")
  const portkeyMissing = portkey === undefined || portkey.notMeasured !== undefined ? `Portkey not measured: ${portkey?.notMeasured ?? "skipped"}` : undefined
  const exchange = targets.find((target) => target.key === "exchange")

  const added = (name: string, phase: Results["latency"], unmeasured: string | undefined) => {
    const exchangeP50 = phase.get("exchange")?.p50
    const directP50 = phase.get("direct")?.p50
    if (unmeasured !== undefined || exchangeP50 === undefined || directP50 === undefined) {
      out.push({ name, outcome: "not evaluated", detail: unmeasured ?? "no figure" })
      return
    }
    const value = exchangeP50 - directP50
    const pass = value <= TARGET_ADDED_P50_MS
    out.push({
      name,
      outcome: pass ? "PASS" : "MISS",
      detail: `${value.toFixed(2)} ms${pass ? "" : ` (${(value - TARGET_ADDED_P50_MS).toFixed(2)} ms over, ${(value / TARGET_ADDED_P50_MS).toFixed(1)}x the target)`}`
    })
  }
  added(`added p50 at 1 connection, non-streaming <= ${TARGET_ADDED_P50_MS.toFixed(1)} ms`, results.latency, undefined)
  added(`added stream TTFB p50 at 1 connection <= ${TARGET_ADDED_P50_MS.toFixed(1)} ms`, results.ttfb, exchange?.streamNotMeasured)

  const rps = (key: LoadKey) => results.throughput.get(key)?.requestsPerSecond
  const exchangeRps = rps("exchange")
  const n = settings.connections
  const ratio = (name: string, value: number | undefined, other: number | undefined, factor: number, unmeasured: string | undefined, info: boolean) => {
    if (unmeasured !== undefined || value === undefined || other === undefined) {
      out.push({ name, outcome: "not evaluated", detail: unmeasured ?? "no figure" })
      return
    }
    const r = value / other
    const pass = r >= factor
    out.push({
      name,
      outcome: info ? "INFO" : pass ? "PASS" : "MISS",
      detail:
        `${Math.round(value)} vs ${Math.round(other)} req/s = ${r.toFixed(2)}x` +
        (pass ? "" : ` (${factor}x needs ${Math.round(factor * other)} req/s: ${Math.round(factor * other - value)} req/s, ${Math.round(100 * (1 - r / factor))}% short)`)
    })
  }
  ratio(`throughput at ${n} connections, one account >= ${TARGET_VS_PORTKEY}x Portkey's`, exchangeRps, rps("portkey"), TARGET_VS_PORTKEY, portkeyMissing, false)
  ratio(`throughput at ${n} connections, one account, vs the bare proxy's (aim ${TARGET_VS_BARE}x; information)`, exchangeRps, rps("bare"), TARGET_VS_BARE, undefined, true)
  ratio(`throughput at ${n} connections over ${n} accounts >= ${TARGET_VS_PORTKEY}x Portkey's`, rps("exchange-accounts"), rps("portkey"), TARGET_VS_PORTKEY, portkeyMissing, false)
  ratio(`throughput at ${n} connections over ${n} accounts >= the one-account figure`, rps("exchange-accounts"), exchangeRps, 1, undefined, false)

  const atMost = (name: string, value: number | undefined, other: number | undefined, factor: number, unit: string) => {
    if (portkeyMissing !== undefined || value === undefined || other === undefined || Number.isNaN(value) || Number.isNaN(other)) {
      out.push({ name, outcome: "not evaluated", detail: portkeyMissing ?? "no figure" })
      return
    }
    const r = value / other
    const pass = r <= factor
    out.push({
      name,
      outcome: pass ? "PASS" : "MISS",
      detail: `${value.toFixed(2)} vs ${other.toFixed(2)} ${unit} = ${r.toFixed(2)}x${pass ? "" : ` (${factor}x allows ${(factor * other).toFixed(2)} ${unit})`}`
    })
  }
  atMost(
    `CPU per request (1 connection, non-streaming) <= ${TARGET_CPU_VS_PORTKEY}x Portkey's`,
    results.latency.get("exchange")?.cpuMsPerRequest,
    results.latency.get("portkey")?.cpuMsPerRequest,
    TARGET_CPU_VS_PORTKEY,
    "ms"
  )
  // The target is the exchange-only replica's (bench/exchange.ts, the exchange tier); the full service's is information.
  const fullRss = results.rss.get("exchange")
  const portkeyRss = results.rss.get("portkey")
  out.push(
    fullRss === undefined || portkeyRss === undefined
      ? { name: "RSS of the full service after the load runs (information)", outcome: "not evaluated", detail: portkeyMissing ?? "no figure" }
      : { name: "RSS of the full service after the load runs (information)", outcome: "INFO", detail: `${fullRss.toFixed(0)} vs Portkey's ${portkeyRss.toFixed(0)} MB = ${(fullRss / portkeyRss).toFixed(2)}x` }
  )

  const { billing, serviceLog } = checks
  out.push({
    name: "billing over every answered request (every phase)",
    outcome: billing.problems.length === 0 ? "PASS" : "MISS",
    detail: billing.problems.length === 0 ? `${billing.answered} 2xx answers, each charged` : `${billing.problems.length} problem(s): ${billing.problems.slice(0, 3).join("; ")}`
  })
  const warned = serviceLog.count()
  if (["ERROR", "FATAL", "NONE", "OFF"].includes(settings.logLevel.toUpperCase())) {
    out.push({ name: "nothing logged at WARN or above by the service", outcome: "not evaluated", detail: `LOG_LEVEL=${settings.logLevel} hides WARN (BENCH_LOG_LEVEL)` })
    return out
  }
  out.push({
    name: "nothing logged at WARN or above by the service",
    outcome: warned === 0 ? "PASS" : "MISS",
    detail:
      warned === 0
        ? `0 lines (LOG_LEVEL=${settings.logLevel})`
        : `${warned} line(s); by message: ${serviceLog.byMessage().slice(0, 5).join("; ")}; the first:\n    ${serviceLog.first().join("\n    ")}`
  })
  return out
}
