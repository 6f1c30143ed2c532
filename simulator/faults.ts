/** Scripted faults and the log of received requests (the `/__control` API's state). */
import type { IncomingHttpHeaders } from "node:http"
import { isRecord } from "./http.ts"

export const FAULT_KINDS = ["error500", "error400", "rate_limited", "timeout", "drop", "slow_first_byte", "stall", "slow_stream", "malformed", "trickle"] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

export interface Fault {
  readonly model: string
  readonly fault: FaultKind
  /** requests still to be hit */
  count: number
  readonly afterChunks: number
  readonly retryAfterSeconds: number
  readonly delayMs: number
}

const nonNegativeInt = (value: unknown, fallback: number, name: string): number => {
  if (value === undefined || value === null) return fallback
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`)
  return Math.floor(value)
}

/** Parses a fault request body; throws with a message when it is not valid. */
export const parseFault = (body: unknown): Fault => {
  if (!isRecord(body)) throw new Error("body must be a JSON object")
  const { model, fault } = body
  if (typeof model !== "string" || model.length === 0) throw new Error("model must be a non-empty string ('*' for any)")
  if (typeof fault !== "string" || !(FAULT_KINDS as readonly string[]).includes(fault)) {
    throw new Error(`fault must be one of ${FAULT_KINDS.join(", ")}`)
  }
  const count = nonNegativeInt(body["count"], 1, "count")
  if (count < 1) throw new Error("count must be at least 1")
  return {
    model,
    fault: fault as FaultKind,
    count,
    afterChunks: nonNegativeInt(body["afterChunks"], 1, "afterChunks"),
    retryAfterSeconds: nonNegativeInt(body["retryAfterSeconds"], 1, "retryAfterSeconds"),
    delayMs: nonNegativeInt(body["delayMs"], 1000, "delayMs")
  }
}

export class FaultBook {
  private faults: Fault[] = []
  add(fault: Fault): void {
    this.faults.push(fault)
  }
  /** The fault the next request for `model` gets (a model-specific fault before a `*` one), consuming one use. */
  take(model: string): Fault | undefined {
    if (this.faults.length === 0) return undefined
    let index = this.faults.findIndex((f) => f.model === model)
    if (index < 0) index = this.faults.findIndex((f) => f.model === "*")
    if (index < 0) return undefined
    const fault = this.faults[index]!
    fault.count -= 1
    if (fault.count <= 0) this.faults.splice(index, 1)
    return fault
  }
  clear(): number {
    const n = this.faults.length
    this.faults = []
    return n
  }
  list(): readonly Fault[] {
    return this.faults
  }
}

export interface LoggedRequest {
  readonly at: string
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: unknown
}

const SECRET_HEADERS = new Set(["authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization"])

/** Keeps the scheme and the first 6 characters of a secret. */
export const redact = (value: string): string => {
  const space = value.indexOf(" ")
  const scheme = space > 0 && space < 16 ? value.slice(0, space + 1) : ""
  const secret = value.slice(scheme.length)
  return `${scheme}${secret.slice(0, 6)}…`
}

const redactQuery = (path: string): string => path.replace(/([?&]key=)([^&]*)/g, (_m, p: string, v: string) => p + redact(v))

export class RequestLog {
  private entries: LoggedRequest[] = []
  constructor(private readonly max = 1000) {}
  record(method: string, path: string, headers: IncomingHttpHeaders, body: unknown): void {
    const copy: Record<string, string> = {}
    for (const name in headers) {
      const raw = headers[name]
      if (raw === undefined) continue
      const value = Array.isArray(raw) ? raw.join(", ") : raw
      copy[name] = SECRET_HEADERS.has(name) ? redact(value) : value
    }
    this.entries.push({ at: new Date().toISOString(), method, path: redactQuery(path), headers: copy, body })
    if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max)
  }
  list(): readonly LoggedRequest[] {
    return this.entries
  }
  clear(): number {
    const n = this.entries.length
    this.entries = []
    return n
  }
}
