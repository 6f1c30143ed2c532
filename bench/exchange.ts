/**
 * `npm run bench:exchange`: what the exchange adds to a chat completion, against the vendor simulator as upstream,
 * with PostgreSQL and billing on.
 *
 * Four targets answer the same request (a short OpenAI-format chat completion, `max_tokens` 16), each in its own
 * process, the bench being only the client:
 *   direct   the vendor simulator itself (`simulator/main.ts`, upstream model id `gpt-4.1`, a simulator key);
 *   bare     a `node:http` pass-through proxy in front of the simulator (bench/passThroughProxy.ts: keep-alive agent,
 *            the response piped back, no parsing);
 *   exchange the service (`src/main.ts`) on a fresh PostgreSQL database, routed to the simulator by
 *            simulator/providers.yaml, model `openai/gpt-4.1` of the test/fixtures/exchange catalog, an API key of an
 *            account with credits: every request reserves a hold and settles a charge;
 *   portkey  the open-source Portkey gateway (`@portkey-ai/gateway`, its own bin), routed to the simulator by its
 *            `x-portkey-provider` / `x-portkey-custom-host` headers. When it cannot start or answer, its row says
 *            "not measured: <why>" and the rest of the bench goes on.
 *
 * Phases, every target in turn within each round (never two at once), so that drift on the machine spreads over all:
 *   latency   1 connection, sequential non-streaming requests: BENCH_LATENCY_WARMUP unmeasured, then
 *             BENCH_LATENCY_REQUESTS measured in BENCH_ROUNDS chunks; p50/p99 of the whole request, and the CPU time
 *             the target's process used per request (/proc/<pid>/stat);
 *   TTFB      the same with `stream: true`, timed to the first body byte (the rest is read);
 *   load      autocannon, BENCH_CONNECTIONS (32) connections, non-streaming: a BENCH_WARMUP_SECONDS warm-up each,
 *             then BENCH_ROUNDS alternating rounds of BENCH_DURATION_SECONDS; the median round's req/s (2xx answers
 *             over the run's duration). After each exchange run the bench waits (up to 30 s) until the requests the
 *             run left in flight are settled, so that they do not overlap the next target's run;
 *   RSS       VmRSS of each target's process after the runs (/proc/<pid>/status).
 * Correctness: every response must be 2xx (and the probes a chat completion / an SSE stream ending in [DONE]); for
 * the exchange, the account's `spentWei` (GET /v1/account) must grow by at least one charge per 2xx answer.
 *
 * Prints a Markdown table and the targets with PASS/MISS: added p50 of the exchange <= 1 ms; exchange throughput >=
 * 2x Portkey's; exchange throughput >= 0.5x the bare proxy's.
 *
 * Exit status: 0 when everything was measured (a MISS is a finding, and so is a Portkey that cannot run); 1 when
 * PostgreSQL is unreachable, the simulator, the bare proxy or the exchange did not start or failed its probes, a
 * request to a measured target failed (connection error, timeout, non-2xx), billing did not happen, or anything else
 * went wrong. Every child process is stopped, the database dropped
 * and the temporary directories removed on every path out.
 *
 * Settings (environment): BENCH_LATENCY_REQUESTS (400), BENCH_LATENCY_WARMUP (50), BENCH_STREAM_REQUESTS (400),
 * BENCH_DURATION_SECONDS (5), BENCH_ROUNDS (3), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (32), BENCH_LOG_LEVEL
 * (WARN: the service's LOG_LEVEL), BENCH_START_TIMEOUT_SECONDS (240), BENCH_POSTGRES_URL
 * (postgres://postgres@127.0.0.1:5432/postgres: where the bench database is created), BENCH_PORTKEY (true; false
 * skips it), BENCH_CPU_PROF_DIR (unset; set: the service runs with `--cpu-prof` and writes its profile there on exit).
 */
import autocannon from "autocannon"
import { type ChildProcess, fork, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import { createRequire } from "node:module"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { makeClient, signInByWallet } from "../test/support/accounts.ts"
import type { PassThroughProxyReady, PassThroughProxyRequest } from "./passThroughProxy.ts"

const projectRoot = Path.resolve(import.meta.dirname, "..")

// ---------------------------------------------------------------------------------------------- settings

const positiveNumber = (name: string, fallback: number): number => {
  const text = process.env[name]
  if (text === undefined || text.trim() === "") return fallback
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${text}"`)
  return value
}

const flag = (name: string, fallback: boolean): boolean => {
  const text = process.env[name]?.trim().toLowerCase()
  if (text === undefined || text === "") return fallback
  if (["1", "true", "yes", "on"].includes(text)) return true
  if (["0", "false", "no", "off"].includes(text)) return false
  throw new Error(`${name} must be true or false, got "${process.env[name]}"`)
}

const settings = {
  latencyRequests: Math.round(positiveNumber("BENCH_LATENCY_REQUESTS", 400)),
  latencyWarmup: Math.round(positiveNumber("BENCH_LATENCY_WARMUP", 50)),
  streamRequests: Math.round(positiveNumber("BENCH_STREAM_REQUESTS", 400)),
  durationSeconds: positiveNumber("BENCH_DURATION_SECONDS", 5),
  rounds: Math.round(positiveNumber("BENCH_ROUNDS", 3)),
  warmupSeconds: positiveNumber("BENCH_WARMUP_SECONDS", 2),
  connections: Math.round(positiveNumber("BENCH_CONNECTIONS", 32)),
  logLevel: process.env["BENCH_LOG_LEVEL"]?.trim() || "WARN",
  startTimeoutMs: positiveNumber("BENCH_START_TIMEOUT_SECONDS", 240) * 1000,
  postgresUrl: process.env["BENCH_POSTGRES_URL"]?.trim() || "postgres://postgres@127.0.0.1:5432/postgres",
  /** BENCH_SYNCHRONOUS_COMMIT=off: the bench database commits without waiting for fsync (to separate disk from code). */
  syncCommitOff: process.env["BENCH_SYNCHRONOUS_COMMIT"]?.trim() === "off",
  portkey: flag("BENCH_PORTKEY", true),
  cpuProfDir: process.env["BENCH_CPU_PROF_DIR"]?.trim() || undefined
}

const TARGET_ADDED_P50_MS = 1
const TARGET_VS_PORTKEY = 2
const TARGET_VS_BARE = 0.5

const EXCHANGE_MODEL = "openai/gpt-4.1"
const UPSTREAM_MODEL = "gpt-4.1"
const SIMULATOR_KEY = "sim-bench-key"
const MAINTAINER_TOKEN = `bench-maintainer-${randomBytes(8).toString("hex")}`
const CLIENT_IP = "203.0.113.77"
/** Credits granted to the bench account: far more than any run spends (a request costs well under a cent). */
const GRANT_WEI = 10n ** 6n * 10n ** 18n

const requestBody = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    messages: [{ role: "user", content: "Say hello to the benchmark in one short sentence." }],
    max_tokens: 16,
    ...(stream ? { stream: true } : {})
  })

const log = (line: string) => console.log(line)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "\n")

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** Share of all cores' time spent busy over `ms` (to tell whether something else is running on the machine). */
const cpuBusyPercent = async (ms: number) => {
  const totals = () =>
    Os.cpus().reduce(
      (acc, cpu) => {
        const { idle, irq, nice, sys, user } = cpu.times
        return { idle: acc.idle + idle, all: acc.all + idle + irq + nice + sys + user }
      },
      { idle: 0, all: 0 }
    )
  const before = totals()
  await sleep(ms)
  const after = totals()
  const all = after.all - before.all
  return all <= 0 ? 0 : Math.round((100 * (all - (after.idle - before.idle))) / all)
}

// ---------------------------------------------------------------------------------------------- clean-up

const cleanups: Array<{ readonly name: string; readonly run: () => Promise<void> }> = []
const onCleanup = (name: string, run: () => Promise<void>) => cleanups.push({ name, run })

let cleaningUp: Promise<void> | undefined
const cleanUp = (): Promise<void> =>
  (cleaningUp ??= (async () => {
    for (const { name, run } of cleanups.splice(0).reverse()) {
      try {
        await run()
      } catch (error) {
        console.error(`clean-up of ${name} failed: ${String(error)}`)
      }
    }
  })())

/** Waits for a child to exit, up to `ms`; true when it did. */
const exitedWithin = (child: ChildProcess, exited: Promise<unknown>, ms: number) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(true)
    : Promise.race([exited.then(() => true), sleep(ms).then(() => false)])

// ---------------------------------------------------------------------------------------------- child processes

interface Child {
  readonly name: string
  readonly pid: number
  readonly output: () => string
  readonly exitCode: () => number | string | null
  readonly stop: () => Promise<void>
}

/**
 * A child process whose output is kept (last 500 KB) and which is stopped on clean-up: SIGTERM, then after
 * `graceMs` SIGKILL to its process group (it runs in its own, so that whatever it started goes too).
 */
const startChild = (name: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, graceMs: number): { child: ChildProcess; handle: Child } => {
  const child = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
  if (child.pid === undefined) throw new Error(`${name} could not be started`)
  let output = ""
  const keep = (data: Buffer) => {
    output += data.toString("utf8")
    if (output.length > 1_000_000) output = output.slice(-500_000)
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  let stopped: Promise<void> | undefined
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      log(`stopping ${name} (SIGTERM)...`)
      child.kill("SIGTERM")
      if (await exitedWithin(child, exited, graceMs)) return
      console.error(`${name} did not exit within ${graceMs / 1000} s of SIGTERM: killing its process group`)
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
      await exitedWithin(child, exited, 5_000)
    })())
  onCleanup(name, stop)
  return {
    child,
    handle: { name, pid: child.pid, output: () => output, exitCode: () => child.exitCode ?? child.signalCode, stop }
  }
}

const childFailure = (child: Child, message: string) =>
  new Error(`${message}\n--- ${child.name} output (last 4000 characters) ---\n${stripAnsi(child.output()).slice(-4000)}`)

/** The environment of the runner minus what would send a child somewhere else. */
const baseEnv = (): NodeJS.ProcessEnv => {
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
    "LOG_FORMAT",
    "PROVIDERS_FILE",
    "SIMULATOR_URL",
    "SIMULATOR_PORT",
    "SIMULATOR_HOST",
    "PRICE_DATA_DIR",
    "MAINTAINER_TOKEN",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "NODE_OPTIONS"
  ]) {
    delete env[name]
  }
  return env
}

// ---------------------------------------------------------------------------------------------- the simulator

const startSimulatorProcess = async (): Promise<{ url: string; child: Child }> => {
  log("starting the vendor simulator... (node --import tsx simulator/main.ts; SIMULATOR_PORT=0)")
  const { handle } = startChild("the simulator", ["--import", "tsx", "simulator/main.ts"], { ...baseEnv(), SIMULATOR_PORT: "0", SIMULATOR_HOST: "127.0.0.1" }, 5_000)
  const since = Date.now()
  for (;;) {
    const ready = /simulator ready at (http:\/\/[^\s]+)/.exec(handle.output())
    if (ready !== null) {
      log(`simulator ready at ${ready[1]} (pid ${handle.pid}, ${((Date.now() - since) / 1000).toFixed(1)} s)`)
      return { url: ready[1]!, child: handle }
    }
    if (handle.exitCode() !== null) throw childFailure(handle, `the simulator exited (${handle.exitCode()}) before it was ready`)
    if (Date.now() - since > 60_000) throw childFailure(handle, "the simulator was not ready within 60 s")
    await sleep(100)
  }
}

// ---------------------------------------------------------------------------------------------- the bare proxy

const startPassThroughProxy = async (upstream: string): Promise<{ url: string; child: Child }> => {
  log("starting the bare pass-through proxy... (bench/passThroughProxy.ts)")
  const child = fork(Path.join(import.meta.dirname, "passThroughProxy.ts"), [], {
    cwd: projectRoot,
    env: baseEnv(),
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  if (child.pid === undefined) throw new Error("the bare proxy could not be started")
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  let stopped: Promise<void> | undefined
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      log("stopping the bare proxy (SIGTERM)...")
      child.kill("SIGTERM")
      if (!(await exitedWithin(child, exited, 5_000))) {
        child.kill("SIGKILL")
        await exitedWithin(child, exited, 2_000)
      }
    })())
  onCleanup("the bare proxy", stop)
  const ready = new Promise<PassThroughProxyReady>((resolve, reject) => {
    child.once("message", (message) => resolve(message as PassThroughProxyReady))
    child.once("exit", (code) => reject(new Error(`the bare proxy exited (${code}) before listening`)))
    setTimeout(() => reject(new Error("the bare proxy did not listen within 30 s")), 30_000).unref()
  })
  const request: PassThroughProxyRequest = { upstream }
  child.send(request)
  const { port } = await ready
  log(`bare proxy listening on 127.0.0.1:${port} (pid ${child.pid})`)
  return {
    url: `http://127.0.0.1:${port}`,
    child: { name: "the bare proxy", pid: child.pid, output: () => "", exitCode: () => child.exitCode ?? child.signalCode, stop }
  }
}

// ---------------------------------------------------------------------------------------------- PostgreSQL

const createDatabase = async (): Promise<string> => {
  const admin = new URL(settings.postgresUrl)
  const name = `cx_bench_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  const withAdmin = async (f: (client: pg.Client) => Promise<unknown>) => {
    const client = new pg.Client({ connectionString: settings.postgresUrl, connectionTimeoutMillis: 5_000 })
    await client.connect()
    try {
      await f(client)
    } finally {
      await client.end()
    }
  }
  try {
    await withAdmin((client) => client.query(`CREATE DATABASE ${name}`))
    // A diagnostic, never the default: without the commit's fsync, what is left of the exchange's latency is its own.
    if (settings.syncCommitOff) await withAdmin((client) => client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`))
  } catch (error) {
    throw new Error(
      `PostgreSQL is unreachable or refused to create a database at ${admin.host} (${settings.postgresUrl.replace(/:[^:@/]*@/, ":***@")}): ` +
        `${error instanceof Error ? error.message : String(error)}. The exchange bench needs a PostgreSQL server (BENCH_POSTGRES_URL).`
    )
  }
  onCleanup(`database ${name}`, async () => {
    await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    log(`dropped database ${name}`)
  })
  const url = new URL(settings.postgresUrl)
  url.pathname = `/${name}`
  log(`created database ${name} on ${admin.host}`)
  return url.toString()
}

// ---------------------------------------------------------------------------------------------- the exchange

interface Exchange {
  readonly baseUrl: string
  readonly child: Child
  readonly apiKey: string
  readonly account: () => Promise<{ spentWei: bigint; reservedWei: bigint; balanceWei: bigint }>
}

const startExchange = async (simulatorUrl: string, databaseUrl: string): Promise<Exchange> => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-bench-exchange-"))
  onCleanup("the temporary DATA_DIR", async () => Fs.rmSync(dataDir, { recursive: true, force: true }))
  const priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-bench-prices-"))
  onCleanup("the temporary PRICE_DATA_DIR", async () => Fs.rmSync(priceDir, { recursive: true, force: true }))
  Fs.cpSync(Path.join(projectRoot, "test/fixtures/exchange"), priceDir, { recursive: true })
  const port = await freePort()
  const chainPort = await freePort()
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    DATABASE_URL: databaseUrl,
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: dataDir,
    EMBEDDED_CHAIN_PORT: String(chainPort),
    PROVIDERS_FILE: Path.join(projectRoot, "simulator/providers.yaml"),
    SIMULATOR_URL: simulatorUrl,
    RATE_LIMIT_ENABLED: "false",
    LOG_LEVEL: settings.logLevel,
    LOG_FORMAT: "json",
    MAINTAINER_TOKEN,
    TRUST_PROXY: "true",
    PRICE_DATA_DIR: priceDir,
    PRICE_SCAN_INTERVAL_HOURS: "24",
    CHAIN_SYNC_INTERVAL_SECONDS: "0"
  }
  const args = [...(settings.cpuProfDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${Path.resolve(settings.cpuProfDir)}`]), "--import", "tsx", "src/main.ts"]
  log(
    `starting the exchange... (node ${args.join(" ")}; PORT ${port}; DATA_DIR ${dataDir}; PRICE_DATA_DIR ${priceDir}; LOG_LEVEL=${settings.logLevel}; RATE_LIMIT_ENABLED=false)`
  )
  const { handle } = startChild("the exchange", args, env, 20_000)
  const baseUrl = `http://127.0.0.1:${port}`
  const client = makeClient(baseUrl)

  // Listening, then routable: the boot scan has loaded the fixture catalog into the snapshot.
  const since = Date.now()
  let listening = false
  for (;;) {
    if (handle.exitCode() !== null) throw childFailure(handle, `the exchange exited (${handle.exitCode()}) before it was ready`)
    if (Date.now() - since > settings.startTimeoutMs) throw childFailure(handle, `the exchange was not routable within ${settings.startTimeoutMs / 1000} s`)
    try {
      const models = await client.call("GET", "/v1/models")
      if (!listening) {
        listening = true
        log(`exchange listening after ${((Date.now() - since) / 1000).toFixed(1)} s; waiting for the catalog...`)
      }
      const data = (models.body as { data?: Array<{ id?: unknown }> } | undefined)?.data
      if (models.status === 200 && Array.isArray(data) && data.length > 0) {
        if (!data.some((model) => model.id === EXCHANGE_MODEL)) throw childFailure(handle, `${EXCHANGE_MODEL} is not in GET /v1/models`)
        log(
          `exchange routable after ${((Date.now() - since) / 1000).toFixed(1)} s (pid ${handle.pid}; ${data.length} models${handle.output().includes("ready at") ? "; logged ready" : ""})`
        )
        break
      }
    } catch (error) {
      if (error instanceof Error && error.message.includes("is not in GET /v1/models")) throw error
      // not listening yet
    }
    await sleep(listening ? 300 : 250)
  }

  log("signing in an account by wallet, issuing an API key, granting credits...")
  const signedIn = await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), CLIENT_IP)
  const cookie = signedIn.cookie
  const cfId = String(signedIn.me.cf_id)
  const issued = await client.call("POST", "/v1/keys", { label: "bench" }, { cookie, ip: CLIENT_IP })
  if (issued.status !== 201) throw childFailure(handle, `POST /v1/keys answered ${issued.status}: ${JSON.stringify(issued.body)}`)
  const apiKey = String(issued.body.secret)
  const granted = await client.call("POST", `/v1/admin/accounts/${cfId}/credits`, { amountWei: GRANT_WEI.toString() }, {
    headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
  })
  if (granted.status >= 300) throw childFailure(handle, `granting credits answered ${granted.status}: ${JSON.stringify(granted.body)}`)
  const account = async () => {
    const answer = await client.call("GET", "/v1/account", undefined, { cookie, ip: CLIENT_IP })
    if (answer.status !== 200) throw childFailure(handle, `GET /v1/account answered ${answer.status}: ${JSON.stringify(answer.body)}`)
    return { spentWei: BigInt(answer.body.spentWei), reservedWei: BigInt(answer.body.reservedWei), balanceWei: BigInt(answer.body.balanceWei) }
  }
  const start = await account()
  log(`account ${cfId}: balance ${start.balanceWei} wei, key ${apiKey.slice(0, 12)}...`)
  return { baseUrl, child: handle, apiKey, account }
}

// ---------------------------------------------------------------------------------------------- Portkey

/** The gateway's bin (build/start-server.js) from its package.json, or why there is none. */
const portkeyBin = (): string | { readonly reason: string } => {
  try {
    const require = createRequire(import.meta.url)
    const manifestPath = require.resolve("@portkey-ai/gateway/package.json")
    const manifest = JSON.parse(Fs.readFileSync(manifestPath, "utf8")) as { version?: string; bin?: string | Record<string, string> }
    const bin = typeof manifest.bin === "string" ? manifest.bin : Object.values(manifest.bin ?? {})[0]
    if (bin === undefined) return { reason: "@portkey-ai/gateway has no bin" }
    log(`Portkey gateway ${manifest.version ?? "?"}: ${Path.relative(projectRoot, Path.join(Path.dirname(manifestPath), bin))}`)
    return Path.join(Path.dirname(manifestPath), bin)
  } catch (error) {
    return { reason: `@portkey-ai/gateway is not installed (${error instanceof Error ? error.message.split("\n")[0] : String(error)})` }
  }
}

/** Starts the gateway on a free port (`--port=N --headless`) and waits until `GET /` answers; or says why not. */
const startPortkey = async (): Promise<{ url: string; child: Child } | { reason: string }> => {
  const bin = portkeyBin()
  if (typeof bin !== "string") return bin
  const port = await freePort()
  log(`starting the Portkey gateway... (node ${Path.relative(projectRoot, bin)} --port=${port} --headless)`)
  const { handle } = startChild("the Portkey gateway", [bin, `--port=${port}`, "--headless"], baseEnv(), 5_000)
  const url = `http://127.0.0.1:${port}`
  const since = Date.now()
  for (;;) {
    if (handle.exitCode() !== null) {
      const tail = stripAnsi(handle.output()).trim().split("\n").filter((line) => line.trim() !== "").slice(-3).join(" / ")
      return { reason: `the gateway exited (${handle.exitCode()}) at start: ${tail.slice(0, 300)}` }
    }
    if (Date.now() - since > 60_000) {
      await handle.stop()
      return { reason: "the gateway did not answer GET / within 60 s" }
    }
    try {
      const answer = await fetch(`${url}/`)
      await answer.arrayBuffer()
      if (answer.ok) {
        log(`Portkey gateway answering at ${url} (pid ${handle.pid}, ${((Date.now() - since) / 1000).toFixed(1)} s)`)
        return { url, child: handle }
      }
    } catch {
      // not listening yet
    }
    await sleep(250)
  }
}

// ---------------------------------------------------------------------------------------------- targets and requests

type TargetKey = "direct" | "bare" | "exchange" | "portkey"

interface Target {
  readonly key: TargetKey
  readonly label: string
  readonly origin: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: { readonly plain: string; readonly stream: string }
  readonly child: Child | undefined
  /** Set when the target could not be measured at all. */
  notMeasured: string | undefined
  /** Set when its streaming answers could not be measured. */
  streamNotMeasured: string | undefined
  /** A longer explanation for the report, when there is one. */
  note: string | undefined
  /** 2xx answers it gave the bench, by kind (for the billing check of the exchange). */
  readonly answered: { plain: number; stream: number }
}

const makeTarget = (key: TargetKey, label: string, origin: string, headers: Record<string, string>, model: string, child: Child | undefined): Target => ({
  key,
  label,
  origin,
  path: "/v1/chat/completions",
  headers: { "content-type": "application/json", ...headers },
  body: { plain: requestBody(model, false), stream: requestBody(model, true) },
  child,
  notMeasured: undefined,
  streamNotMeasured: undefined,
  note: undefined,
  answered: { plain: 0, stream: 0 }
})

interface Timed {
  readonly status: number
  readonly contentType: string
  /** From sending the request to the first byte of the body, in ms. */
  readonly ttfbMs: number
  /** From sending the request to the end of the body, in ms. */
  readonly totalMs: number
  readonly body: string
}

/** One request over `agent` with plain `node:http`, timed to the first body byte and to the end. */
const timedRequest = (agent: Http.Agent, target: Target, stream: boolean, keepBody: boolean): Promise<Timed> =>
  new Promise((resolve, reject) => {
    const url = new URL(target.path, target.origin)
    const payload = stream ? target.body.stream : target.body.plain
    const started = process.hrtime.bigint()
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6
    const request = Http.request(
      {
        agent,
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { ...target.headers, "content-length": String(Buffer.byteLength(payload)) }
      },
      (response) => {
        let ttfbMs = Number.NaN
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => {
          if (Number.isNaN(ttfbMs)) ttfbMs = elapsed()
          if (keepBody || (response.statusCode ?? 0) >= 300) chunks.push(chunk)
        })
        response.on("end", () => {
          const totalMs = elapsed()
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers["content-type"] ?? ""),
            ttfbMs: Number.isNaN(ttfbMs) ? totalMs : ttfbMs,
            totalMs,
            body: Buffer.concat(chunks).toString("utf8")
          })
        })
        response.on("error", reject)
      }
    )
    request.setTimeout(30_000, () => request.destroy(new Error("no answer within 30 s")))
    request.on("error", reject)
    request.end(payload)
  })

class RequestFailure extends Error {}

/** Checks one probe answer: a chat completion (JSON) or an SSE stream ending in [DONE]; the reason when it is not. */
const probeProblem = (answer: Timed, stream: boolean): string | undefined => {
  if (answer.status < 200 || answer.status >= 300) return `answered ${answer.status}: ${answer.body.slice(0, 200)}`
  if (stream) {
    if (!answer.contentType.startsWith("text/event-stream")) return `answered content-type "${answer.contentType}", not text/event-stream`
    if (!answer.body.includes("data: [DONE]")) return `the stream did not end in data: [DONE]: ${answer.body.slice(-200)}`
    if (!answer.body.includes("chat.completion.chunk")) return "the stream has no chat.completion.chunk"
    return undefined
  }
  try {
    const parsed = JSON.parse(answer.body) as { object?: unknown; choices?: Array<{ message?: { content?: unknown } }> }
    if (parsed.object !== "chat.completion" || typeof parsed.choices?.[0]?.message?.content !== "string") return `not a chat completion: ${answer.body.slice(0, 200)}`
  } catch {
    return `not JSON: ${answer.body.slice(0, 200)}`
  }
  return undefined
}

/** One request of each kind to `target`; throws for the targets that must work, marks Portkey "not measured". */
const probe = async (target: Target) => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    for (const stream of [false, true]) {
      let problem: string | undefined
      let answer: Timed | undefined
      try {
        answer = await timedRequest(agent, target, stream, true)
        problem = probeProblem(answer, stream)
      } catch (error) {
        problem = `request failed: ${error instanceof Error ? error.message : String(error)}`
      }
      if (problem === undefined) {
        if (stream) target.answered.stream++
        else target.answered.plain++
        log(`  ${target.label}: ${stream ? "stream" : "plain"} probe OK (${answer!.totalMs.toFixed(1)} ms, ${answer!.body.length} bytes)`)
        continue
      }
      if (target.key !== "portkey") throw new RequestFailure(`${target.label}: the ${stream ? "streaming" : "non-streaming"} probe ${problem}`)
      // Portkey: tell why, from its answer and its own log.
      await sleep(200)
      const logged = stripAnsi(target.child?.output() ?? "")
      const immutable = /TypeError: immutable/.test(logged)
      const status = /^answered (\d+)/.exec(problem)?.[1]
      const reason =
        immutable && status !== undefined
          ? `${stream ? "stream: true" : "a chat completion"} answered ${status} (gateway: "TypeError: immutable", Portkey-AI/gateway#1389)`
          : `${stream ? "stream: true" : "a chat completion"} ${problem.replace(/\s+/g, " ").slice(0, 160)}`
      if (immutable) {
        target.note =
          `${target.label}: ${stream ? "stream: true" : "a chat completion"} ${problem.replace(/\s+/g, " ").slice(0, 160)}; its log says "TypeError: immutable" from` +
          " responseService.updateHeaders: the gateway appends x-portkey-* headers to the upstream fetch Response, whose headers are immutable with" +
          " @hono/node-server newer than 1.14.2 (its dependency range ^1.3.3 installs the latest). Known: Portkey-AI/gateway#1389 (pinning @hono/node-server 1.14.2 avoids it)."
      }
      log(`  ${target.label}: ${stream ? "stream" : "plain"} probe FAILED: ${reason}`)
      if (stream) target.streamNotMeasured = reason
      else {
        target.notMeasured = reason
        return
      }
    }
  } finally {
    agent.destroy()
  }
}

// ---------------------------------------------------------------------------------------------- measuring

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

interface Percentiles {
  readonly p50: number
  readonly p99: number
  readonly samples: number
}

const percentiles = (values: ReadonlyArray<number>): Percentiles => {
  const sorted = Float64Array.from(values).sort()
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), samples: sorted.length }
}

/**
 * `count` sequential requests on one keep-alive connection (a fresh one, opened by an unmeasured first request),
 * each timed: the whole request, or for streams the first body byte. Any non-2xx or error throws.
 */
const sequential = async (target: Target, stream: boolean, count: number): Promise<Array<number>> => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  const samples: Array<number> = []
  try {
    for (let i = 0; i <= count; i++) {
      let answer: Timed
      try {
        answer = await timedRequest(agent, target, stream, false)
      } catch (error) {
        throw new RequestFailure(`${target.label}: a ${stream ? "streaming" : "non-streaming"} request failed: ${error instanceof Error ? error.message : String(error)}`)
      }
      if (answer.status < 200 || answer.status >= 300) {
        throw new RequestFailure(`${target.label}: a ${stream ? "streaming" : "non-streaming"} request answered ${answer.status}: ${answer.body.slice(0, 300)}`)
      }
      if (stream) target.answered.stream++
      else target.answered.plain++
      if (i > 0) samples.push(stream ? answer.ttfbMs : answer.totalMs)
    }
  } finally {
    agent.destroy()
  }
  return samples
}

/** Warm-up, then `total` measured requests per target in `settings.rounds` chunks, the targets taking turns. */
const sequentialPhase = async (
  targets: ReadonlyArray<Target>,
  stream: boolean,
  total: number
): Promise<Map<TargetKey, Percentiles & { readonly cpuMsPerRequest: number }>> => {
  const what = stream ? "stream TTFB" : "latency"
  const samples = new Map<TargetKey, Array<number>>(targets.map((target) => [target.key, []]))
  const cpu = new Map<TargetKey, number>(targets.map((target) => [target.key, 0]))
  for (const target of targets) {
    process.stdout.write(`  ${target.label}: warm-up ${settings.latencyWarmup} requests... `)
    await sequential(target, stream, settings.latencyWarmup)
    log("done")
  }
  const perRound = Math.ceil(total / settings.rounds)
  for (let round = 0; round < settings.rounds; round++) {
    const count = Math.min(perRound, total - round * perRound)
    if (count <= 0) break
    log(`  ${what} round ${round + 1}/${settings.rounds}: ${count} sequential requests per target`)
    for (const target of targets) {
      const cpuBefore = cpuMs(target.child!.pid)
      const taken = await sequential(target, stream, count)
      const used = cpuMs(target.child!.pid) - cpuBefore
      cpu.set(target.key, cpu.get(target.key)! + used)
      samples.get(target.key)!.push(...taken)
      const so = percentiles(taken)
      log(`    ${target.label}: p50 ${so.p50.toFixed(2)} ms, p99 ${so.p99.toFixed(2)} ms; its process used ${(used / (count + 1)).toFixed(2)} ms CPU per request`)
      checkAlive(target)
    }
  }
  const result = new Map<TargetKey, Percentiles & { readonly cpuMsPerRequest: number }>()
  for (const target of targets) {
    const all = percentiles(samples.get(target.key)!)
    // Each chunk also made one unmeasured request that opened its connection.
    const cpuMsPerRequest = cpu.get(target.key)! / (all.samples + settings.rounds)
    result.set(target.key, { ...all, cpuMsPerRequest })
    log(
      `  ${target.label} ${what}: p50 ${all.p50.toFixed(2)} ms, p99 ${all.p99.toFixed(2)} ms over ${all.samples} requests; ${cpuMsPerRequest.toFixed(2)} ms CPU per request`
    )
  }
  return result
}

const checkAlive = (target: Target) => {
  const child = target.child
  if (child !== undefined && child.exitCode() !== null) throw childFailure(child, `${target.label} exited (${child.exitCode()}) during the run`)
}

interface Throughput {
  readonly requestsPerSecond: number
  readonly ok: number
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  readonly statuses: string
}

const load = async (target: Target, seconds: number): Promise<Throughput> => {
  // autocannon's options, built apart so that the fields its bundled typing leaves out (body) pass.
  const options = {
    url: `${target.origin}${target.path}`,
    method: "POST",
    headers: target.headers,
    body: target.body.plain,
    connections: settings.connections,
    duration: seconds,
    timeout: 10
  }
  const result = await autocannon(options)
  target.answered.plain += result["2xx"]
  const statuses = Object.entries(result.statusCodeStats)
    .filter(([status]) => !status.startsWith("2"))
    .map(([status, { count }]) => `${status} x${count}`)
    .join(", ")
  return {
    // 2xx answers over the run's own duration: autocannon's per-second average counts non-2xx answers too, and it
    // rounds a slow target's few seconds badly.
    requestsPerSecond: result["2xx"] / Math.max(result.duration, 0.001),
    ok: result["2xx"],
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statuses
  }
}

/**
 * `after` runs after each of a target's runs (the exchange: until the requests abandoned at the run's end are done),
 * and says what it did, if anything.
 */
const loadPhase = async (targets: ReadonlyArray<Target>, after: (target: Target) => Promise<string | undefined>): Promise<Map<TargetKey, Throughput>> => {
  const rounds = new Map<TargetKey, Array<Throughput>>(targets.map((target) => [target.key, []]))
  const failures = new Map<TargetKey, Array<Throughput>>(targets.map((target) => [target.key, []]))
  for (let round = 0; round < settings.rounds; round++) {
    log(`  throughput round ${round + 1}/${settings.rounds}`)
    for (const target of targets) {
      process.stdout.write(`    ${target.label}: `)
      if (round === 0) {
        process.stdout.write(`warm-up ${settings.warmupSeconds} s, `)
        failures.get(target.key)!.push(await load(target, settings.warmupSeconds))
        const waited = await after(target)
        if (waited !== undefined) process.stdout.write(`(${waited}) `)
      }
      process.stdout.write(`measuring ${settings.durationSeconds} s... `)
      const measured = await load(target, settings.durationSeconds)
      rounds.get(target.key)!.push(measured)
      log(
        `${Math.round(measured.requestsPerSecond)} req/s (${measured.ok} 2xx; errors ${measured.errors}, timeouts ${measured.timeouts}, non-2xx ${measured.non2xx}${measured.statuses === "" ? "" : `: ${measured.statuses}`})`
      )
      checkAlive(target)
      const waited = await after(target)
      if (waited !== undefined) log(`      (${waited})`)
    }
  }
  const result = new Map<TargetKey, Throughput>()
  for (const target of targets) {
    const all = rounds.get(target.key)!
    const sorted = [...all].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
    const middle = sorted[Math.floor((sorted.length - 1) / 2)]!
    const every = [...all, ...failures.get(target.key)!]
    const sum = (pick: (t: Throughput) => number) => every.reduce((total, t) => total + pick(t), 0)
    result.set(target.key, {
      ...middle,
      errors: sum((t) => t.errors),
      timeouts: sum((t) => t.timeouts),
      non2xx: sum((t) => t.non2xx),
      statuses: every.map((t) => t.statuses).filter((s) => s !== "").join("; ")
    })
  }
  return result
}

/** VmRSS of a process in MB, from /proc (or `ps` where there is no /proc). */
const rssMb = async (pid: number): Promise<number> => {
  try {
    const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)
    if (kb !== null) return Number(kb[1]) / 1024
  } catch {
    // no /proc: ps below
  }
  const ps = spawn("ps", ["-o", "rss=", "-p", String(pid)], { stdio: ["ignore", "pipe", "ignore"] })
  let text = ""
  ps.stdout.on("data", (data: Buffer) => (text += data.toString("utf8")))
  await new Promise((resolve) => ps.once("exit", resolve))
  const kb = Number(text.trim())
  return Number.isFinite(kb) && kb > 0 ? kb / 1024 : Number.NaN
}

/** CPU time (user + system, every thread) a process has used so far, in ms; NaN where there is no /proc. */
const clockTicks = (() => {
  const answer = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" })
  const ticks = Number(answer.stdout?.trim())
  return Number.isFinite(ticks) && ticks > 0 ? ticks : 100
})()
const cpuMs = (pid: number): number => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The fields after the command name (which may hold spaces) start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
  } catch {
    return Number.NaN
  }
}

// ---------------------------------------------------------------------------------------------- billing

interface Billing {
  readonly perPlainWei: bigint
  readonly perStreamWei: bigint
  readonly spentBeforeWei: bigint
  readonly answeredBefore: { readonly plain: number; readonly stream: number }
}

/**
 * Until no hold is left on the account (every request settled or released), up to `ms`. A GET /v1/account that fails
 * meanwhile (the exchange answers 503 while its database pool is exhausted) is retried; `unavailable` counts them.
 */
const drained = async (exchange: Exchange, ms: number) => {
  const since = Date.now()
  let unavailable = 0
  let lastError: unknown
  for (;;) {
    try {
      const account = await exchange.account()
      if (account.reservedWei === 0n || Date.now() - since > ms) return { ...account, waitedMs: Date.now() - since, unavailable }
    } catch (error) {
      unavailable++
      lastError = error
      if (Date.now() - since > ms) throw lastError
    }
    await sleep(200)
  }
}

/** As `drained`, but a hold left after 30 s is a failure (used before any load, where nothing may be left). */
const settled = async (exchange: Exchange) => {
  const account = await drained(exchange, 30_000)
  if (account.reservedWei !== 0n) throw new Error(`holds still reserved 30 s after the last request: ${account.reservedWei} wei`)
  return account
}

/** The charge of one plain and one streaming request (all requests are alike, and the simulator deterministic). */
const measureCharges = async (exchange: Exchange, target: Target): Promise<Billing> => {
  const charge = async (stream: boolean) => {
    const before = await settled(exchange)
    await sequential(target, stream, 0) // one request, unmeasured
    const after = await settled(exchange)
    return after.spentWei - before.spentWei
  }
  const perPlainWei = await charge(false)
  const perStreamWei = await charge(true)
  log(`  one non-streaming request is charged ${perPlainWei} wei, one streaming request ${perStreamWei} wei`)
  if (perPlainWei <= 0n || perStreamWei <= 0n) throw new Error(`billing did not happen: spentWei grew by ${perPlainWei} (plain) and ${perStreamWei} (stream) wei`)
  const now = await settled(exchange)
  return { perPlainWei, perStreamWei, spentBeforeWei: now.spentWei, answeredBefore: { ...target.answered } }
}

// ---------------------------------------------------------------------------------------------- report

const ms = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "n/a" : value.toFixed(2))
const signedMs = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "n/a" : `${value >= 0 ? "+" : ""}${value.toFixed(2)}`)

interface Results {
  readonly latency: Map<TargetKey, Percentiles & { readonly cpuMsPerRequest: number }>
  readonly ttfb: Map<TargetKey, Percentiles & { readonly cpuMsPerRequest: number }>
  readonly throughput: Map<TargetKey, Throughput>
  readonly rss: Map<TargetKey, number>
}

const table = (targets: ReadonlyArray<Target>, results: Results) => {
  const direct = results.latency.get("direct")
  const directTtfb = results.ttfb.get("direct")
  const lines = [
    "| target | p50 ms | p99 ms | added p50 | added p99 | stream TTFB p50 | TTFB p99 | added TTFB p50 | req/s (32 conn) | RSS MB | CPU ms/req |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  lines[0] = lines[0]!.replace("32 conn", `${settings.connections} conn`)
  for (const target of targets) {
    if (target.notMeasured !== undefined) {
      lines.push(`| ${target.label} | not measured: ${target.notMeasured} | | | | | | | | | |`)
      continue
    }
    const latency = results.latency.get(target.key)
    const ttfb = results.ttfb.get(target.key)
    const throughput = results.throughput.get(target.key)
    const rss = results.rss.get(target.key)
    const isDirect = target.key === "direct"
    const streamCells =
      target.streamNotMeasured !== undefined
        ? [`not measured: ${target.streamNotMeasured}`, "", ""]
        : [ms(ttfb?.p50), ms(ttfb?.p99), isDirect ? "-" : signedMs((ttfb?.p50 ?? Number.NaN) - (directTtfb?.p50 ?? Number.NaN))]
    lines.push(
      `| ${[
        target.label,
        ms(latency?.p50),
        ms(latency?.p99),
        isDirect ? "-" : signedMs((latency?.p50 ?? Number.NaN) - (direct?.p50 ?? Number.NaN)),
        isDirect ? "-" : signedMs((latency?.p99 ?? Number.NaN) - (direct?.p99 ?? Number.NaN)),
        ...streamCells,
        throughput === undefined ? "n/a" : String(Math.round(throughput.requestsPerSecond)),
        rss === undefined || Number.isNaN(rss) ? "n/a" : rss.toFixed(0),
        ms(latency?.cpuMsPerRequest)
      ].join(" | ")} |`
    )
  }
  return lines.join("\n")
}

interface Verdict {
  readonly name: string
  readonly outcome: "PASS" | "MISS" | "not evaluated"
  readonly detail: string
}

const verdicts = (targets: ReadonlyArray<Target>, results: Results): Array<Verdict> => {
  const measured = (key: TargetKey) => targets.find((target) => target.key === key && target.notMeasured === undefined) !== undefined
  const out: Array<Verdict> = []
  const exchangeP50 = results.latency.get("exchange")?.p50
  const directP50 = results.latency.get("direct")?.p50
  if (exchangeP50 !== undefined && directP50 !== undefined) {
    const added = exchangeP50 - directP50
    out.push({
      name: `added p50 (exchange) <= ${TARGET_ADDED_P50_MS} ms`,
      outcome: added <= TARGET_ADDED_P50_MS ? "PASS" : "MISS",
      detail: `${added.toFixed(2)} ms${added <= TARGET_ADDED_P50_MS ? "" : ` (${(added - TARGET_ADDED_P50_MS).toFixed(2)} ms over, ${(added / TARGET_ADDED_P50_MS).toFixed(1)}x the target)`}`
    })
  }
  const rps = (key: TargetKey) => results.throughput.get(key)?.requestsPerSecond
  const exchangeRps = rps("exchange")
  const ratioVerdict = (name: string, other: TargetKey, factor: number, unmeasured: string | undefined) => {
    const otherRps = rps(other)
    if (exchangeRps === undefined || otherRps === undefined || !measured(other)) {
      out.push({ name, outcome: "not evaluated", detail: unmeasured ?? "no figure" })
      return
    }
    const ratio = exchangeRps / otherRps
    out.push({
      name,
      outcome: ratio >= factor ? "PASS" : "MISS",
      detail:
        `${Math.round(exchangeRps)} vs ${Math.round(otherRps)} req/s = ${ratio.toFixed(2)}x` +
        (ratio >= factor ? "" : ` (needs ${Math.round(factor * otherRps)} req/s: ${Math.round(factor * otherRps - exchangeRps)} req/s, ${Math.round(100 * (1 - ratio / factor))}% short)`)
    })
  }
  const portkey = targets.find((target) => target.key === "portkey")
  ratioVerdict(`throughput (exchange) >= ${TARGET_VS_PORTKEY}x Portkey's`, "portkey", TARGET_VS_PORTKEY, portkey?.notMeasured === undefined ? "Portkey skipped (BENCH_PORTKEY=false)" : `Portkey not measured: ${portkey.notMeasured}`)
  ratioVerdict(`throughput (exchange) >= ${TARGET_VS_BARE}x bare proxy's`, "bare", TARGET_VS_BARE, undefined)
  return out
}

// ---------------------------------------------------------------------------------------------- main

const main = async (): Promise<number> => {
  log(
    `bench:exchange: latency ${settings.latencyRequests} sequential requests per target (after ${settings.latencyWarmup} warm-up), stream TTFB ${settings.streamRequests},` +
      ` throughput ${settings.connections} connections (warm-up ${settings.warmupSeconds} s, then ${settings.rounds} alternating rounds of ${settings.durationSeconds} s, median round);` +
      ` service LOG_LEVEL=${settings.logLevel}, rate limits off; ${Os.cpus().length} cores, Node ${process.version}`
  )
  const busy = await cpuBusyPercent(2_000)
  log(`CPU busy before starting: ${busy}% over 2 s${busy > 10 ? " (other work on this machine skews the figures)" : ""}`)

  const databaseUrl = await createDatabase()
  const simulator = await startSimulatorProcess()
  const proxy = await startPassThroughProxy(simulator.url)
  const exchange = await startExchange(simulator.url, databaseUrl)
  const portkey = settings.portkey ? await startPortkey() : { reason: "skipped (BENCH_PORTKEY=false)" }

  const simHeaders = { authorization: `Bearer ${SIMULATOR_KEY}` }
  const targets: Array<Target> = [
    makeTarget("direct", "direct (simulator)", simulator.url, simHeaders, UPSTREAM_MODEL, simulator.child),
    makeTarget("bare", "bare proxy", proxy.url, simHeaders, UPSTREAM_MODEL, proxy.child),
    makeTarget("exchange", "exchange", exchange.baseUrl, { authorization: `Bearer ${exchange.apiKey}` }, EXCHANGE_MODEL, exchange.child),
    "reason" in portkey
      ? makeTarget("portkey", "Portkey", "http://127.0.0.1:1", {}, UPSTREAM_MODEL, undefined)
      : makeTarget(
          "portkey",
          "Portkey",
          portkey.url,
          { ...simHeaders, "x-portkey-provider": "openai", "x-portkey-custom-host": `${simulator.url}/v1` },
          UPSTREAM_MODEL,
          portkey.child
        )
  ]
  const portkeyTarget = targets[3]!
  if ("reason" in portkey) {
    portkeyTarget.notMeasured = portkey.reason
    log(`Portkey: not measured: ${portkey.reason}`)
  }

  log("probing every target (one non-streaming and one streaming request each)...")
  for (const target of targets) if (target.notMeasured === undefined) await probe(target)
  const exchangeTarget = targets[2]!
  log("measuring the exchange's charge per request...")
  const billing = await measureCharges(exchange, exchangeTarget)

  const running = targets.filter((target) => target.notMeasured === undefined)
  const streaming = running.filter((target) => target.streamNotMeasured === undefined)
  log(`latency at 1 connection, non-streaming (${running.map((t) => t.label).join(", ")})...`)
  const latency = await sequentialPhase(running, false, settings.latencyRequests)
  log(`time to first byte at 1 connection, stream: true (${streaming.map((t) => t.label).join(", ")})...`)
  const ttfb = await sequentialPhase(streaming, true, settings.streamRequests)
  log(`throughput at ${settings.connections} connections, non-streaming...`)
  const leftAfterRounds: Array<string> = []
  let unavailableWhileDraining = 0
  const throughput = await loadPhase(running, async (target) => {
    if (target.key !== "exchange") return undefined
    // Requests still in flight when autocannon stops keep running in the exchange (its settlement outlives the
    // client): the next run starts once they are done, so that they do not share the machine with it.
    const account = await drained(exchange, 30_000)
    const busy = account.unavailable === 0 ? "" : `; GET /v1/account answered 503 ${account.unavailable} times meanwhile`
    unavailableWhileDraining += account.unavailable
    if (account.reservedWei === 0n) return `exchange: every hold settled or released ${(account.waitedMs / 1000).toFixed(1)} s after the run${busy}`
    leftAfterRounds.push(`${account.reservedWei} wei`)
    return `exchange: ${account.reservedWei} wei still reserved ${(account.waitedMs / 1000).toFixed(1)} s after the run${busy}: going on`
  })

  const rss = new Map<TargetKey, number>()
  for (const target of running) rss.set(target.key, await rssMb(target.child!.pid))
  log(`RSS after the runs: ${running.map((t) => `${t.label} ${ms(rss.get(t.key))} MB`).join(", ")}`)

  log("checking the exchange's billing...")
  const after = await drained(exchange, 30_000)
  const leftReservedWei = after.reservedWei
  if (leftReservedWei !== 0n) log(`  ${leftReservedWei} wei still reserved 30 s after the last request (holds that were neither settled nor released)`)
  const plain = exchangeTarget.answered.plain - billing.answeredBefore.plain
  const stream = exchangeTarget.answered.stream - billing.answeredBefore.stream
  const expectedWei = BigInt(plain) * billing.perPlainWei + BigInt(stream) * billing.perStreamWei
  const spentWei = after.spentWei - billing.spentBeforeWei
  const billedAsPlain = Number(spentWei - BigInt(stream) * billing.perStreamWei) / Number(billing.perPlainWei)
  log(
    `  spentWei grew by ${spentWei} wei over ${plain} non-streaming and ${stream} streaming 2xx answers (expected at least ${expectedWei} wei);` +
      ` that pays for ${billedAsPlain.toFixed(1)} non-streaming requests, ${(billedAsPlain - plain).toFixed(1)} more than answered` +
      " (requests in flight when a load round stopped are still served and charged)"
  )
  // What the exchange logged at WARN and above (LOG_LEVEL), by message.
  const logged = new Map<string, number>()
  for (const line of exchange.child.output().split("\n")) {
    if (line.trim() === "") continue
    let message = line.slice(0, 160)
    try {
      const record = JSON.parse(line) as { message?: unknown; logLevel?: unknown; cause?: unknown }
      const cause = typeof record.cause === "string" ? `: ${record.cause.split("\n")[0]}` : ""
      message = `${String(record.logLevel)} ${String(record.message)}${cause}`
    } catch {
      // not a JSON record: the line itself
    }
    logged.set(message, (logged.get(message) ?? 0) + 1)
  }
  const exchangeLog = [...logged].map(([message, count]) => `${count} x ${message}`)
  const billingProblem =
    spentWei <= 0n ? "spentWei did not grow" : spentWei < expectedWei ? `spentWei grew by ${spentWei} wei, less than the ${expectedWei} wei of the answered requests` : undefined

  const results: Results = { latency, ttfb, throughput, rss }
  const portkeyNote = portkeyTarget.note ?? portkeyTarget.notMeasured ?? portkeyTarget.streamNotMeasured
  log("")
  log(
    `Exchange overhead, ${new Date().toISOString().slice(0, 10)}: ${Os.cpus().length} cores, Node ${process.version}; upstream: the vendor simulator in its own process;` +
      ` one request shape (chat completion, max_tokens 16, ${exchangeTarget.body.plain.length} bytes); latency and TTFB: 1 connection, ${settings.latencyRequests} / ${settings.streamRequests}` +
      ` sequential requests per target after ${settings.latencyWarmup} warm-up, in ${settings.rounds} alternating chunks; throughput: autocannon ${settings.connections} connections,` +
      ` ${settings.warmupSeconds} s warm-up, median of ${settings.rounds} alternating rounds of ${settings.durationSeconds} s; exchange on PostgreSQL with billing on (LOG_LEVEL=${settings.logLevel}, RATE_LIMIT_ENABLED=false).`
  )
  log("")
  log(table(targets, results))
  log("")
  log(
    "Added = the target's percentile minus the direct one's (ms). req/s = 2xx answers / run time of the median round. TTFB = first body byte of a `stream: true` answer. RSS = VmRSS of the target's own process after the runs;" +
      " CPU ms/req = CPU time (user + system, all threads) of the target's own process per request in the non-streaming latency phase" +
      " (the direct row is the simulator, which also served every other target; the exchange's row excludes PostgreSQL and its embedded chain)."
  )
  if (portkeyNote !== undefined) log(portkeyNote.startsWith(portkeyTarget.label) ? portkeyNote : `${portkeyTarget.label}: ${portkeyNote}`)
  log("")
  const outcomes = verdicts(targets, results)
  for (const verdict of outcomes) log(`- ${verdict.outcome}: ${verdict.name}: ${verdict.detail}`)
  const misses = outcomes.filter((verdict) => verdict.outcome === "MISS")
  log(misses.length === 0 ? "No target missed." : `MISS on ${misses.length} target(s) (a measurement: the exit status stays 0).`)
  log(`Billing: ${billingProblem === undefined ? "PASS" : `FAILED: ${billingProblem}`} (spentWei +${spentWei} wei for ${plain + stream} answered requests)`)
  if (unavailableWhileDraining > 0) {
    log(`GET /v1/account (session) answered 503 "database unreachable" ${unavailableWhileDraining} times while the exchange finished the requests abandoned at the end of load runs.`)
  }
  if (leftAfterRounds.length > 0 || leftReservedWei !== 0n) {
    log(
      `Holds: still reserved 30 s after a load round: ${leftAfterRounds.length === 0 ? "none" : leftAfterRounds.join(", ")}; after the last request: ${leftReservedWei} wei` +
        " (left to the hold sweeper, HOLD_TTL_SECONDS)"
    )
  }
  log(exchangeLog.length === 0 ? "The exchange logged nothing at WARN or above." : `The exchange logged (WARN and above):\n  ${exchangeLog.join("\n  ")}`)

  const failed = running.flatMap((target) => {
    const t = throughput.get(target.key)
    return t === undefined || t.errors + t.timeouts + t.non2xx === 0
      ? []
      : [`${target.label}: ${t.errors} errors, ${t.timeouts} timeouts, ${t.non2xx} non-2xx${t.statuses === "" ? "" : ` (${t.statuses})`}`]
  })
  if (failed.length > 0) console.error(`requests failed under load:\n  ${failed.join("\n  ")}`)
  if (billingProblem !== undefined) console.error(`billing check failed: ${billingProblem}`)
  return failed.length > 0 || billingProblem !== undefined ? 1 : 0
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping...`)
    void cleanUp().finally(() => process.exit(130))
  })
}

let status = 1
try {
  status = await main()
} catch (error) {
  console.error(`bench:exchange failed: ${error instanceof Error ? error.message : String(error)}`)
  status = 1
} finally {
  await cleanUp()
}
process.exit(status)
