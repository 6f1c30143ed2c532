/**
 * `npm run bench:exchange`: what the exchange's process logs at WARN or above over the whole run. It runs with
 * LOG_FORMAT=json and LOG_LEVEL=BENCH_LOG_LEVEL (WARN): every line of its stdout and stderr is read as it comes
 * (bench/exchangeTargets.ts startChild), a JSON record by its `logLevel` (WARN, ERROR, FATAL count; lower levels, seen
 * with BENCH_LOG_LEVEL=INFO or DEBUG, do not), and any other non-empty line on stderr (a Node warning, a stack trace,
 * tsx's own report) counts as well, since nothing the service means to say comes out that way.
 */
import { stripAnsi } from "./exchangeSettings.ts"

const WARN_OR_ABOVE = new Set(["WARN", "WARNING", "ERROR", "FATAL"])
/** How many lines the report quotes whole. */
const FIRST = 5

export interface ServiceLog {
  readonly onLine: (line: string, stream: "stdout" | "stderr") => void
  /** Lines at WARN or above so far. */
  readonly count: () => number
  /** The first few of them, whole (up to 400 characters each). */
  readonly first: () => ReadonlyArray<string>
  /** All of them by message (level, message, the cause's first line): "N x message". */
  readonly byMessage: () => ReadonlyArray<string>
  /** Non-JSON lines on stdout (not counted; reported). */
  readonly otherStdout: () => number
}

export const makeServiceLog = (): ServiceLog => {
  let count = 0
  let otherStdout = 0
  const first: Array<string> = []
  const messages = new Map<string, number>()
  const onLine = (raw: string, stream: "stdout" | "stderr") => {
    const line = stripAnsi(raw).trim()
    if (line === "") return
    let message: string
    try {
      const record = JSON.parse(line) as { message?: unknown; logLevel?: unknown; cause?: unknown } | null
      if (typeof record !== "object" || record === null) throw new Error("not a record")
      const level = String(record.logLevel ?? "").toUpperCase()
      if (!WARN_OR_ABOVE.has(level)) return
      const cause = typeof record.cause === "string" && record.cause !== "" ? `: ${record.cause.split("\n")[0]}` : ""
      const text = Array.isArray(record.message) ? record.message.map(String).join(" ") : String(record.message)
      message = `${level} ${text}${cause}`.slice(0, 200)
    } catch {
      if (stream === "stdout") {
        otherStdout++
        return
      }
      message = `stderr: ${line.slice(0, 160)}`
    }
    count++
    if (first.length < FIRST) first.push(line.slice(0, 400))
    messages.set(message, (messages.get(message) ?? 0) + 1)
  }
  return {
    onLine,
    count: () => count,
    first: () => first,
    byMessage: () => [...messages].map(([message, n]) => `${n} x ${message}`),
    otherStdout: () => otherStdout
  }
}
