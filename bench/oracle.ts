/**
 * `npm run bench:oracle` (issue 5): read throughput of the public oracle endpoints against a bare `node:http`
 * server answering the same bytes.
 *
 * Starts the real service as its own process on embedded defaults (PGlite and the embedded anvil chain in a fresh
 * temporary DATA_DIR, free ports, rate limits off, LOG_LEVEL=WARN), waits for the history replay to finish, then for
 * each endpoint fetches the body once, starts a bare server in a child process that answers every request with those
 * bytes and that content-type, and runs autocannon against the service and the bare server in alternating rounds
 * (never both at once): a warm-up each, then BENCH_ROUNDS measured rounds per side, each side reported by its median
 * round. Prints a Markdown table and the targets (on /scu and /basket: at least 80% of the bare server's throughput,
 * p99 at most 10 ms) with PASS/MISS.
 *
 * Exit status: 0 when everything was measured (a MISS is a finding, not a failure); 1 when the service did not start,
 * any request failed (connection error, timeout, non-2xx), or anything else went wrong. Everything started here is
 * stopped and the temporary directory removed on every path out.
 *
 * Settings (environment): BENCH_DURATION_SECONDS (5, per round), BENCH_ROUNDS (3), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (10),
 * BENCH_LOG_LEVEL (WARN: the service's LOG_LEVEL), BENCH_START_TIMEOUT_SECONDS (240).
 */
import autocannon from "autocannon"
import { fork, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { BareServerReady, BareServerRequest } from "./bareServer.ts"
import { cpuBusyPercent, exitedWithin, freePort, log, onCleanup, positiveNumber, projectRoot, sleep, runBench } from "./common.ts"

// ---------------------------------------------------------------------------------------------- settings

const settings = {
  durationSeconds: positiveNumber("BENCH_DURATION_SECONDS", 5),
  rounds: Math.round(positiveNumber("BENCH_ROUNDS", 3)),
  warmupSeconds: positiveNumber("BENCH_WARMUP_SECONDS", 2),
  connections: Math.round(positiveNumber("BENCH_CONNECTIONS", 10)),
  logLevel: process.env["BENCH_LOG_LEVEL"]?.trim() || "WARN",
  startTimeoutMs: positiveNumber("BENCH_START_TIMEOUT_SECONDS", 240) * 1000
}

const ENDPOINTS = ["/v1/oracle/scu", "/v1/oracle/basket", "/v1/oracle/catalog", "/v1/oracle/history?granularity=daily"] as const
/** The endpoints the issue sets targets for. */
const TARGETED = new Set<string>(["/v1/oracle/scu", "/v1/oracle/basket"])
const TARGET_RATIO = 0.8
const TARGET_P99_MS = 10

// ---------------------------------------------------------------------------------------------- the service

interface Service {
  readonly baseUrl: string
  readonly output: () => string
  readonly exitCode: () => number | string | null
}

const startService = async (): Promise<Service> => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-bench-"))
  onCleanup("the temporary DATA_DIR", async () => Fs.rmSync(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const chainPort = await freePort()

  // The runner's environment minus anything that would point the service away from its embedded defaults.
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of [
    "DATABASE_URL",
    "RPC_URL",
    "REGISTRY_ADDRESS",
    "PUBLISHER_PRIVATE_KEY",
    "REDIS_URL",
    "PUBLIC_BASE_URL",
    "TRUST_PROXY",
    "HOST",
    "PORT",
    "DATA_DIR",
    "EMBEDDED_CHAIN_PORT",
    "LOG_LEVEL",
    "LOG_FORMAT"
  ]) {
    delete env[name]
  }
  Object.assign(env, {
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: dataDir,
    EMBEDDED_CHAIN_PORT: String(chainPort),
    RATE_LIMIT_ENABLED: "false",
    LOG_LEVEL: settings.logLevel,
    LOG_FORMAT: "json"
  })

  log(`starting the service... (node --import tsx src/main.ts; DATA_DIR ${dataDir}; PORT ${port}; EMBEDDED_CHAIN_PORT ${chainPort}; LOG_LEVEL=${settings.logLevel}; RATE_LIMIT_ENABLED=false)`)
  // Its own process group, so that a last-resort SIGKILL also reaches the anvil it starts.
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: projectRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let output = ""
  const keep = (data: Buffer) => {
    output += data.toString("utf8")
    if (output.length > 1_000_000) output = output.slice(-500_000)
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  onCleanup("the service", async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    log("stopping the service (SIGTERM)...")
    child.kill("SIGTERM")
    if (await exitedWithin(child, exited, 20_000)) {
      log(`service exited (${child.exitCode ?? child.signalCode})`)
      return
    }
    console.error("the service did not exit within 20 s of SIGTERM: killing its process group")
    try {
      process.kill(-child.pid!, "SIGKILL")
    } catch {
      child.kill("SIGKILL")
    }
    await exitedWithin(child, exited, 5_000)
  })
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    exitCode: () => child.exitCode ?? child.signalCode
  }
}

const serviceFailure = (service: Service, message: string) =>
  new Error(`${message}\n--- service output (last 4000 characters) ---\n${service.output().slice(-4000)}`)

/** Until `/v1/oracle/health` reports a revision >= 5 that has stopped changing, and `/v1/oracle/latest` answers 200. */
const waitForReplay = async (service: Service) => {
  const since = Date.now()
  const STABLE_MS = 3_000
  let listening = false
  let last: number | null = null
  let lastChangeAt = Date.now()
  let announcedWaiting = false
  for (;;) {
    if (service.exitCode() !== null) throw serviceFailure(service, `the service exited (${service.exitCode()}) before the history was replayed`)
    if (Date.now() - since > settings.startTimeoutMs) {
      throw serviceFailure(service, `the history replay did not finish within ${settings.startTimeoutMs / 1000} s (last revision seen: ${last})`)
    }
    let version: number | null = null
    try {
      const response = await fetch(`${service.baseUrl}/v1/oracle/health`)
      const health = (await response.json()) as { latestRevisionVersion?: unknown }
      if (!listening) {
        listening = true
        log(`service is listening after ${((Date.now() - since) / 1000).toFixed(1)} s`)
      }
      version = typeof health.latestRevisionVersion === "number" ? health.latestRevisionVersion : null
    } catch {
      // not listening yet
    }
    if (listening && !announcedWaiting) {
      announcedWaiting = true
      log("waiting for the history replay...")
    }
    if (version !== last) {
      if (version !== null) log(`  latest revision: ${version}`)
      last = version
      lastChangeAt = Date.now()
    } else if (version !== null && version >= 5 && Date.now() - lastChangeAt >= STABLE_MS) {
      const latest = await fetch(`${service.baseUrl}/v1/oracle/latest`)
      await latest.arrayBuffer()
      if (latest.status === 200) {
        log(`history replayed: revision ${version}, unchanged for ${STABLE_MS / 1000} s (${((Date.now() - since) / 1000).toFixed(1)} s after launch)`)
        return version
      }
    }
    await sleep(listening ? 500 : 250)
  }
}

// ---------------------------------------------------------------------------------------------- the bare server

interface BareServer {
  readonly baseUrl: string
  readonly stop: () => Promise<void>
}

const startBareServer = async (body: Buffer, contentType: string): Promise<BareServer> => {
  const child = fork(Path.join(import.meta.dirname, "bareServer.ts"), [], {
    cwd: projectRoot,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  let stopped: Promise<void> | undefined
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGTERM")
      if (!(await exitedWithin(child, exited, 5_000))) {
        child.kill("SIGKILL")
        await exitedWithin(child, exited, 2_000)
      }
    })())
  onCleanup("a bare server", stop)
  const ready = new Promise<BareServerReady>((resolve, reject) => {
    child.once("message", (message) => resolve(message as BareServerReady))
    child.once("exit", (code) => reject(new Error(`the bare server exited (${code}) before listening`)))
    setTimeout(() => reject(new Error("the bare server did not listen within 30 s")), 30_000).unref()
  })
  const request: BareServerRequest = { bodyBase64: body.toString("base64"), contentType }
  child.send(request)
  const { port } = await ready
  return { baseUrl: `http://127.0.0.1:${port}`, stop }
}

// ---------------------------------------------------------------------------------------------- measuring

interface Measurement {
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly total: number
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

const run = async (url: string, seconds: number, keepLatencies: boolean) => {
  const latencies: Array<number> = []
  const instance = autocannon({ url, connections: settings.connections, duration: seconds, timeout: 10 })
  // autocannon's own histogram has 1 ms resolution; each response's hrtime duration gives the fractions.
  if (keepLatencies) instance.on("response", (_client, _status, _bytes, responseTime) => latencies.push(responseTime))
  const result = await instance
  return { result, latencies }
}

const measure = async (label: string, url: string, warm: boolean): Promise<Measurement> => {
  process.stdout.write(`  ${label}: ${warm ? "" : `warm-up ${settings.warmupSeconds} s, `}`)
  const warmup = warm ? undefined : await run(url, settings.warmupSeconds, false)
  process.stdout.write(`measuring ${settings.durationSeconds} s... `)
  const { latencies, result } = await run(url, settings.durationSeconds, true)
  const sorted = Float64Array.from(latencies).sort()
  const measurement: Measurement = {
    requestsPerSecond: result.requests.average,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    total: result["2xx"] + result.non2xx,
    errors: result.errors + (warmup?.result.errors ?? 0),
    timeouts: result.timeouts + (warmup?.result.timeouts ?? 0),
    non2xx: result.non2xx + (warmup?.result.non2xx ?? 0)
  }
  log(
    `${Math.round(measurement.requestsPerSecond)} req/s, p50 ${measurement.p50Ms.toFixed(2)} ms, p99 ${measurement.p99Ms.toFixed(2)} ms` +
      ` (${measurement.total} responses; errors ${measurement.errors}, timeouts ${measurement.timeouts}, non-2xx ${measurement.non2xx})`
  )
  return measurement
}

/** The round with the median throughput (its latencies with it); failures of every round are kept. */
const median = (rounds: ReadonlyArray<Measurement>): Measurement => {
  const sorted = [...rounds].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
  const middle = sorted[Math.floor((sorted.length - 1) / 2)]!
  const sum = (pick: (m: Measurement) => number) => rounds.reduce((total, m) => total + pick(m), 0)
  return { ...middle, errors: sum((m) => m.errors), timeouts: sum((m) => m.timeouts), non2xx: sum((m) => m.non2xx) }
}

interface Row {
  readonly endpoint: string
  readonly bytes: number
  readonly service: Measurement
  readonly bare: Measurement
}

const fetchOnce = async (url: string) => {
  const response = await fetch(url)
  const body = Buffer.from(await response.arrayBuffer())
  return { status: response.status, body, contentType: response.headers.get("content-type") ?? "application/octet-stream", headers: response.headers }
}

const benchEndpoint = async (service: Service, endpoint: string): Promise<Row> => {
  const serviceUrl = `${service.baseUrl}${endpoint}`
  const sample = await fetchOnce(serviceUrl)
  if (sample.status !== 200) throw serviceFailure(service, `GET ${endpoint} answered ${sample.status}, expected 200`)
  log(`${endpoint}: ${sample.body.length} bytes, ${sample.contentType}`)

  const bare = await startBareServer(sample.body, sample.contentType)
  try {
    const check = await fetchOnce(`${bare.baseUrl}${endpoint}`)
    if (check.status !== 200 || !check.body.equals(sample.body) || check.contentType !== sample.contentType) {
      throw new Error(`the bare server does not answer ${endpoint}'s bytes and content-type`)
    }
    // Rounds alternate between the two (never both at once), so a burst of other work on the machine lands on one
    // round of one side rather than on a whole side; each side is reported by its median round.
    const serviceRounds: Array<Measurement> = []
    const bareRounds: Array<Measurement> = []
    for (let round = 0; round < settings.rounds; round++) {
      log(`  round ${round + 1}/${settings.rounds}`)
      serviceRounds.push(await measure("service", serviceUrl, round > 0))
      if (service.exitCode() !== null) throw serviceFailure(service, `the service exited (${service.exitCode()}) during the run`)
      bareRounds.push(await measure("bare   ", `${bare.baseUrl}${endpoint}`, round > 0))
    }
    return { endpoint, bytes: sample.body.length, service: median(serviceRounds), bare: median(bareRounds) }
  } finally {
    await bare.stop()
  }
}

// ---------------------------------------------------------------------------------------------- report

const ms = (value: number) => (Number.isNaN(value) ? "n/a" : `${value.toFixed(2)} ms`)

const verdict = (row: Row) => {
  if (!TARGETED.has(row.endpoint)) return "-"
  const misses: Array<string> = []
  if (row.service.requestsPerSecond < TARGET_RATIO * row.bare.requestsPerSecond) misses.push("throughput")
  if (!(row.service.p99Ms <= TARGET_P99_MS)) misses.push("p99")
  return misses.length === 0 ? "PASS" : `MISS (${misses.join(", ")})`
}

const table = (rows: ReadonlyArray<Row>) =>
  [
    "| endpoint | body | service req/s | bare req/s | ratio | service p50 | p99 | bare p50 | p99 | target |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ...rows.map((row) =>
      [
        `\`${row.endpoint.replace("/v1/oracle", "")}\``,
        `${(row.bytes / 1024).toFixed(1)} KiB`,
        Math.round(row.service.requestsPerSecond),
        Math.round(row.bare.requestsPerSecond),
        `${Math.round((100 * row.service.requestsPerSecond) / row.bare.requestsPerSecond)}%`,
        ms(row.service.p50Ms),
        ms(row.service.p99Ms),
        ms(row.bare.p50Ms),
        ms(row.bare.p99Ms),
        verdict(row)
      ].join(" | ")
    ).map((line) => `| ${line} |`)
  ].join("\n")

// ---------------------------------------------------------------------------------------------- main

const main = async (): Promise<number> => {
  log(
    `bench:oracle: ${settings.connections} connections, warm-up ${settings.warmupSeconds} s then ${settings.rounds} rounds of ${settings.durationSeconds} s,` +
      ` service and bare server alternating (the median round of each is reported); service LOG_LEVEL=${settings.logLevel}, rate limits off; ${Os.cpus().length} cores, Node ${process.version}`
  )
  const busy = await cpuBusyPercent(2_000)
  log(`CPU busy before starting: ${busy}% over 2 s${busy > 10 ? " (other work on this machine skews the figures)" : ""}`)
  const service = await startService()
  const revision = await waitForReplay(service)

  const rows: Array<Row> = []
  for (const endpoint of ENDPOINTS) rows.push(await benchEndpoint(service, endpoint))

  log("")
  log(
    `Oracle read throughput, ${new Date().toISOString().slice(0, 10)}: ${Os.cpus().length} cores, Node ${process.version}, autocannon ${settings.connections} connections,` +
      ` ${settings.warmupSeconds} s warm-up, then ${settings.rounds} alternating rounds of ${settings.durationSeconds} s (median round), service on embedded defaults at revision ${revision}` +
      ` (LOG_LEVEL=${settings.logLevel}, RATE_LIMIT_ENABLED=false); bare = node:http answering the same bytes and content-type in its own process.`
  )
  log("")
  log(table(rows))
  log("")
  log(
    `Targets (/scu and /basket): service throughput >= ${TARGET_RATIO * 100}% of the bare server's, and service p99 <= ${TARGET_P99_MS} ms.` +
      " Latencies are per response (autocannon's hrtime), percentiles over the median round."
  )
  const misses = rows.filter((row) => verdict(row).startsWith("MISS"))
  log(misses.length === 0 ? "All targets met." : `MISS on ${misses.map((row) => row.endpoint).join(", ")} (a measurement: the exit status stays 0).`)

  const failed = rows.flatMap((row) =>
    (
      [
        ["service", row.service],
        ["bare", row.bare]
      ] as const
    )
      .filter(([, m]) => m.errors + m.timeouts + m.non2xx > 0)
      .map(([who, m]) => `${row.endpoint} (${who}): ${m.errors} errors, ${m.timeouts} timeouts, ${m.non2xx} non-2xx`)
  )
  if (failed.length > 0) {
    console.error(`requests failed:\n  ${failed.join("\n  ")}`)
    return 1
  }
  return 0
}

await runBench("bench:oracle", main)
