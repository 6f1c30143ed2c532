/**
 * Upstreams that misbehave after accepting the connection (simulator faults `timeout`, `trickle`, `stall`,
 * `malformed`), against the real server on a socket, as the fault matrix asserts (test/support/faultMatrix.ts): what
 * the client sees, what is billed, and that no hold is left behind. What must hold (docs/decisions.md "Failures before
 * the first byte"):
 * - every wait is bounded: an upstream that never answers is left after UPSTREAM_FIRST_BYTE_TIMEOUT_MS per key, a
 *   whole answer not complete UPSTREAM_IDLE_TIMEOUT_MS after its head is left, a stream silent that long is cut;
 * - the right error: 502 `all_keys_exhausted` when every key failed, the next key when one is left, and
 *   `stream_interrupted` once a stream has reached the client;
 * - a malformed answer (JSON cut midway, a stream event that does not parse) is a failed attempt before the first
 *   byte and an interruption after it, never a 500 or a garbled frame;
 * - an answer that arrives one byte at a time, every event split, reaches the client whole and billed normally.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  attemptsOf,
  CHAT,
  charge,
  chatBody,
  chatText,
  CLAUDE,
  estimatedInput,
  expectErrorEnvelope,
  type FaultMatrix,
  FIRST_BYTE_TIMEOUT_MS,
  GPT41,
  json,
  MESSAGES,
  messagesBody,
  messagesText,
  n,
  readFrames,
  startFaultMatrix,
  upstreamKeyOf,
  vendorInput
} from "./support/faultMatrix.ts"
import type { ExchangeFixture } from "./support/exchangeServer.ts"
import { recordFigure } from "./support/reliability.ts"

const IDLE_TIMEOUT_MS = 1_500
/** Above a bound of the server's own: a loaded 2-core machine schedules the timer and the next attempt late. */
const SLACK_MS = 2_000

let m: FaultMatrix
let fx: ExchangeFixture

beforeAll(async () => {
  m = await startFaultMatrix({ UPSTREAM_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS) })
  fx = m.fx
}, 120_000)

afterAll(async () => {
  const { cases, faults } = m?.tally() ?? { cases: 0, faults: 0 }
  if (cases > 0) {
    recordFigure({
      suite: "test/exchange-upstream-faults.test.ts",
      tried: "upstreams that never answer, trickle byte by byte, stall mid-stream or send malformed answers",
      volume: `${cases} cases, ${faults} faults injected`,
      held: `every wait bounded by the first-byte (${FIRST_BYTE_TIMEOUT_MS} ms) or idle (${IDLE_TIMEOUT_MS} ms) timeout; the right error each time; every hold settled or released, none left live; each bill exact`
    })
  }
  await fx?.close()
})

describe("an upstream that accepts the connection and never answers", () => {
  it("chat, not streaming, every key silent: left after the first-byte timeout per key, 502 all_keys_exhausted; nothing billed", async () => {
    const c = await m.begin("never answers chat")
    await fx.fault({ model: "gemini-2.5-flash", fault: "timeout", count: 2 })
    const started = Date.now()
    const response = await m.post(c, CHAT, chatBody(c, "google/gemini-2.5-flash"))
    const elapsed = Date.now() - started
    await expectErrorEnvelope(response, 502, "all_keys_exhausted")
    expect(elapsed).toBeGreaterThanOrEqual(2 * FIRST_BYTE_TIMEOUT_MS - 100)
    expect(elapsed).toBeLessThan(2 * FIRST_BYTE_TIMEOUT_MS + SLACK_MS)
    expect((await m.upstreamCalls(c)).map(upstreamKeyOf).sort()).toEqual(["google#1", "google#2"])
    await m.expectNothingBilled(c, 1)
  })

  it("messages, streaming, every key silent: the same 502 before any byte, not an empty stream; nothing billed", async () => {
    const c = await m.begin("never answers messages stream")
    await fx.fault({ model: "deepseek-reasoner", fault: "timeout", count: 2 })
    const started = Date.now()
    const response = await m.post(c, MESSAGES, messagesBody(c, "deepseek/deepseek-reasoner", { stream: true }))
    const elapsed = Date.now() - started
    await expectErrorEnvelope(response, 502, "all_keys_exhausted")
    expect(elapsed).toBeLessThan(2 * FIRST_BYTE_TIMEOUT_MS + SLACK_MS)
    expect(await m.upstreamCalls(c)).toHaveLength(2)
    await m.expectNothingBilled(c, 1)
  })
})

describe("an upstream that answers one byte at a time", () => {
  it("chat, streaming: every event split across reads still reaches the client whole, the same answer as unpaced; billed normally", async () => {
    const c = await m.begin("trickle chat stream")
    const body = chatBody(c, "openai/gpt-4.1", { stream: true, max_tokens: 12, stream_options: { include_usage: true } })
    const reference = await m.post(c, CHAT, body)
    const expected = await readFrames(reference)
    await fx.fault({ model: "gpt-4.1", fault: "trickle", delayMs: 1 })
    const response = await m.post(c, CHAT, body)
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.data).toBe("[DONE]")
    const text = chatText(frames)
    expect(text).toBe(chatText(expected.frames))
    expect(json(frames.at(-2)!).usage).toMatchObject(json(expected.frames.at(-2)!).usage)
    const ids = [reference.headers.get("x-request-id")!, response.headers.get("x-request-id")!]
    expect(attemptsOf(await m.generation(c, ids[1]!)).map(([outcome]) => outcome)).toEqual(["served"])
    const bill = charge(GPT41, vendorInput(c.prompt), n(text))
    await m.expectBilled(c, ids.map((id) => ({ id, chargeWei: bill })))
  })

  it("messages, streaming from an Anthropic upstream: event names and data split across reads; one whole stream, billed normally", async () => {
    const c = await m.begin("trickle messages stream é ✓ 漢字")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "trickle", delayMs: 1 })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true, max_tokens: 12 }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames[0]!.event).toBe("message_start")
    expect(frames.at(-1)!.event).toBe("message_stop")
    const text = messagesText(frames)
    expect(n(text)).toBeGreaterThan(0)
    const id = response.headers.get("x-request-id")!
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })

  it("chat, not streaming, a body trickling past the idle timeout: left, the next key answers; billed once", async () => {
    const c = await m.begin("trickle chat whole")
    // ~50 ms a byte: a body of several hundred bytes would take far longer than the idle timeout.
    await fx.fault({ model: "gpt-4.1", fault: "trickle", delayMs: 50 })
    const started = Date.now()
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    const elapsed = Date.now() - started
    expect(response.status).toBe(200)
    expect(elapsed).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 100)
    expect(elapsed).toBeLessThan(IDLE_TIMEOUT_MS + SLACK_MS)
    const text = ((await response.json()) as any).choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const keys = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(attemptsOf(await m.generation(c, id))).toEqual([["timeout", null, keys[0]], ["served", 200, keys[1]]])
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })
})

describe("an upstream that stops sending mid-stream, the client still reading", () => {
  it("chat: cut after the idle timeout; the client gets the deltas then stream_interrupted; billed the estimate plus what was delivered", async () => {
    const c = await m.begin("stall chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "stall", afterChunks: 3 })
    const started = Date.now()
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    const elapsed = Date.now() - started
    expect(ended).toBe(true)
    expect(elapsed).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 100)
    expect(elapsed).toBeLessThan(IDLE_TIMEOUT_MS + SLACK_MS)
    expect(frames).toHaveLength(4)
    expect(json(frames.at(-1)!).error).toMatchObject({ code: "stream_interrupted", type: "server_error" })
    const delivered = chatText(frames)
    const id = response.headers.get("x-request-id")!
    expect(await m.generation(c, id)).toMatchObject({ status: "interrupted", usage: { source: "partly_estimated", output: n(delivered) } })
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, estimatedInput(c.prompt), n(delivered)) }])
  })

  it("messages from an Anthropic upstream: the error event after the idle timeout; input at the vendor's count, output as delivered", async () => {
    const c = await m.begin("stall messages anthropic")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "stall", afterChunks: 5 })
    const started = Date.now()
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    const { frames, ended } = await readFrames(response)
    expect(Date.now() - started).toBeLessThan(IDLE_TIMEOUT_MS + SLACK_MS)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.event).toBe("error")
    expect(json(frames.at(-1)!).error.code).toBe("stream_interrupted")
    const delivered = messagesText(frames)
    const id = response.headers.get("x-request-id")!
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(delivered)) }])
  })
})

describe("an upstream that sends a malformed answer", () => {
  it("chat, not streaming: a 200 whose JSON stops midway is a failed attempt; the next key answers; billed once", async () => {
    const c = await m.begin("malformed chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "malformed" })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    const text = ((await response.json()) as any).choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const keys = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(attemptsOf(await m.generation(c, id))).toEqual([["protocol", null, keys[0]], ["served", 200, keys[1]]])
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("chat, streaming, the first event malformed: a failed attempt, not a broken stream; the next key streams; billed once", async () => {
    const c = await m.begin("malformed0 chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "malformed", afterChunks: 0 })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true, stream_options: { include_usage: true } }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.data).toBe("[DONE]")
    const text = chatText(frames)
    const id = response.headers.get("x-request-id")!
    expect(attemptsOf(await m.generation(c, id)).map(([outcome]) => outcome)).toEqual(["protocol", "served"])
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("messages, streaming from an Anthropic upstream, an event malformed after K=4: stream_interrupted; billed as delivered", async () => {
    const c = await m.begin("malformed4 messages anthropic")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "malformed", afterChunks: 4 })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.event).toBe("error")
    expect(json(frames.at(-1)!).error.code).toBe("stream_interrupted")
    expect(frames.some((f) => f.event === "message_stop")).toBe(false)
    const delivered = messagesText(frames)
    const id = response.headers.get("x-request-id")!
    expect((await m.generation(c, id)).status).toBe("interrupted")
    expect(await m.upstreamCalls(c)).toHaveLength(1)
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(delivered)) }])
  })

  it("chat, streaming, an event malformed after K=3: the deltas, then stream_interrupted, no [DONE]; billed the estimate plus what was delivered", async () => {
    const c = await m.begin("malformed3 chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "malformed", afterChunks: 3 })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames).toHaveLength(4)
    expect(json(frames.at(-1)!).error).toMatchObject({ code: "stream_interrupted" })
    expect(frames.some((f) => f.data === "[DONE]")).toBe(false)
    const delivered = chatText(frames)
    const id = response.headers.get("x-request-id")!
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, estimatedInput(c.prompt), n(delivered)) }])
  })
})
