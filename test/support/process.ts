/**
 * Runs the service as a separate process, the way an operator does, and watches its log.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import { KEY_SHORTCUTS } from "../../domain/exchange/providers.ts"

export const projectRoot = Path.resolve(import.meta.dirname, "../..")

export interface ServiceProcess {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves with the log line matching `pattern`, or rejects after `timeoutMs` (children of the process may log after it exits). */
  readonly waitForLog: (pattern: RegExp, timeoutMs: number) => Promise<string>
  readonly exited: Promise<number | null>
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/** The environment of the test runner minus anything that would point the service elsewhere. */
export const cleanEnv = (env: Record<string, string>): NodeJS.ProcessEnv => {
  const base = { ...process.env }
  const pointers = ["DATABASE_URL", "RPC_URL", "REGISTRY_ADDRESS", "PUBLISHER_PRIVATE_KEY", "PORT", "HOST", "DATA_DIR", "EMBEDDED_CHAIN_PORT", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "METRICS_PORT"]
  const upstreams = ["PROVIDERS_FILE", "EXCHANGE_SIMULATOR", "MAINTAINER_TOKEN", ...KEY_SHORTCUTS.flatMap((shortcut) => shortcut.variables)]
  for (const name of [...pointers, ...upstreams]) {
    delete base[name]
  }
  return { ...base, LOG_FORMAT: "json", ...env }
}

/** `node --import tsx src/main.ts`: the service itself, without npm in between. */
export const startService = (env: NodeJS.ProcessEnv): ServiceProcess =>
  startProcess(process.execPath, ["--import", "tsx", "src/main.ts"], env)

/** One line of the service's LOG_FORMAT=json output. */
export interface LogRecord {
  readonly message: unknown
  readonly logLevel: string
  readonly annotations: Record<string, unknown>
  readonly cause?: string
}

/** The JSON log lines in `output`, skipping anything else the process printed. */
export const logRecords = (output: string): Array<LogRecord> =>
  output.split("\n").flatMap((line) => {
    if (!line.startsWith("{")) return []
    try {
      const record = JSON.parse(line) as LogRecord
      return typeof record.logLevel === "string" ? [record] : []
    } catch {
      return []
    }
  })

export const startProcess = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): ServiceProcess => {
  const child = spawn(command, args, { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  const listeners = new Set<() => void>()
  const onData = (data: Buffer) => {
    output += data.toString("utf8")
    for (const listener of listeners) listener()
  }
  child.stdout!.on("data", onData)
  child.stderr!.on("data", onData)
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return {
    child,
    output: () => output,
    exited,
    waitForLog: (pattern, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const line = output.split("\n").find((candidate) => pattern.test(candidate))
          if (line !== undefined) {
            cleanup()
            resolve(line)
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`no log line matching ${pattern} within ${timeoutMs} ms; output:\n${output}`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          listeners.delete(check)
        }
        listeners.add(check)
        check()
      }),
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    }
  }
}
