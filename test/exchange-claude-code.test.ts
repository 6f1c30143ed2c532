/**
 * Claude Code through the exchange (DESIGN.md section 10, "Agents' dialects"), over real sockets with the official
 * `@anthropic-ai/sdk` (its beta surface: `/v1/messages?beta=true` with the `anthropic-beta` header, as Claude Code
 * posts): the request bodies Claude Code 2.1.332 sends (test/fixtures/claude-code, captured against the simulator,
 * texts redacted), driven as a two-turn tool loop with thinking on, on an Anthropic model and on other vendors'. Each
 * turn is billed, and each bill is checked with arithmetic from the fixture cards' rates.
 *
 * The simulator checks what Anthropic checks: a replayed thinking block must carry the signature it issued for that
 * text, and the final tool-calling assistant turn must open with it. So a loop that completes on the Anthropic model
 * proves the exchange passed the signed block through untouched.
 */
import Anthropic from "@anthropic-ai/sdk"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import { capturedRequest } from "./support/claudeCode.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, expectedChargeWei, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"


const captured = capturedRequest

const firstTurn = captured("turn1")
const toolTurn = captured("turn2")
const betas = firstTurn.headers["anthropic-beta"]!.split(",")

let fx: ExchangeFixture
let key: { id: string; secret: string }
let anthropic: Anthropic

const api = () => makeClient(fx.baseUrl)
const generation = async (id: string) => {
  const answer = await api().call("GET", `/v1/generations/${id}`, undefined, { headers: { authorization: `Bearer ${key.secret}` } })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}
const balance = async () => BigInt((await api().call("GET", "/v1/account", undefined, { cookie: fx.cookie, ip: fx.ip })).body.balanceWei as string)
const received = async (): Promise<Array<{ path: string; headers: Record<string, string>; body: any }>> =>
  (await fetch(`${fx.simulatorUrl}/__control/requests`)).json() as Promise<any>

/** The rates of the fixture cards (test/fixtures/exchange/cards), per million, as decimal strings. */
const RATES = {
  "anthropic/claude-sonnet-4.5": { input: "3", output: "15", cacheRead: "0.3", write5m: "3.75", write1h: "6" },
  "deepseek/deepseek-reasoner": { input: "0.28", output: "0.42", cacheRead: "0.028", write5m: "0.28", write1h: "0.28" },
  "openai/gpt-5": { input: "1.25", output: "10", cacheRead: "0.125", write5m: "1.25", write1h: "1.25" },
  "openai/gpt-4.1": { input: "2", output: "8", cacheRead: "0.5", write5m: "2", write1h: "2" }
} as const

type Turn = Awaited<ReturnType<typeof sendTurn>>

/** One turn as Claude Code sends it (streamed, its betas in the header), read with the SDK's own stream reader. */
const sendTurn = async (model: string, messages: ReadonlyArray<unknown>) => {
  const body = { ...firstTurn.body, model, messages, stream: true, betas }
  const { data: stream, response } = await anthropic.beta.messages.create(body as any, { headers: { "x-app": "cli" } }).withResponse()
  const events: Array<any> = []
  for await (const event of stream as unknown as AsyncIterable<any>) events.push(event)
  const start = events.find((e) => e.type === "message_start")!.message
  const delta = events.filter((e) => e.type === "message_delta").at(-1)!
  // The reply's content blocks rebuilt from the events, as the SDK's accumulator (and Claude Code) does.
  const blocks: Array<any> = []
  for (const event of events) {
    if (event.type === "content_block_start") blocks[event.index] = { ...event.content_block }
    if (event.type !== "content_block_delta") continue
    const block = blocks[event.index]
    if (event.delta.type === "thinking_delta") block.thinking += event.delta.thinking
    if (event.delta.type === "signature_delta") block.signature += event.delta.signature
    if (event.delta.type === "text_delta") block.text += event.delta.text
    if (event.delta.type === "input_json_delta") block.partial = (block.partial ?? "") + event.delta.partial_json
  }
  const content = blocks.map(({ partial, ...block }) => (block.type === "tool_use" ? { ...block, input: JSON.parse(partial || "{}") } : block))
  return { id: start.id as string, model: start.model as string, response, content, stopReason: delta.delta.stop_reason as string, usage: delta.usage, bill: delta }
}

/** The turn's bill from the usage the client was shown, at the model's rates plus 5%. */
const expectBilled = async (turn: Turn, model: keyof typeof RATES) => {
  const rates = RATES[model]
  const u = turn.usage
  const charge = expectedChargeWei([
    [u.input_tokens, rates.input],
    [u.cache_read_input_tokens, rates.cacheRead],
    [u.cache_creation.ephemeral_5m_input_tokens, rates.write5m],
    [u.cache_creation.ephemeral_1h_input_tokens, rates.write1h],
    [u.output_tokens, rates.output]
  ])
  expect(charge).toBeGreaterThan(0n)
  const bill = await generation(turn.id)
  expect(bill).toMatchObject({ status: "completed", modelUsed: model, bill: { chargeWei: charge.toString() } })
  expect(turn.bill.x_credits_used).toBeCloseTo(Number(charge) / 1e18, 12)
  return charge
}

/**
 * Claude Code's second turn, asking `model`: its first turn, the assistant's reply, then the tool's result. As
 * Claude Code 2.1.197 does, the reply's signed thinking is replayed only when the reply's `model` is the id asked
 * for now (it strips signed blocks of a reply from "another model"; Anthropic then refuses the tool loop).
 */
const secondTurnMessages = (first: Turn, model: string) => {
  const toolUse = first.content.find((b) => b.type === "tool_use")
  expect(toolUse, "the first turn calls a tool").toBeDefined()
  const result = toolTurn.body.messages.at(-1).content[0]
  const signed = (b: any) => b.type === "redacted_thinking" || (b.type === "thinking" && Boolean(b.signature))
  const replayed = first.model === model ? first.content : first.content.filter((b) => !signed(b))
  return [
    ...firstTurn.body.messages,
    { role: "assistant", content: replayed },
    { role: "user", content: [{ ...result, tool_use_id: toolUse.id }] }
  ]
}

beforeAll(async () => {
  fx = await startExchangeFixture()
  key = await fx.issueKey({ label: "claude code" })
  await fx.grant(100n * ONE_CREDIT)
  anthropic = sdkClients(fx.baseUrl, key.secret).anthropic
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

describe("Claude Code's tool loop on an Anthropic model", () => {
  it("answers both turns; the betas and every Anthropic field reach the vendor untouched; each turn is billed", async () => {
    const before = await balance()
    const first = await sendTurn("claude-sonnet-4-5", firstTurn.body.messages)
    expect(first.response.headers.get("x-model-used")).toBe("anthropic/claude-sonnet-4.5")
    expect(first.response.headers.get("x-dropped-parameters")).toBeNull()
    expect(first.stopReason).toBe("tool_use")
    // display "omitted": the thinking block comes empty, with the vendor's signature for the client to replay.
    expect(first.content.map((b) => b.type)).toEqual(["thinking", "tool_use"])
    expect(first.content[0]).toMatchObject({ thinking: "" })
    expect(first.content[0].signature.length).toBeGreaterThan(10)

    const forwarded = (await received()).at(-1)!
    expect(forwarded.path).toBe("/v1/messages")
    expect(forwarded.headers["anthropic-beta"]).toBe(firstTurn.headers["anthropic-beta"])
    expect(forwarded.body.context_management).toEqual(firstTurn.body.context_management)
    expect(forwarded.body.output_config).toEqual(firstTurn.body.output_config)
    expect(forwarded.body.tools).toEqual(firstTurn.body.tools)
    expect(forwarded.body.system).toEqual(firstTurn.body.system)
    expect(forwarded.body.messages[1]).toEqual({ ...firstTurn.body.messages[1], content: [{ type: "text", text: firstTurn.body.messages[1].content[0].text, cache_control: { type: "ephemeral" } }] })

    // The reply names the model as it was asked, so Claude Code keeps its signed thinking for the next turn.
    expect(first.model).toBe("claude-sonnet-4-5")
    const second = await sendTurn("claude-sonnet-4-5", secondTurnMessages(first, "claude-sonnet-4-5"))
    expect(second.stopReason).toBe("end_turn")
    expect(second.content.some((b) => b.type === "text" && b.text.length > 0)).toBe(true)
    const replayed = (await received()).at(-1)!.body.messages
    expect(replayed.at(-2)).toEqual({ role: "assistant", content: first.content })
    expect(replayed.at(-1).content[0]).toMatchObject({ type: "tool_result", cache_control: { type: "ephemeral" } })

    const charges = [await expectBilled(first, "anthropic/claude-sonnet-4.5"), await expectBilled(second, "anthropic/claude-sonnet-4.5")]
    expect(await balance()).toBe(before - charges[0]! - charges[1]!)
  })

  it("is refused by the vendor when the signed block is tampered with: the check the loop above passed is real", async () => {
    const first = await sendTurn("claude-sonnet-4-5", firstTurn.body.messages)
    const messages = secondTurnMessages(first, "claude-sonnet-4-5")
    const forged = messages.map((m: any) =>
      m.role === "assistant" ? { ...m, content: m.content.map((b: any) => (b.type === "thinking" ? { ...b, signature: `x${b.signature}` } : b)) } : m)
    const refused = await anthropic.beta.messages
      .create({ ...firstTurn.body, model: "claude-sonnet-4-5", messages: forged, max_tokens: 16000, stream: false, betas } as any)
      .catch((e) => e)
    expect(refused).toBeInstanceOf(Anthropic.APIError)
    expect(JSON.stringify(refused.error)).toMatch(/signature/)
  })
})

describe("Claude Code's tool loop on other vendors", () => {
  it.each([
    ["deepseek-reasoner", "deepseek/deepseek-reasoner", "medium"],
    ["gpt-5", "openai/gpt-5", "medium"],
    // A model that cannot reason: adaptive thinking lets the model decide, so it answers without (named dropped).
    ["gpt-4.1", "openai/gpt-4.1", undefined]
  ] as const)("%s answers both turns, names what it dropped, and bills each turn", async (model, key, effort) => {
    const first = await sendTurn(model, firstTurn.body.messages)
    expect(first.response.headers.get("x-model-used")).toBe(key)
    const dropped = first.response.headers.get("x-dropped-parameters")!.split(", ")
    expect(dropped).toEqual(expect.arrayContaining(["anthropic-beta", "context_management", "messages[].output_config", "tools[].defer_loading"]))
    expect(dropped.includes("thinking")).toBe(effort === undefined)
    expect(first.stopReason).toBe("tool_use")
    // Another vendor's reasoning is never signed, and its text was asked to be withheld: no thinking block at all.
    expect(first.content.map((b) => b.type)).toEqual(["tool_use"])
    const forwarded = (await received()).at(-1)!
    expect(forwarded.path).toBe("/v1/chat/completions")
    expect(forwarded.body.reasoning_effort).toBe(effort)
    expect(JSON.stringify(forwarded.body)).not.toMatch(/context_management|defer_loading|clear_thinking/)

    expect(first.model).toBe(model)
    const second = await sendTurn(model, secondTurnMessages(first, model))
    expect(second.stopReason).toBe("end_turn")
    const replayed = (await received()).at(-1)!.body.messages
    // DeepSeek in thinking mode refuses a tool-calling turn without reasoning_content: it gets an empty one.
    if (key.startsWith("deepseek/")) expect(replayed.find((m: any) => m.role === "assistant")).toMatchObject({ reasoning_content: "" })
    await expectBilled(first, key)
    await expectBilled(second, key)
  })
})

describe("POST /v1/messages/count_tokens", () => {
  const count = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fx.baseUrl}/v1/messages/count_tokens?beta=true`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key.secret, "anthropic-version": "2023-06-01", ...headers },
      body: JSON.stringify(body)
    })

  it("answers an Anthropic model with the vendor's own count, free", async () => {
    const before = await balance()
    // The first turn: the tool turn's replayed signature was issued by another simulator, which this one refuses.
    const { max_tokens: _max, stream: _stream, ...prompt } = firstTurn.body
    const answer = await anthropic.beta.messages.countTokens({ ...prompt, model: "claude-sonnet-4-5", betas } as any)
    const forwarded = (await received()).at(-1)!
    expect(forwarded.path).toBe("/v1/messages/count_tokens")
    // As the SDK sent them: the client's betas and the one the SDK adds for counting.
    expect(forwarded.headers["anthropic-beta"]).toBe([...betas, "token-counting-2024-11-01"].join(","))
    // The vendor's count of exactly what was forwarded.
    const vendor = await fetch(`${fx.simulatorUrl}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sim", "anthropic-version": "2023-06-01" },
      body: JSON.stringify(forwarded.body)
    })
    const vendorAnswer = (await vendor.json()) as { input_tokens: number }
    expect(vendor.status, JSON.stringify(vendorAnswer)).toBe(200)
    expect(answer.input_tokens).toBe(vendorAnswer.input_tokens)
    expect(answer.input_tokens).toBeGreaterThan(1000)
    expect(await balance()).toBe(before)
  })

  it("answers another vendor's model with the exchange's estimate, the same the hold uses", async () => {
    const response = await count({ model: "gpt-5", messages: [{ role: "user", content: "How many tokens is this?" }] })
    expect(response.status).toBe(200)
    const { input_tokens } = (await response.json()) as { input_tokens: number }
    // o200k of the text plus the chat framing (4 per message, 3 for the reply), at OpenAI's ratio of 1.
    expect(input_tokens).toBe(encode("How many tokens is this?").length + 4 + 3)
  })

  it("refuses in the envelope: an unknown model with the closest ids, a missing key, a body no vendor takes", async () => {
    const unknown = await count({ model: "claude-sonet-4-5", messages: [{ role: "user", content: "x" }] })
    expect(unknown.status).toBe(422)
    const body = (await unknown.json()) as { error: { code: string; param: string; message: string } }
    expect(body.error).toMatchObject({ param: "model" })
    expect(body.error.message).toContain("anthropic/claude-sonnet-4.5")
    const noKey = await count({ model: "gpt-5", messages: [] }, { "x-api-key": "" })
    expect(noKey.status).toBe(401)
    const strange = await count({ model: "gpt-5", messages: [{ role: "user", content: "x" }], frobnicate: true })
    expect(strange.status).toBe(422)
    expect(((await strange.json()) as { error: { param: string } }).error.param).toBe("frobnicate")
  })
})
