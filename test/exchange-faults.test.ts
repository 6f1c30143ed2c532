/**
 * The fault matrix (issue 11 item 7): each upstream or client failure scripted through the simulator's fault control
 * (simulator/README.md), against the real server on a socket, on PostgreSQL or PGlite. For every case three things are
 * asserted:
 * - what the client sees: the status and `error.code` of the envelope, or the stream's frames up to
 *   `stream_interrupted` when a stream is cut after its first byte;
 * - what is billed: the balance change, the `charge` ledger entries under the request id (exactly one, or none) and the
 *   stored bill, against arithmetic written here from the fixture cards' rates (test/fixtures/exchange) and the
 *   simulator's counts (README "Token counts": 3 per message + the text + 3 priming the reply; the reply's own
 *   tokens) — or, for a stream the vendor never reported usage on, docs/decisions.md "What is billed when the vendor
 *   reported nothing": our input estimate (4 per message + the text + 3) and the o200k count of what was delivered;
 * - no hold left behind: no hold of the account is still live (neither released nor settled) once the case settles.
 * The last case runs the service as its own process, SIGKILLs it mid-request and restarts it on the same database.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { EXCHANGE_FIXTURES, type ExchangeFixture } from "./support/exchangeServer.ts"
import {
  attemptsOf,
  type Case,
  charge,
  CHAT,
  chatBody,
  chatText,
  CLAUDE,
  DEEPSEEK,
  DRAIN_TIMEOUT_MS,
  type Endpoint,
  estimatedInput,
  expectErrorEnvelope,
  type FaultMatrix,
  FIRST_BYTE_TIMEOUT_MS,
  GPT41,
  isChatText,
  isMessagesText,
  json,
  MESSAGES,
  messagesBody,
  messagesText,
  n,
  PROVIDERS_FILE,
  readFrames,
  startFaultMatrix,
  upstreamKeyOf,
  upstreamModelOf,
  vendorInput
} from "./support/faultMatrix.ts"
import { cleanEnv, type ServiceProcess, startService } from "./support/process.ts"
import { freePort } from "./support/server.ts"
import { waitFor } from "./support/polling.ts"
import { recordFigure } from "./support/reliability.ts"

let m: FaultMatrix
let fx: ExchangeFixture
let chainPort: number
const children: Array<ServiceProcess> = []
const tempDirs: Array<string> = []

beforeAll(async () => {
  chainPort = await freePort()
  // The restarted process of the last case is the one that sweeps (the matrix's server never does).
  m = await startFaultMatrix({ EMBEDDED_CHAIN_PORT: String(chainPort) })
  fx = m.fx
}, 120_000)

afterAll(async () => {
  const { cases, faults } = m?.tally() ?? { cases: 0, faults: 0 }
  if (cases > 0) {
    recordFigure({
      suite: "test/exchange-faults.test.ts",
      tried: "upstream 500s, 429s, timeouts, slow first bytes, cut streams, clients leaving, the exchange SIGKILLed mid-request",
      volume: `${cases} cases, ${faults} faults injected`,
      held: "the next key or candidate served, or the envelope's error; every bill exact to the vendor's counts (or the estimate plus what was delivered); no hold left live; a killed exchange's holds swept, uncharged"
    })
  }
  for (const child of children) await child.stop("SIGKILL")
  await fx?.close()
  for (const dir of tempDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------------------------

describe("upstream 500", () => {
  it("chat, not streaming: the next key serves; billed once at the vendor's counts; the hold is settled", async () => {
    const c = await m.begin("500 chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "error500" })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    const body = (await response.json()) as any
    const text = body.choices[0].message.content as string
    expect(text).toMatch(/^Simulated reply from gpt-4\.1/)
    expect(body.usage).toMatchObject({ prompt_tokens: vendorInput(c.prompt), completion_tokens: n(text) })
    const id = response.headers.get("x-request-id")!
    const calls = await m.upstreamCalls(c)
    expect(calls).toHaveLength(2)
    const [failed, served] = calls.map(upstreamKeyOf)
    expect(served).not.toBe(failed)
    const bill = await m.generation(c, id)
    expect(attemptsOf(bill)).toEqual([["status", 500, failed], ["served", 200, served]])
    const wei = charge(GPT41, vendorInput(c.prompt), n(text))
    expect(response.headers.get("x-compute-used")).toBe(wei.toString())
    expect(bill).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: vendorInput(c.prompt), output: n(text) } })
    await m.expectBilled(c, [{ id, chargeWei: wei }])
  })

  it("chat, streaming: a 500 before the first byte moves to the next key and the client gets one whole stream", async () => {
    const c = await m.begin("500 chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "error500" })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.data).toBe("[DONE]")
    expect(json(frames[0]!).choices[0].delta.role).toBe("assistant")
    const final = json(frames.at(-2)!)
    const text = chatText(frames)
    expect(final.choices[0].finish_reason).toBe("stop")
    expect(final.usage).toMatchObject({ prompt_tokens: vendorInput(c.prompt), completion_tokens: n(text) })
    const id = response.headers.get("x-request-id")!
    const bill = await m.generation(c, id)
    expect(attemptsOf(bill).map(([outcome, status]) => [outcome, status])).toEqual([["status", 500], ["served", 200]])
    const wei = charge(GPT41, vendorInput(c.prompt), n(text))
    expect(final.x_credits_used).toBeCloseTo(Number(wei) / 1e18, 12)
    await m.expectBilled(c, [{ id, chargeWei: wei }])
  })

  it("chat: every key of the first candidate answering 500 moves to the next candidate, billed at that model's rates", async () => {
    const c = await m.begin("500 next candidate")
    await fx.fault({ model: "gemini-2.5-flash", fault: "error500", count: 2 })
    const response = await m.post(c, CHAT, chatBody(c, "google/gemini-2.5-flash", { models: ["openai/gpt-4.1"] }))
    expect(response.status).toBe(200)
    expect(response.headers.get("x-model-used")).toBe("openai/gpt-4.1")
    expect(response.headers.get("x-model-requested")).toBe("google/gemini-2.5-flash")
    expect(response.headers.get("x-fallback-used")).toBe("true")
    const body = (await response.json()) as any
    const text = body.choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const calls = (await m.upstreamCalls(c)).map((r) => [upstreamModelOf(r), upstreamKeyOf(r)])
    expect(calls.slice(0, 2).sort()).toEqual([["gemini-2.5-flash", "google#1"], ["gemini-2.5-flash", "google#2"]])
    expect(calls.slice(2).map(([model]) => model)).toEqual(["gpt-4.1"])
    const bill = await m.generation(c, id)
    // Each attempt is recorded: both keys' 500s, the model then having no key left, the next candidate serving.
    expect(attemptsOf(bill)).toEqual([
      ["status", 500, calls[0]![1]],
      ["status", 500, calls[1]![1]],
      ["no_capacity", null, null],
      ["served", 200, calls[2]![1]]
    ])
    expect(bill.modelUsed).toBe("openai/gpt-4.1")
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("chat: while both keys rest after their 500s, the model alone answers 502 all_keys_exhausted without calling the vendor; nothing billed", async () => {
    const c = await m.begin("500 resting keys")
    const response = await m.post(c, CHAT, chatBody(c, "google/gemini-2.5-flash"))
    await expectErrorEnvelope(response, 502, "all_keys_exhausted")
    expect(await m.upstreamCalls(c)).toEqual([])
    await m.expectNothingBilled(c, 1)
  })

  it("messages, not streaming: an Anthropic 500 moves to the next key; billed once at the vendor's counts", async () => {
    const c = await m.begin("500 messages whole")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "error500" })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5"))
    expect(response.status).toBe(200)
    const body = (await response.json()) as any
    expect(body.type).toBe("message")
    const text = body.content[0].text as string
    expect(body.usage).toMatchObject({ input_tokens: vendorInput(c.prompt), output_tokens: n(text) })
    const id = response.headers.get("x-request-id")!
    const calls = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(calls).toHaveLength(2)
    expect(calls[1]).not.toBe(calls[0])
    expect(attemptsOf(await m.generation(c, id))).toEqual([["status", 500, calls[0]], ["served", 200, calls[1]]])
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })
})

describe("upstream 429 with Retry-After", () => {
  // The key's return when the window ends is a rule of time: test/time-key-pools.test.ts moves the clock for it.
  it("chat: the next key serves, and the limited key rests for Retry-After: requests inside the window avoid it", async () => {
    const c = await m.begin("429 cooldown")
    await fx.fault({ model: "deepseek-reasoner", fault: "rate_limited", retryAfterSeconds: 2 })
    const send = async () => {
      const response = await m.post(c, CHAT, chatBody(c, "deepseek/deepseek-reasoner"))
      expect(response.status).toBe(200)
      const body = (await response.json()) as any
      return { id: response.headers.get("x-request-id")!, usage: body.usage as { prompt_tokens: number; completion_tokens: number } }
    }
    const first = await send()
    const limitedAt = Date.now()
    const afterFirst = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(afterFirst).toHaveLength(2)
    const [limited, other] = afterFirst as [string, string]
    expect(other).not.toBe(limited)
    expect(attemptsOf(await m.generation(c, first.id))).toEqual([["status", 429, limited], ["served", 200, other]])
    // Round robin would hand the limited key the next request; inside its window both go to the other key.
    const inside = [await send(), await send()]
    expect(Date.now() - limitedAt).toBeLessThan(2_000)
    expect((await m.upstreamCalls(c)).slice(2).map(upstreamKeyOf)).toEqual([other, other])
    const all = [first, ...inside]
    for (const r of all) expect(r.usage.prompt_tokens).toBe(vendorInput(c.prompt))
    await m.expectBilled(c, all.map((r) => ({ id: r.id, chargeWei: charge(DEEPSEEK, r.usage.prompt_tokens, r.usage.completion_tokens) })))
  })

  it("messages, streaming: a 429 before the first byte moves to the next key; one whole stream, billed once", async () => {
    const c = await m.begin("429 messages stream")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "rate_limited", retryAfterSeconds: 1 })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.map((f) => f.event).filter((e, i, all) => e !== all[i - 1])).toEqual([
      "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"
    ])
    const text = messagesText(frames)
    const delta = json(frames.find((f) => f.event === "message_delta")!)
    expect(delta.usage.output_tokens).toBe(n(text))
    const id = response.headers.get("x-request-id")!
    expect(attemptsOf(await m.generation(c, id)).map(([outcome, status]) => [outcome, status])).toEqual([["status", 429], ["served", 200]])
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })
})

describe("upstream timeout before the first byte", () => {
  it("chat, not streaming: after UPSTREAM_FIRST_BYTE_TIMEOUT_MS the next key serves; billed once", async () => {
    const c = await m.begin("timeout chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "timeout" })
    const started = Date.now()
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(FIRST_BYTE_TIMEOUT_MS - 50)
    const body = (await response.json()) as any
    const text = body.choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const keys = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(attemptsOf(await m.generation(c, id))).toEqual([["timeout", null, keys[0]], ["served", 200, keys[1]]])
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("messages, streaming: a silent upstream is left after the timeout and the next key streams; billed once", async () => {
    const c = await m.begin("timeout messages stream")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "timeout" })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.event).toBe("message_stop")
    const text = messagesText(frames)
    const id = response.headers.get("x-request-id")!
    expect(attemptsOf(await m.generation(c, id)).map(([outcome]) => outcome)).toEqual(["timeout", "served"])
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })
})

describe("slow first byte", () => {
  it("chat, not streaming, below the timeout: the slow key itself serves, billed normally", async () => {
    const c = await m.begin("slow below chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 400 })
    const started = Date.now()
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
    const text = ((await response.json()) as any).choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const keys = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(attemptsOf(await m.generation(c, id))).toEqual([["served", 200, keys[0]]])
    expect(keys).toHaveLength(1)
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("chat, streaming, below the timeout: one upstream call, one whole stream, billed normally", async () => {
    const c = await m.begin("slow below chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 400 })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.data).toBe("[DONE]")
    const text = chatText(frames)
    const id = response.headers.get("x-request-id")!
    expect(await m.upstreamCalls(c)).toHaveLength(1)
    expect(attemptsOf(await m.generation(c, id)).map(([outcome]) => outcome)).toEqual(["served"])
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("messages, not streaming, below the timeout: served by the slow key, billed normally", async () => {
    const c = await m.begin("slow below messages whole")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_first_byte", delayMs: 400 })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5"))
    expect(response.status).toBe(200)
    const text = ((await response.json()) as any).content[0].text as string
    const id = response.headers.get("x-request-id")!
    expect(await m.upstreamCalls(c)).toHaveLength(1)
    expect(attemptsOf(await m.generation(c, id)).map(([outcome]) => outcome)).toEqual(["served"])
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })

  it("chat, streaming, above the timeout: the slow key is left and the next one streams; billed once", async () => {
    const c = await m.begin("slow above chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: FIRST_BYTE_TIMEOUT_MS + 1_000 })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    const text = chatText(frames)
    const id = response.headers.get("x-request-id")!
    const keys = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(attemptsOf(await m.generation(c, id))).toEqual([["timeout", null, keys[0]], ["served", 200, keys[1]]])
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("messages, not streaming, above the timeout: the next key answers; billed once", async () => {
    const c = await m.begin("slow above messages whole")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_first_byte", delayMs: FIRST_BYTE_TIMEOUT_MS + 1_000 })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5"))
    expect(response.status).toBe(200)
    const text = ((await response.json()) as any).content[0].text as string
    const id = response.headers.get("x-request-id")!
    expect(attemptsOf(await m.generation(c, id)).map(([outcome]) => outcome)).toEqual(["timeout", "served"])
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })
})

describe("a drop after K chunks", () => {
  it("K=0, chat, not streaming: the connection cut before any answer moves to the next key; billed once", async () => {
    const c = await m.begin("drop0 chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "drop" })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    const text = ((await response.json()) as any).choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const keys = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(keys[1]).not.toBe(keys[0])
    expect(attemptsOf(await m.generation(c, id)).map(([outcome]) => outcome)).toEqual(["network", "served"])
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("K=0, chat, streaming: a stream cut before its first chunk, with nothing sent to the client, moves to the next key", async () => {
    const c = await m.begin("drop0 chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "drop", afterChunks: 0 })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(frames.map((f) => f.data).filter((d) => d.includes("stream_interrupted"))).toEqual([])
    expect(ended).toBe(true)
    expect(frames.at(-1)!.data).toBe("[DONE]")
    const text = chatText(frames)
    expect(text).toMatch(/^Simulated reply from gpt-4\.1/)
    const id = response.headers.get("x-request-id")!
    const keys = (await m.upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(keys[1]).not.toBe(keys[0])
    const bill = await m.generation(c, id)
    expect(bill.status).toBe("completed")
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("K=0, messages, streaming: the same through /v1/messages, from an Anthropic upstream", async () => {
    const c = await m.begin("drop0 messages stream")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "drop", afterChunks: 0 })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(frames.filter((f) => f.event === "error")).toEqual([])
    expect(ended).toBe(true)
    expect(frames.at(-1)!.event).toBe("message_stop")
    const text = messagesText(frames)
    const id = response.headers.get("x-request-id")!
    expect((await m.upstreamCalls(c))).toHaveLength(2)
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })

  it("K=3, chat, streaming: the client gets the delivered deltas then stream_interrupted; billed our input estimate plus what was delivered", async () => {
    const c = await m.begin("drop3 chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "drop", afterChunks: 3 })
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    // The role chunk and two content deltas (the simulator's first three chunks), then the interruption, no [DONE].
    expect(frames).toHaveLength(4)
    expect(json(frames[0]!).choices[0].delta.role).toBe("assistant")
    const last = json(frames.at(-1)!)
    expect(last.error).toMatchObject({ code: "stream_interrupted", type: "server_error" })
    expect(frames.some((f) => f.data === "[DONE]")).toBe(false)
    const delivered = chatText(frames)
    expect(delivered).toMatch(/^Simulated/)
    const id = response.headers.get("x-request-id")!
    expect(await m.upstreamCalls(c)).toHaveLength(1)
    const bill = await m.generation(c, id)
    expect(bill).toMatchObject({
      status: "interrupted",
      usage: { source: "partly_estimated", freshInput: estimatedInput(c.prompt), output: n(delivered) }
    })
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, estimatedInput(c.prompt), n(delivered)) }])
  })

  it("K=4, messages, streaming from an OpenAI upstream: deltas, then an error event with stream_interrupted; billed the estimate plus what was delivered", async () => {
    const c = await m.begin("drop4 messages stream")
    await fx.fault({ model: "gpt-4.1", fault: "drop", afterChunks: 4 })
    const response = await m.post(c, MESSAGES, messagesBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames[0]!.event).toBe("message_start")
    const error = frames.at(-1)!
    expect(error.event).toBe("error")
    expect(json(error)).toMatchObject({ type: "error", error: { type: "server_error", code: "stream_interrupted" } })
    expect(frames.some((f) => f.event === "message_stop")).toBe(false)
    const delivered = messagesText(frames)
    expect(n(delivered)).toBeGreaterThan(0)
    const id = response.headers.get("x-request-id")!
    const bill = await m.generation(c, id)
    expect(bill).toMatchObject({ status: "interrupted", usage: { source: "partly_estimated", freshInput: estimatedInput(c.prompt), output: n(delivered) } })
    await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, estimatedInput(c.prompt), n(delivered)) }])
  })

  it("K=5, messages, streaming from an Anthropic upstream: stream_interrupted; input at the vendor's reported count, output as delivered", async () => {
    const c = await m.begin("drop5 messages anthropic")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "drop", afterChunks: 5 })
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.event).toBe("error")
    expect(json(frames.at(-1)!).error.code).toBe("stream_interrupted")
    expect(json(frames[0]!).message.usage.input_tokens).toBe(vendorInput(c.prompt))
    const delivered = messagesText(frames)
    expect(n(delivered)).toBeGreaterThan(1)
    const id = response.headers.get("x-request-id")!
    const bill = await m.generation(c, id)
    expect(bill.status).toBe("interrupted")
    expect(bill.usage).toMatchObject({ freshInput: vendorInput(c.prompt), output: n(delivered) })
    await m.expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(delivered)) }])
  })
})

describe("the client disconnecting", () => {
  /** The answer the same prompt gets when nothing fails (the simulator is deterministic): the vendor's full counts. */
  const fullAnswer = async (c: Case, path: Endpoint, model: string) => {
    const response = await m.post(c, path, path === CHAT ? chatBody(c, model) : messagesBody(c, model))
    expect(response.status).toBe(200)
    const body = (await response.json()) as any
    const text: string = path === CHAT ? body.choices[0].message.content : body.content[0].text
    const usage = path === CHAT
      ? { input: body.usage.prompt_tokens as number, output: body.usage.completion_tokens as number }
      : { input: body.usage.input_tokens as number, output: body.usage.output_tokens as number }
    expect(usage).toEqual({ input: vendorInput(c.prompt), output: n(text) })
    return { id: response.headers.get("x-request-id")!, text, usage }
  }

  /** Sends, and aborts as soon as the simulator has the upstream request, before any byte of the answer. */
  const abortBeforeFirstByte = async (c: Case, path: Endpoint, body: Record<string, unknown>) => {
    const controller = new AbortController()
    const sent = m.post(c, path, body, { signal: controller.signal }).then(
      (response) => ({ status: response.status as number | undefined, error: undefined as unknown }),
      (error: unknown) => ({ status: undefined, error })
    )
    await waitFor("the upstream request", async () => (await m.upstreamCalls(c)).length === 1)
    controller.abort()
    return sent
  }

  it("before the first byte, chat, not streaming: the exchange reads the upstream answer anyway and bills its full usage once", async () => {
    const c = await m.begin("gone before first byte chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 500 })
    const outcome = await abortBeforeFirstByte(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(outcome.status).toBeUndefined()
    expect((outcome.error as Error).name).toBe("AbortError")
    const id = await m.onlyHold(c)
    await m.noHoldLeft()
    const full = await fullAnswer(c, CHAT, "openai/gpt-4.1")
    const bill = await m.generation(c, id)
    expect(bill).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(GPT41, full.usage.input, full.usage.output)
    await m.expectBilled(c, [{ id, chargeWei: wei }, { id: full.id, chargeWei: wei }])
  })

  it("before the first byte, chat, streaming: the upstream is drained to its usage and billed once", async () => {
    const c = await m.begin("gone before first byte chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 500 })
    const outcome = await abortBeforeFirstByte(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(outcome.status).toBeUndefined()
    const id = await m.onlyHold(c)
    await m.noHoldLeft()
    const full = await fullAnswer(c, CHAT, "openai/gpt-4.1")
    expect(await m.generation(c, id)).toMatchObject({ status: "completed", stream: true, usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(GPT41, full.usage.input, full.usage.output)
    await m.expectBilled(c, [{ id, chargeWei: wei }, { id: full.id, chargeWei: wei }])
  })

  it("before the first byte, messages, streaming: the same through /v1/messages", async () => {
    const c = await m.begin("gone before first byte messages stream")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_first_byte", delayMs: 500 })
    const outcome = await abortBeforeFirstByte(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(outcome.status).toBeUndefined()
    const id = await m.onlyHold(c)
    await m.noHoldLeft()
    const full = await fullAnswer(c, MESSAGES, "anthropic/claude-sonnet-4.5")
    expect(await m.generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(CLAUDE, full.usage.input, full.usage.output)
    await m.expectBilled(c, [{ id, chargeWei: wei }, { id: full.id, chargeWei: wei }])
  })

  it("mid-stream, chat, the upstream still sending: it is drained to its end and billed its full usage once", async () => {
    const c = await m.begin("gone mid-stream chat drained")
    const full = await fullAnswer(c, CHAT, "openai/gpt-4.1")
    await fx.fault({ model: "gpt-4.1", fault: "slow_stream", delayMs: 15 })
    const controller = new AbortController()
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }), { signal: controller.signal })
    const id = response.headers.get("x-request-id")!
    const { frames } = await readFrames(response, isChatText)
    controller.abort()
    const received = chatText(frames)
    expect(n(received)).toBeLessThan(full.usage.output)
    await m.noHoldLeft()
    expect(await m.generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(GPT41, full.usage.input, full.usage.output)
    await m.expectBilled(c, [{ id: full.id, chargeWei: wei }, { id, chargeWei: wei }])
  })

  it("mid-stream, chat, the upstream stalled: cut after STREAM_DRAIN_TIMEOUT_MS, billed the estimate plus what was delivered", async () => {
    const c = await m.begin("gone mid-stream chat stalled")
    await fx.fault({ model: "gpt-4.1", fault: "stall", afterChunks: 3 })
    try {
      const controller = new AbortController()
      const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }), { signal: controller.signal })
      const id = response.headers.get("x-request-id")!
      // The role chunk and two deltas: everything the upstream sent before it stalled.
      const { frames } = await readFrames(response, (_, all) => all.length === 3)
      controller.abort()
      const abortedAt = Date.now()
      const delivered = chatText(frames)
      expect(n(delivered)).toBeGreaterThan(0)
      expect((await m.liveHolds()).map((h) => h.request_id)).toEqual([id])
      await waitFor("the hold to close once the drain timeout cut the upstream", async () => (await m.liveHolds()).length === 0, DRAIN_TIMEOUT_MS + 3_000)
      expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(DRAIN_TIMEOUT_MS - 100)
      expect(await m.generation(c, id)).toMatchObject({
        status: "interrupted",
        usage: { source: "partly_estimated", freshInput: estimatedInput(c.prompt), output: n(delivered) }
      })
      await m.expectBilled(c, [{ id, chargeWei: charge(GPT41, estimatedInput(c.prompt), n(delivered)) }])
    } finally {
      // Whatever happened above, the stalled upstream connection does not outlive the case.
      await fetch(`${fx.simulatorUrl}/__control/held`, { method: "DELETE" })
    }
  })

  it("mid-stream, messages, the Anthropic upstream still sending: drained to its final usage and billed once", async () => {
    const c = await m.begin("gone mid-stream messages drained")
    const full = await fullAnswer(c, MESSAGES, "anthropic/claude-sonnet-4.5")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_stream", delayMs: 15 })
    const controller = new AbortController()
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }), { signal: controller.signal })
    const id = response.headers.get("x-request-id")!
    const { frames } = await readFrames(response, isMessagesText)
    controller.abort()
    expect(n(messagesText(frames))).toBeLessThan(full.usage.output)
    await m.noHoldLeft()
    expect(await m.generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(CLAUDE, full.usage.input, full.usage.output)
    await m.expectBilled(c, [{ id: full.id, chargeWei: wei }, { id, chargeWei: wei }])
  })

  it("after the last chunk, chat: every delta received, gone before the final usage chunk: billed the full usage once, completed", async () => {
    const c = await m.begin("gone after last chunk chat")
    const full = await fullAnswer(c, CHAT, "openai/gpt-4.1")
    await fx.fault({ model: "gpt-4.1", fault: "slow_stream", delayMs: 15 })
    const controller = new AbortController()
    const response = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }), { signal: controller.signal })
    const id = response.headers.get("x-request-id")!
    const { frames } = await readFrames(response, (_, all) => chatText(all) === full.text)
    controller.abort()
    expect(frames.every((f) => json(f).usage == null && json(f).choices[0].finish_reason == null)).toBe(true)
    await m.noHoldLeft()
    expect(await m.generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(GPT41, full.usage.input, full.usage.output)
    await m.expectBilled(c, [{ id: full.id, chargeWei: wei }, { id, chargeWei: wei }])
  })

  it("after the last chunk, messages: every text delta received, gone before message_delta: billed the full usage once, completed", async () => {
    const c = await m.begin("gone after last chunk messages")
    const full = await fullAnswer(c, MESSAGES, "anthropic/claude-sonnet-4.5")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_stream", delayMs: 15 })
    const controller = new AbortController()
    const response = await m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }), { signal: controller.signal })
    const id = response.headers.get("x-request-id")!
    const { frames } = await readFrames(response, (_, all) => messagesText(all) === full.text)
    controller.abort()
    expect(frames.some((f) => f.event === "message_delta")).toBe(false)
    await m.noHoldLeft()
    expect(await m.generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(CLAUDE, full.usage.input, full.usage.output)
    await m.expectBilled(c, [{ id: full.id, chargeWei: wei }, { id, chargeWei: wei }])
  })
})

describe("the exchange killed mid-request and restarted", () => {
  /** The service as its own process (src/main.ts) on the suite's database, simulator and chain; ready once it routes. */
  const startChild = async (env: Record<string, string>) => {
    const port = await freePort()
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-faults-"))
    const priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-faults-prices-"))
    tempDirs.push(dataDir, priceDir)
    Fs.cpSync(EXCHANGE_FIXTURES, priceDir, { recursive: true })
    const registry = (await makeClient(fx.baseUrl).call("GET", "/v1/oracle/contract-metadata")).body.address as string
    const service = startService(
      cleanEnv({
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: fx.database.url,
        RPC_URL: `http://127.0.0.1:${chainPort}`,
        REGISTRY_ADDRESS: registry,
        PRICE_DATA_DIR: priceDir,
        PRICE_SCAN_INTERVAL_HOURS: "0",
        CHAIN_SYNC_INTERVAL_SECONDS: "0",
        FUNDING_SCAN_INTERVAL_SECONDS: "0",
        PROVIDERS_FILE,
        SIMULATOR_URL: fx.simulatorUrl,
        RATE_LIMIT_ENABLED: "false",
        LOG_LEVEL: "WARN",
        ...env
      })
    )
    children.push(service)
    const baseUrl = `http://127.0.0.1:${port}`
    await waitFor(
      "the service process to route the catalog",
      async () => {
        if (service.child.exitCode !== null) throw new Error(`the service exited with ${service.child.exitCode}:\n${service.output()}`)
        try {
          const models = (await (await fetch(`${baseUrl}/v1/models`)).json()) as { data?: Array<unknown> }
          return (models.data?.length ?? 0) > 0
        } catch {
          return false
        }
      },
      60_000
    )
    return { service, baseUrl }
  }

  it("SIGKILL with a chat and a messages stream in flight: the client sees the connection drop, the holds stay until the restarted exchange's sweeper releases them, nothing is charged", async () => {
    const c = await m.begin("killed mid-request")
    // The holds it takes expire after 3 s; its own sweeper is off, so only the restarted process can release them.
    const first = await startChild({ UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "60000", HOLD_TTL_SECONDS: "3", HOLD_SWEEP_INTERVAL_SECONDS: "0" })
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 60_000 })
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_first_byte", delayMs: 60_000 })
    const settle = (request: Promise<Response>) =>
      request.then(
        async (response) => ({ status: response.status as number | undefined, body: await response.text().catch((e: unknown) => String(e)) }),
        (error: unknown) => ({ status: undefined, body: String(error) })
      )
    const chat = settle(m.post(c, CHAT, chatBody(c, "openai/gpt-4.1"), { baseUrl: first.baseUrl }))
    const messages = settle(m.post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }), { baseUrl: first.baseUrl }))
    await waitFor("both upstream requests in flight", async () => (await m.upstreamCalls(c)).length === 2, 10_000)
    const held = await m.holdsOf(c)
    expect(held).toHaveLength(2)
    const reserved = held.reduce((sum, h) => sum + BigInt(h.amount_wei), 0n)

    expect(await first.service.stop("SIGKILL")).toBeNull()
    // What the clients see: the connection dropped, no status, no byte.
    expect(await chat).toEqual({ status: undefined, body: expect.stringMatching(/fetch failed|terminated|socket|ECONNRESET/i) })
    expect(await messages).toEqual({ status: undefined, body: expect.stringMatching(/fetch failed|terminated|socket|ECONNRESET/i) })
    // The crash left both holds live: reserved, not charged.
    expect((await m.liveHolds()).map((h) => h.request_id).sort()).toEqual(held.map((h) => h.request_id).sort())
    expect(await m.balances()).toEqual({ balance: c.balanceBefore, reserved })

    const second = await startChild({ HOLD_SWEEP_INTERVAL_SECONDS: "0.5" })
    await waitFor("the restarted sweeper to release both holds", async () => (await m.liveHolds()).length === 0, 10_000)
    await m.expectNothingBilled(c, 2)
    // Released by the restarted process's sweep job (the only sweeper running), two holds in all.
    const sweeps = await fx.query("SELECT summary FROM job_runs WHERE job = 'hold-sweep' AND outcome = 'succeeded'")
    expect(sweeps.reduce((sum, run) => sum + Number(/^(\d+) expired hold\(s\) released$/.exec(run.summary)![1]), 0)).toBe(2)
    for (const hold of held) {
      const answer = await makeClient(second.baseUrl).call("GET", `/v1/generations/${hold.request_id}`, undefined, { headers: { authorization: `Bearer ${c.key}` } })
      expect(answer.status).toBe(404)
    }

    // The restarted exchange serves and bills the next request normally.
    const after = await m.post(c, CHAT, chatBody(c, "openai/gpt-4.1"), { baseUrl: second.baseUrl })
    expect(after.status).toBe(200)
    const text = ((await after.json()) as any).choices[0].message.content as string
    const id = after.headers.get("x-request-id")!
    const wei = charge(GPT41, vendorInput(c.prompt), n(text))
    const entries = await fx.query("SELECT reference, amount_wei FROM ledger_entries WHERE kind = 'charge' AND api_key_id = $1", [c.keyId])
    expect(entries.map((e) => [e.reference, BigInt(e.amount_wei)])).toEqual([[id, -wei]])
    expect(await m.balances()).toEqual({ balance: c.balanceBefore - wei, reserved: 0n })
    expect(await second.service.stop("SIGTERM")).toBe(0)
  }, 120_000)
})
