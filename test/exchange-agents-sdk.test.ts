/**
 * The OpenAI Agents SDK (`@openai/agents` 0.20) through the exchange (DESIGN.md section 10, "Agents' dialects"), over
 * real sockets against the simulator: an agent with one function tool runs its loop (model call, the tool executed
 * here with the model's arguments, model call, final text) in the SDK's default Responses mode (whole and streamed, on
 * an OpenAI and an Anthropic model) and in its chat-completions mode. The final text is the vendor's; each model call
 * leaves one bill under its inbound format, equal to the arithmetic of the card's rates on the usage the SDK was shown,
 * and the balance falls by exactly the bills. A run continued with `previousResponseId` sends only its new items: the
 * exchange rebuilds the conversation from its store for the vendor. Nothing leaves the machine: the SDK's tracing is
 * off, its client (the SDK's own `openai` v7, not the project's v6) points at the exchange, and every fetch is checked.
 */
import { Agent, type Model, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, type RunResult, setTracingDisabled, tool } from "@openai/agents"
// The SDK's own openai v7 (the root's is v6, whose client its types refuse): its models take this client, typed.
import OpenAI from "../node_modules/@openai/agents-openai/node_modules/openai/index.mjs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, expectedChargeWei, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { waitFor } from "./support/polling.ts"

setTracingDisabled(true)

let fx: ExchangeFixture
let client: OpenAI
/** What the SDK posted to the exchange, as its client sent it. */
const sent: Array<{ path: string; body: any }> = []
/** Every host this process fetched from while the suite ran (the SDK's tracing exporter would use fetch too). */
const hosts = new Set<string>()
const realFetch = globalThis.fetch

beforeAll(async () => {
  globalThis.fetch = (input, init) => {
    hosts.add(new URL(input instanceof Request ? input.url : String(input)).hostname)
    return realFetch(input, init)
  }
  fx = await startExchangeFixture()
  const key = await fx.issueKey({ label: "agents sdk" })
  await fx.grant(100n * ONE_CREDIT)
  client = new OpenAI({
    apiKey: key.secret,
    baseURL: `${fx.baseUrl}/v1`,
    maxRetries: 0,
    fetch: (url, init) => {
      sent.push({ path: new URL(String(url)).pathname, body: JSON.parse(String(init?.body)) })
      return fetch(url, init)
    }
  })
}, 120_000)

afterAll(async () => {
  await fx?.close()
  globalThis.fetch = realFetch
  expect([...hosts]).toEqual(["127.0.0.1"])
})

/** The rates of the fixture cards (test/fixtures/exchange/cards), per million, as decimal strings. */
const RATES = {
  "openai/gpt-5": { input: "1.25", cacheRead: "0.125", output: "10" },
  "anthropic/claude-sonnet-4.5": { input: "3", cacheRead: "0.3", output: "15" }
} as const
type ModelKey = keyof typeof RATES
const UPSTREAM = {
  "openai/gpt-5": { model: "gpt-5", path: "/v1/chat/completions" },
  "anthropic/claude-sonnet-4.5": { model: "claude-sonnet-4-5", path: "/v1/messages" }
} as const

const PROMPT = "Use the get_weather tool for Paris"

const balance = async () =>
  BigInt((await makeClient(fx.baseUrl).call("GET", "/v1/account", undefined, { cookie: fx.cookie, ip: fx.ip })).body.balanceWei as string)
/** The model calls the simulator answered (the exchange's token counts for Anthropic left out). */
const upstream = async (): Promise<Array<{ path: string; body: any }>> =>
  ((await (await realFetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<any>).filter((r) => !r.path.endsWith("/count_tokens"))

/** What the simulator answers to a forwarded request, asked again directly and whole: its text is deterministic. */
const vendorText = async (forwarded: { path: string; body: any }): Promise<string> => {
  const answer = await realFetch(`${fx.simulatorUrl}${forwarded.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sim", "x-api-key": "sim", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ ...forwarded.body, stream: false, stream_options: undefined })
  })
  const body = (await answer.json()) as any
  return forwarded.path === "/v1/messages" ? body.content.find((b: any) => b.type === "text").text : body.choices[0].message.content
}

/** An agent with one function tool that records each call. */
const forecaster = (model: Model) => {
  const calls: Array<{ city: string }> = []
  const getWeather = tool({
    name: "get_weather",
    description: "Today's weather in a city",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push({ city })
      return `Sunny, 21 C in ${city}`
    }
  })
  return { calls, agent: new Agent({ name: "forecaster", instructions: "Answer with the weather tool's finding.", model, tools: [getWeather] }) }
}

/** Starts a case: nothing sent or received yet; the bills and the balance as they stand. */
const begin = async () => {
  sent.length = 0
  await realFetch(`${fx.simulatorUrl}/__control/requests`, { method: "DELETE" })
  const known = new Set((await fx.query("SELECT id FROM generations")).map((row) => row.id as string))
  return { known, balance: await balance() }
}

/**
 * The case's bills once settled: one per model call of the run, under `format`, each the arithmetic of the card's
 * rates (+5%) on the usage the SDK was shown for that call; the balance fell by exactly their sum.
 */
const expectBilled = async (start: Awaited<ReturnType<typeof begin>>, result: RunResult<any, any>, model: ModelKey, format: "responses" | "chat", stream: boolean) => {
  const calls = result.rawResponses
  const bills = await waitFor(`${calls.length} bills`, async () => {
    const fresh = (await fx.query("SELECT id, inbound_format, stream, charge_wei FROM generations ORDER BY created_at")).filter((row) => !start.known.has(row.id))
    return fresh.length >= calls.length && fresh
  })
  expect(bills).toHaveLength(calls.length)
  const rates = RATES[model]
  bills.forEach((bill, i) => {
    const usage = calls[i]!.usage
    const cached = usage.inputTokensDetails.reduce((sum, details) => sum + (details["cached_tokens"] ?? 0), 0)
    const charge = expectedChargeWei([[usage.inputTokens - cached, rates.input], [cached, rates.cacheRead], [usage.outputTokens, rates.output]])
    expect(charge).toBeGreaterThan(0n)
    expect(bill).toMatchObject({ inbound_format: format, stream, charge_wei: charge.toString() })
  })
  expect(await balance()).toBe(start.balance - bills.reduce((sum, bill) => sum + BigInt(bill.charge_wei), 0n))
}

/** The loop as the vendor saw it: two model calls, the second carrying the tool's result; the final text is its. */
const expectLoop = async (result: RunResult<any, any>, calls: ReadonlyArray<{ city: string }>, model: ModelKey) => {
  // The simulator fills a string argument with "sim": the tool ran once, with the model's arguments.
  expect(calls).toEqual([{ city: "sim" }])
  const forwarded = await upstream()
  expect(forwarded.map((r) => [r.path, r.body.model])).toEqual([
    [UPSTREAM[model].path, UPSTREAM[model].model],
    [UPSTREAM[model].path, UPSTREAM[model].model]
  ])
  expect(JSON.stringify(forwarded[1]!.body)).toContain("Sunny, 21 C in sim")
  expect(result.finalOutput).toMatch(new RegExp(`^Simulated reply from ${UPSTREAM[model].model} to: `))
  expect(result.finalOutput).toBe(await vendorText(forwarded[1]!))
}

describe("the SDK's Responses mode (its default)", () => {
  it.each(["openai/gpt-5", "anthropic/claude-sonnet-4.5"] as const)("runs the tool loop on %s, each model call billed", async (model) => {
    const start = await begin()
    const { agent, calls } = forecaster(new OpenAIResponsesModel(client, model))
    const result = await run(agent, PROMPT)
    // The SDK is stateless by default: each call posts the whole conversation so far, the function call replayed.
    expect(sent.map((r) => [r.path, r.body.model, r.body.stream])).toEqual([["/v1/responses", model, false], ["/v1/responses", model, false]])
    expect(sent[0]!.body.input).toEqual([{ role: "user", content: PROMPT }])
    expect(sent[1]!.body.input.map((item: any) => item.type ?? item.role)).toEqual(["user", "function_call", "function_call_output"])
    expect(result.lastResponseId).toMatch(/^resp_/)
    await expectLoop(result, calls, model)
    await expectBilled(start, result, model, "responses", false)
  })

  it("streams the tool loop: the text as it comes is the final output, each streamed call billed", async () => {
    const start = await begin()
    const { agent, calls } = forecaster(new OpenAIResponsesModel(client, "openai/gpt-5"))
    const result = await run(agent, PROMPT, { stream: true })
    let text = ""
    for await (const delta of result.toTextStream()) text += delta
    await result.completed
    expect(result.error).toBeNull()
    expect(sent.map((r) => [r.path, r.body.stream])).toEqual([["/v1/responses", true], ["/v1/responses", true]])
    expect(text).toBe(result.finalOutput)
    await expectLoop(result, calls, "openai/gpt-5")
    await expectBilled(start, result, "openai/gpt-5", "responses", true)
  })

  it("continues a stored conversation by previousResponseId: only new items are sent, the vendor sees it all", async () => {
    const { agent } = forecaster(new OpenAIResponsesModel(client, "openai/gpt-5"))
    const first = await run(agent, PROMPT)
    const start = await begin()
    const { agent: again, calls } = forecaster(new OpenAIResponsesModel(client, "openai/gpt-5"))
    const second = await run(again, "Use the get_weather tool for Rome", { previousResponseId: first.lastResponseId! })
    expect(calls).toEqual([{ city: "sim" }])
    // Each call names the response before it and sends only what is new since.
    expect(sent.map((r) => r.body.previous_response_id)).toEqual([first.lastResponseId, second.rawResponses[0]!.responseId])
    expect(sent[0]!.body.input).toEqual([{ role: "user", content: "Use the get_weather tool for Rome" }])
    expect(sent[1]!.body.input.map((item: any) => item.type)).toEqual(["function_call_output"])
    // The vendor got the whole conversation, rebuilt from the store: the first run's turns, then this run's.
    const forwarded = (await upstream()).at(-1)!
    expect(forwarded.body.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool"])
    expect(forwarded.body.messages[1].content).toContain(PROMPT)
    expect(forwarded.body.messages[4].content).toBe(first.finalOutput)
    expect(second.finalOutput).toBe(await vendorText(forwarded))
    await expectBilled(start, second, "openai/gpt-5", "responses", false)
  })
})

describe("the SDK's chat-completions mode", () => {
  it("runs the tool loop on openai/gpt-5 over /v1/chat/completions, each model call billed", async () => {
    const start = await begin()
    const { agent, calls } = forecaster(new OpenAIChatCompletionsModel(client, "openai/gpt-5"))
    const result = await run(agent, PROMPT)
    expect(sent.map((r) => [r.path, r.body.model])).toEqual([["/v1/chat/completions", "openai/gpt-5"], ["/v1/chat/completions", "openai/gpt-5"]])
    expect(sent[1]!.body.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "tool"])
    await expectLoop(result, calls, "openai/gpt-5")
    await expectBilled(start, result, "openai/gpt-5", "chat", false)
  })
})
