/**
 * The upstream HTTP client's timeouts (services/exchange/upstreamHttp.ts) run on the fiber's Clock, over real sockets:
 * a vendor that never answers, one that sends its head and then nothing, and a stream that falls silent after its
 * first event are each left at their timeout, and not a millisecond before it, as TestClock moves time.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Option, Stream, TestClock } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { openSse, postJson, readText, type UpstreamFailure } from "../services/exchange/upstreamHttp.ts"

/** Paths: /silent answers nothing; /head sends its head and no body; /one-event sends one SSE event, then nothing. */
let server: Http.Server
let base = ""
const open: Array<Http.ServerResponse> = []

beforeAll(async () => {
  server = Http.createServer((request, response) => {
    request.resume()
    open.push(response)
    if (request.url === "/silent") return
    response.writeHead(200, { "content-type": request.url === "/one-event" ? "text/event-stream" : "application/json" })
    response.flushHeaders()
    if (request.url === "/one-event") response.write("data: {\"n\":1}\n\n")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  for (const response of open) response.destroy()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const pendingSleeps = Effect.map(TestClock.sleeps(), (sleeps) => sleeps.length)

/**
 * Until one more wait than `before` is registered with the TestClock: the timer under test starts inside a socket
 * callback. (A cancelled timer's wait stays listed until its time passes, hence the count.)
 */
const untilWaiting = (before: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 10_000; i++) {
      if ((yield* pendingSleeps) > before) return
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    }
    throw new Error("no timer was registered with the TestClock")
  })

/** The fiber is still running now; it ends with `kind` once the clock moves `ms` more. */
const leftAfter = <A>(fiber: Fiber.RuntimeFiber<A, UpstreamFailure>, ms: number) =>
  Effect.gen(function* () {
    yield* TestClock.adjust(ms - 1)
    yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
    yield* TestClock.adjust(1)
    const exit = yield* Fiber.await(fiber)
    expect(Exit.isFailure(exit)).toBe(true)
    return Exit.isFailure(exit) ? exit.cause : undefined
  })

describe("upstream timeouts on the Clock", () => {
  it.effect("a vendor that never answers is left at the first-byte timeout", () =>
    Effect.gen(function* () {
      const before = yield* pendingSleeps
      const fiber = yield* Effect.fork(postJson(`${base}/silent`, {}, "{}", 30_000))
      yield* untilWaiting(before)
      const cause = yield* leftAfter(fiber, 30_000)
      expect(String(cause)).toContain("within 30000 ms")
    }))

  it.effect("a whole answer whose body does not come is left at its deadline after the head", () =>
    Effect.gen(function* () {
      const response = yield* postJson(`${base}/head`, {}, "{}", 30_000)
      const before = yield* pendingSleeps
      const fiber = yield* Effect.fork(readText(response, 5_000))
      yield* untilWaiting(before)
      const cause = yield* leftAfter(fiber, 5_000)
      expect(String(cause)).toContain("not complete 5000 ms after its head")
    }))

  it.effect("a stream silent after its first event is cut at the idle timeout", () =>
    Effect.gen(function* () {
      const response = yield* postJson(`${base}/one-event`, {}, "{}", 30_000)
      const before = yield* pendingSleeps
      const events = yield* openSse(response, { firstEventMs: 900_000, idleMs: 600_000 }, (message) => Either.right([message.data]))
      yield* untilWaiting(before)
      const fiber = yield* Effect.fork(Stream.runCollect(events))
      const cause = yield* leftAfter(fiber, 600_000)
      expect(String(cause)).toContain("no data for 600000 ms")
    }))
})
