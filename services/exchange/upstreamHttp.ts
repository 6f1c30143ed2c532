/**
 * The exchange's HTTP client to upstream vendors: node:http(s) with keep-alive agents (one connection pool per
 * process), a first-byte timeout, interruption that destroys the request, and an SSE reader whose first event is
 * awaited like the first byte. Kept below the Effect
 * HttpClient because this is the hot path the latency budget is measured on; everything above it is Effect.
 */
import { type Chunk, Data, Duration, Effect, type Either, Queue, Stream, Take } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import type { Readable } from "node:stream"
import { type ClockTimer, startTimer } from "./clockTimer.ts"

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
  Effect.clockWith((clock) => Effect.async<UpstreamResponse, UpstreamFailure>((resume) => {
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
    const timer = startTimer(clock, firstByteTimeoutMs, () => {
      if (settled) return
      settled = true
      request.destroy()
      resume(Effect.fail(new UpstreamFailure({ kind: "timeout", message: `no answer from ${target.host} within ${firstByteTimeoutMs} ms` })))
    })
    request.on("response", (response) => {
      if (settled) return response.destroy()
      settled = true
      timer.cancel()
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
      timer.cancel()
      resume(Effect.fail(new UpstreamFailure({ kind: "network", message: `${target.host}: ${error.message}` })))
    })
    request.end(payload)
    return Effect.sync(() => {
      settled = true
      timer.cancel()
      request.destroy()
    })
  }))

/**
 * The whole body as text (non-streaming answers). A vendor sends a whole answer at once after its head, so a body not
 * complete within `timeoutMs` of the head is left (`timeout`): an upstream that sends its head and then trickles or
 * stops cannot hold a request for longer.
 */
export const readText = (response: UpstreamResponse, timeoutMs: number): Effect.Effect<string, UpstreamFailure> =>
  Effect.clockWith((clock) => Effect.async<string, UpstreamFailure>((resume) => {
    const chunks: Array<Buffer> = []
    const deadline = startTimer(clock, timeoutMs, () => {
      // Failed before the body is destroyed: destroying it emits the cut below, which must not be the reason given.
      resume(Effect.fail(new UpstreamFailure({ kind: "timeout", message: `the answer was not complete ${timeoutMs} ms after its head` })))
      response.body.destroy()
    })
    response.body.on("data", (chunk: Buffer) => chunks.push(chunk))
    response.body.on("end", () => {
      deadline.cancel()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    })
    const cut = (why: string) => {
      deadline.cancel()
      resume(Effect.fail(new UpstreamFailure({ kind: "stream", message: why })))
    }
    response.body.on("error", (error) => cut(`the answer was cut: ${error.message}`))
    response.body.on("aborted", () => cut("the answer was cut"))
    return Effect.sync(() => {
      deadline.cancel()
      response.body.destroy()
    })
  }))

export interface SseMessage {
  readonly event: string | undefined
  readonly data: string
}

/**
 * Opens the body as server-sent events (`event:` and `data:` lines up to each blank line; CRLF, LF or CR), parses
 * each event with `parse`, and waits for the first event parsed: for a streamed answer that is the first byte that
 * counts, so a body that ends, is cut, stays silent for `firstEventTimeoutMs` or opens with an event that does not
 * parse fails this attempt (the caller moves to the next key) instead of reaching the client as an empty,
 * interrupted stream. After it, the events arrive on the returned stream; a connection closed or cut before its end,
 * or silent for `idleTimeoutMs` between two reads, fails it with `stream`, and an event still open at the end is
 * dropped (a complete one ends with a blank line). The body is read through its events, not an async iterator, so
 * closing the stream (its end, a failure, an interruption) destroys the connection at once, even while a read is
 * pending on a silent socket.
 */
export const openSse = <E>(
  response: UpstreamResponse,
  timeouts: { readonly firstEventMs: number; readonly idleMs: number },
  parse: (message: SseMessage) => Either.Either<ReadonlyArray<E>, UpstreamFailure>
): Effect.Effect<Stream.Stream<E, UpstreamFailure>, UpstreamFailure> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    const body = response.body
    const queue = yield* Queue.unbounded<Take.Take<SseMessage, UpstreamFailure>>()
    let carry = ""
    let event: string | undefined
    let data: Array<string> = []
    let done = false
    const finish = (take: Take.Take<SseMessage, UpstreamFailure>) => {
      if (done) return
      done = true
      idle?.cancel()
      Queue.unsafeOffer(queue, take)
    }
    // Set once the first event is in (the first-event timeout covers the wait before it), refreshed by every read.
    let idle: ClockTimer | undefined
    const line = (text: string) => {
      if (text === "") {
        if (data.length > 0) Queue.unsafeOffer(queue, Take.of({ event, data: data.join("\n") }))
        event = undefined
        data = []
        return
      }
      if (text.startsWith(":")) return
      const colon = text.indexOf(":")
      const field = colon < 0 ? text : text.slice(0, colon)
      const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "")
      if (field === "event") event = value
      else if (field === "data") data.push(value)
    }
    body.setEncoding("utf8")
    body.on("data", (chunk: string) => {
      if (done) return
      idle?.refresh()
      carry += chunk
      let start = 0
      for (let i = 0; i < carry.length; i++) {
        const c = carry.charCodeAt(i)
        if (c !== 10 && c !== 13) continue
        // A CR at the end of what arrived may be the first half of a CRLF: wait for the next chunk.
        if (c === 13 && i === carry.length - 1) break
        line(carry.slice(start, i))
        if (c === 13 && carry.charCodeAt(i + 1) === 10) i++
        start = i + 1
      }
      carry = carry.slice(start)
    })
    body.on("end", () => {
      if (carry !== "") line(carry.endsWith("\r") ? carry.slice(0, -1) : carry)
      carry = ""
      finish(Take.end)
    })
    const cut = (why: string) => finish(Take.fail(new UpstreamFailure({ kind: "stream", message: `the stream was cut: ${why}` })))
    body.on("error", (error) => cut(error.message))
    body.on("close", () => cut("the connection closed before the end"))
    const destroy = Effect.sync(() => {
      done = true
      idle?.cancel()
      body.destroy()
    })
    const first = yield* Queue.take(queue).pipe(
      Effect.timeoutFail({
        duration: Duration.millis(timeouts.firstEventMs),
        onTimeout: () => new UpstreamFailure({ kind: "timeout", message: `no event within ${timeouts.firstEventMs} ms of the answer's head` })
      }),
      Effect.onInterrupt(() => destroy),
      Effect.tapError(() => destroy)
    )
    type Opened = Effect.Effect<Chunk.Chunk<SseMessage>, UpstreamFailure>
    const opened = yield* Take.match(first, {
      onEnd: (): Opened => Effect.fail(new UpstreamFailure({ kind: "stream", message: "the stream ended before its first event" })),
      onFailure: (cause): Opened => Effect.failCause(cause),
      onSuccess: (messages): Opened => Effect.succeed(messages)
    }).pipe(
      // Parsed here, not on the stream: an answer that opens with an unreadable event is a failed attempt.
      Effect.flatMap((messages) => Effect.forEach(messages, parse)),
      Effect.tapError(() => destroy)
    )
    if (!done) idle = startTimer(clock, timeouts.idleMs, () => cut(`no data for ${timeouts.idleMs} ms`))
    return Stream.fromIterable(opened.flat()).pipe(
      Stream.concat(Stream.flattenTake(Stream.fromQueue(queue)).pipe(Stream.mapEffect(parse), Stream.flattenIterables)),
      Stream.ensuring(destroy)
    )
  })
