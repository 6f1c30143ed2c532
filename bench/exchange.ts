/**
 * `npm run bench:exchange`: what the exchange adds to a chat completion, against the vendor simulator as upstream,
 * with PostgreSQL and billing on.
 *
 * Four targets (and a fifth, the exchange with traces on) answer the same request (a short OpenAI-format chat completion, `max_tokens` 16), each in its own
 * process, the bench being only the client:
 *   direct   the vendor simulator itself (`simulator/main.ts`, upstream model id `gpt-4.1`, a simulator key);
 *   bare     a `node:http` pass-through proxy in front of the simulator (bench/passThroughProxy.ts: keep-alive agent,
 *            the response piped back, no parsing);
 *   exchange the service (`src/main.ts`) on a fresh PostgreSQL database, routed to the simulator by
 *            simulator/providers.yaml, model `openai/gpt-4.1` of the test/fixtures/exchange catalog, API keys of
 *            accounts with credits (bench/exchangeTargets.ts: each account a wallet sign-in from its own client
 *            address, a key, a grant): every request reserves a hold and settles a charge. One account serves every
 *            phase but one; BENCH_CONNECTIONS (32) more serve the many-accounts load. The exchange runs on
 *            simulator/providers.yaml with every key's RPM and TPM raised far above the bench's load
 *            (exchangeSettings.BENCH_KEY_RPM), so that no round runs out of upstream capacity (DESIGN.md section 10);
 *   portkey  the open-source Portkey gateway (`@portkey-ai/gateway`, its own bin), routed to the simulator by its
 *            `x-portkey-provider` / `x-portkey-custom-host` headers. Its streams need @hono/node-server 1.14.1, which
 *            package.json's `overrides` pin for it (from 1.14.2 on they answer 500, "TypeError: immutable",
 *            Portkey-AI/gateway#1389; bench/exchangePortkey.ts). When it cannot start or answer, its row says
 *            "not measured: <why>" (its stream cells alone when only its streams fail) and the bench goes on;
 *   exchange, traces on (bench/exchangeTracing.ts; BENCH_TRACING=false skips it) a second exchange process, started
 *            as the first one on a database of its own with an account of its own, with OTEL_EXPORTER_OTLP_ENDPOINT
 *            set to an OTLP/HTTP JSON sink the bench runs in its own process (it counts the spans it receives),
 *            OTEL_BSP_SCHEDULE_DELAY=1000 and the sampler's default ratio 1 (every request traced and exported). The
 *            exchange row is "traces off": it runs without the variable, its tracer disabled. Measured in the
 *            latency, TTFB and one-account load phases, each run right beside the exchange's (after it in the first,
 *            third, ... chunk and round, before it in the others), and printed as a row of the table and a "traces
 *            off vs on" block (added p50, throughput and CPU-per-request ratios, spans received per traced request),
 *            with where a request's time goes: the traced exchange's own spans over its latency-phase requests, per
 *            stage (bench/exchangeStages.ts: the request's server span, what lies outside Exchange.serve, planning,
 *            the reservation, the upstream call, the settlement, the SQL statements).
 *
 * Phases, every target in turn within each round (never two at once), so that drift on the machine spreads over all:
 *   latency   1 connection, sequential non-streaming requests: BENCH_LATENCY_WARMUP unmeasured, then
 *             BENCH_LATENCY_REQUESTS measured in BENCH_ROUNDS chunks; p50/p99 of the whole request, and the CPU time
 *             the target's process used per request (/proc/<pid>/stat);
 *   TTFB      the same with `stream: true`, timed to the first body byte (the rest is read);
 *   load      autocannon, BENCH_CONNECTIONS (32) connections, non-streaming: a BENCH_WARMUP_SECONDS warm-up each,
 *             then BENCH_ROUNDS alternating rounds of BENCH_DURATION_SECONDS; the median round's req/s (2xx answers
 *             over the run's duration). The exchange runs twice in each round: on ONE account (every connection
 *             sends the same key: its row serialises the ledger), then over as many ACCOUNTS as connections (one
 *             autocannon instance whose `setupClient` gives connection i account i's key, so the client and its 32
 *             concurrent connections are the same as on one account; bench/exchangeMeasure.ts loadAccounts). The
 *             references have no accounts: their many-accounts figure is their load figure. After each exchange run
 *             the bench waits (up to 30 s) until the requests the run left in flight are settled on every account it
 *             used, so that they do not overlap the next run;
 *   RSS       VmRSS of each target's process after the runs (/proc/<pid>/status);
 *   mix       latency and TTFB at 1 connection over a rotating mix (a reasoning request, a tool call, a ~2000-token
 *             prefix the vendor caches, the plain request), BENCH_MIX_REQUESTS (200) each;
 *   floor     the two ledger statements DESIGN.md section 10 puts on every billed request, alone over bare pg on the
 *             bench's database (bench/exchangeLedgerFloor.ts): the bound under the targets that design allows.
 * Responses (bench/exchangeResponses.ts): the exchange again over `POST /v1/responses` with the same model, prompt and
 * output cap (`store: false`, on an account of its own), in the latency, TTFB and load phases, each run beside
 * chat's exchange run (after it in the first, third, ... chunk and round, before it in the others, so that neither
 * always follows the other); and `store: true` in the latency phase only. Printed as rows beside chat's in the
 * table, and compared with chat's within the run's spread (a verdict per figure).
 * Correctness: every response must be 2xx (and the probes a chat completion / an SSE stream ending in [DONE]).
 * Billing (bench/exchangeBilling.ts), over every 2xx answer of every phase: each account's `spentWei` (GET
 * /v1/account) must have grown, since it was made, by at least the charge of each request shape (measured alone: the
 * plain and streaming request, and each of the mix's bodies) times the 2xx answers of that shape it got. The service's
 * output is read line by line over the whole run (bench/exchangeLog.ts): lines at WARN or above are counted.
 *
 * Prints a Markdown table (a column per load: one account, many accounts), the mix's table, and the issue's targets
 * for the exchange with PASS/MISS (issue 39's): added p50 at 1 connection <= 2 ms, non-streaming and for the stream's
 * TTFB; throughput at 32 connections on one account and over 32 accounts >= 1.5x Portkey's (with the ratio), the
 * 32-accounts figure >= the one-account figure; CPU per request (latency phase) <= 1.0x Portkey's; the RSS of an
 * exchange-only replica (the exchange tier, bench/exchangeTier.ts) <= 1.5x Portkey's (the full service's RSS as
 * information); billing PASS over every answered request; nothing logged at WARN or above
 * by the service. As INFO (no verdict): the one-account throughput over the bare proxy's (aim 0.5x). A target that
 * needs Portkey is "not evaluated" when Portkey was not measured.
 * Then what the ledger floor says of the targets. As INFO, traces on against off (the exchange row); a traced exchange
 * whose sink received no span fails the run.
 *
 * Exit status: 0 when everything was measured (a MISS is a finding, and so is a Portkey that cannot run); 1 when
 * PostgreSQL is unreachable, the simulator, the bare proxy or the exchange did not start or failed its probes, a
 * request to a measured target failed (connection error, timeout, non-2xx), billing did not happen or fell short,
 * the traced exchange's sink received no span, or anything else went wrong. Every child process is stopped, the database dropped and the temporary directories
 * removed on every path out.
 *
 * Settings (environment): BENCH_LATENCY_REQUESTS (400), BENCH_LATENCY_WARMUP (50), BENCH_STREAM_REQUESTS (400), BENCH_MIX_REQUESTS (200),
 * BENCH_DURATION_SECONDS (5), BENCH_ROUNDS (3), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (32: also the number of
 * accounts of the many-accounts load), BENCH_LOG_LEVEL (WARN: the service's LOG_LEVEL; above WARN the log verdict is
 * not evaluated), BENCH_START_TIMEOUT_SECONDS (240), BENCH_POSTGRES_URL
 * (postgres://postgres@127.0.0.1:5432/postgres: where the bench database is created), BENCH_PORTKEY (true; false
 * skips it), BENCH_TRACING (true; false skips the exchange with traces on), BENCH_CPU_PROF_DIR (unset; set: the
 * service runs with `--cpu-prof` and writes its profile there on exit), BENCH_TIER_COMPILED (true: the exchange tier runs
 * `npm run build`'s dist/src/main.js, as deployed; false: through tsx like the service).
 */
import * as Os from "node:os"
import { cpuBusyPercent, log, runBench } from "./common.ts"
import { EXCHANGE_MODEL, MAX_TOKENS, SIMULATOR_KEY, TARGET_RSS_VS_PORTKEY, UPSTREAM_MODEL, settings } from "./exchangeSettings.ts"
import { measureExchangeTier } from "./exchangeTier.ts"
import { floorLines, measureLedgerFloor } from "./exchangeLedgerFloor.ts"
import { type BenchAccount, createDatabase, startExchange, startPassThroughProxy, startSimulatorProcess } from "./exchangeTargets.ts"
import { PORTKEY_HONO_NODE_SERVER, startPortkey } from "./exchangePortkey.ts"
import { type LoadRun, load, loadAccounts, loadPhase, rssMb, sequentialPhase } from "./exchangeMeasure.ts"
import { type TargetKey, type Target, makeTarget, probe } from "./exchangeRequests.ts"
import { checkAccounts, checkMainAccount, drained, drainedAll, measureCharges, measureMixCharges } from "./exchangeBilling.ts"
import { makeServiceLog } from "./exchangeLog.ts"
import { type Results, type Verdict, mixTable, ms, table, verdicts } from "./exchangeReport.ts"
import { besideChat, checkResponsesAccount, checkStorage, makeResponsesTargets, measureResponsesCharges } from "./exchangeResponses.ts"
import { afterTracedLoad, besideOff, checkExported, checkTracedAccount, latencyStagesOf, measureTracedCharges, startTraced, tracesOffOn } from "./exchangeTracing.ts"

const main = async (): Promise<number> => {
  const n = settings.connections
  log(
    `bench:exchange: latency ${settings.latencyRequests} sequential requests per target (after ${settings.latencyWarmup} warm-up), stream TTFB ${settings.streamRequests},` +
      ` throughput ${n} connections on one account and over ${n} accounts (warm-up ${settings.warmupSeconds} s, then ${settings.rounds} alternating rounds of ${settings.durationSeconds} s, median round);` +
      ` service LOG_LEVEL=${settings.logLevel}, rate limits off; ${Os.cpus().length} cores, Node ${process.version}`
  )
  const busy = await cpuBusyPercent(2_000)
  log(`CPU busy before starting: ${busy}% over 2 s${busy > 10 ? " (other work on this machine skews the figures)" : ""}`)

  const databaseUrl = await createDatabase()
  const simulator = await startSimulatorProcess()
  const proxy = await startPassThroughProxy(simulator.url)
  const serviceLog = makeServiceLog()
  const exchange = await startExchange(simulator.url, databaseUrl, serviceLog)
  log(`making ${n} more accounts the same way, one per connection of the many-accounts load...`)
  const accounts: Array<BenchAccount> = []
  for (let i = 0; i < n; i++) accounts.push(await exchange.newAccount(`bench-${i + 1}`, i))
  const accountAnswered = accounts.map(() => 0)
  log("making one more account for the Responses phase (its billing apart from chat's)...")
  const responsesAccount = await exchange.newAccount("bench-responses", n)
  const portkey = settings.portkey ? await startPortkey() : { reason: "skipped (BENCH_PORTKEY=false)" }
  const traced = settings.tracing ? await startTraced(simulator.url) : undefined
  if (traced === undefined) log("traces on: skipped (BENCH_TRACING=false)")

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
  const responses = makeResponsesTargets(exchange.baseUrl, responsesAccount.apiKey, exchange.child)
  if ("reason" in portkey) {
    portkeyTarget.notMeasured = portkey.reason
    log(`Portkey: not measured: ${portkey.reason}`)
  }

  log("probing every target (one non-streaming and one streaming request each)...")
  for (const target of targets) if (target.notMeasured === undefined) await probe(target)
  await probe(responses.plain)
  await probe(responses.stored, [false])
  await checkStorage(responses.plain, false)
  await checkStorage(responses.stored, true)
  if (traced !== undefined) {
    await probe(traced.target)
    await checkExported(traced)
  }
  const exchangeTarget = targets[2]!
  log("measuring the exchange's charge per request...")
  const charges = await measureCharges(exchange, exchangeTarget)
  const responsesCharges = await measureResponsesCharges(responsesAccount, responses)
  if (traced !== undefined) await measureTracedCharges(traced)

  const running = targets.filter((target) => target.notMeasured === undefined)
  const streaming = running.filter((target) => target.streamNotMeasured === undefined)
  // The Responses runs take their turn beside chat's, so that the two see the same moment of the machine: after it
  // in even chunks and rounds (the first included), before it in odd ones, so that neither always follows the other.
  const besideExchange = <T extends { readonly key: string }>(list: ReadonlyArray<T>, extra: ReadonlyArray<T>, round = 0) =>
    list.flatMap((item) => (item.key !== "exchange" ? [item] : round % 2 === 0 ? [item, ...extra] : [...extra, item]))
  // The traced exchange, when there is one, right beside the exchange's own run the same way (exchangeTracing.ts).
  const latencyOrder = (chunk: number) => besideOff(besideExchange(running, [responses.plain, responses.stored], chunk), traced?.target, chunk)
  const streamOrder = (chunk: number) => besideOff(besideExchange(streaming, [responses.plain], chunk), traced?.target, chunk)
  const latencyTargets = latencyOrder(0)
  const streamTargets = streamOrder(0)
  log(`latency at 1 connection, non-streaming (${latencyTargets.map((t) => t.label).join(", ")})...`)
  const stagesBefore = traced?.sink.stages.snapshot()
  const latency = await sequentialPhase(latencyTargets, false, settings.latencyRequests, false, latencyOrder)
  const latencyStages = traced === undefined ? undefined : await latencyStagesOf(traced, stagesBefore!)
  log(`time to first byte at 1 connection, stream: true (${streamTargets.map((t) => t.label).join(", ")})...`)
  const ttfb = await sequentialPhase(streamTargets, true, settings.streamRequests, false, streamOrder)

  log(`throughput at ${n} connections, non-streaming: every target, and the exchange again over ${n} accounts (connection i sending account i's key)...`)
  const leftAfterRounds: Array<string> = []
  let unavailableWhileDraining = 0
  // Requests still in flight when autocannon stops keep running in the exchange (its settlement outlives the client):
  // the next run starts once they are done, so that they do not share the machine with it.
  const drain = async (which: string, wait: () => Promise<{ reservedWei: bigint; waitedMs: number; unavailable: number }>) => {
    const state = await wait()
    const busy = state.unavailable === 0 ? "" : `; GET /v1/account answered 503 ${state.unavailable} times meanwhile`
    unavailableWhileDraining += state.unavailable
    if (state.reservedWei === 0n) return `${which}: every hold settled or released ${(state.waitedMs / 1000).toFixed(1)} s after the run${busy}`
    leftAfterRounds.push(`${which} ${state.reservedWei} wei`)
    return `${which}: ${state.reservedWei} wei still reserved ${(state.waitedMs / 1000).toFixed(1)} s after the run${busy}: going on`
  }
  const keys = accounts.map((account) => account.apiKey)
  const runs: Array<LoadRun> = running.flatMap((target): Array<LoadRun> => {
    const one: LoadRun = {
      key: target.key,
      label: target.key === "exchange" ? "exchange (1 account)" : target.label,
      target,
      run: (seconds) => load(target, seconds),
      after: async () => (target.key === "exchange" ? drain("exchange", () => drained(exchange, 30_000)) : undefined)
    }
    if (target.key !== "exchange") return [one]
    const many: LoadRun = {
      key: "exchange-accounts",
      label: `exchange (${n} accounts)`,
      target,
      run: (seconds) => loadAccounts(target, keys, seconds, accountAnswered),
      after: () => drain(`exchange, ${n} accounts`, () => drainedAll(accounts, 30_000))
    }
    const overResponses: LoadRun = {
      key: "responses",
      label: "exchange, Responses (1 account, store: false)",
      target: responses.plain,
      run: (seconds) => load(responses.plain, seconds),
      after: () => drain("exchange, Responses", () => drained(responsesAccount, 30_000))
    }
    return [one, overResponses, many]
  })
  const tracedRun: LoadRun | undefined =
    traced === undefined
      ? undefined
      : { key: "exchange-traced", label: traced.target.label, target: traced.target, run: (seconds) => load(traced.target, seconds), after: () => afterTracedLoad(traced, drain) }
  const allRuns = besideOff(runs, tracedRun, 0)
  // As above: the Responses load run after chat's one-account run in even rounds, before it in odd ones; the traced
  // exchange right beside chat's one-account run the same way.
  const throughput = await loadPhase(allRuns, (round) =>
    besideOff(
      round % 2 === 0 ? runs : runs.flatMap((run) => (run.key === "responses" ? [] : run.key === "exchange" ? [runs.find((r) => r.key === "responses")!, run] : [run])),
      tracedRun,
      round
    )
  )

  const rss = new Map<TargetKey, number>()
  for (const target of running) rss.set(target.key, await rssMb(target.child!.pid))
  if (traced !== undefined) rss.set(traced.target.key, await rssMb(traced.exchange.child.pid))
  log(`RSS after the runs: ${running.map((t) => `${t.label} ${ms(rss.get(t.key))} MB`).join(", ")}`)
  const tier = await measureExchangeTier(simulator.url, databaseUrl, serviceLog, exchange, n + 1, charges)

  log(`checking the billing of the ${n} accounts...`)
  const manyAfter = await drainedAll(accounts, 30_000)
  const manyBilling = checkAccounts(accounts, manyAfter.states, accountAnswered, charges)
  for (const line of [...manyBilling.lines, ...manyBilling.problems]) log(`  ${line}`)

  log("checking the billing of the Responses account...")
  const responsesAfter = await drained(responsesAccount, 30_000)
  const responsesBilling = checkResponsesAccount(responsesAccount, responsesAfter.spentWei, responses, responsesCharges)
  for (const line of [...responsesBilling.lines, ...responsesBilling.problems]) log(`  ${line}`)
  const tracedBilling = traced === undefined ? { answered: 0, problems: [], lines: [] } : await checkTracedAccount(traced)
  for (const line of [...tracedBilling.lines, ...tracedBilling.problems]) log(`  ${line}`)

  log("measuring the charge of each of the mix's requests...")
  const mixCharges = await measureMixCharges(exchange, exchangeTarget)
  log(`the mix (reasoning, tools, a cached prefix, plain, in turn) at 1 connection, non-streaming and stream: true...`)
  const mixLatency = await sequentialPhase(running, false, settings.mixRequests, true)
  const mixTtfb = await sequentialPhase(streaming, true, settings.mixRequests, true)

  log("checking the billing of the first account (every phase but the many-accounts load)...")
  const after = await drained(exchange, 30_000)
  const leftReservedWei = after.reservedWei + manyAfter.reservedWei + responsesAfter.reservedWei
  if (leftReservedWei !== 0n) log(`  ${leftReservedWei} wei still reserved 30 s after the last request (holds that were neither settled nor released)`)
  const mainBilling = checkMainAccount(exchange, after, exchangeTarget, charges, mixCharges)
  for (const line of [...mainBilling.lines, ...mainBilling.problems]) log(`  ${line}`)
  const billing = {
    answered: mainBilling.answered + manyBilling.answered + responsesBilling.answered + tracedBilling.answered + tier.answered,
    problems: [...mainBilling.problems, ...manyBilling.problems, ...responsesBilling.problems, ...tracedBilling.problems, ...tier.problems]
  }

  log("the ledger floor: DESIGN.md section 10's two statements per request (reserve, settle) alone, bare pg, on the bench's database...")
  const floor = await measureLedgerFloor(databaseUrl, settings.latencyRequests)

  const results: Results = { latency, ttfb, throughput, rss }
  const portkeyNote = portkeyTarget.note ?? portkeyTarget.notMeasured ?? portkeyTarget.streamNotMeasured
  log("")
  log(
    `Exchange overhead, ${new Date().toISOString().slice(0, 10)}: ${Os.cpus().length} cores, Node ${process.version}; upstream: the vendor simulator in its own process;` +
      ` one request shape (chat completion, max_tokens 16, ${exchangeTarget.body.plain.length} bytes); latency and TTFB: 1 connection, ${settings.latencyRequests} / ${settings.streamRequests}` +
      ` sequential requests per target after ${settings.latencyWarmup} warm-up, in ${settings.rounds} alternating chunks; throughput: autocannon ${n} connections,` +
      ` ${settings.warmupSeconds} s warm-up, median of ${settings.rounds} alternating rounds of ${settings.durationSeconds} s, the exchange on one account and over ${n} (one per connection);` +
      ` exchange on PostgreSQL with billing on (LOG_LEVEL=${settings.logLevel}, RATE_LIMIT_ENABLED=false).`
  )
  log("")
  log(table(besideOff(besideExchange(targets, [responses.plain, responses.stored]), traced?.target, 0), results))
  log("")
  const responsesBeside = besideChat(results, n)
  log(
    `Responses beside chat (POST /v1/responses, the same model, prompt and max_output_tokens ${MAX_TOKENS}, store: false, on an account of its own; each phase beside chat's` +
      " in every chunk and round, after it in the first, third, ... and before it in the others; within chat's spread = no worse than chat's worst chunk, or round for req/s):"
  )
  log("")
  for (const line of responsesBeside.lines) log(line)
  log("")
  log(`The mix (a reasoning request, a tool call, a ~2000-token cached prefix and the plain request, in turn; ${settings.mixRequests} of each kind of answer per target):`)
  log("")
  log(mixTable(targets, mixLatency, mixTtfb))
  log("")
  const offOn = traced === undefined ? undefined : await tracesOffOn(traced, results, latencyStages)
  if (offOn !== undefined) {
    log(
      `Traces off vs on (off: the exchange row, OTEL_EXPORTER_OTLP_ENDPOINT unset, its tracer disabled: no exporter, no spans built; on: a second exchange process on a database of its own,` +
        ` ${Object.entries(traced!.env).map(([key, value]) => `${key}=${value}`).join(", ")} (the bench's in-process OTLP sink), sampler ratio 1: every request traced and exported;` +
        " the two beside each other in every chunk and round, on after off in the first, third, ... and before it in the others):"
    )
    log("")
    for (const line of offOn.lines) log(line)
    log("")
  }
  log(
    "Added = the target's percentile minus the direct one's (ms). req/s = 2xx answers / run time of the median round; `1 account`: every connection sends the same API key;" +
      ` \`${n} accounts\`: connection i sends account i's key (one autocannon instance, ${n} connections); the references have no accounts, so their ${n}-accounts figure is their` +
      " 1-account figure (`= n`). TTFB = first body byte of a `stream: true` answer. RSS = VmRSS of the target's own process after the runs;" +
      " CPU ms/req = CPU time (user + system, all threads) of the target's own process per request in the non-streaming latency phase" +
      " (the direct row is the simulator, which also served every other target; the exchange's row excludes PostgreSQL and its embedded chain)."
  )
  if (portkeyNote !== undefined) log(portkeyNote.startsWith(portkeyTarget.label) ? portkeyNote : `${portkeyTarget.label}: ${portkeyNote}`)
  if (!("reason" in portkey) && portkeyTarget.streamNotMeasured === undefined) {
    log(
      `${portkeyTarget.label}: streams measured with @hono/node-server ${PORTKEY_HONO_NODE_SERVER} (package.json overrides; later versions answer 500, Portkey-AI/gateway#1389).` +
        (portkey.pausesFirstChunk
          ? " Its stream TTFB includes the 25 ms its gateway waits before passing on the first chunk of every stream (readStream, src/handlers/streamHandler.ts): the gateway's own design, measured as it ships."
          : "")
    )
  }
  log("")
  const portkeyRss = results.rss.get("portkey")
  log("")
  log(
    `The exchange tier (SERVICE_ROLES=exchange, beside the service on its database, an account of its own): RSS ${tier.rssMb.toFixed(0)} MB` +
      ` against the full service's ${ms(results.rss.get("exchange"))} MB${portkeyRss === undefined ? "" : ` and Portkey's ${portkeyRss.toFixed(0)} MB (${(tier.rssMb / portkeyRss).toFixed(2)}x)`};` +
      ` latency p50 ${tier.latency.p50.toFixed(2)} ms, ${tier.latency.cpuMsPerRequest.toFixed(2)} ms CPU per request; ${tier.throughput.requestsPerSecond.toFixed(0)} req/s at ${settings.connections} connections (one run).`
  )
  const tierVerdict: Verdict = portkeyRss === undefined
    ? { name: `RSS of an exchange-only replica <= ${TARGET_RSS_VS_PORTKEY}x Portkey's`, outcome: "not evaluated", detail: "Portkey not measured" }
    : {
      name: `RSS of an exchange-only replica <= ${TARGET_RSS_VS_PORTKEY}x Portkey's`,
      outcome: tier.rssMb <= TARGET_RSS_VS_PORTKEY * portkeyRss ? "PASS" : "MISS",
      detail: `${tier.rssMb.toFixed(0)} MB vs ${portkeyRss.toFixed(0)} MB (${(tier.rssMb / portkeyRss).toFixed(2)}x)`
    }
  const outcomes = [...verdicts(targets, results, { billing, serviceLog }), tierVerdict, ...responsesBeside.verdicts, ...(offOn?.verdicts ?? [])]
  for (const verdict of outcomes) log(`- ${verdict.outcome}: ${verdict.name}: ${verdict.detail}`)
  log("")
  const bareP50 = results.latency.get("bare")?.p50
  const directP50 = results.latency.get("direct")?.p50
  const hopMs = bareP50 === undefined || directP50 === undefined ? undefined : bareP50 - directP50
  for (const line of floorLines(floor, (key) => results.throughput.get(key)?.requestsPerSecond, hopMs)) log(line)
  const misses = outcomes.filter((verdict) => verdict.outcome === "MISS")
  log(misses.length === 0 ? "No target missed." : `MISS on ${misses.length} target(s) (a measurement: the exit status stays 0 unless billing failed).`)
  log(`Billing: ${billing.problems.length === 0 ? "PASS" : `FAILED: ${billing.problems.join("; ")}`} (${billing.answered} answered requests on ${accounts.length + 1} accounts)`)
  if (unavailableWhileDraining > 0) {
    log(`GET /v1/account (session) answered 503 "database unreachable" ${unavailableWhileDraining} times while the exchange finished the requests abandoned at the end of load runs.`)
  }
  if (leftAfterRounds.length > 0 || leftReservedWei !== 0n) {
    log(
      `Holds: still reserved 30 s after a load round: ${leftAfterRounds.length === 0 ? "none" : leftAfterRounds.join(", ")}; after the last request: ${leftReservedWei} wei` +
        " (left to the hold sweeper, HOLD_TTL_SECONDS)"
    )
  }
  if (serviceLog.otherStdout() > 0) log(`The exchange also wrote ${serviceLog.otherStdout()} non-JSON line(s) on stdout (not counted as WARN).`)

  const failed = allRuns.flatMap((run) => {
    const t = throughput.get(run.key)
    return t === undefined || t.errors + t.timeouts + t.non2xx === 0
      ? []
      : [`${run.label}: ${t.errors} errors, ${t.timeouts} timeouts, ${t.non2xx} non-2xx${t.statuses === "" ? "" : ` (${t.statuses})`}`]
  })
  if (failed.length > 0) console.error(`requests failed under load:\n  ${failed.join("\n  ")}`)
  if (billing.problems.length > 0) console.error(`billing check failed: ${billing.problems.join("; ")}`)
  const tracingProblems = offOn?.problems ?? []
  if (tracingProblems.length > 0) console.error(`traces on: ${tracingProblems.join("; ")}`)
  return failed.length > 0 || billing.problems.length > 0 || tracingProblems.length > 0 ? 1 : 0
}

await runBench("bench:exchange", main)
