/**
 * The inference metrics as a real Prometheus sees them: the exchange (the vendor simulator behind it) with
 * METRICS_PORT, Debian's `prometheus` scraping it every second, and requests whose every effect on the `cx_*` series
 * is predicted exactly: a refusal for want of credit and one for a bad key, a served chat completion, a vendor 500 the
 * next key makes good (one `status` attempt, one cooldown of that key, one `served`), a stream the client leaves while
 * the vendor still sends (drained: completed), and a stream the vendor stalls and the client leaves (cut:
 * interrupted), whose open hold the holds gauges show while it waits; a client that leaves mid-stream is an HTTP 499
 * (nginx's convention). Every series a case does not name must not move.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { chatText, isChatText, json, readFrames } from "./support/faultMatrix.ts"
import { waitFor } from "./support/polling.ts"
import { freePort } from "./support/ports.ts"

const PROMETHEUS = process.env["PROMETHEUS_PATH"] ?? "/usr/bin/prometheus"
const CHAT = "/v1/chat/completions"
const MODEL = "openai/gpt-4.1"
const DRAIN_TIMEOUT_MS = 2_000

let fx: ExchangeFixture
let scratch: string
let prometheus: ReturnType<typeof spawn> | undefined
let prometheusUrl = ""
let target = ""
let secret = ""

/** Every cx_* series Prometheus holds now, by name and labels (instance and job left out), with its value. */
type Series = ReadonlyMap<string, number>

const instantQuery = async (expression: string) => {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expression)}`)
  const body = (await response.json()) as { status: string; data: { result: ReadonlyArray<{ metric: Record<string, string>; value: [number, string] }> } }
  expect(body.status).toBe("success")
  return body.data.result
}

const seriesKey = (metric: Record<string, string>) => {
  const { __name__: name, instance: _instance, job: _job, ...labels } = metric
  return `${name}{${Object.keys(labels).sort().map((k) => `${k}="${labels[k]}"`).join(",")}}`
}

const snapshot = async (): Promise<Series> =>
  new Map((await instantQuery(`{__name__=~"cx_.+", instance="${target}"}`)).map((r) => [seriesKey(r.metric), Number(r.value[1])]))

/** Waits for a scrape that began after now, so what was recorded before this call is in Prometheus. */
const freshScrape = async () => {
  const since = Date.now() / 1000
  await waitFor("a scrape after now", async () => {
    const [up] = await instantQuery(`timestamp(up{instance="${target}"})`)
    return up !== undefined && Number(up.value[1]) > since + 0.001 ? true : undefined
  }, 20_000, 100)
}

const baseline = async () => {
  await freshScrape()
  return snapshot()
}

/** The sum of the series whose key matches every `name` / `label="value"` part given. */
const sumOf = (series: Series, name: string, labels: Record<string, string> = {}) => {
  let total = 0
  for (const [key, value] of series) {
    if (!key.startsWith(`${name}{`)) continue
    if (Object.entries(labels).every(([k, v]) => key.includes(`${k}="${v}"`))) total += value
  }
  return total
}

/** What a case is expected to move, as [name, labels] with the exact delta; everything listed in WATCHED not named moves by 0. */
type Expectation = ReadonlyArray<readonly [name: string, labels: Record<string, string>, delta: number]>

const WATCHED: Expectation = [
  ["cx_inference_requests_total", { outcome: "completed" }, 0],
  ["cx_inference_requests_total", { outcome: "interrupted" }, 0],
  ["cx_inference_duration_seconds_count", {}, 0],
  ["cx_inference_first_event_seconds_count", {}, 0],
  ["cx_upstream_attempts_total", { outcome: "served" }, 0],
  ["cx_upstream_attempts_total", { outcome: "status" }, 0],
  ["cx_upstream_attempts_total", {}, 0],
  ["cx_upstream_first_event_seconds_count", {}, 0],
  ["cx_upstream_key_cooldowns_total", {}, 0],
  ["cx_ledger_settle_batch_size_sum", {}, 0],
  ["cx_http_requests_total", { route: CHAT, status: "200" }, 0],
  ["cx_http_requests_total", { route: CHAT, status: "401" }, 0],
  ["cx_http_requests_total", { route: CHAT, status: "402" }, 0],
  ["cx_http_requests_total", { route: CHAT, status: "499" }, 0]
]

const describeDeltas = (before: Series, after: Series, expected: Expectation) =>
  expected.map(([name, labels, delta]) => `${name}${JSON.stringify(labels)} moved ${sumOf(after, name, labels) - sumOf(before, name, labels)} (expected ${delta})`).join("\n")

/**
 * Polls until every watched sum moved by exactly its delta (the case's, else 0), then checks once more after a later
 * scrape, so a count that would overshoot late fails too.
 */
const expectDeltas = async (before: Series, moved: Expectation) => {
  const expected: Expectation = [
    ...moved,
    ...WATCHED.filter(([name, labels]) => !moved.some(([n, l]) => n === name && JSON.stringify(l) === JSON.stringify(labels)))
  ]
  const exact = (after: Series) => expected.every(([name, labels, delta]) => sumOf(after, name, labels) - sumOf(before, name, labels) === delta)
  let last: Series = new Map()
  await waitFor("the deltas", async () => ((last = await snapshot()), exact(last) || undefined), 20_000, 200).catch(() => {
    throw new Error(`the series did not move as expected:\n${describeDeltas(before, last, expected)}`)
  })
  await freshScrape()
  const settled = await snapshot()
  expect(exact(settled), describeDeltas(before, settled, expected)).toBe(true)
  return settled
}

const post = (body: Record<string, unknown>, options: { key?: string; signal?: AbortSignal } = {}) =>
  fetch(`${fx.baseUrl}${CHAT}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${options.key ?? secret}` },
    body: JSON.stringify(body),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })

const chat = (prompt: string, extra: Record<string, unknown> = {}) => ({ model: MODEL, messages: [{ role: "user", content: prompt }], ...extra })

/** The per-key deltas of a counter between two snapshots, the zero ones left out. */
const keyDeltas = (before: Series, after: Series, name: string, extra: Record<string, string> = {}) => {
  const moved: Record<string, number> = {}
  for (const [key, value] of after) {
    if (!key.startsWith(`${name}{`) || !Object.entries(extra).every(([k, v]) => key.includes(`${k}="${v}"`))) continue
    const delta = value - (before.get(key) ?? 0)
    if (delta !== 0) moved[/key="([^"]*)"/.exec(key)![1]!] = delta
  }
  return moved
}

beforeAll(async () => {
  scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-metrics-inference-"))
  const metricsPort = await freePort()
  target = `127.0.0.1:${metricsPort}`
  fx = await startExchangeFixture({
    METRICS_PORT: String(metricsPort),
    METRICS_HOST: "127.0.0.1",
    STREAM_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
    // The holds gauges are read at the sweep's interval: every second here, so a live hold shows within a scrape or two.
    HOLD_SWEEP_INTERVAL_SECONDS: "1"
  })
  secret = (await fx.issueKey({ label: "metrics" })).secret
  const port = await freePort()
  prometheusUrl = `http://127.0.0.1:${port}`
  const config = Path.join(scratch, "prometheus.yml")
  Fs.writeFileSync(
    config,
    ["global:", "  scrape_interval: 1s", "scrape_configs:", "  - job_name: compute-exchange", "    static_configs:", `      - targets: ["${target}"]`, ""].join("\n")
  )
  prometheus = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${Path.join(scratch, "tsdb")}`, `--web.listen-address=127.0.0.1:${port}`], {
    stdio: ["ignore", "ignore", "pipe"]
  })
  let log = ""
  prometheus.stderr!.on("data", (chunk: Buffer) => void (log += chunk.toString("utf8")))
  await waitFor("Prometheus scraping the service", async () => {
    const response = await fetch(`${prometheusUrl}/api/v1/targets`).catch(() => undefined)
    if (response === undefined || !response.ok) return undefined
    const body = (await response.json()) as { data: { activeTargets: ReadonlyArray<{ health: string }> } }
    return body.data.activeTargets.length === 1 && body.data.activeTargets[0]!.health === "up" ? true : undefined
  }, 60_000, 200).catch(() => {
    throw new Error(`Prometheus never scraped the service; its log:\n${log}`)
  })
}, 300_000)

afterAll(async () => {
  prometheus?.kill("SIGTERM")
  await fx?.close()
  if (scratch !== undefined) Fs.rmSync(scratch, { recursive: true, force: true })
})

describe("inference metrics scraped by Debian's prometheus", () => {
  it("refusals count as HTTP answers only: 402 for want of credit, 401 for a bad key; no attempt, no inference, no settlement", async () => {
    const before = await baseline()
    const broke = await post(chat("metrics: no credit yet"))
    expect(broke.status, await broke.clone().text()).toBe(402)
    const unknown = await post(chat("metrics: bad key"), { key: "cx-not-a-key" })
    expect(unknown.status).toBe(401)
    await expectDeltas(before, [
      ["cx_http_requests_total", { route: CHAT, status: "402" }, 1],
      ["cx_http_requests_total", { route: CHAT, status: "401" }, 1]
    ])
    await fx.grant(10n * ONE_CREDIT)
  })

  it("a served chat completion: one completed request, its tokens and charge, one served attempt, one settlement", async () => {
    const before = await baseline()
    const response = await post(chat("metrics: one served request"))
    expect(response.status).toBe(200)
    const body = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }
    const charged = Number(response.headers.get("x-compute-used"))
    expect(charged).toBeGreaterThan(0)
    const after = await expectDeltas(before, [
      ["cx_inference_requests_total", { outcome: "completed" }, 1],
      ["cx_inference_duration_seconds_count", {}, 1],
      ["cx_upstream_attempts_total", { outcome: "served" }, 1],
      ["cx_upstream_attempts_total", {}, 1],
      ["cx_upstream_first_event_seconds_count", {}, 1],
      ["cx_ledger_settle_batch_size_sum", {}, 1],
      ["cx_http_requests_total", { route: CHAT, status: "200" }, 1]
    ])
    expect(sumOf(after, "cx_inference_requests_total", { model: MODEL, provider: "openai", outcome: "completed" }) - sumOf(before, "cx_inference_requests_total", { model: MODEL, provider: "openai", outcome: "completed" })).toBe(1)
    expect(sumOf(after, "cx_inference_tokens_total", { bucket: "input" }) - sumOf(before, "cx_inference_tokens_total", { bucket: "input" })).toBe(body.usage.prompt_tokens)
    expect(sumOf(after, "cx_inference_tokens_total", { bucket: "output" }) - sumOf(before, "cx_inference_tokens_total", { bucket: "output" })).toBe(body.usage.completion_tokens)
    // The charge is a float counter: exact to the wei at this size, when it is the first charge on the series.
    expect(sumOf(after, "cx_inference_charged_wei_total", { provider: "openai" }) - sumOf(before, "cx_inference_charged_wei_total", { provider: "openai" })).toBe(charged)
  })

  it("a vendor 500 made good by the next key: one status attempt and one cooldown on the failed key, one served on the other", async () => {
    await fx.fault({ model: "gpt-4.1", fault: "error500", count: 1 })
    const before = await baseline()
    const response = await post(chat("metrics: failover"))
    expect(response.status).toBe(200)
    const after = await expectDeltas(before, [
      ["cx_inference_requests_total", { outcome: "completed" }, 1],
      ["cx_inference_duration_seconds_count", {}, 1],
      ["cx_upstream_attempts_total", { outcome: "served" }, 1],
      ["cx_upstream_attempts_total", { outcome: "status" }, 1],
      ["cx_upstream_attempts_total", {}, 2],
      ["cx_upstream_first_event_seconds_count", {}, 1],
      ["cx_upstream_key_cooldowns_total", {}, 1],
      ["cx_ledger_settle_batch_size_sum", {}, 1],
      ["cx_http_requests_total", { route: CHAT, status: "200" }, 1]
    ])
    const failed = keyDeltas(before, after, "cx_upstream_attempts_total", { outcome: "status" })
    const served = keyDeltas(before, after, "cx_upstream_attempts_total", { outcome: "served" })
    const cooled = keyDeltas(before, after, "cx_upstream_key_cooldowns_total", { provider: "openai", reason: "serverError" })
    expect(Object.values(failed)).toEqual([1])
    expect(Object.keys(failed)[0]).toMatch(/^openai#\d$/)
    expect(cooled).toEqual(failed)
    expect(Object.values(served)).toEqual([1])
    expect(Object.keys(served)[0]).not.toBe(Object.keys(failed)[0])
  })

  it("a stream the client leaves while the vendor still sends is drained to its end: completed, not interrupted", async () => {
    await fx.fault({ model: "gpt-4.1", fault: "slow_stream", delayMs: 15 })
    const before = await baseline()
    const controller = new AbortController()
    const response = await post(chat("metrics: left but drained", { stream: true }), { signal: controller.signal })
    expect(response.status).toBe(200)
    await readFrames(response, isChatText)
    controller.abort()
    await expectDeltas(before, [
      ["cx_inference_requests_total", { outcome: "completed" }, 1],
      ["cx_inference_duration_seconds_count", {}, 1],
      ["cx_inference_first_event_seconds_count", {}, 1],
      ["cx_upstream_attempts_total", { outcome: "served" }, 1],
      ["cx_upstream_attempts_total", {}, 1],
      ["cx_upstream_first_event_seconds_count", {}, 1],
      ["cx_ledger_settle_batch_size_sum", {}, 1],
      ["cx_http_requests_total", { route: CHAT, status: "499" }, 1]
    ])
  })

  it("a stream the vendor stalls and the client leaves is cut: interrupted; its open hold shows in the holds gauges until then", async () => {
    await fx.fault({ model: "gpt-4.1", fault: "stall", afterChunks: 3 })
    try {
      const before = await baseline()
      expect([sumOf(before, "cx_ledger_holds_live"), sumOf(before, "cx_ledger_holds_reserved_wei")]).toEqual([0, 0])
      const controller = new AbortController()
      const response = await post(chat("metrics: cut", { stream: true }), { signal: controller.signal })
      expect(response.status).toBe(200)
      const { frames } = await readFrames(response, (_, all) => all.length === 3)
      expect(chatText(frames).length).toBeGreaterThan(0)
      expect(json(frames[0]!).choices[0].delta.role).toBe("assistant")
      const holds = await fx.query("SELECT amount_wei FROM holds WHERE released_at IS NULL AND settled_at IS NULL")
      expect(holds).toHaveLength(1)
      const reserved = Number(BigInt(holds[0].amount_wei))
      let seen: Series = new Map()
      await waitFor("the holds gauges to show the open hold", async () => {
        seen = await snapshot()
        return sumOf(seen, "cx_ledger_holds_live") === 1 && sumOf(seen, "cx_ledger_holds_reserved_wei") === reserved ? true : undefined
      }, 15_000, 200).catch(() => {
        throw new Error(`holds live ${sumOf(seen, "cx_ledger_holds_live")}, reserved ${sumOf(seen, "cx_ledger_holds_reserved_wei")} (expected 1, ${reserved})`)
      })
      controller.abort()
      await expectDeltas(before, [
        ["cx_inference_requests_total", { outcome: "interrupted" }, 1],
        ["cx_inference_duration_seconds_count", {}, 1],
        ["cx_inference_first_event_seconds_count", {}, 1],
        ["cx_upstream_attempts_total", { outcome: "served" }, 1],
        ["cx_upstream_attempts_total", {}, 1],
        ["cx_upstream_first_event_seconds_count", {}, 1],
        ["cx_ledger_settle_batch_size_sum", {}, 1],
        ["cx_http_requests_total", { route: CHAT, status: "499" }, 1]
      ])
      await waitFor("the holds gauges back at zero", async () => {
        seen = await snapshot()
        return sumOf(seen, "cx_ledger_holds_live") === 0 && sumOf(seen, "cx_ledger_holds_reserved_wei") === 0 ? true : undefined
      }, 15_000, 200)
    } finally {
      await fetch(`${fx.simulatorUrl}/__control/held`, { method: "DELETE" })
    }
  })

  it("the database pool's gauges and every label stay bounded: a key by its label, never an account or a secret", async () => {
    const series = await snapshot()
    const total = sumOf(series, "cx_db_pool_connections", { state: "total" })
    expect(total).toBeGreaterThanOrEqual(1)
    expect(sumOf(series, "cx_db_pool_connections", { state: "idle" })).toBeLessThanOrEqual(total)
    expect(series.has('cx_db_pool_connections{state="waiting"}')).toBe(true)
    const labels = new Map<string, Set<string>>()
    for (const key of series.keys()) {
      for (const [, name, value] of key.matchAll(/(\w+)="([^"]*)"/g)) labels.set(name!, (labels.get(name!) ?? new Set()).add(value!))
    }
    for (const name of labels.keys()) {
      expect(["method", "route", "status", "format", "model", "provider", "outcome", "bucket", "scope", "exported_job", "key", "reason", "state", "le", "otel_scope_name", "otel_scope_version"]).toContain(name)
    }
    for (const key of labels.get("key") ?? []) expect(key).toMatch(/^[a-z]+#\d+$/)
    const text = [...series.keys()].join("\n")
    expect(text).not.toContain(secret)
    expect(text).not.toContain(fx.cfId)
  })
})
