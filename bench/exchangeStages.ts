/**
 * Where a traced request's time goes, from the exchange's own spans (bench/exchangeTracing.ts's OTLP sink): each
 * completion trace's spans, folded once its root (the request's `server` span) has arrived, into a total per span
 * name. A phase's stages are the difference of two snapshots taken around it (and an export interval after it), so
 * only that phase's requests count; job traces and requests of other phases fall outside.
 *
 * The figures are the traced exchange's, which exports every span: they are larger than the untraced exchange's by
 * what tracing costs (the "traces off vs on" block), but they say which stage holds the time. Spans of a stage may
 * overlap (the reservation and the upstream call run at once when the headroom allows), so the stages do not add up
 * to the request.
 */

export interface StageTotals {
  /** Completion traces folded so far. */
  readonly requests: number
  /** Per span name: how many spans, and their summed duration in nanoseconds. */
  readonly byName: ReadonlyMap<string, { readonly count: number; readonly ns: bigint }>
}

export interface StageAggregator {
  /** One span as it arrives: its trace, its name, whether it is the trace's root, its duration. */
  readonly add: (traceId: string, name: string, isRoot: boolean, durationNs: bigint) => void
  readonly snapshot: () => StageTotals
}

/** Folds the traces rooted in `rootName` (the measured request's server span); other traces are dropped at their root. */
export const makeStageAggregator = (rootName: string): StageAggregator => {
  // A trace's spans until its root arrives: children end first, so they are exported in the same batch or before.
  const pending = new Map<string, Array<readonly [string, bigint]>>()
  const byName = new Map<string, { count: number; ns: bigint }>()
  let requests = 0
  return {
    add: (traceId, name, isRoot, durationNs) => {
      const spans = pending.get(traceId) ?? []
      spans.push([name, durationNs])
      if (!isRoot) {
        pending.set(traceId, spans)
        return
      }
      pending.delete(traceId)
      if (name !== rootName) return
      requests++
      for (const [span, ns] of spans) {
        const total = byName.get(span) ?? { count: 0, ns: 0n }
        total.count++
        total.ns += ns
        byName.set(span, total)
      }
    },
    snapshot: () => ({ requests, byName: new Map([...byName].map(([name, total]) => [name, { ...total }])) })
  }
}

/** The spans that name a stage of a completion, in the order the request meets them. */
const STAGE_ORDER = ["Exchange.serve", "RequestPlanner.plan", "Ledger.reserve", "UpstreamRouter.route", "upstream.attempt", "Settlement.settle", "sql.execute"]

/** The per-stage table of the requests between two snapshots: spans per request, mean ms per request, share of the root. */
export const stageLines = (rootName: string, before: StageTotals, after: StageTotals): ReadonlyArray<string> => {
  const requests = after.requests - before.requests
  if (requests <= 0) return [`No ${rootName} trace arrived between the snapshots: no stages to show.`]
  const delta = (name: string) => {
    const a = after.byName.get(name) ?? { count: 0, ns: 0n }
    const b = before.byName.get(name) ?? { count: 0, ns: 0n }
    return { count: a.count - b.count, ms: Number(a.ns - b.ns) / 1e6 }
  }
  const root = delta(rootName)
  const rootMs = root.ms / requests
  const row = (label: string, count: number, ms: number) =>
    `| ${label} | ${(count / requests).toFixed(2)} | ${(ms / requests).toFixed(3)} | ${rootMs === 0 ? "n/a" : `${((100 * ms) / requests / rootMs).toFixed(0)}%`} |`
  const named = new Set([rootName, ...STAGE_ORDER])
  const others = [...after.byName.keys()].filter((name) => !named.has(name)).map((name) => ({ name, ...delta(name) })).filter((d) => d.count > 0)
  const serve = delta("Exchange.serve")
  return [
    "| span (stage) | spans per request | mean ms per request | share of the request |",
    "|---|---:|---:|---:|",
    row(`\`${rootName}\` (the whole request, server side)`, root.count, root.ms),
    row("outside `Exchange.serve`: body read, authentication, decode, render, write", requests, root.ms - serve.ms),
    ...STAGE_ORDER.map((name) => ({ name, ...delta(name) })).filter((d) => d.count > 0).map((d) => row(`\`${d.name}\``, d.count, d.ms)),
    ...others.sort((a, b) => b.ms - a.ms).slice(0, 8).map((d) => row(`\`${d.name}\``, d.count, d.ms))
  ]
}
