/**
 * `npm run bench:exchange`: traces off and on. The issue asks that with `OTEL_EXPORTER_OTLP_ENDPOINT` unset the hot
 * path cost nothing measurable, and that the bench show it off and on in the same run:
 *   traces off  the exchange row itself: the service runs without the variable, so its tracer is disabled
 *               (services/platform/Tracing.ts: no exporter, no span built);
 *   traces on   a second exchange process (`exchange-traced`, on a database of its own, with its own account made as
 *               the first one is) with `OTEL_EXPORTER_OTLP_ENDPOINT` set to an OTLP/HTTP sink the bench runs in its
 *               own process (`startOtlpSink`), `OTEL_BSP_SCHEDULE_DELAY=1000` and the sampler at its default ratio
 *               (1: every request traced and exported, the worst case).
 * The traced exchange takes its turn beside the exchange's run in the latency, TTFB and one-account load phases
 * (right after it in the first, third, ... chunk and round, right before it in the others: `besideOff`), as the
 * Responses runs do (bench/exchangeResponses.ts). Its load runs are followed, as the exchange's are, by a wait for
 * their abandoned requests to settle, then by OTEL_BSP_SCHEDULE_DELAY and a little more, so that the sink's parsing of
 * the last export does not fall in the next run.
 *
 * The sink reads each POST body whole, parses `resourceSpans[].scopeSpans[].spans[]`, groups the spans by trace and
 * names each trace by its parentless span (`POST /v1/chat/completions` for a completion, whose server span the bench
 * starts, sending no traceparent), and answers 200 `{}`. Spans per traced request = the spans of the completion
 * traces over their number; a run whose sink received no span fails (the traces were not exported). A POST to another
 * signal's path (the service also pushes its metrics to `${endpoint}/v1/metrics` every OTEL_METRIC_EXPORT_INTERVAL,
 * 60 s by default) is read whole, answered 200 `{}` as a collector would, and counted apart.
 */
import * as Http from "node:http"
import * as Zlib from "node:zlib"
import { log, onCleanup, sleep } from "./common.ts"
import { EXCHANGE_MODEL, settings } from "./exchangeSettings.ts"
import { type Charges, drained, measureCharges } from "./exchangeBilling.ts"
import { makeServiceLog, type ServiceLog } from "./exchangeLog.ts"
import type { SequentialFigures } from "./exchangeMeasure.ts"
import { makeTarget, type Target } from "./exchangeRequests.ts"
import type { Results, Verdict } from "./exchangeReport.ts"
import { createDatabase, type Exchange, startExchange } from "./exchangeTargets.ts"
import { makeStageAggregator, type StageAggregator, type StageTotals, stageLines } from "./exchangeStages.ts"

/** OTEL_BSP_SCHEDULE_DELAY of the traced exchange (ms): how often its spans are POSTed to the sink. */
export const TRACED_EXPORT_INTERVAL_MS = 1_000
/** The chat completion's route: the root span of every request the bench measures. */
const COMPLETION_ROOT = "POST /v1/chat/completions"

// ---------------------------------------------------------------------------------------------- the OTLP sink

interface OtlpJson {
  readonly resourceSpans?: ReadonlyArray<{
    readonly scopeSpans?: ReadonlyArray<{
      readonly spans?: ReadonlyArray<{ traceId?: unknown; parentSpanId?: unknown; name?: unknown; startTimeUnixNano?: unknown; endTimeUnixNano?: unknown }>
    }>
  }>
}

export interface OtlpSink {
  readonly url: string
  /** Spans received so far. */
  readonly spans: () => number
  /** POSTs to /v1/traces answered 200, and requests that could not be read (answered 400 or 404). */
  readonly posts: () => { readonly ok: number; readonly bad: number; readonly bytes: number }
  /** POSTs to other paths (another signal: /v1/metrics, /v1/logs), by path: answered 200, not parsed. */
  readonly otherSignals: () => ReadonlyMap<string, { readonly posts: number; readonly bytes: number }>
  /** Traces by the name of their parentless span ("(no root received)" while it has not come): count and spans. */
  readonly traces: () => ReadonlyMap<string, { readonly traces: number; readonly spans: number }>
  /** The completions' time per span name (bench/exchangeStages.ts). */
  readonly stages: StageAggregator
}

/** An OTLP/HTTP JSON receiver on 127.0.0.1 (an ephemeral port), in the bench's process; closed on clean-up. */
export const startOtlpSink = async (): Promise<OtlpSink> => {
  let spans = 0
  let ok = 0
  let bad = 0
  let bytes = 0
  // traceId -> its spans so far and its root's name once received.
  const byTrace = new Map<string, { spans: number; root: string | undefined }>()
  const otherSignals = new Map<string, { posts: number; bytes: number }>()
  const stages = makeStageAggregator(COMPLETION_ROOT)
  const nanos = (value: unknown) => (typeof value === "string" && /^\d+$/.test(value) ? BigInt(value) : 0n)
  const read = (body: Buffer) => {
    const parsed = JSON.parse(body.toString("utf8")) as OtlpJson
    for (const resource of parsed.resourceSpans ?? []) {
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans++
          const traceId = String(span.traceId)
          const trace = byTrace.get(traceId) ?? { spans: 0, root: undefined }
          trace.spans++
          const isRoot = span.parentSpanId === undefined || span.parentSpanId === "" || span.parentSpanId === null
          if (isRoot) trace.root = String(span.name)
          byTrace.set(traceId, trace)
          stages.add(traceId, String(span.name), isRoot, nanos(span.endTimeUnixNano) - nanos(span.startTimeUnixNano))
        }
      }
    }
  }
  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const path = request.url?.split("?")[0] ?? ""
      if (request.method !== "POST") {
        bad++
        response.writeHead(404, { "content-type": "application/json" }).end("{}")
        return
      }
      if (path !== "/v1/traces") {
        const so = otherSignals.get(path) ?? { posts: 0, bytes: 0 }
        otherSignals.set(path, { posts: so.posts + 1, bytes: so.bytes + Buffer.concat(chunks).length })
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
        return
      }
      try {
        const raw = Buffer.concat(chunks)
        bytes += raw.length
        read(request.headers["content-encoding"] === "gzip" ? Zlib.gunzipSync(raw) : raw)
        ok++
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      } catch (error) {
        bad++
        response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: error instanceof Error ? error.message : String(error) }))
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  onCleanup("the OTLP sink", () => new Promise<void>((resolve) => server.close(() => resolve())))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("the OTLP sink has no port")
  const url = `http://127.0.0.1:${address.port}`
  log(`OTLP sink listening at ${url} (POST /v1/traces, JSON)`)
  return {
    url,
    spans: () => spans,
    posts: () => ({ ok, bad, bytes }),
    otherSignals: () => otherSignals,
    stages,
    traces: () => {
      const out = new Map<string, { traces: number; spans: number }>()
      for (const trace of byTrace.values()) {
        const name = trace.root ?? "(no root received)"
        const so = out.get(name) ?? { traces: 0, spans: 0 }
        out.set(name, { traces: so.traces + 1, spans: so.spans + trace.spans })
      }
      return out
    }
  }
}

// ---------------------------------------------------------------------------------------------- the traced exchange

export interface Traced {
  readonly exchange: Exchange
  readonly target: Target
  readonly sink: OtlpSink
  readonly serviceLog: ServiceLog
  readonly env: Readonly<Record<string, string>>
  /** Its account's charges (measured by `measure`). */
  charges: Charges | undefined
  /** When its last measured run ended (for the sink's last export). */
  lastRunEnded: number
}

/** The sink, a database, the exchange with traces on and its account. */
export const startTraced = async (simulatorUrl: string): Promise<Traced> => {
  const sink = await startOtlpSink()
  const databaseUrl = await createDatabase()
  const serviceLog = makeServiceLog()
  // OTEL_TRACES_SAMPLER_ARG unset: the default ratio, 1.
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_SCHEDULE_DELAY: String(TRACED_EXPORT_INTERVAL_MS) }
  const exchange = await startExchange(simulatorUrl, databaseUrl, serviceLog, { name: "the exchange with traces on", env })
  const target = makeTarget("exchange-traced", "exchange, traces on", exchange.baseUrl, { authorization: `Bearer ${exchange.apiKey}` }, EXCHANGE_MODEL, exchange.child)
  return { exchange, target, sink, serviceLog, env, charges: undefined, lastRunEnded: 0 }
}

/** Waits (up to 10 s) for the sink's first spans: a traced exchange that exports nothing is found before the phases. */
export const checkExported = async (traced: Traced) => {
  const since = Date.now()
  while (traced.sink.spans() === 0 && Date.now() - since < 10_000) await sleep(200)
  const spans = traced.sink.spans()
  if (spans === 0) throw new Error(noSpans(traced))
  log(`  ${traced.target.label}: the OTLP sink received ${spans} spans ${((Date.now() - since) / 1000).toFixed(1)} s after the probes: traces are exported`)
}

const noSpans = (traced: Traced) =>
  `the OTLP sink at ${traced.sink.url} received no spans from the exchange run with ${Object.entries(traced.env)
    .map(([key, value]) => `${key}=${value}`)
    .join(" ")} (${traced.target.answered.plain + traced.target.answered.stream} requests answered 2xx; ${traced.sink.posts().ok} POSTs, ${traced.sink.posts().bad} unreadable):` +
  " the traces were not exported"

/** `list` with the traced exchange right after the exchange's entry in even rounds (the first included), right before it in odd ones. */
export const besideOff = <T extends { readonly key: string }>(list: ReadonlyArray<T>, traced: T | undefined, round: number): Array<T> =>
  traced === undefined ? [...list] : list.flatMap((item) => (item.key !== "exchange" ? [item] : round % 2 === 0 ? [item, traced] : [traced, item]))

/** After a traced load run: its holds settled (as the exchange's), then its last export landed in the sink. */
export const afterTracedLoad = async (traced: Traced, drain: (which: string, wait: () => Promise<{ reservedWei: bigint; waitedMs: number; unavailable: number }>) => Promise<string>) => {
  const said = await drain(traced.target.label, () => drained(traced.exchange, 30_000))
  await sleep(TRACED_EXPORT_INTERVAL_MS + 500)
  traced.lastRunEnded = Date.now()
  return said
}

/** The latency phase's stages: its last spans exported (an interval and a little more), then the snapshot after it. */
export const latencyStagesOf = async (traced: Traced, before: StageTotals) => {
  await sleep(TRACED_EXPORT_INTERVAL_MS + 500)
  return { before, after: traced.sink.stages.snapshot() }
}

export const measureTracedCharges = async (traced: Traced) => {
  log("  (traces on, its own exchange and account)")
  traced.charges = await measureCharges(traced.exchange, traced.target)
}

/** Its account: spentWei grew by at least the charge of every 2xx answer it got. */
export const checkTracedAccount = async (traced: Traced): Promise<{ readonly answered: number; readonly problems: ReadonlyArray<string>; readonly lines: ReadonlyArray<string> }> => {
  const after = await drained(traced.exchange, 30_000)
  const { plain, stream } = traced.target.answered
  const charges = traced.charges!
  const expectedWei = BigInt(plain) * charges.perPlainWei + BigInt(stream) * charges.perStreamWei
  const spentWei = after.spentWei - traced.exchange.startSpentWei
  return {
    answered: plain + stream,
    problems: spentWei < expectedWei || spentWei <= 0n ? [`the traced exchange's account's spentWei grew by ${spentWei} wei, less than the ${expectedWei} wei of its ${plain + stream} answered requests`] : [],
    lines: [`traced exchange's account: spentWei grew by ${spentWei} wei over ${plain} non-streaming and ${stream} streaming 2xx answers (expected at least ${expectedWei} wei)`]
  }
}

// ---------------------------------------------------------------------------------------------- traces off vs on

const fixed = (value: number | undefined, digits = 2) => (value === undefined || !Number.isFinite(value) ? "n/a" : value.toFixed(digits))
const signed = (value: number, digits = 2) => (Number.isFinite(value) ? `${value >= 0 ? "+" : ""}${value.toFixed(digits)}` : "n/a")
const range = (values: ReadonlyArray<number> | undefined, digits = 2) =>
  values === undefined || values.length === 0 ? "n/a" : `${Math.min(...values).toFixed(digits)} .. ${Math.max(...values).toFixed(digits)}`
const chunkP50s = (figures: SequentialFigures | undefined) => figures?.chunks.map((chunk) => chunk.p50)

/**
 * The "traces off vs on" block and its INFO lines (no target: the issue asks to see the two side by side), and the
 * problems that fail the run (no span received).
 */
export const tracesOffOn = async (
  traced: Traced,
  results: Results,
  latencyStages?: { readonly before: StageTotals; readonly after: StageTotals }
): Promise<{ readonly lines: ReadonlyArray<string>; readonly verdicts: ReadonlyArray<Verdict>; readonly problems: ReadonlyArray<string> }> => {
  // The last measured run's spans: OTEL_BSP_SCHEDULE_DELAY after it ended, and a little more.
  const wait = traced.lastRunEnded + 2 * TRACED_EXPORT_INTERVAL_MS + 500 - Date.now()
  if (wait > 0) await sleep(wait)
  const off = { latency: results.latency.get("exchange"), ttfb: results.ttfb.get("exchange"), load: results.throughput.get("exchange"), rss: results.rss.get("exchange") }
  const on = { latency: results.latency.get("exchange-traced"), ttfb: results.ttfb.get("exchange-traced"), load: results.throughput.get("exchange-traced"), rss: results.rss.get("exchange-traced") }
  const diff = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? Number.NaN : b - a)
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || a === 0 ? Number.NaN : b / a)
  const pct = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || a === 0 ? "" : ` (${signed((100 * (b - a)) / a, 0)}%)`)
  const n = settings.connections
  const cpuChunks = (figures: SequentialFigures | undefined) => figures?.chunks.map((chunk) => chunk.cpuMsPerRequest)
  const lines = [
    "| figure | traces off (the exchange row) | traces on | on vs off | off's spread (chunks / rounds) | on's spread |",
    "|---|---:|---:|---:|---:|---:|",
    `| p50 ms (1 connection) | ${fixed(off.latency?.p50)} | ${fixed(on.latency?.p50)} | ${signed(diff(off.latency?.p50, on.latency?.p50))} ms${pct(off.latency?.p50, on.latency?.p50)} | ${range(chunkP50s(off.latency))} | ${range(chunkP50s(on.latency))} |`,
    `| p99 ms (1 connection) | ${fixed(off.latency?.p99)} | ${fixed(on.latency?.p99)} | ${signed(diff(off.latency?.p99, on.latency?.p99))} ms | | |`,
    `| stream TTFB p50 ms | ${fixed(off.ttfb?.p50)} | ${fixed(on.ttfb?.p50)} | ${signed(diff(off.ttfb?.p50, on.ttfb?.p50))} ms${pct(off.ttfb?.p50, on.ttfb?.p50)} | ${range(chunkP50s(off.ttfb))} | ${range(chunkP50s(on.ttfb))} |`,
    `| req/s (${n} conn, 1 account) | ${fixed(off.load?.requestsPerSecond, 0)} | ${fixed(on.load?.requestsPerSecond, 0)} | ${fixed(ratio(off.load?.requestsPerSecond, on.load?.requestsPerSecond))}x | ${range(off.load?.roundsPerSecond, 0)} | ${range(on.load?.roundsPerSecond, 0)} |`,
    `| CPU ms/req (1 connection) | ${fixed(off.latency?.cpuMsPerRequest)} | ${fixed(on.latency?.cpuMsPerRequest)} | ${fixed(ratio(off.latency?.cpuMsPerRequest, on.latency?.cpuMsPerRequest))}x | ${range(cpuChunks(off.latency))} | ${range(cpuChunks(on.latency))} |`,
    `| RSS MB after the runs | ${fixed(off.rss, 0)} | ${fixed(on.rss, 0)} | ${signed(diff(off.rss, on.rss), 0)} MB | | |`
  ]
  const spans = traced.sink.spans()
  const posts = traced.sink.posts()
  const traces = traced.sink.traces()
  const completions = traces.get(COMPLETION_ROOT)
  const answered = traced.target.answered.plain + traced.target.answered.stream
  const perRequest = completions === undefined || completions.traces === 0 ? Number.NaN : completions.spans / completions.traces
  const others = [...traces.entries()]
    .filter(([name]) => name !== COMPLETION_ROOT)
    .sort((a, b) => b[1].traces - a[1].traces)
    .map(([name, so]) => `${name} x${so.traces} (${so.spans} spans)`)
  const warned = traced.serviceLog.count()
  const otherPosts = [...traced.sink.otherSignals().entries()].map(([path, so]) => `POST ${path} x${so.posts} (${(so.bytes / 1e3).toFixed(0)} KB)`)
  lines.push(
    "",
    `Sink: ${spans} spans in ${posts.ok} POSTs (${(posts.bytes / 1e6).toFixed(1)} MB of JSON${posts.bad === 0 ? "" : `; ${posts.bad} unreadable`}); ${completions?.traces ?? 0} traces rooted in ${COMPLETION_ROOT}` +
      ` (the bench got ${answered} 2xx completions from the traced exchange; a load run's abandoned requests are traced too), ${fixed(perRequest, 1)} spans each on average;` +
      ` other traces: ${others.length === 0 ? "none" : others.slice(0, 8).join(", ")}.` +
      (otherPosts.length === 0 ? "" : ` The same endpoint also received ${otherPosts.join(", ")} (another signal, answered 200 and not counted).`),
    `The traced exchange logged ${warned} line(s) at WARN or above${warned === 0 ? "" : `: ${traced.serviceLog.byMessage().slice(0, 3).join("; ")}`}.`
  )
  if (latencyStages !== undefined) {
    lines.push(
      "",
      "Where a request's time goes (the traced exchange's own spans over its latency-phase requests, 1 connection, non-streaming; traced, so each figure includes its span's cost):",
      "",
      ...stageLines(COMPLETION_ROOT, latencyStages.before, latencyStages.after)
    )
  }
  const problems = spans === 0 ? [noSpans(traced)] : completions === undefined || completions.traces === 0 ? [`the OTLP sink received ${spans} spans but no trace rooted in ${COMPLETION_ROOT}`] : []
  const verdicts: Array<Verdict> = [
    {
      name: "traces off is the exchange row",
      outcome: "INFO",
      detail: "the exchange runs without OTEL_EXPORTER_OTLP_ENDPOINT: its tracer is disabled (no exporter, no spans built); traces on is a second exchange process exporting every request's trace"
    },
    {
      name: "added p50 at 1 connection, traces on over off",
      outcome: "INFO",
      detail: `${signed(diff(off.latency?.p50, on.latency?.p50))} ms non-streaming, ${signed(diff(off.ttfb?.p50, on.ttfb?.p50))} ms stream TTFB`
    },
    {
      name: `throughput at ${n} connections, one account, traces on / off`,
      outcome: "INFO",
      detail: `${fixed(on.load?.requestsPerSecond, 0)} / ${fixed(off.load?.requestsPerSecond, 0)} req/s = ${fixed(ratio(off.load?.requestsPerSecond, on.load?.requestsPerSecond))}x`
    },
    {
      name: "CPU per request (1 connection), traces on / off",
      outcome: "INFO",
      detail: `${fixed(on.latency?.cpuMsPerRequest)} / ${fixed(off.latency?.cpuMsPerRequest)} ms = ${fixed(ratio(off.latency?.cpuMsPerRequest, on.latency?.cpuMsPerRequest))}x`
    },
    {
      name: "spans received per traced request (> 0: the traces were exported)",
      outcome: problems.length === 0 ? "PASS" : "MISS",
      detail: problems.length === 0 ? `${fixed(perRequest, 1)} (${spans} spans; ${completions!.traces} completion traces)` : problems.join("; ")
    }
  ]
  return { lines, verdicts, problems }
}
