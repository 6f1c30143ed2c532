/** `npm run bench:exchange`: latency, time to first byte, throughput and process figures of one target. */
import autocannon, { type Result } from "autocannon"
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import { log } from "./common.ts"
import { settings } from "./exchangeSettings.ts"
import { childFailure } from "./exchangeTargets.ts"
import { RequestFailure, type Target, type TargetKey, type Timed, timedRequest } from "./exchangeRequests.ts"

// ---------------------------------------------------------------------------------------------- measuring

export const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

export interface Percentiles {
  readonly p50: number
  readonly p99: number
  readonly samples: number
}

export const percentiles = (values: ReadonlyArray<number>): Percentiles => {
  const sorted = Float64Array.from(values).sort()
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), samples: sorted.length }
}

/**
 * `count` sequential requests on one keep-alive connection (a fresh one, opened by an unmeasured first request),
 * each timed: the whole request, or for streams the first body byte. Any non-2xx or error throws.
 */
export const sequential = async (target: Target, stream: boolean, count: number, mix = false): Promise<Array<number>> => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  const samples: Array<number> = []
  try {
    for (let i = 0; i <= count; i++) {
      let answer: Timed
      try {
        const bodies = stream ? target.mix.stream : target.mix.plain
        answer = await timedRequest(agent, target, stream, false, mix ? bodies[i % bodies.length] : undefined)
      } catch (error) {
        throw new RequestFailure(`${target.label}: a ${stream ? "streaming" : "non-streaming"} request failed: ${error instanceof Error ? error.message : String(error)}`)
      }
      if (answer.status < 200 || answer.status >= 300) {
        throw new RequestFailure(`${target.label}: a ${stream ? "streaming" : "non-streaming"} request answered ${answer.status}: ${answer.body.slice(0, 300)}`)
      }
      if (mix) {
        const counts = stream ? target.answeredMix.stream : target.answeredMix.plain
        counts[i % counts.length] = (counts[i % counts.length] ?? 0) + 1
      } else if (stream) target.answered.stream++
      else target.answered.plain++
      if (i > 0) samples.push(stream ? answer.ttfbMs : answer.totalMs)
    }
  } finally {
    agent.destroy()
  }
  return samples
}

/** A sequential phase's figures of one target: over all its requests, and per chunk (the run's spread). */
export interface SequentialFigures extends Percentiles {
  readonly cpuMsPerRequest: number
  readonly chunks: ReadonlyArray<{ readonly p50: number; readonly cpuMsPerRequest: number }>
}

/**
 * Warm-up, then `total` measured requests per target in `settings.rounds` chunks, the targets taking turns (in the
 * order `orderOf(chunk)` gives, by default the order of `targets`).
 */
export const sequentialPhase = async (
  targets: ReadonlyArray<Target>,
  stream: boolean,
  total: number,
  mix = false,
  orderOf: (chunk: number) => ReadonlyArray<Target> = () => targets
): Promise<Map<TargetKey, SequentialFigures>> => {
  const what = `${mix ? "mix " : ""}${stream ? "stream TTFB" : "latency"}`
  const samples = new Map<TargetKey, Array<number>>(targets.map((target) => [target.key, []]))
  const cpu = new Map<TargetKey, number>(targets.map((target) => [target.key, 0]))
  const chunks = new Map<TargetKey, Array<{ p50: number; cpuMsPerRequest: number }>>(targets.map((target) => [target.key, []]))
  for (const target of targets) {
    process.stdout.write(`  ${target.label}: warm-up ${settings.latencyWarmup} requests... `)
    await sequential(target, stream, settings.latencyWarmup, mix)
    log("done")
  }
  const perRound = Math.ceil(total / settings.rounds)
  for (let round = 0; round < settings.rounds; round++) {
    const count = Math.min(perRound, total - round * perRound)
    if (count <= 0) break
    log(`  ${what} round ${round + 1}/${settings.rounds}: ${count} sequential requests per target`)
    for (const target of orderOf(round)) {
      const cpuBefore = cpuMs(target.child!.pid)
      const taken = await sequential(target, stream, count, mix)
      const used = cpuMs(target.child!.pid) - cpuBefore
      cpu.set(target.key, cpu.get(target.key)! + used)
      samples.get(target.key)!.push(...taken)
      const so = percentiles(taken)
      chunks.get(target.key)!.push({ p50: so.p50, cpuMsPerRequest: used / (count + 1) })
      log(`    ${target.label}: p50 ${so.p50.toFixed(2)} ms, p99 ${so.p99.toFixed(2)} ms; its process used ${(used / (count + 1)).toFixed(2)} ms CPU per request`)
      checkAlive(target)
    }
  }
  const result = new Map<TargetKey, SequentialFigures>()
  for (const target of targets) {
    const all = percentiles(samples.get(target.key)!)
    // Each chunk also made one unmeasured request that opened its connection.
    const cpuMsPerRequest = cpu.get(target.key)! / (all.samples + settings.rounds)
    result.set(target.key, { ...all, cpuMsPerRequest, chunks: chunks.get(target.key)! })
    log(
      `  ${target.label} ${what}: p50 ${all.p50.toFixed(2)} ms, p99 ${all.p99.toFixed(2)} ms over ${all.samples} requests; ${cpuMsPerRequest.toFixed(2)} ms CPU per request`
    )
  }
  return result
}

export const checkAlive = (target: Target) => {
  const child = target.child
  if (child !== undefined && child.exitCode() !== null) throw childFailure(child, `${target.label} exited (${child.exitCode()}) during the run`)
}

export interface Throughput {
  readonly requestsPerSecond: number
  readonly ok: number
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  readonly statuses: string
  /** After the load phase: the req/s of each measured round (the run's spread), the median being `requestsPerSecond`. */
  readonly roundsPerSecond?: ReadonlyArray<number>
}

/** autocannon's result as a Throughput (what the report and the failure check read). */
const throughputOf = (result: Result): Throughput => {
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

/** BENCH_CONNECTIONS connections, every one with the target's own headers (for the exchange: one account's key). */
export const load = async (target: Target, seconds: number): Promise<Throughput> => {
  const result = await autocannon({
    url: `${target.origin}${target.path}`,
    method: "POST",
    headers: target.headers,
    body: target.body.plain,
    connections: settings.connections,
    duration: seconds,
    timeout: 10
  })
  target.answered.plain += result["2xx"]
  return throughputOf(result)
}

/**
 * One connection per API key (as many as keys, BENCH_CONNECTIONS), all in ONE autocannon instance: its
 * `setupClient` gives connection i the key of account i for every request it sends (reconnections included), so
 * the load is the same 32 concurrent keep-alive connections from one client as `load`'s, only spread over accounts.
 * (32 autocannon instances of one connection each would run 32 sets of timers and histograms in the bench's one
 * thread and leave the summing of their rates to us.) `answered[i]` grows by account i's 2xx answers, counted from
 * autocannon's "response" events, which are exactly those its result counts.
 */
export const loadAccounts = async (target: Target, apiKeys: ReadonlyArray<string>, seconds: number, answered: Array<number>): Promise<Throughput> => {
  const accountOf = new WeakMap<object, number>()
  let next = 0
  const instance = autocannon({
    url: `${target.origin}${target.path}`,
    method: "POST",
    headers: target.headers,
    body: target.body.plain,
    connections: apiKeys.length,
    duration: seconds,
    timeout: 10,
    setupClient: (client) => {
      const index = next++ % apiKeys.length
      accountOf.set(client, index)
      client.setHeaders({ ...target.headers, authorization: `Bearer ${apiKeys[index]}` })
    }
  })
  let unattributed = 0
  instance.on("response", (client, statusCode) => {
    if (statusCode < 200 || statusCode >= 300) return
    const index = accountOf.get(client)
    if (index === undefined) unattributed++
    else answered[index] = (answered[index] ?? 0) + 1
  })
  const result = await instance
  if (unattributed > 0) throw new Error(`${target.label}: ${unattributed} 2xx answers under load came on a connection set up with no account`)
  if (next !== apiKeys.length) throw new Error(`${target.label}: autocannon set up ${next} connections for ${apiKeys.length} accounts`)
  return throughputOf(result)
}

export type LoadKey = TargetKey | "exchange-accounts"

/** One thing the load phase runs in turn with the others: a target, or the exchange over many accounts. */
export interface LoadRun {
  readonly key: LoadKey
  readonly label: string
  readonly target: Target
  readonly run: (seconds: number) => Promise<Throughput>
  /** After each of its runs (the exchange: until the requests the run left in flight are done); says what it did. */
  readonly after: () => Promise<string | undefined>
}

/**
 * Each run's warm-up, then `settings.rounds` rounds in which every run takes its turn (in the order `orderOf(round)`
 * gives, by default the order of `runs`); the median round of each.
 */
export const loadPhase = async (
  runs: ReadonlyArray<LoadRun>,
  orderOf: (round: number) => ReadonlyArray<LoadRun> = () => runs
): Promise<Map<LoadKey, Throughput>> => {
  const rounds = new Map<LoadKey, Array<Throughput>>(runs.map((run) => [run.key, []]))
  const failures = new Map<LoadKey, Array<Throughput>>(runs.map((run) => [run.key, []]))
  for (let round = 0; round < settings.rounds; round++) {
    log(`  throughput round ${round + 1}/${settings.rounds}`)
    for (const run of orderOf(round)) {
      process.stdout.write(`    ${run.label}: `)
      if (round === 0) {
        process.stdout.write(`warm-up ${settings.warmupSeconds} s, `)
        failures.get(run.key)!.push(await run.run(settings.warmupSeconds))
        const waited = await run.after()
        if (waited !== undefined) process.stdout.write(`(${waited}) `)
      }
      process.stdout.write(`measuring ${settings.durationSeconds} s... `)
      const measured = await run.run(settings.durationSeconds)
      rounds.get(run.key)!.push(measured)
      log(
        `${Math.round(measured.requestsPerSecond)} req/s (${measured.ok} 2xx; errors ${measured.errors}, timeouts ${measured.timeouts}, non-2xx ${measured.non2xx}${measured.statuses === "" ? "" : `: ${measured.statuses}`})`
      )
      checkAlive(run.target)
      const waited = await run.after()
      if (waited !== undefined) log(`      (${waited})`)
    }
  }
  const result = new Map<LoadKey, Throughput>()
  for (const run of runs) {
    const all = rounds.get(run.key)!
    const sorted = [...all].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
    const middle = sorted[Math.floor((sorted.length - 1) / 2)]!
    const every = [...all, ...failures.get(run.key)!]
    const sum = (pick: (t: Throughput) => number) => every.reduce((total, t) => total + pick(t), 0)
    result.set(run.key, {
      ...middle,
      roundsPerSecond: all.map((t) => t.requestsPerSecond),
      errors: sum((t) => t.errors),
      timeouts: sum((t) => t.timeouts),
      non2xx: sum((t) => t.non2xx),
      statuses: every.map((t) => t.statuses).filter((s) => s !== "").join("; ")
    })
  }
  return result
}

/** VmRSS of a process in MB, from /proc (or `ps` where there is no /proc). */
export const rssMb = async (pid: number): Promise<number> => {
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
export const clockTicks = (() => {
  const answer = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" })
  const ticks = Number(answer.stdout?.trim())
  return Number.isFinite(ticks) && ticks > 0 ? ticks : 100
})()
export const cpuMs = (pid: number): number => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The fields after the command name (which may hold spaces) start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
  } catch {
    return Number.NaN
  }
}
