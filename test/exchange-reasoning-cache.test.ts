/**
 * Reasoning availability and prompt-cache billing end to end (issue 11 items 1 and 2), with the official SDKs against
 * our server and the simulator: reasoning asked of a model that prices none is 422 naming the field of the client's
 * format, and a models[] entry without it is skipped; an implicit cache hit is billed at the cached rate only when the
 * vendor reports it; a 1h cache write is billed at the 1h rate and counted in /v1/usage. Every charge is checked
 * against arithmetic written here from the fixture cards (test/fixtures/exchange).
 */
import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, expectedChargeWei, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"

let fx: ExchangeFixture
let key: { id: string; secret: string }
let openai: OpenAI
let anthropic: Anthropic

beforeAll(async () => {
  fx = await startExchangeFixture()
  key = await fx.issueKey({ label: "reasoning and cache" })
  await fx.grant(100n * ONE_CREDIT)
  const clients = sdkClients(fx.baseUrl, key.secret)
  openai = clients.openai
  anthropic = clients.anthropic
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

const generation = async (id: string) => {
  const answer = await makeClient(fx.baseUrl).call("GET", `/v1/generations/${id}`, undefined, { headers: { authorization: `Bearer ${key.secret}` } })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}
const ledgerSize = async () => (await fx.query("SELECT count(*)::int AS n FROM holds"))[0].n as number

const refusal = async (run: () => Promise<unknown>) => {
  try {
    await run()
  } catch (error) {
    return error as { status: number; error: { error?: { code?: string; param?: string } } }
  }
  throw new Error("expected a refusal")
}

describe("reasoning is available exactly on models that price it", () => {
  it("refuses it for a named model without a priced reasoning output, naming the format's own field, before any hold", async () => {
    const holds = await ledgerSize()
    const chat = await refusal(() =>
      openai.chat.completions.create({ model: "openai/gpt-4.1", reasoning_effort: "low", max_tokens: 2048, messages: [{ role: "user", content: "think" }] })
    )
    expect(chat).toBeInstanceOf(OpenAI.UnprocessableEntityError)
    expect([(chat as any).code, (chat as any).param]).toEqual(["validation_failed", "reasoning"])
    const messages = await refusal(() =>
      anthropic.messages.create({
        model: "openai/gpt-4.1",
        max_tokens: 4096,
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [{ role: "user", content: "think" }]
      })
    )
    expect(messages).toBeInstanceOf(Anthropic.UnprocessableEntityError)
    expect((messages.error as any).error).toMatchObject({ code: "validation_failed", param: "thinking" })
    expect(await ledgerSize()).toBe(holds)
  })

  it("skips a models[] entry that cannot reason and serves the next; returns the reasoning before the content", async () => {
    const { data, response } = await openai.chat.completions
      .create({
        model: "openai/gpt-4.1",
        // @ts-expect-error the exchange's extension field
        models: ["openai/gpt-5"],
        reasoning_effort: "low",
        max_tokens: 2048,
        messages: [{ role: "user", content: "Think, then answer" }]
      })
      .withResponse()
    expect(response.headers.get("x-model-used")).toBe("openai/gpt-5")
    expect(data.usage!.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0)
    const bill = (await generation(data.id)).bill
    // gpt-5 prices no separate reasoning rate in the fixture: reasoning tokens are output, billed at the output rate.
    expect(bill.chargeWei).toBe(expectedChargeWei([[data.usage!.prompt_tokens, "1.25"], [data.usage!.completion_tokens, "10"]]).toString())
  })
})

describe("prompt caching", () => {
  const prefix = "Rule: answer in one sentence, plainly, with no lists or headings. ".repeat(120)

  it("bills an implicit hit at the cached rate only when the vendor reports one", async () => {
    const ask = (question: string) =>
      openai.chat.completions.create({
        model: "openai/gpt-4.1",
        max_tokens: 16,
        messages: [{ role: "system", content: prefix }, { role: "user", content: question }]
      })
    const first = await ask(`First question ${Date.now()}`)
    expect(first.usage!.prompt_tokens_details?.cached_tokens ?? 0).toBe(0)
    expect((await generation(first.id)).bill.chargeWei).toBe(
      expectedChargeWei([[first.usage!.prompt_tokens, "2"], [first.usage!.completion_tokens, "8"]]).toString()
    )
    const second = await ask(`Second question ${Date.now()}`)
    const cached = second.usage!.prompt_tokens_details!.cached_tokens!
    expect(cached).toBeGreaterThanOrEqual(1024)
    const stored = await generation(second.id)
    expect(stored.usage).toMatchObject({ cacheRead: cached, freshInput: second.usage!.prompt_tokens - cached })
    expect(stored.bill.chargeWei).toBe(
      expectedChargeWei([[second.usage!.prompt_tokens - cached, "2"], [cached, "0.5"], [second.usage!.completion_tokens, "8"]]).toString()
    )
  })

  it("bills a 1h cache write at the 1h rate, then the read at the read rate, and counts the 1h write in /v1/usage", async () => {
    const system = [{ type: "text" as const, text: `Hour-long prefix ${Date.now()}. ${prefix}`, cache_control: { type: "ephemeral" as const, ttl: "1h" as const } }]
    const first = await anthropic.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 200, system, messages: [{ role: "user", content: "One" }] })
    const f = first.usage as any
    expect(f.cache_creation?.ephemeral_1h_input_tokens, JSON.stringify(f)).toBeGreaterThan(0)
    expect(f.cache_creation.ephemeral_5m_input_tokens).toBe(0)
    expect((await generation(first.id)).bill.chargeWei).toBe(
      expectedChargeWei([[f.input_tokens, "3"], [f.cache_creation.ephemeral_1h_input_tokens, "6"], [f.output_tokens, "15"]]).toString()
    )
    const second = await anthropic.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 200, system, messages: [{ role: "user", content: "Two" }] })
    const s = second.usage
    expect(s.cache_read_input_tokens).toBe(f.cache_creation.ephemeral_1h_input_tokens)
    expect((await generation(second.id)).bill.chargeWei).toBe(
      expectedChargeWei([[s.input_tokens, "3"], [s.cache_read_input_tokens!, "0.3"], [s.output_tokens, "15"]]).toString()
    )
    const usage = await makeClient(fx.baseUrl).call("GET", "/v1/usage", undefined, { headers: { authorization: `Bearer ${key.secret}` } })
    expect(usage.body.cacheWrite1hTokens).toBeGreaterThanOrEqual(f.cache_creation.ephemeral_1h_input_tokens)
  })

  it("refuses a ttl other than 5m or 1h before pricing", async () => {
    const holds = await ledgerSize()
    const refused = await refusal(() =>
      anthropic.messages.create({
        model: "anthropic/claude-sonnet-4.5",
        max_tokens: 50,
        // @ts-expect-error an invalid ttl on purpose
        system: [{ type: "text", text: "x", cache_control: { type: "ephemeral", ttl: "2h" } }],
        messages: [{ role: "user", content: "hi" }]
      })
    )
    expect(refused.status).toBe(422)
    expect((refused.error as any).error.code).toBe("validation_failed")
    expect(await ledgerSize()).toBe(holds)
  })
})

describe("reasoning replayed to a vendor that requires it", () => {
  it("sends an earlier tool-calling turn's reasoning back as reasoning_content to DeepSeek, which refuses the turn without it", async () => {
    const history = (reasoning: string | undefined) => [
      { role: "user", content: "Use the get_weather tool for Paris" },
      {
        role: "assistant",
        content: null,
        ...(reasoning === undefined ? {} : { reasoning }),
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }]
      },
      { role: "tool", tool_call_id: "call_1", content: "18 C" }
    ]
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }]
    const served = await openai.chat.completions.create({
      model: "deepseek/deepseek-reasoner",
      max_tokens: 2048,
      tools: tools as never,
      messages: history("The user wants Paris weather; call the tool.") as never
    })
    expect(served.choices[0]!.finish_reason).toBe("stop")
    const log = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<{ body: any }>
    const sent = log.filter((entry) => entry.body?.model === "deepseek-reasoner").at(-1)!.body
    expect(sent.messages[1].reasoning_content).toBe("The user wants Paris weather; call the tool.")
    const refused = await refusal(() =>
      openai.chat.completions.create({ model: "deepseek/deepseek-reasoner", max_tokens: 2048, tools: tools as never, messages: history(undefined) as never })
    )
    expect(refused).toBeInstanceOf(OpenAI.UnprocessableEntityError)
    expect((refused as any).message).toMatch(/reasoning_content/)
  })
})
