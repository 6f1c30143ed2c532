/**
 * `npm run bench:logs`: the console's request log and activity against their 200 ms target (docs/performance.md
 * "Console logs"). On a PostgreSQL database of its own (BENCH_POSTGRES_URL, default the local server; dropped at the
 * end) it starts the service, signs a user in, issues four keys, and seeds the account with 100,000 stored bills in
 * one INSERT ... SELECT generate_series (spread over 30 days in time order, six models, the four keys, a few fallbacks
 * and interruptions), then VACUUM ANALYZEs as autovacuum would (BENCH_LOGS_VACUUM=false: ANALYZE only). Each case is then read over real HTTP on localhost with the session cookie, as the
 * console reads it: warm-up reads, then BENCH_LOGS_RUNS (20) timed reads; wall time per response (the service sets no
 * Server-Timing header), reported as p50 / p95.
 *
 * Cases: the first page (50 rows); a page filtered by model; a page filtered by key; the page 50 pages deep (its
 * cursor found by following nextCursor from the first page); the 30-day activity by model; by member.
 * Settings: BENCH_LOGS_ROWS (100000), BENCH_LOGS_RUNS (20), BENCH_LOGS_VACUUM (true), BENCH_POSTGRES_URL, BENCH_LOG_LEVEL (WARN).
 */
import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { makeClient, signInByWallet } from "../test/support/accounts.ts"
import { cpuBusyPercent, flag, freePort, log, onCleanup, positiveNumber, sleep, runBench } from "./common.ts"
import { baseEnv, createDatabase, startChild } from "./exchangeTargets.ts"
import { MODELS, SEED_SQL } from "./logsSeed.ts"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const ROWS = Math.round(positiveNumber("BENCH_LOGS_ROWS", 100_000))
const vacuum = flag("BENCH_LOGS_VACUUM", true)
const RUNS = Math.round(positiveNumber("BENCH_LOGS_RUNS", 20))
const WARMUP = 3
const DEEP_PAGES = 50
const TARGET_MS = 200
const CLIENT_IP = "198.51.100.77"

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const startService = async (databaseUrl: string) => {
  const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-bench-logs-"))
  onCleanup("the temporary DATA_DIR", async () => Fs.rmSync(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    DATABASE_URL: databaseUrl,
    // As a deployment on a shared database sets it (the service warns without it).
    AUTH_CODE_PEPPER: "bench-pepper-not-a-secret",
    HOST: "127.0.0.1",
    PORT: String(port),
    DATA_DIR: dataDir,
    EMBEDDED_CHAIN_PORT: String(await freePort()),
    EXCHANGE_SIMULATOR: "off",
    RATE_LIMIT_ENABLED: "false",
    TRUST_PROXY: "true",
    LOG_LEVEL: process.env["BENCH_LOG_LEVEL"]?.trim() || "WARN",
    LOG_FORMAT: "json",
    PRICE_SCAN_INTERVAL_HOURS: "24",
    CHAIN_SYNC_INTERVAL_SECONDS: "0"
  }
  log(`[logs] starting the service on its own database (port ${port})...`)
  const { handle } = startChild("the service", ["--import", "tsx", "src/main.ts"], env, 20_000)
  const since = Date.now()
  const baseUrl = `http://127.0.0.1:${port}`
  for (;;) {
    if (handle.exitCode() !== null) throw new Error(`the service exited (${handle.exitCode()}):\n${handle.output().slice(-4000)}`)
    if (Date.now() - since > 240_000) throw new Error(`the service was not ready in 240 s:\n${handle.output().slice(-4000)}`)
    // Its "ready" line is an INFO log, below the bench's log level: the status route answering is the sign.
    const status = await fetch(`${baseUrl}/v1/status`).then((r) => r.status, () => 0)
    if (status === 200) break
    await sleep(500)
  }
  log(`[logs] service ready (${((Date.now() - since) / 1000).toFixed(1)} s)`)
  return baseUrl
}

/** 100,000 bills over the last 30 days, shaped as settlement writes them (usage, a two-leg bill, one attempt). */
const seed = async (databaseUrl: string, accountId: string, keys: ReadonlyArray<string>) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const started = Date.now()
    await client.query(SEED_SQL, [accountId, ROWS, keys, MODELS])
    // What autovacuum does to an append-only table in service (its insert threshold): statistics, and the visibility
    // map the activity's index-only scans rely on. BENCH_LOGS_VACUUM=false measures the table straight after the insert.
    await client.query(vacuum ? "VACUUM ANALYZE generations" : "ANALYZE generations")
    log(`[logs] seeded ${ROWS} bills over 30 days (${MODELS.length} models, ${keys.length} keys) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  } finally {
    await client.end()
  }
}

interface Case {
  readonly name: string
  readonly path: string
}

const main = async () => {
  const databaseUrl = await createDatabase()
  const baseUrl = await startService(databaseUrl)
  const client = makeClient(baseUrl)
  const { cookie, me } = await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), CLIENT_IP)
  const keys: Array<string> = []
  for (const label of ["web", "batch", "mobile", "ci"]) {
    const issued = await client.call("POST", "/v1/keys", { label }, { cookie, ip: CLIENT_IP })
    if (issued.status !== 201) throw new Error(`POST /v1/keys answered ${issued.status}: ${JSON.stringify(issued.body)}`)
    keys.push(issued.body.key.id as string)
  }
  const admin = new pg.Client({ connectionString: databaseUrl })
  await admin.connect()
  const accountId = (await admin.query("SELECT account_id::text AS id FROM api_keys WHERE id = $1", [keys[0]])).rows[0].id as string
  await admin.end()
  log(`[logs] signed in as ${me.cf_id as string} (account ${accountId}), keys ${keys.join(", ")}`)
  await seed(databaseUrl, accountId, keys)

  const get = async (path: string) => {
    const started = performance.now()
    const answer = await client.call("GET", path, undefined, { cookie, ip: CLIENT_IP })
    const ms = performance.now() - started
    if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`)
    return { ms, body: answer.body }
  }

  // The cursor 50 pages deep, found as the console finds it: following nextCursor from the first page.
  let cursor: string | null = null
  const walkStarted = performance.now()
  for (let page = 1; page < DEEP_PAGES; page++) {
    cursor = (await get(`/v1/generations?limit=50${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)).body.nextCursor
    if (cursor === null) throw new Error(`only ${page} pages`)
  }
  const walkMs = performance.now() - walkStarted
  log(`[logs] followed ${DEEP_PAGES - 1} cursors in ${walkMs.toFixed(0)} ms (${(walkMs / (DEEP_PAGES - 1)).toFixed(1)} ms a page)`)

  const cases: ReadonlyArray<Case> = [
    { name: "first page (50 rows)", path: "/v1/generations" },
    { name: "filtered page: model", path: `/v1/generations?model=${encodeURIComponent("anthropic/claude-sonnet-4.5")}` },
    { name: "filtered page: key", path: `/v1/generations?key=${keys[2]}` },
    { name: `deep page (${DEEP_PAGES} pages in)`, path: `/v1/generations?limit=50&cursor=${encodeURIComponent(cursor!)}` },
    { name: "activity, 30 days by model", path: "/v1/account/activity?days=30&by=model" },
    { name: "activity, 30 days by member", path: "/v1/account/activity?days=30&by=member" }
  ]
  log(`[logs] machine busy before measuring: ${await cpuBusyPercent(1000)} %`)
  const results: Array<{ name: string; rows: number; p50: number; p95: number; max: number }> = []
  for (const c of cases) {
    for (let i = 0; i < WARMUP; i++) await get(c.path)
    const times: Array<number> = []
    let rows = 0
    for (let i = 0; i < RUNS; i++) {
      const { body, ms } = await get(c.path)
      times.push(ms)
      rows = Array.isArray(body.data) ? body.data.length : body.series.length
    }
    const result = { name: c.name, rows, p50: percentile(times, 50), p95: percentile(times, 95), max: Math.max(...times) }
    results.push(result)
    log(`[logs] ${c.name}: p50 ${result.p50.toFixed(1)} ms, p95 ${result.p95.toFixed(1)} ms (${RUNS} runs, ${rows} rows)`)
  }

  console.log("")
  console.log(`${ROWS} bills over 30 days, one account${vacuum ? ", vacuumed" : ", not vacuumed"}; ${RUNS} timed reads each after ${WARMUP} warm-up reads; wall time over localhost, session cookie.`)
  console.log("")
  console.log(`| case | rows in answer | p50 | p95 | max | target (p95 <= ${TARGET_MS} ms) |`)
  console.log("|---|---:|---:|---:|---:|---|")
  for (const r of results) {
    console.log(`| ${r.name} | ${r.rows} | ${r.p50.toFixed(1)} ms | ${r.p95.toFixed(1)} ms | ${r.max.toFixed(1)} ms | ${r.p95 <= TARGET_MS ? "PASS" : "MISS"} |`)
  }
  return 0
}

await runBench("bench:logs", main)
