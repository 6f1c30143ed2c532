/** Replies as plain data, and the code that writes them (faults decide how much gets written). */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"

export interface JsonReply {
  readonly kind: "json"
  readonly status: number
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
}
export interface StreamReply {
  readonly kind: "stream"
  readonly contentType: string
  readonly chunks: readonly string[]
  readonly headers: Readonly<Record<string, string>>
}
export type Reply = JsonReply | StreamReply

export type ErrorKind = "auth" | "invalid" | "not_found" | "server" | "rate"

/** A validated vendor request: its upstream model id and the work that produces the reply. */
export interface Prepared {
  readonly model: string
  readonly stream: boolean
  /** false for token-count calls, which faults do not target */
  readonly generation: boolean
  readonly run: () => Reply
}

export interface Vendor {
  /** `query` is the raw query string (without `?`) */
  readonly authorized: (headers: IncomingHttpHeaders, query: string) => boolean
  readonly error: (kind: ErrorKind, message?: string, retryAfterSeconds?: number) => JsonReply
}

const NO_HEADERS: Readonly<Record<string, string>> = {}

export const json = (status: number, value: unknown, headers: Readonly<Record<string, string>> = NO_HEADERS): JsonReply => ({
  kind: "json",
  status,
  body: JSON.stringify(value),
  headers
})

export const stream = (
  chunks: readonly string[],
  headers: Readonly<Record<string, string>> = NO_HEADERS,
  contentType = "text/event-stream; charset=utf-8"
): StreamReply => ({ kind: "stream", contentType, chunks, headers })

export const header = (headers: IncomingHttpHeaders, name: string): string => {
  const value = headers[name]
  return (Array.isArray(value) ? value[0] : value) ?? ""
}

export const bearer = (headers: IncomingHttpHeaders): string => {
  const value = header(headers, "authorization")
  return value.toLowerCase().startsWith("bearer ") ? value.slice(7).trim() : ""
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

export const MAX_BODY_BYTES = 64 * 1024 * 1024

/** Reads the whole body; rejects with "too_large" past the limit. */
export const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        reject(new Error("too_large"))
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

export const writeJson = (res: ServerResponse, reply: JsonReply): void => {
  if (res.destroyed || res.headersSent) return
  res.writeHead(reply.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(reply.body),
    ...reply.headers
  })
  res.end(reply.body)
}

const startStream = (res: ServerResponse, reply: StreamReply): void => {
  res.writeHead(200, {
    "content-type": reply.contentType,
    "cache-control": "no-cache",
    ...reply.headers
  })
}

/**
 * Writes the reply at once: no pacing between chunks, and one write for the whole stream (one syscall instead of
 * one per event; the client still parses it event by event).
 */
export const writeReply = (res: ServerResponse, reply: Reply): void => {
  if (reply.kind === "json") return writeJson(res, reply)
  if (res.destroyed) return
  startStream(res, reply)
  res.end(reply.chunks.join(""))
}

/** Writes the first `afterChunks` chunks of a stream (never all of them), then cuts the connection. */
export const writeThenDrop = (res: ServerResponse, reply: Reply, afterChunks: number): void => {
  const socket = res.socket
  if (reply.kind === "json" || res.destroyed || !socket) {
    socket?.destroy()
    return
  }
  startStream(res, reply)
  const n = Math.max(0, Math.min(afterChunks, reply.chunks.length - 1))
  if (n === 0) {
    res.flushHeaders()
    setImmediate(() => socket.destroy())
    return
  }
  for (let i = 0; i < n - 1; i++) res.write(reply.chunks[i]!)
  res.write(reply.chunks[n - 1]!, () => setImmediate(() => socket.destroy()))
}

/**
 * Writes the first `afterChunks` chunks of a stream (never all of them) and then nothing more, keeping the connection
 * open until the client closes it (an upstream that stops sending without hanging up).
 */
export const writeThenStall = (res: ServerResponse, reply: Reply, afterChunks: number): void => {
  if (reply.kind === "json" || res.destroyed) return
  startStream(res, reply)
  const n = Math.max(0, Math.min(afterChunks, reply.chunks.length - 1))
  if (n === 0) res.flushHeaders()
  for (let i = 0; i < n; i++) res.write(reply.chunks[i]!)
}

/**
 * Writes a stream one chunk at a time, `delayMs` apart (the first at once); stops writing when the client goes away.
 * A JSON reply is written whole after `delayMs`.
 */
export const writePaced = (res: ServerResponse, reply: Reply, delayMs: number): void => {
  if (reply.kind === "json") {
    const timer = setTimeout(() => writeJson(res, reply), delayMs)
    res.once("close", () => clearTimeout(timer))
    return
  }
  if (res.destroyed) return
  startStream(res, reply)
  let next = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const writeNext = () => {
    if (res.destroyed || res.writableEnded) return
    const chunk = reply.chunks[next++]!
    if (next === reply.chunks.length) return void res.end(chunk)
    res.write(chunk)
    timer = setTimeout(writeNext, delayMs)
  }
  res.once("close", () => clearTimeout(timer))
  writeNext()
}

/**
 * Writes the first `afterChunks` chunks of a stream (never all of them), then half of the next one closed as if it
 * were whole, then ends: an event whose JSON stops midway, as a broken proxy or a vendor's bug sends. A JSON reply is
 * a 200 whose body is the first half of the answer.
 */
export const writeMalformed = (res: ServerResponse, reply: Reply, afterChunks: number): void => {
  if (res.destroyed) return
  if (reply.kind === "json") {
    const half = reply.body.slice(0, Math.floor(reply.body.length / 2))
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(half), ...reply.headers })
    return void res.end(half)
  }
  startStream(res, reply)
  const n = Math.max(0, Math.min(afterChunks, reply.chunks.length - 1))
  const next = reply.chunks[n]!.replace(/\n+$/, "")
  res.end(`${reply.chunks.slice(0, n).join("")}${next.slice(0, Math.ceil(next.length / 2))}\n\n`)
}

/**
 * Writes the whole reply (a stream's events or a JSON body) one byte at a time, `delayMs` apart: every event and every
 * multi-byte character arrives split. Stops writing when the client goes away.
 */
export const writeTrickle = (res: ServerResponse, reply: Reply, delayMs: number): void => {
  if (res.destroyed) return
  const bytes = Buffer.from(reply.kind === "json" ? reply.body : reply.chunks.join(""))
  if (reply.kind === "json") {
    res.writeHead(reply.status, { "content-type": "application/json", "content-length": bytes.length, ...reply.headers })
  } else {
    startStream(res, reply)
  }
  res.flushHeaders()
  let next = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const writeNext = () => {
    if (res.destroyed || res.writableEnded) return
    const byte = bytes.subarray(next, ++next)
    if (next >= bytes.length) return void res.end(byte)
    res.write(byte)
    timer = setTimeout(writeNext, delayMs)
  }
  res.once("close", () => clearTimeout(timer))
  timer = setTimeout(writeNext, delayMs)
}
