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
 *   RSS       VmRSS of each target's process after the runs (/proc/<pid>/status);
 *   mix       after the billing check: latency and TTFB at 1 connection over a rotating mix (a reasoning request,
 *             a tool call, a ~2000-token prefix the vendor caches, the plain request), BENCH_MIX_REQUESTS (200) each;
 *   floor     the two ledger statements DESIGN.md section 10 puts on every billed request, alone over bare pg on the
 *             bench's database (bench/exchangeLedgerFloor.ts): the bound under the targets that design allows.
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
 * Settings (environment): BENCH_LATENCY_REQUESTS (400), BENCH_LATENCY_WARMUP (50), BENCH_STREAM_REQUESTS (400), BENCH_MIX_REQUESTS (200),
 * BENCH_DURATION_SECONDS (5), BENCH_ROUNDS (3), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (32), BENCH_LOG_LEVEL
 * (WARN: the service's LOG_LEVEL), BENCH_START_TIMEOUT_SECONDS (240), BENCH_POSTGRES_URL
 * (postgres://postgres@127.0.0.1:5432/postgres: where the bench database is created), BENCH_PORTKEY (true; false
 * skips it), BENCH_CPU_PROF_DIR (unset; set: the service runs with `--cpu-prof` and writes its profile there on exit).
 */
import * as Os from "node:os"
import { cpuBusyPercent, log, sleep, runBench } from "./common.ts"
import { EXCHANGE_MODEL, SIMULATOR_KEY, TARGET_ADDED_P50_MS, TARGET_VS_BARE, TARGET_VS_PORTKEY, UPSTREAM_MODEL, settings } from "./exchangeSettings.ts"
import { floorLines, measureLedgerFloor } from "./exchangeLedgerFloor.ts"
import { type Exchange, createDatabase, startExchange, startPassThroughProxy, startPortkey, startSimulatorProcess } from "./exchangeTargets.ts"
import { type Percentiles, type Throughput, loadPhase, rssMb, sequential, sequentialPhase } from "./exchangeMeasure.ts"
import { type TargetKey, type Target, makeTarget, probe } from "./exchangeRequests.ts"

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

const mixTable = (targets: ReadonlyArray<Target>, latency: Results["latency"], ttfb: Results["ttfb"]) => {
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
        t === undefined ? "not measured" : ms(t.p50),
        isDirect || t === undefined ? "-" : signedMs(t.p50 - (directTtfb?.p50 ?? Number.NaN))
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

  // The mix runs after the billing check, whose arithmetic assumes one request shape.
  log(`the mix (reasoning, tools, a cached prefix, plain, in turn) at 1 connection, non-streaming and stream: true...`)
  const mixLatency = await sequentialPhase(running, false, settings.mixRequests, true)
  const mixTtfb = await sequentialPhase(streaming, true, settings.mixRequests, true)

  log("the ledger floor: DESIGN.md section 10's two statements per request (reserve, settle) alone, bare pg, on the bench's database...")
  const floor = await measureLedgerFloor(databaseUrl, settings.latencyRequests)

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
  log(`The mix (a reasoning request, a tool call, a ~2000-token cached prefix and the plain request, in turn; ${settings.mixRequests} of each kind of answer per target):`)
  log("")
  log(mixTable(targets, mixLatency, mixTtfb))
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
  log("")
  const bareP50 = results.latency.get("bare")?.p50
  const directP50 = results.latency.get("direct")?.p50
  const hopMs = bareP50 === undefined || directP50 === undefined ? undefined : bareP50 - directP50
  for (const line of floorLines(floor, (key) => results.throughput.get(key)?.requestsPerSecond, hopMs)) log(line)
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

await runBench("bench:exchange", main)
