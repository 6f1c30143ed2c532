/**
 * The metrics with real parts: two replicas of the service (processes, one database) with METRICS_PORT, Debian's
 * `prometheus` scraping both every second, and `promtool` checking the alert rules and a live exposition. The
 * counters move by exactly the requests sent, and the two replicas report apart (Prometheus's `instance` label).
 */
import { execFile, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixturesDir } from "./support/catalogFixtures.ts"
import { createMigratedDatabase, type TestDatabase } from "./support/database.ts"
import { waitFor } from "./support/polling.ts"
import { freePort } from "./support/ports.ts"
import { cleanEnv, projectRoot, type ServiceProcess, startService } from "./support/process.ts"

const run = promisify(execFile)
const PROMETHEUS = process.env["PROMETHEUS_PATH"] ?? "/usr/bin/prometheus"
const PROMTOOL = process.env["PROMTOOL_PATH"] ?? "/usr/bin/promtool"

interface Replica {
  readonly baseUrl: string
  readonly metricsUrl: string
  readonly target: string
  readonly process: ServiceProcess
}

let database: TestDatabase
let scratch: string
const replicas: Array<Replica> = []
let prometheus: ReturnType<typeof spawn> | undefined
let prometheusUrl = ""

const startReplica = async (name: string): Promise<Replica> => {
  const port = await freePort()
  const metricsPort = await freePort()
  const dataDir = Path.join(scratch, name)
  Fs.mkdirSync(dataDir)
  const service = startService(
    cleanEnv({
      DATABASE_URL: database.url,
      PORT: String(port),
      DATA_DIR: dataDir,
      EMBEDDED_CHAIN_PORT: String(await freePort()),
      PRICE_DATA_DIR: Path.join(scratch, "prices"),
      METRICS_PORT: String(metricsPort),
      TRUST_PROXY: "true",
      LOG_LEVEL: "INFO"
    })
  )
  replicas.push({ baseUrl: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, target: `127.0.0.1:${metricsPort}`, process: service })
  await service.waitForLog(/"ready at http:/, 240_000)
  return replicas.at(-1)!
}

/** Polls until `check` holds; on timeout the error says what was seen. */
const until = async (check: () => Promise<boolean>, seen: () => Promise<string>, ms = 20_000) => {
  await waitFor("the condition", async () => (await check()) || undefined, ms, 200).catch(async () => {
    throw new Error(`timed out after ${ms} ms: ${await seen()}`)
  })
}

/** One value of an instant query, summed over the series it matches; 0 when none does yet. */
const query = async (expression: string): Promise<number> => {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expression)}`)
  const body = (await response.json()) as { status: string; data: { result: ReadonlyArray<{ value: [number, string] }> } }
  expect(body.status).toBe("success")
  return body.data.result.reduce((sum, series) => sum + Number(series.value[1]), 0)
}

/** A counter's value as the replica exposes it now (0 before its first value), for the series with exactly these labels. */
const exposed = async (replica: Replica, name: string, labels: string): Promise<number> => {
  const text = await (await fetch(replica.metricsUrl)).text()
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
}

/** The value Prometheus holds once it has scraped what the replica exposes now: a baseline no earlier request moves. */
const caughtUp = async (replica: Replica, name: string, labels: string, expression: string): Promise<number> => {
  const now = await exposed(replica, name, labels)
  await until(async () => (await query(expression)) === now, async () => `${expression}: ${await query(expression)}, exposed ${now}`)
  return now
}

let visitor = 0
const get = (replica: Replica, path: string, init: RequestInit = {}) =>
  fetch(`${replica.baseUrl}${path}`, { ...init, headers: { "x-forwarded-for": `198.51.100.${(visitor += 1) % 250}`, ...(init.headers ?? {}) } })

beforeAll(async () => {
  scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-metrics-"))
  Fs.cpSync(fixturesDir, Path.join(scratch, "prices"), { recursive: true })
  database = await createMigratedDatabase()
  // One replica first (it loads the catalog and replays the fixtures' history), then the second on the same database.
  await startReplica("a")
  await startReplica("b")
  const port = await freePort()
  prometheusUrl = `http://127.0.0.1:${port}`
  const config = Path.join(scratch, "prometheus.yml")
  Fs.writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "rule_files:",
      `  - ${Path.join(projectRoot, "docs/ops/alerts.yml")}`,
      "scrape_configs:",
      "  - job_name: compute-exchange",
      "    static_configs:",
      `      - targets: [${replicas.map((r) => `"${r.target}"`).join(", ")}]`,
      ""
    ].join("\n")
  )
  prometheus = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${Path.join(scratch, "tsdb")}`, `--web.listen-address=127.0.0.1:${port}`], {
    stdio: ["ignore", "ignore", "pipe"]
  })
  let log = ""
  prometheus.stderr!.on("data", (chunk: Buffer) => void (log += chunk.toString("utf8")))
  await until(
    async () => {
      const response = await fetch(`${prometheusUrl}/api/v1/targets`).catch(() => undefined)
      if (response === undefined || !response.ok) return false
      const body = (await response.json()) as { data: { activeTargets: ReadonlyArray<{ health: string }> } }
      return body.data.activeTargets.length === 2 && body.data.activeTargets.every((t) => t.health === "up")
    },
    async () => `Prometheus scraping both replicas; its log:\n${log}`,
    60_000
  )
}, 600_000)

afterAll(async () => {
  prometheus?.kill("SIGTERM")
  await Promise.all(replicas.map((r) => r.process.stop("SIGTERM")))
  await database?.close()
  Fs.rmSync(scratch, { recursive: true, force: true })
})

describe("metrics scraped by Debian's prometheus", () => {
  it("the alert rules load: promtool checks them, and the server that scrapes the service evaluates them", async () => {
    const { stdout } = await run(PROMTOOL, ["check", "rules", Path.join(projectRoot, "docs/ops/alerts.yml")])
    expect(stdout).toMatch(/SUCCESS: 6 rules found/)
    const rules = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as { data: { groups: ReadonlyArray<{ rules: ReadonlyArray<{ name: string; health: string }> }> } }
    const loaded = rules.data.groups.flatMap((g) => g.rules)
    expect(loaded.map((r) => r.name).sort()).toEqual(["ChainSyncStale", "ExchangeErrorRatioHigh", "HoldsPilingUp", "IndexNotPublished", "JobNotSucceeding", "NoUpstreamKeyAvailable"])
  })

  it("a live exposition passes promtool check metrics, names cx_* metrics only by bounded labels, and is not on the public port", async () => {
    // A metric appears once it has a value: one answered request first.
    expect((await get(replicas[0]!, "/v1/oracle/health")).status).toBe(200)
    const text = await (await fetch(replicas[0]!.metricsUrl)).text()
    const checked = spawn(PROMTOOL, ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] })
    let out = ""
    checked.stdout!.on("data", (chunk: Buffer) => void (out += chunk.toString("utf8")))
    checked.stderr!.on("data", (chunk: Buffer) => void (out += chunk.toString("utf8")))
    checked.stdin!.end(text)
    const code = await new Promise<number | null>((resolve) => checked.once("exit", resolve))
    expect(code, out).toBe(0)
    expect(text).toMatch(/^# TYPE cx_http_requests_total counter$/m)
    expect(text).toMatch(/^# TYPE cx_http_request_duration_seconds histogram$/m)
    // The chain-sync and price-scan jobs ran at start on one of the replicas; the index has its latest revision.
    expect(text).toMatch(/^cx_index_latest_revision(\{[^}]*\})? \d+/m)
    // No account, key, e-mail or address appears among the labels.
    const labelNames = new Set([...text.matchAll(/^cx_\w+\{([^}]*)\}/gm)].flatMap((m) => [...m[1]!.matchAll(/(\w+)="/g)].map((l) => l[1]!)))
    for (const name of labelNames) expect(["method", "route", "status", "format", "model", "provider", "outcome", "bucket", "scope", "job", "key", "reason", "state", "le", "otel_scope_name", "otel_scope_version"]).toContain(name)
    // The database pool is sampled every 2 s from the start: its three states are there without any request.
    for (const state of ["total", "idle", "waiting"]) expect(text).toMatch(new RegExp(`^cx_db_pool_connections\\{[^}]*state="${state}"[^}]*\\} \\d+`, "m"))
    const onPublicPort = await get(replicas[0]!, "/metrics")
    expect(onPublicPort.status).toBe(404)
  })

  it("counters move by exactly the requests sent: answers, refusals and rate limits, per replica", async () => {
    const [a, b] = replicas as [Replica, Replica]
    const health = (replica: Replica) => `cx_http_requests_total{route="/v1/oracle/health",status="200",instance="${replica.target}"}`
    const unauthorized = `sum(cx_http_requests_total{route="/v1/chat/completions",status="401"})`
    const labels = 'method="GET",route="/v1/oracle/health",status="200"'
    const before = {
      a: await caughtUp(a, "cx_http_requests_total", labels, health(a)),
      b: await caughtUp(b, "cx_http_requests_total", labels, health(b)),
      unauthorized: await caughtUp(a, "cx_http_requests_total", 'method="POST",route="/v1/chat/completions",status="401"', unauthorized)
    }
    for (let i = 0; i < 7; i++) expect((await get(a, "/v1/oracle/health")).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await get(b, "/v1/oracle/health")).status).toBe(200)
    for (let i = 0; i < 2; i++) {
      const refused = await get(a, "/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "acme/big-1", messages: [{ role: "user", content: "hi" }] }) })
      expect(refused.status).toBe(401)
    }
    await until(
      async () => (await query(health(a))) === before.a + 7 && (await query(health(b))) === before.b + 3 && (await query(unauthorized)) === before.unauthorized + 2,
      async () => `a ${await query(health(a))} (from ${before.a}), b ${await query(health(b))} (from ${before.b}), 401 ${await query(unauthorized)} (from ${before.unauthorized})`
    )
    // The histogram counted the same requests as the counter.
    expect(await query(`cx_http_request_duration_seconds_count{route="/v1/oracle/health",status="200",instance="${a.target}"}`)).toBe(await query(health(a)))

    // The oracle's per-address limit (5 per second): a burst from one address is refused, and each refusal counted.
    const refusedBefore = await caughtUp(b, "cx_rate_limit_refusals_total", 'scope="oracle"', `sum(cx_rate_limit_refusals_total{scope="oracle",instance="${b.target}"})`)
    const statuses: Array<number> = []
    for (let i = 0; i < 8; i++) statuses.push((await fetch(`${b.baseUrl}/v1/oracle/health`, { headers: { "x-forwarded-for": "203.0.113.9" } })).status)
    const refusals = statuses.filter((s) => s === 429).length
    expect(refusals).toBeGreaterThan(0)
    await until(
      async () => (await query(`sum(cx_rate_limit_refusals_total{scope="oracle",instance="${b.target}"})`)) === refusedBefore + refusals,
      async () => `refusals ${await query(`sum(cx_rate_limit_refusals_total{scope="oracle",instance="${b.target}"})`)} (from ${refusedBefore}, sent ${refusals})`
    )
  })
})
