/**
 * A local EVM node: the anvil binary shipped in an npm package, run as a child process on loopback.
 */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"

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

const rpcAnswers = async (rpcUrl: string): Promise<boolean> => {
  try {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(500)
    })
    return response.ok
  } catch {
    return false
  }
}

/** Starts anvil for the lifetime of the scope; on close it is stopped with SIGTERM (so it saves its state). */
export const startAnvil = (options: AnvilOptions) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const args = [
          "--host", "127.0.0.1",
          "--port", String(options.port),
          "--chain-id", String(options.chainId),
          "--accounts", String(options.accounts ?? 3),
          "--silent"
        ]
        if (options.statePath !== undefined) args.push("--state", options.statePath)
        if (options.genesisTimestamp !== undefined) args.push("--timestamp", String(options.genesisTimestamp))
        const child = spawn(anvilBinary(), args, { stdio: ["ignore", "ignore", "pipe"] })
        let stderr = ""
        child.stderr!.on("data", (data: Buffer) => (stderr += data.toString("utf8")))
        const rpcUrl = `http://127.0.0.1:${options.port}`
        const deadline = Date.now() + 15_000
        for (;;) {
          if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}: ${stderr.trim()}`)
          if (await rpcAnswers(rpcUrl)) return { rpcUrl, process: child } satisfies AnvilNode
          if (Date.now() > deadline) {
            child.kill("SIGKILL")
            throw new Error(`anvil did not answer on ${rpcUrl} within 15 s: ${stderr.trim()}`)
          }
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      },
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
