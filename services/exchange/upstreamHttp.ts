/**
 * The exchange's HTTP client to upstream vendors: node:http(s) with keep-alive agents (one connection pool per
 * process), a first-byte timeout, interruption that destroys the request, and an SSE reader. Kept below the Effect
 * HttpClient because this is the hot path the latency budget is measured on; everything above it is Effect.
 */
import { Data, Effect, Option, Stream } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import type { Readable } from "node:stream"

export type UpstreamFailureKind = "status" | "timeout" | "network" | "protocol" | "stream"

/** Why an upstream call failed; `status` failures carry the vendor's status, Retry-After and body text. */
export class UpstreamFailure extends Data.TaggedError("UpstreamFailure")<{
  readonly kind: UpstreamFailureKind
  readonly message: string
  readonly status?: number | undefined
  readonly retryAfter?: string | undefined
  readonly body?: string | undefined
}> {}

export interface UpstreamResponse {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Readable
}

const httpAgent = new Http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 })
const httpsAgent = new Https.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 })

/**
 * POSTs `body` and succeeds with the response once its head arrives within `firstByteTimeoutMs`. A status >= 400 is
 * read whole and failed as `status`. Interrupting the effect (or the stream read from the body later) destroys the
 * request.
 */
export const postJson = (
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  firstByteTimeoutMs: number
): Effect.Effect<UpstreamResponse, UpstreamFailure> =>
  Effect.async<UpstreamResponse, UpstreamFailure>((resume) => {
    let target: URL
    try {
      target = new URL(url)
    } catch {
      resume(Effect.fail(new UpstreamFailure({ kind: "network", message: `invalid upstream URL ${url}` })))
      return
    }
    const secure = target.protocol === "https:"
    const payload = Buffer.from(body)
    const request = (secure ? Https : Http).request(target, {
      method: "POST",
      agent: secure ? httpsAgent : httpAgent,
      headers: { ...headers, "content-type": "application/json", "content-length": String(payload.length), accept: "application/json, text/event-stream" }
    })
    let settled = false
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      request.destroy()
      resume(Effect.fail(new UpstreamFailure({ kind: "timeout", message: `no answer from ${target.host} within ${firstByteTimeoutMs} ms` })))
    }, firstByteTimeoutMs)
    request.on("response", (response) => {
      if (settled) return response.destroy()
      settled = true
      clearTimeout(timer)
      const status = response.statusCode ?? 0
      if (status < 400) return resume(Effect.succeed({ status, headers: response.headers, body: response }))
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.length < 64 && chunks.push(chunk))
      const fail = () =>
        resume(
          Effect.fail(
            new UpstreamFailure({
              kind: "status",
              status,
              message: `${target.host} answered ${status}`,
              retryAfter: typeof response.headers["retry-after"] === "string" ? response.headers["retry-after"] : undefined,
              body: Buffer.concat(chunks).toString("utf8").slice(0, 4_000)
            })
          )
        )
      response.on("end", fail)
      response.on("error", fail)
    })
    request.on("error", (error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(Effect.fail(new UpstreamFailure({ kind: "network", message: `${target.host}: ${error.message}` })))
    })
    request.end(payload)
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      request.destroy()
    })
  })

/** The whole body as text (non-streaming answers). */
export const readText = (response: UpstreamResponse): Effect.Effect<string, UpstreamFailure> =>
  Effect.async<string, UpstreamFailure>((resume) => {
    const chunks: Array<Buffer> = []
    response.body.on("data", (chunk: Buffer) => chunks.push(chunk))
    response.body.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
    response.body.on("error", (error) => resume(Effect.fail(new UpstreamFailure({ kind: "stream", message: `the answer was cut: ${error.message}` }))))
    response.body.on("aborted", () => resume(Effect.fail(new UpstreamFailure({ kind: "stream", message: "the answer was cut" }))))
    return Effect.sync(() => response.body.destroy())
  })

export interface SseMessage {
  readonly event: string | undefined
  readonly data: string
}

/**
 * The body as server-sent events: `event:` and `data:` lines up to each blank line (CRLF or LF). A connection that
 * closes before its last event ended, or errors, fails the stream with `stream`; closing the stream destroys the body.
 */
export const sseMessages = (response: UpstreamResponse): Stream.Stream<SseMessage, UpstreamFailure> => {
  const body = response.body
  body.setEncoding("utf8")
  const lines = Stream.fromAsyncIterable(body as AsyncIterable<string>, (error) =>
    new UpstreamFailure({ kind: "stream", message: `the stream was cut: ${error instanceof Error ? error.message : String(error)}` })
  ).pipe(Stream.splitLines, Stream.ensuring(Effect.sync(() => body.destroy())))
  let event: string | undefined
  let data: Array<string> = []
  return lines.pipe(
    Stream.filterMap((line): Option.Option<SseMessage> => {
      if (line === "") {
        if (data.length === 0) {
          event = undefined
          return Option.none()
        }
        const message = { event, data: data.join("\n") }
        event = undefined
        data = []
        return Option.some(message)
      }
      if (line.startsWith(":")) return Option.none()
      const colon = line.indexOf(":")
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "")
      if (field === "event") event = value
      else if (field === "data") data.push(value)
      return Option.none()
    })
    // An event still open at the end was cut (a complete one ends with a blank line): it is dropped, and the reader
    // sees a stream that ended without its stop event.
  )
}
