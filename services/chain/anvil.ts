/**
 * A local EVM node: the anvil binary shipped in an npm package, run as a child process on loopback.
 */
import { Data, Effect } from "effect"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { bindError } from "../platform/Startup.ts"

export interface AnvilOptions {
  readonly port: number
  readonly chainId: number
  /** Load and save chain state here (anvil writes it on exit and when asked). */
  readonly statePath?: string
  /** Genesis timestamp (Unix seconds), so history can be replayed at its own dates. */
  readonly genesisTimestamp?: number
  readonly accounts?: number
}

export interface AnvilNode {
  readonly rpcUrl: string
  readonly process: ChildProcess
}

/** Another process listens on the port anvil was to use. */
export class AnvilPortInUse extends Data.TaggedError("AnvilPortInUse")<{ readonly port: number; readonly message: string }> {}

const portInUse = (port: number) => new AnvilPortInUse({ port, message: `port ${port} is already in use by another process` })

/** The anvil binary: from its npm package, else on PATH. */
export const anvilBinary = (): string => {
  try {
    const dir = Path.dirname(createRequire(import.meta.url).resolve("@foundry-rs/anvil-linux-amd64/package.json"))
    const binary = Path.join(dir, "bin", "anvil")
    if (Fs.existsSync(binary)) return binary
  } catch {
    // not installed for this platform
  }
  return "anvil"
}

/**
 * How anvil is bound to this process's life. Linux: through util-linux `setpriv --pdeathsig TERM`, which asks the
 * kernel (prctl PR_SET_PDEATHSIG) to send anvil SIGTERM when its parent ends, then execs anvil in its own place (same
 * pid, same pipes, same signals): a service that is SIGKILLed, or dies of an uncaught error, leaves no anvil running,
 * and the SIGTERM lets anvil write its state file as on a normal stop. Where setpriv is missing or has no
 * `--pdeathsig` (util-linux before 2.33, other systems), anvil is spawned directly and outlives a killed service as
 * before. The signal follows the thread that spawned it: spawned from a worker thread, anvil ends with that thread.
 */
let pdeathsigPrefix: ReadonlyArray<string> | undefined

const parentDeathPrefix = (): ReadonlyArray<string> => {
  if (pdeathsigPrefix === undefined) {
    const probe = process.platform === "linux" ? spawnSync("setpriv", ["--pdeathsig", "TERM", "--", "true"], { stdio: "ignore" }) : undefined
    pdeathsigPrefix = probe !== undefined && probe.error === undefined && probe.status === 0 ? ["setpriv", "--pdeathsig", "TERM", "--"] : []
  }
  return pdeathsigPrefix
}

const rpc = async (rpcUrl: string, method: string, params: ReadonlyArray<unknown>): Promise<boolean> => {
  try {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      signal: AbortSignal.timeout(500)
    })
    return response.ok
  } catch {
    return false
  }
}

const START_TIMEOUT_MS = 15_000

/**
 * Spawns anvil and resolves once it listens. Readiness is anvil's own "Listening on" line, not an answer on the
 * port: something else answering there would otherwise pass for our node (anvil fails to bind, exits, and a
 * stranger gets the registry deployed on it).
 */
const spawnAnvil = async (options: AnvilOptions): Promise<AnvilNode> => {
  if ((await bindError("127.0.0.1", options.port))?.code === "EADDRINUSE") throw portInUse(options.port)
  const args = [
    "--host", "127.0.0.1",
    "--port", String(options.port),
    "--chain-id", String(options.chainId),
    "--accounts", String(options.accounts ?? 3)
  ]
  if (options.statePath !== undefined) args.push("--state", options.statePath)
  if (options.genesisTimestamp !== undefined) args.push("--timestamp", String(options.genesisTimestamp))
  const argv = [...parentDeathPrefix(), anvilBinary(), ...args]
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] })
  const rpcUrl = `http://127.0.0.1:${options.port}`
  const listeningLine = `Listening on 127.0.0.1:${options.port}`
  let stdout = ""
  let stderr = ""
  let listening = false
  // The banner (development keys of no value) and request traces are read and dropped; the pipe must keep draining.
  child.stdout!.on("data", (data: Buffer) => {
    if (listening) return
    stdout += data.toString("utf8")
    listening = stdout.includes(listeningLine)
  })
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString("utf8")))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  // A process's start-up timeout, outside any Effect: a monotonic timer (no rule of the service reads it).
  const deadline = performance.now() + START_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (/address already in use/i.test(stderr)) throw portInUse(options.port)
      throw new Error(`anvil exited with ${child.exitCode ?? child.signalCode}: ${stderr.trim()}`)
    }
    if (listening && (await rpc(rpcUrl, "eth_chainId", []))) break
    if (performance.now() > deadline) {
      child.kill("SIGKILL")
      await exited
      throw new Error(`anvil did not answer on ${rpcUrl} within ${START_TIMEOUT_MS / 1000} s: ${stderr.trim()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  // Request traces would only be piped and dropped: a replay makes thousands of calls.
  await rpc(rpcUrl, "anvil_setLoggingEnabled", [false])
  return { rpcUrl, process: child }
}

/** Starts anvil for the lifetime of the scope; on close it is stopped with SIGTERM (so it saves its state). */
export const startAnvil = (options: AnvilOptions) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => spawnAnvil(options),
      catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
    }),
    (node) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            if (node.process.exitCode !== null) return resolve()
            const timer = setTimeout(() => node.process.kill("SIGKILL"), 5_000)
            node.process.once("exit", () => {
              clearTimeout(timer)
              resolve()
            })
            node.process.kill("SIGTERM")
          })
      )
  )
