/** `npm run bench:exchange`: latency, time to first byte, throughput and process figures of one target. */
import autocannon from "autocannon"
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
export const sequentialPhase = async (
  targets: ReadonlyArray<Target>,
  stream: boolean,
  total: number,
  mix = false
): Promise<Map<TargetKey, Percentiles & { readonly cpuMsPerRequest: number }>> => {
  const what = `${mix ? "mix " : ""}${stream ? "stream TTFB" : "latency"}`
  const samples = new Map<TargetKey, Array<number>>(targets.map((target) => [target.key, []]))
  const cpu = new Map<TargetKey, number>(targets.map((target) => [target.key, 0]))
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
    for (const target of targets) {
      const cpuBefore = cpuMs(target.child!.pid)
      const taken = await sequential(target, stream, count, mix)
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
}

export const load = async (target: Target, seconds: number): Promise<Throughput> => {
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
export const loadPhase = async (targets: ReadonlyArray<Target>, after: (target: Target) => Promise<string | undefined>): Promise<Map<TargetKey, Throughput>> => {
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
