/** `npm run bench:exchange`: starting and stopping what it measures (simulator, bare proxy, PostgreSQL, the exchange; Portkey: exchangePortkey.ts). */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { makeClient, signInByWallet } from "../test/support/accounts.ts"
import type { PassThroughProxyReady, PassThroughProxyRequest } from "./passThroughProxy.ts"
import { exitedWithin, freePort, log, onCleanup, projectRoot, sleep } from "./common.ts"
import { BENCH_KEY_RPM, BENCH_KEY_TPM, CLIENT_IP, EXCHANGE_MODEL, GRANT_WEI, MAINTAINER_TOKEN, settings, stripAnsi } from "./exchangeSettings.ts"
import type { ServiceLog } from "./exchangeLog.ts"

// ---------------------------------------------------------------------------------------------- child processes

export interface Child {
  readonly name: string
  readonly pid: number
  readonly output: () => string
  readonly exitCode: () => number | string | null
  readonly stop: () => Promise<void>
}

/**
 * A child process whose output is kept (last 500 KB) and which is stopped on clean-up: SIGTERM, then after
 * `graceMs` SIGKILL to its process group (it runs in its own, so that whatever it started goes too). `onLine`, when
 * given, sees every complete line of its output, from its start, whichever stream it came on (none is lost to the
 * 500 KB window).
 */
export const startChild = (
  name: string,
  args: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv,
  graceMs: number,
  onLine?: (line: string, stream: "stdout" | "stderr") => void
): { child: ChildProcess; handle: Child } => {
  const child = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
  if (child.pid === undefined) throw new Error(`${name} could not be started`)
  let output = ""
  const partial = { stdout: "", stderr: "" }
  const keep = (stream: "stdout" | "stderr") => (data: Buffer) => {
    const text = data.toString("utf8")
    output += text
    if (output.length > 1_000_000) output = output.slice(-500_000)
    if (onLine === undefined) return
    const lines = (partial[stream] + text).split("\n")
    partial[stream] = lines.pop()!
    for (const line of lines) onLine(line, stream)
  }
  child.stdout!.on("data", keep("stdout"))
  child.stderr!.on("data", keep("stderr"))
  // A last line without its newline still counts once the process is gone.
  child.once("exit", () => {
    for (const stream of ["stdout", "stderr"] as const) if (partial[stream] !== "") onLine?.(partial[stream], stream)
  })
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

export const childFailure = (child: Child, message: string) =>
  new Error(`${message}\n--- ${child.name} output (last 4000 characters) ---\n${stripAnsi(child.output()).slice(-4000)}`)

/** The environment of the runner minus what would send a child somewhere else. */
export const baseEnv = (): NodeJS.ProcessEnv => {
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

export const startSimulatorProcess = async (): Promise<{ url: string; child: Child }> => {
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

export const startPassThroughProxy = async (upstream: string): Promise<{ url: string; child: Child }> => {
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

export const createDatabase = async (): Promise<string> => {
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

/** An account of the exchange the bench signed in, with an API key and granted credits. */
export interface BenchAccount {
  readonly cfId: string
  readonly apiKey: string
  /** Its spentWei when it was made (the baseline of the billing check). */
  readonly startSpentWei: bigint
  /** GET /v1/account with its session. */
  readonly account: () => Promise<{ spentWei: bigint; reservedWei: bigint; balanceWei: bigint }>
}

export interface Exchange extends BenchAccount {
  readonly baseUrl: string
  readonly child: Child
  /**
   * Another account made as the first one was (a wallet sign-in, an API key, GRANT_WEI of credits), the `index`th:
   * it signs in from its own client address (accountIp), since the exchange lets one address create at most 10 CF
   * IDs a day whatever RATE_LIMIT_ENABLED says.
   */
  readonly newAccount: (label: string, index: number) => Promise<BenchAccount>
}

/** The client address of the `index`th extra account (TEST-NET-2, 198.51.100.1-250: at most 10 accounts each). */
const accountIp = (index: number) => `198.51.100.${1 + (index % 250)}`

/**
 * Signs in a fresh wallet from `ip` (X-Forwarded-For; the exchange runs with TRUST_PROXY=true), issues it an API key
 * (`label`) and grants it GRANT_WEI: one account as the bench uses it.
 */
const makeAccount = async (client: ReturnType<typeof makeClient>, handle: Child, label: string, ip: string): Promise<BenchAccount> => {
  const signedIn = await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), ip)
  const cookie = signedIn.cookie
  const cfId = String(signedIn.me.cf_id)
  const issued = await client.call("POST", "/v1/keys", { label }, { cookie, ip })
  if (issued.status !== 201) throw childFailure(handle, `POST /v1/keys answered ${issued.status}: ${JSON.stringify(issued.body)}`)
  const apiKey = String(issued.body.secret)
  const granted = await client.call("POST", `/v1/admin/accounts/${cfId}/credits`, { amountWei: GRANT_WEI.toString() }, {
    headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
  })
  if (granted.status >= 300) throw childFailure(handle, `granting credits answered ${granted.status}: ${JSON.stringify(granted.body)}`)
  const account = async () => {
    const answer = await client.call("GET", "/v1/account", undefined, { cookie, ip })
    if (answer.status !== 200) throw childFailure(handle, `GET /v1/account answered ${answer.status}: ${JSON.stringify(answer.body)}`)
    return { spentWei: BigInt(answer.body.spentWei), reservedWei: BigInt(answer.body.reservedWei), balanceWei: BigInt(answer.body.balanceWei) }
  }
  const start = await account()
  if (start.balanceWei < GRANT_WEI) throw childFailure(handle, `account ${cfId}: balance ${start.balanceWei} wei after a grant of ${GRANT_WEI} wei`)
  return { cfId, apiKey, startSpentWei: start.spentWei, account }
}

/**
 * simulator/providers.yaml with every key's `rpm` and `tpm` raised to BENCH_KEY_RPM / BENCH_KEY_TPM, written to a
 * temporary file: the vendors' keys must never be what a load round runs out of.
 */
const benchProvidersFile = (): string => {
  const source = Fs.readFileSync(Path.join(projectRoot, "simulator/providers.yaml"), "utf8")
  const keys = source.match(/\brpm: \d+/g)?.length ?? 0
  if (keys === 0 || (source.match(/\btpm: \d+/g)?.length ?? 0) !== keys) throw new Error("simulator/providers.yaml: expected an rpm and a tpm on every key")
  const raised = source.replace(/\brpm: \d+/g, `rpm: ${BENCH_KEY_RPM}`).replace(/\btpm: \d+/g, `tpm: ${BENCH_KEY_TPM}`)
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-bench-providers-"))
  onCleanup("the temporary providers file", async () => Fs.rmSync(dir, { recursive: true, force: true }))
  const file = Path.join(dir, "providers.yaml")
  Fs.writeFileSync(file, raised)
  log(`providers: simulator/providers.yaml with each of its ${keys} keys at ${BENCH_KEY_RPM} RPM and ${BENCH_KEY_TPM} TPM (${file})`)
  return file
}

/**
 * The exchange on `databaseUrl`; `options.env` is added to its environment (bench/exchangeTracing.ts: the OTLP
 * variables), `options.name` names it in the bench's log ("the exchange" by default).
 */
export const startExchange = async (
  simulatorUrl: string,
  databaseUrl: string,
  serviceLog: ServiceLog,
  options: { readonly name?: string; readonly env?: NodeJS.ProcessEnv } = {}
): Promise<Exchange> => {
  const { handle, baseUrl, client } = await launchService(simulatorUrl, databaseUrl, serviceLog, options)
  log("signing in an account by wallet, issuing an API key, granting credits...")
  const first = await makeAccount(client, handle, "bench", CLIENT_IP)
  const start = await first.account()
  log(`account ${first.cfId}: balance ${start.balanceWei} wei, key ${first.apiKey.slice(0, 12)}...`)
  return { ...first, baseUrl, child: handle, newAccount: (label, index) => makeAccount(client, handle, label, accountIp(index)) }
}

/**
 * An exchange-only replica (`SERVICE_ROLES=exchange`, DESIGN.md section 14) on the full service's database: no chain,
 * no jobs, no pages. Its accounts are the full service's (it signs nobody in).
 */
export const startExchangeTier = async (simulatorUrl: string, databaseUrl: string, serviceLog: ServiceLog): Promise<{ readonly baseUrl: string; readonly child: Child }> => {
  const entry = settings.tierCompiled ? await buildService() : undefined
  const { handle, baseUrl } = await launchService(simulatorUrl, databaseUrl, serviceLog, {
    name: "the exchange-only replica",
    env: { SERVICE_ROLES: "exchange" },
    ...(entry === undefined ? {} : { entry })
  })
  return { baseUrl, child: handle }
}

/**
 * `npm run build` (compiled JavaScript in dist/, as a deployment runs it rather than through tsx, which holds its
 * compiler and every module's transform in memory); answers the service's compiled entry point.
 */
const buildService = async (): Promise<ReadonlyArray<string>> => {
  const started = Date.now()
  log("building the service for the exchange tier (npm run build: compiled JavaScript in dist/, as deployed)...")
  const build = spawn("npm", ["run", "build"], { cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  build.stdout.on("data", (data: Buffer) => (output += data.toString("utf8")))
  build.stderr.on("data", (data: Buffer) => (output += data.toString("utf8")))
  const ticker = setInterval(() => log(`  still building (${Math.round((Date.now() - started) / 1000)} s)...`), 30_000)
  const code = await new Promise<number | null>((resolve) => build.on("exit", resolve)).finally(() => clearInterval(ticker))
  if (code !== 0) throw new Error(`npm run build failed (${code}):\n${output.slice(-4_000)}`)
  log(`  built in ${((Date.now() - started) / 1000).toFixed(0)} s`)
  return ["dist/src/main.js"]
}

/** The service started on `databaseUrl` with the bench's settings, once it routes the bench's model. */
const launchService = async (
  simulatorUrl: string,
  databaseUrl: string,
  serviceLog: ServiceLog,
  options: { readonly name?: string; readonly env?: NodeJS.ProcessEnv; readonly entry?: ReadonlyArray<string> }
) => {
  const name = options.name ?? "the exchange"
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-bench-exchange-"))
  onCleanup("the temporary DATA_DIR", async () => Fs.rmSync(dataDir, { recursive: true, force: true }))
  const priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-bench-prices-"))
  onCleanup("the temporary PRICE_DATA_DIR", async () => Fs.rmSync(priceDir, { recursive: true, force: true }))
  Fs.cpSync(Path.join(projectRoot, "test/fixtures/exchange"), priceDir, { recursive: true })
  const providersFile = benchProvidersFile()
  const port = await freePort()
  const chainPort = await freePort()
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    DATABASE_URL: databaseUrl,
    // As a deployment on a shared database sets it (the service warns without it).
    AUTH_CODE_PEPPER: "bench-pepper-not-a-secret",
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: dataDir,
    EMBEDDED_CHAIN_PORT: String(chainPort),
    PROVIDERS_FILE: providersFile,
    SIMULATOR_URL: simulatorUrl,
    RATE_LIMIT_ENABLED: "false",
    LOG_LEVEL: settings.logLevel,
    LOG_FORMAT: "json",
    MAINTAINER_TOKEN,
    TRUST_PROXY: "true",
    PRICE_DATA_DIR: priceDir,
    PRICE_SCAN_INTERVAL_HOURS: "24",
    CHAIN_SYNC_INTERVAL_SECONDS: "0",
    ...options.env
  }
  const args = [
    ...(settings.cpuProfDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${Path.resolve(settings.cpuProfDir)}`]),
    ...(options.entry ?? ["--import", "tsx", "src/main.ts"])
  ]
  log(
    `starting ${name}... (node ${args.join(" ")}; PORT ${port}; DATA_DIR ${dataDir}; PRICE_DATA_DIR ${priceDir}; LOG_LEVEL=${settings.logLevel}; RATE_LIMIT_ENABLED=false` +
      `${Object.entries(options.env ?? {}).map(([key, value]) => `; ${key}=${value}`).join("")})`
  )
  const { handle } = startChild(name, args, env, 20_000, serviceLog.onLine)
  const baseUrl = `http://127.0.0.1:${port}`
  const client = makeClient(baseUrl)

  // Listening, then routable: the boot scan has loaded the fixture catalog into the snapshot.
  const since = Date.now()
  let listening = false
  for (;;) {
    if (handle.exitCode() !== null) throw childFailure(handle, `${name} exited (${handle.exitCode()}) before it was ready`)
    if (Date.now() - since > settings.startTimeoutMs) throw childFailure(handle, `${name} was not routable within ${settings.startTimeoutMs / 1000} s`)
    try {
      const models = await client.call("GET", "/v1/models")
      if (!listening) {
        listening = true
        log(`${name}: listening after ${((Date.now() - since) / 1000).toFixed(1)} s; waiting for the catalog...`)
      }
      const data = (models.body as { data?: Array<{ id?: unknown }> } | undefined)?.data
      if (models.status === 200 && Array.isArray(data) && data.length > 0) {
        if (!data.some((model) => model.id === EXCHANGE_MODEL)) throw childFailure(handle, `${EXCHANGE_MODEL} is not in GET /v1/models`)
        log(
          `${name}: routable after ${((Date.now() - since) / 1000).toFixed(1)} s (pid ${handle.pid}; ${data.length} models${handle.output().includes("ready at") ? "; logged ready" : ""})`
        )
        break
      }
    } catch (error) {
      if (error instanceof Error && error.message.includes("is not in GET /v1/models")) throw error
      // not listening yet
    }
    await sleep(listening ? 300 : 250)
  }
  return { handle, baseUrl, client }
}
