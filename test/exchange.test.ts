/**
 * The inference exchange end to end (issue 10): the official `openai` and `@anthropic-ai/sdk` clients against our
 * server over real sockets, the simulator as every vendor, PostgreSQL underneath. Each bill is checked against
 * arithmetic written here from the fixture cards' rates (test/fixtures/exchange); each refusal surfaces as the SDK's
 * typed error carrying our `error.code`.
 */
import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient, signInByWallet } from "./support/accounts.ts"
import { type ExchangeFixture, expectedChargeWei, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"

let fx: ExchangeFixture
let key: { id: string; secret: string }
let openai: OpenAI
let anthropic: Anthropic

const api = () => makeClient(fx.baseUrl)
const generation = async (id: string) => {
  const answer = await api().call("GET", `/v1/generations/${id}`, undefined, { headers: { authorization: `Bearer ${key.secret}` } })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}
const account = async () => (await api().call("GET", "/v1/account", undefined, { cookie: fx.cookie, ip: fx.ip })).body as { balanceWei: string; reservedWei: string; spentWei: string }
const waitFor = async (check: () => Promise<boolean>, what: string, ms = 10_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

beforeAll(async () => {
  fx = await startExchangeFixture()
  key = await fx.issueKey({ label: "exchange tests" })
  await fx.grant(100n * ONE_CREDIT)
  const clients = sdkClients(fx.baseUrl, key.secret)
  openai = clients.openai
  anthropic = clients.anthropic
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

describe("POST /v1/chat/completions with the openai SDK", () => {
  it("answers a named model, with the routing headers and a bill of exactly the catalog's rates plus 5%", async () => {
    const before = await account()
    const { data, response } = await openai.chat.completions
      .create({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "Say something about exchanges" }] })
      .withResponse()
    expect(data.object).toBe("chat.completion")
    expect(data.model).toBe("openai/gpt-4.1")
    expect(data.choices[0]!.message.content).toMatch(/^Simulated reply from gpt-4\.1/)
    expect(data.choices[0]!.finish_reason).toBe("stop")
    const usage = data.usage!
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens)
    const charge = expectedChargeWei([[usage.prompt_tokens, "2"], [usage.completion_tokens, "8"]])
    expect(charge).toBeGreaterThan(0n)
    expect(response.headers.get("x-request-id")).toBe(data.id)
    expect(data.id).toMatch(/^gen_[0-9a-f]{24}$/)
    expect(response.headers.get("x-model-used")).toBe("openai/gpt-4.1")
    expect(response.headers.get("x-model-requested")).toBe("openai/gpt-4.1")
    expect(response.headers.get("x-fallback-used")).toBe("false")
    expect(response.headers.get("x-provider")).toBe("openai")
    expect(response.headers.get("x-model-chooser")).toBeNull()
    expect(response.headers.get("x-compute-used")).toBe(charge.toString())
    expect(response.headers.get("x-key-daily-remaining")).toBe("unlimited")
    const after = await account()
    expect(BigInt(after.balanceWei)).toBe(BigInt(before.balanceWei) - charge)
    expect(response.headers.get("x-compute-remaining")).toBe(after.balanceWei)
    expect(after.reservedWei).toBe("0")
    expect((data as unknown as { x_credits_used: number }).x_credits_used).toBeCloseTo(Number(charge) / 1e18, 12)
    const bill = await generation(data.id)
    expect(bill).toMatchObject({
      status: "completed",
      modelRequested: "openai/gpt-4.1",
      modelUsed: "openai/gpt-4.1",
      usage: { freshInput: usage.prompt_tokens, output: usage.completion_tokens, source: "vendor" },
      bill: { chargeWei: charge.toString(), markup: { numerator: 105, denominator: 100 }, pegUsd18: ONE_CREDIT.toString(), tierFromInputTokens: null }
    })
    expect(bill.bill.revision.metadataHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(bill.bill.legs.map((l: { kind: string; rateUsd18PerMillion: string }) => [l.kind, l.rateUsd18PerMillion])).toEqual([
      ["input", (2n * ONE_CREDIT).toString()],
      ["output", (8n * ONE_CREDIT).toString()]
    ])
  })

  it("streams: role first, content deltas, then one final chunk with finish_reason, usage and the credits; billed the same way", async () => {
    const stream = await openai.chat.completions.create({
      model: "gpt-4.1",
      messages: [{ role: "user", content: "Stream me a reply" }],
      stream: true
    })
    const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant")
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")
    expect(text).toMatch(/^Simulated reply from gpt-4\.1 to: Stream me a reply/)
    const last = chunks[chunks.length - 1]!
    expect(last.choices[0]!.finish_reason).toBe("stop")
    expect(chunks.slice(0, -1).every((c) => c.usage == null)).toBe(true)
    const usage = last.usage!
    const charge = expectedChargeWei([[usage.prompt_tokens, "2"], [usage.completion_tokens, "8"]])
    expect((last as unknown as { x_credits_used: number }).x_credits_used).toBeCloseTo(Number(charge) / 1e18, 12)
    const bill = await generation(last.id)
    expect(bill).toMatchObject({ status: "completed", stream: true, bill: { chargeWei: charge.toString() } })
  })

  it("bills reasoning tokens inside completion_tokens at the reasoning rate", async () => {
    const data = await openai.chat.completions.create({
      model: "openai/gpt-5",
      reasoning_effort: "high",
      messages: [{ role: "user", content: "Think first" }]
    })
    const usage = data.usage!
    const reasoning = usage.completion_tokens_details!.reasoning_tokens!
    expect(reasoning).toBeGreaterThan(0)
    const charge = expectedChargeWei([[usage.prompt_tokens, "1.25"], [usage.completion_tokens - reasoning, "10"], [reasoning, "10"]])
    const bill = await generation(data.id)
    expect(bill.usage).toMatchObject({ output: usage.completion_tokens, reasoning })
    expect(bill.bill.chargeWei).toBe(charge.toString())
    expect(bill.bill.legs.map((l: { kind: string }) => l.kind)).toEqual(["input", "output", "reasoningOutput"])
  })

  it("serves a chat-format client from an Anthropic model, with its reasoning as message.reasoning", async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: "claude-sonnet-4.5", reasoning_effort: "low", max_completion_tokens: 8000, messages: [{ role: "user", content: "Hello Claude" }] })
      .withResponse()
    expect(response.headers.get("x-provider")).toBe("anthropic")
    const message = data.choices[0]!.message as OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning?: string }
    expect(message.content).toMatch(/^Simulated reply from claude-sonnet-4-5/)
    expect(message.reasoning).toBeTruthy()
    // What the simulator received: Anthropic's wire format with a thinking budget of 20% of the output limit.
    const received = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<{ path: string; body: any }>
    const sent = received.filter((r) => r.path === "/v1/messages").pop()!
    expect(sent.body).toMatchObject({ model: "claude-sonnet-4-5", max_tokens: 8000, thinking: { type: "enabled", budget_tokens: 1600 } })
    const usage = data.usage!
    const bill = await generation(data.id)
    expect(bill.bill.chargeWei).toBe(expectedChargeWei([[usage.prompt_tokens, "3"], [usage.completion_tokens, "15"]]).toString())
  })

  it("serves a chat-format client from Gemini and from DeepSeek, renaming reasoning_content to reasoning", async () => {
    const gemini = await openai.chat.completions.create({ model: "google/gemini-2.5-flash", messages: [{ role: "user", content: "Hi Gemini" }] })
    expect(gemini.choices[0]!.message.content).toMatch(/^Simulated reply from gemini-2\.5-flash/)
    const g = gemini.usage!
    expect((await generation(gemini.id)).bill.chargeWei).toBe(expectedChargeWei([[g.prompt_tokens, "0.3"], [g.completion_tokens, "2.5"]]).toString())
    const deepseek = await openai.chat.completions.create({ model: "deepseek-reasoner", messages: [{ role: "user", content: "Hi DeepSeek" }] })
    const message = deepseek.choices[0]!.message as OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning?: string; reasoning_content?: string }
    expect(message.reasoning).toBeTruthy()
    expect(message.reasoning_content).toBeUndefined()
  })

  it("lets auto choose the cheapest routable model and says so in X-Model-Chooser", async () => {
    const { data, response } = await openai.chat.completions.create({ model: "auto", messages: [{ role: "user", content: "Anything" }] }).withResponse()
    expect(response.headers.get("x-model-chooser")).toBe("engine")
    // gpt-tiny is the cheapest ($0.1 / $0.4) and its 60-token window holds this prompt.
    expect(data.model).toBe("openai/gpt-tiny")
  })
})

describe("POST /v1/messages with the anthropic SDK (x-api-key)", () => {
  it("answers with thinking blocks carrying the vendor's signature, and bills each bucket", async () => {
    const message = await anthropic.messages.create({
      model: "anthropic/claude-sonnet-4.5",
      max_tokens: 4000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [{ role: "user", content: "Think and answer" }]
    })
    expect(message.type).toBe("message")
    expect(message.content[0]).toMatchObject({ type: "thinking" })
    expect((message.content[0] as { signature: string }).signature).not.toBe("")
    expect(message.content[1]).toMatchObject({ type: "text" })
    expect(message.stop_reason).toBe("end_turn")
    const u = message.usage
    const bill = await generation(message.id)
    expect(bill.bill.chargeWei).toBe(expectedChargeWei([[u.input_tokens, "3"], [u.output_tokens, "15"]]).toString())
    // The hold was sized by Anthropic's own counter (which counts what the reply reports as input), not by o200k.
    expect(bill.bill.holdWei).toBe(expectedChargeWei([[u.input_tokens, "3"], [4000, "15"]]).toString())
    const received = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<{ path: string }>
    const paths = received.map((r) => r.path)
    expect(paths.slice(-2)).toEqual(["/v1/messages/count_tokens", "/v1/messages"])
  })

  it("streams events in Anthropic's order with thinking_delta and signature_delta", async () => {
    const stream = anthropic.messages.stream({
      model: "claude-sonnet-4.5",
      max_tokens: 4000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [{ role: "user", content: "Stream with thinking" }]
    })
    const kinds: Array<string> = []
    for await (const event of stream) {
      kinds.push(event.type === "content_block_delta" ? `delta:${event.delta.type}` : event.type)
    }
    const final = await stream.finalMessage()
    const collapsed = kinds.filter((k, i) => k !== kinds[i - 1])
    expect(collapsed).toEqual([
      "message_start",
      "content_block_start",
      "delta:thinking_delta",
      "delta:signature_delta",
      "content_block_stop",
      "content_block_start",
      "delta:text_delta",
      "content_block_stop",
      "message_delta",
      "message_stop"
    ])
    expect(final.content.map((b) => b.type)).toEqual(["thinking", "text"])
    expect((await generation(final.id)).status).toBe("completed")
  })

  it("writes then reads a marked prefix, billing the 5m write and the read at their own rates, and counts them in /v1/usage", async () => {
    const system = [{ type: "text" as const, text: "You are a careful assistant. ".repeat(60), cache_control: { type: "ephemeral" as const } }]
    const first = await anthropic.messages.create({ model: "claude-sonnet-4.5", max_tokens: 500, system, messages: [{ role: "user", content: "First" }] })
    expect(first.usage.cache_creation_input_tokens, JSON.stringify(first.usage)).toBeGreaterThan(0)
    const second = await anthropic.messages.create({ model: "claude-sonnet-4.5", max_tokens: 500, system, messages: [{ role: "user", content: "Second" }] })
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens)
    const f = first.usage
    const s = second.usage
    expect((await generation(first.id)).bill.chargeWei).toBe(
      expectedChargeWei([[f.input_tokens, "3"], [f.cache_creation_input_tokens!, "3.75"], [f.output_tokens, "15"]]).toString()
    )
    expect((await generation(second.id)).bill.chargeWei).toBe(
      expectedChargeWei([[s.input_tokens, "3"], [s.cache_read_input_tokens!, "0.3"], [s.output_tokens, "15"]]).toString()
    )
    const usage = await api().call("GET", "/v1/usage", undefined, { headers: { authorization: `Bearer ${key.secret}` } })
    expect(usage.body.cachedInputTokens).toBeGreaterThanOrEqual(s.cache_read_input_tokens!)
    expect(usage.body.cacheWrite5mTokens).toBeGreaterThanOrEqual(f.cache_creation_input_tokens!)
    expect(usage.body.cacheWrite1hTokens).toBeNull()
  })

  it("serves a messages-format client from an OpenAI model", async () => {
    const message = await anthropic.messages.create({ model: "openai/gpt-4.1", max_tokens: 300, messages: [{ role: "user", content: "Cross format" }] })
    expect(message.model).toBe("openai/gpt-4.1")
    expect(message.content[0]).toMatchObject({ type: "text" })
    expect((message.content[0] as { text: string }).text).toMatch(/^Simulated reply from gpt-4\.1/)
  })
})

describe("refusals surface as the SDKs' typed errors with our error.code", () => {
  const refusal = async (run: () => Promise<unknown>) => {
    try {
      await run()
    } catch (error) {
      return error as InstanceType<typeof OpenAI.APIError>
    }
    throw new Error("expected a refusal")
  }

  it("422 for an unknown model, a model under the wrong vendor, n > 1, routing_bias with a named model, and an input over the window", async () => {
    for (const [body, param] of [
      [{ model: "openai/no-such-model", messages: [{ role: "user", content: "x" }] }, "model"],
      [{ model: "anthropic/gpt-4.1", messages: [{ role: "user", content: "x" }] }, "model"],
      [{ model: "gpt-4.1", n: 2, messages: [{ role: "user", content: "x" }] }, "n"],
      [{ model: "gpt-4.1", routing_bias: "cheaper", messages: [{ role: "user", content: "x" }] }, "routing_bias"],
      [{ model: "gpt-tiny", messages: [{ role: "user", content: "word ".repeat(200) }] }, "messages"]
    ] as const) {
      const error = await refusal(() => openai.chat.completions.create(body as never))
      expect(error, JSON.stringify(body)).toBeInstanceOf(OpenAI.UnprocessableEntityError)
      expect(error.code).toBe("validation_failed")
      expect(error.param).toBe(param)
    }
    expect((await account()).reservedWei).toBe("0")
  })

  it("413 payload_too_large for a body over the 4 MiB ceiling, before anything is parsed or reserved", async () => {
    const body = JSON.stringify({ model: "gpt-4.1", messages: [{ role: "user", content: "x".repeat(4_194_304) }] })
    const answer = await api().call("POST", "/v1/chat/completions", body, { headers: { authorization: `Bearer ${key.secret}` } })
    expect(answer.status).toBe(413)
    expect(answer.body.error.code).toBe("payload_too_large")
    expect((await account()).reservedWei).toBe("0")
  })

  it("401 invalid_api_key without a key, 403 model_restricted outside allowedModels, 402 insufficient_balance on an empty account", async () => {
    const anonymous = new OpenAI({ apiKey: "ct_live_not-a-key", baseURL: `${fx.baseUrl}/v1`, maxRetries: 0 })
    const unauthenticated = await refusal(() => anonymous.chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "x" }] }))
    expect(unauthenticated).toBeInstanceOf(OpenAI.AuthenticationError)
    expect(unauthenticated.code).toBe("invalid_api_key")

    const restricted = await fx.issueKey({ allowedModels: ["google/gemini-2.5-flash"] })
    const narrow = new OpenAI({ apiKey: restricted.secret, baseURL: `${fx.baseUrl}/v1`, maxRetries: 0 })
    const refused = await refusal(() => narrow.chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "x" }] }))
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect(refused.code).toBe("model_restricted")

    const someoneElse = await signInByWallet(api(), privateKeyToAccount(generatePrivateKey()), "203.0.113.91")
    const issued = await api().call("POST", "/v1/keys", {}, { cookie: someoneElse.cookie, ip: "203.0.113.91" })
    const broke = new Anthropic({ apiKey: issued.body.secret, baseURL: fx.baseUrl, maxRetries: 0 })
    try {
      await broke.messages.create({ model: "claude-sonnet-4.5", max_tokens: 100, messages: [{ role: "user", content: "x" }] })
      throw new Error("expected 402")
    } catch (error) {
      expect(error).toBeInstanceOf(Anthropic.APIError)
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(402)
      expect(((error as InstanceType<typeof Anthropic.APIError>).error as { error: { code: string } }).error.code).toBe("insufficient_balance")
    }
  })
})

describe("GET /v1/inference/estimate and GET /v1/models/availability (no key)", () => {
  const estimate = (query: string) => api().call("GET", `/v1/inference/estimate?${query}`)

  it("quotes a named model at the catalog's rates plus 5%, with the hold a send would take", async () => {
    const answer = await estimate("model=gpt-4.1&promptTokens=1000&completionTokens=500")
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    const charge = expectedChargeWei([[1000, "2"], [500, "8"]])
    expect(answer.body).toEqual({
      model: "gpt-4.1",
      resolvedModel: "openai/gpt-4.1",
      promptTokens: 1000,
      completionTokens: 500,
      creditsCost: Number(charge) / 1e18,
      creditsWei: charge.toString(),
      usdCost: Number(charge) / 1e18,
      reservedWei: charge.toString(),
      tierFromInputTokens: null
    })
    expect(answer.headers.get("x-model-chooser")).toBeNull()
  })

  it("prices a whole input side over a threshold at the higher tier", async () => {
    const answer = await estimate("model=anthropic/claude-sonnet-4.5&promptTokens=250000&completionTokens=500")
    expect(answer.body).toMatchObject({ tierFromInputTokens: 200001, creditsWei: expectedChargeWei([[250000, "6"], [500, "22.5"]]).toString() })
  })

  it("quotes auto at the cheapest model whose window holds the request, holding for the costliest candidate", async () => {
    const small = await estimate("promptTokens=10&completionTokens=10")
    expect(small.headers.get("x-model-chooser")).toBe("engine")
    expect(small.body.resolvedModel).toBe("openai/gpt-tiny")
    const large = await estimate("model=auto&promptTokens=1000&completionTokens=500")
    // gpt-tiny's 60-token window is too small; then deepseek, gemini and gpt-4.1 are the three cheapest.
    expect(large.body.resolvedModel).toBe("deepseek/deepseek-reasoner")
    expect(large.body.reservedWei).toBe(expectedChargeWei([[1000, "2"], [500, "8"]]).toString())
  })

  it("refuses what a send would refuse, naming the query parameter", async () => {
    for (const [query, param] of [
      ["model=gpt-4.1&reasoningRequested=true", "reasoningRequested"],
      ["model=gpt-4.1&routing_bias=cheaper", "routing_bias"],
      ["reasoningRequested=yes", "reasoningRequested"],
      ["promptTokens=-1", "promptTokens"],
      ["model=gpt-tiny&promptTokens=61", "promptTokens"],
      ["model=nobody/model", "model"]
    ] as const) {
      const answer = await estimate(query)
      expect(answer.status, query).toBe(422)
      expect(answer.body.error.code).toBe("validation_failed")
      expect(answer.body.error.param, query).toBe(param)
    }
  })

  it("answers availability without a key over every catalog model, and narrows it to a key's allowedModels", async () => {
    const open = await api().call("GET", "/v1/models/availability")
    expect(open.status).toBe(200)
    expect(open.body.ttlSeconds).toBeGreaterThan(0)
    // Six chat models and three embedding models, each with its kind.
    expect(open.body.models).toHaveLength(9)
    expect(open.body.models.filter((m: { kind: string }) => m.kind === "embedding").map((m: { id: string }) => m.id).sort()).toEqual([
      "google/gemini-embedding-001", "openai/text-embedding-3-small", "openai/text-embedding-ada-002"
    ])
    expect(open.body.models.every((m: { routable: boolean }) => m.routable)).toBe(true)
    expect(open.body.auto).toEqual({ id: "openai/gpt-tiny" })
    const restricted = await fx.issueKey({ allowedModels: ["google/gemini-2.5-flash"] })
    const narrowed = await api().call("GET", "/v1/models/availability", undefined, { headers: { authorization: `Bearer ${restricted.secret}` } })
    expect(narrowed.body.models.filter((m: { routable: boolean }) => m.routable).map((m: { id: string }) => m.id)).toEqual(["google/gemini-2.5-flash"])
    expect(narrowed.body.auto).toEqual({ id: "google/gemini-2.5-flash" })
    const wrong = await api().call("GET", "/v1/models/availability", undefined, { headers: { authorization: "Bearer ct_live_nope" } })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.code).toBe("invalid_api_key")
  })
})

describe("upstream failures", () => {
  it("moves to the next key after a 429, recording both attempts", async () => {
    await fx.fault({ model: "gpt-4.1", fault: "rate_limited", retryAfterSeconds: 1 })
    const data = await openai.chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "after a 429" }] })
    const bill = await generation(data.id)
    expect(bill.attempts.map((a: { outcome: string; status: number | null }) => [a.outcome, a.status])).toEqual([["status", 429], ["served", 200]])
    expect(new Set(bill.attempts.map((a: { key: string }) => a.key)).size).toBe(2)
  })

  it("falls back along models[] when every key of the first fails, and says so", async () => {
    await fx.fault({ model: "gpt-4.1", fault: "error500", count: 2 })
    const { data, response } = await openai.chat.completions
      .create({ model: "gpt-4.1", models: ["google/gemini-2.5-flash"], messages: [{ role: "user", content: "fall back" }] } as never)
      .withResponse()
    expect(response.headers.get("x-model-used")).toBe("google/gemini-2.5-flash")
    expect(response.headers.get("x-model-requested")).toBe("openai/gpt-4.1")
    expect(response.headers.get("x-fallback-used")).toBe("true")
    expect((data as OpenAI.Chat.Completions.ChatCompletion).model).toBe("google/gemini-2.5-flash")
    await fx.clearFaults()
  })

  it("answers 502 all_keys_exhausted when no key can serve, charging nothing and releasing the hold", async () => {
    const before = await account()
    await fx.fault({ model: "gemini-2.5-flash", fault: "error500", count: 10 })
    try {
      await openai.chat.completions.create({ model: "google/gemini-2.5-flash", messages: [{ role: "user", content: "nothing serves" }] })
      throw new Error("expected 502")
    } catch (error) {
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("all_keys_exhausted")
    } finally {
      await fx.clearFaults()
    }
    const after = await account()
    expect(after.balanceWei).toBe(before.balanceWei)
    expect(after.reservedWei).toBe("0")
    // Both Google keys now rest: `auto` for a key that may use only Gemini finds no model with capacity (503).
    const onlyGemini = await fx.issueKey({ allowedModels: ["google/gemini-2.5-flash"] })
    const narrow = new OpenAI({ apiKey: onlyGemini.secret, baseURL: `${fx.baseUrl}/v1`, maxRetries: 0 })
    try {
      await narrow.chat.completions.create({ model: "auto", messages: [{ role: "user", content: "anyone?" }] })
      throw new Error("expected 503")
    } catch (error) {
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503)
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("service_unavailable")
    }
  })

  it("aborts with 422 naming the vendor's refusal when the vendor refuses the request itself, charging nothing", async () => {
    const before = await account()
    // A list that could fall back: a vendor's refusal of the request is not a failure of its capacity, so it does not.
    await fx.fault({ model: "deepseek-reasoner", fault: "error400" })
    try {
      await openai.chat.completions.create({ model: "deepseek/deepseek-reasoner", models: ["openai/gpt-tiny"], messages: [{ role: "user", content: "refused" }] } as never)
      throw new Error("expected 422")
    } catch (error) {
      expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError)
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("validation_failed")
      expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(/deepseek\/deepseek-reasoner refused the request: simulated refusal/)
    }
    const after = await account()
    expect(after.balanceWei).toBe(before.balanceWei)
    expect(after.reservedWei).toBe("0")
  })

  it("moves on when an upstream does not answer within the first-byte timeout", async () => {
    await fx.fault({ model: "deepseek-reasoner", fault: "timeout" })
    const started = Date.now()
    const data = await openai.chat.completions.create({ model: "deepseek/deepseek-reasoner", messages: [{ role: "user", content: "slow" }] })
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400)
    const bill = await generation(data.id)
    expect(bill.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(["timeout", "served"])
  })

  it("ends a stream cut mid-way with stream_interrupted, bills what was delivered, and releases the hold", async () => {
    await fx.fault({ model: "gpt-4.1", fault: "drop", afterChunks: 3 })
    const stream = await openai.chat.completions.create({ model: "gpt-4.1", messages: [{ role: "user", content: "cut me off" }], stream: true })
    let id = ""
    let received = ""
    let failure: InstanceType<typeof OpenAI.APIError> | undefined
    try {
      for await (const chunk of stream) {
        id = chunk.id
        received += chunk.choices[0]?.delta.content ?? ""
      }
    } catch (error) {
      failure = error as InstanceType<typeof OpenAI.APIError>
    }
    expect(failure).toBeInstanceOf(OpenAI.APIError)
    expect(failure!.code).toBe("stream_interrupted")
    const bill = await generation(id)
    expect(bill.status).toBe("interrupted")
    expect(bill.usage.source).toBe("partly_estimated")
    expect(bill.usage.output).toBeGreaterThan(0)
    expect(BigInt(bill.bill.chargeWei)).toBeGreaterThan(0n)
    expect(received.length).toBeGreaterThan(0)
    expect((await account()).reservedWei).toBe("0")
  })

  it("settles a stream whose client went away: the upstream is read to its usage and billed", async () => {
    const controller = new AbortController()
    const response = await fetch(`${fx.baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4.1", stream: true, messages: [{ role: "user", content: "I will hang up" }] }),
      signal: controller.signal
    })
    const id = response.headers.get("x-request-id")!
    expect(id).toMatch(/^gen_/)
    controller.abort()
    await waitFor(async () => (await api().call("GET", `/v1/generations/${id}`, undefined, { headers: { authorization: `Bearer ${key.secret}` } })).status === 200, "the settlement")
    const bill = await generation(id)
    expect(bill.usage.source).toBe("vendor")
    expect(BigInt(bill.bill.chargeWei)).toBeGreaterThan(0n)
    expect((await account()).reservedWei).toBe("0")
  })
})

describe("GET /v1/models", () => {
  it("lists the routable catalogue in the OpenAI list format, without a key", async () => {
    const list = await api().call("GET", "/v1/models")
    expect(list.status).toBe(200)
    expect(list.body.object).toBe("list")
    const ids = (list.body.data as Array<{ id: string }>).map((m) => m.id)
    expect(ids).toEqual([
      "anthropic/claude-sonnet-4.5",
      "deepseek/deepseek-reasoner",
      "google/gemini-2.5-flash",
      "google/gemini-embedding-001",
      "openai/gpt-4.1",
      "openai/gpt-5",
      "openai/gpt-tiny",
      "openai/text-embedding-3-small",
      "openai/text-embedding-ada-002"
    ])
    expect(list.body.data.find((m: { id: string }) => m.id === "openai/text-embedding-3-small")).toMatchObject({ kind: "embedding", dimensions: 1536 })
    expect(list.body.data[4]).toEqual({
      id: "openai/gpt-4.1",
      object: "model",
      created: Date.UTC(2025, 3, 14) / 1000,
      owned_by: "openai",
      displayName: "GPT-4.1 (fixture)",
      routingAliases: ["gpt-4.1", "gpt-4-1"],
      maxInputTokens: 1000000,
      kind: "text"
    })
    // The vendors' own ids that route to a model are listed with it.
    const aliases = Object.fromEntries((list.body.data as Array<{ id: string; routingAliases: Array<string> }>).map((m) => [m.id, m.routingAliases]))
    expect(aliases["openai/gpt-tiny"]).toEqual(["gpt-tiny", "gpt-4.1-nano"])
    expect(aliases["anthropic/claude-sonnet-4.5"]).toEqual(["claude-sonnet-4.5", "claude-sonnet-4-5"])
    // The oracle's catalog marks the same models as integrated (routable through the exchange).
    const catalog = await api().call("GET", "/v1/oracle/catalog", undefined, { ip: "198.51.100.7" })
    const entries = [...catalog.body.models, ...catalog.body.embeddingModels] as Array<{ modelKey: string; integrated: boolean }>
    const integrated = entries.filter((m) => m.integrated).map((m) => m.modelKey).sort()
    expect(integrated).toEqual(ids)
    // The official client reads it too.
    const page = await openai.models.list()
    expect(page.data.map((m) => m.id)).toEqual(ids)
  })
})
