/**
 * Usage per OpenAI-compatible vendor (DESIGN.md section 10, "Usage per vendor is the adapter's"; each shape and its
 * source: docs/decisions.md "Usage per OpenAI-compatible vendor"). First usageOf on each vendor's documented usage
 * objects, then every vendor over the real stack: the official `openai` client through our server to the simulator,
 * which answers each vendor's model in that vendor's shape. What the vendor reported is read back by replaying the
 * bodies it received (the simulator answers the same body the same way once its cache memory is replayed too), and
 * the client's usage and the bill at GET /v1/generations/{id} are checked against what those numbers mean, the bill
 * with arithmetic written here from the fixture cards' rates (test/fixtures/exchange-vendors).
 */
import { Either } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Usage } from "../domain/exchange/canonical.ts"
import { makeOpenaiChatStreamParser, parseOpenaiChatResponse, usageOf } from "../domain/exchange/translate/openaiChatUpstream.ts"
import type { VendorUsage } from "../domain/exchange/wire/openaiChatVendor.ts"
import { makeClient } from "./support/accounts.ts"
import { EXCHANGE_FIXTURES, type ExchangeFixture, expectedChargeWei, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"

// ---------------------------------------------------------------------------------------------------------
// (a) usageOf on each vendor's documented shapes

/** Every bucket, reasoning being part of output: the vendor's whole count, as `total_tokens` states it. */
const whole = (u: Usage) => (u.freshInput ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite5m ?? 0) + (u.cacheWrite1h ?? 0) + (u.output ?? 0)

/** An unreported bucket is absent (undefined), never 0: the expected values spell every bucket out. */
const buckets = (u: Partial<Usage>): Usage => ({
  freshInput: u.freshInput,
  cacheRead: u.cacheRead,
  cacheWrite5m: u.cacheWrite5m,
  output: u.output,
  reasoning: u.reasoning
})

const documented: ReadonlyArray<readonly [vendor: string, what: string, usage: VendorUsage, expected: Usage]> = [
  [
    "openai",
    "reasoning and a cache hit inside completion_tokens and prompt_tokens",
    {
      prompt_tokens: 1200,
      completion_tokens: 300,
      total_tokens: 1500,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 256 }
    },
    buckets({ freshInput: 176, cacheRead: 1024, output: 300, reasoning: 256 })
  ],
  [
    "x-ai",
    "reasoning beside completion_tokens (prompt + completion + reasoning = total)",
    { prompt_tokens: 100, completion_tokens: 20, total_tokens: 420, completion_tokens_details: { reasoning_tokens: 300 } },
    buckets({ freshInput: 100, output: 320, reasoning: 300 })
  ],
  [
    "x-ai",
    "Grok 4.1 Fast reasoning with a cache hit inside prompt_tokens (Vertex AI's Grok page)",
    {
      prompt_tokens: 663,
      completion_tokens: 50,
      total_tokens: 837,
      prompt_tokens_details: { cached_tokens: 654 },
      completion_tokens_details: { reasoning_tokens: 124 }
    },
    buckets({ freshInput: 9, cacheRead: 654, output: 174, reasoning: 124 })
  ],
  [
    "xai",
    "the prompt-caching page's example, under the provider's name",
    {
      prompt_tokens: 125,
      completion_tokens: 48,
      total_tokens: 173,
      prompt_tokens_details: { cached_tokens: 98 },
      completion_tokens_details: { reasoning_tokens: 0 }
    },
    buckets({ freshInput: 27, cacheRead: 98, output: 48, reasoning: 0 })
  ],
  [
    "deepseek",
    "hit + miss = prompt_tokens, reasoning inside completion_tokens",
    {
      prompt_tokens: 100,
      completion_tokens: 40,
      total_tokens: 140,
      prompt_tokens_details: { cached_tokens: null },
      prompt_cache_hit_tokens: 64,
      prompt_cache_miss_tokens: 36,
      completion_tokens_details: { reasoning_tokens: 20 }
    },
    buckets({ freshInput: 36, cacheRead: 64, output: 40, reasoning: 20 })
  ],
  [
    "deepseek",
    "a chat model's usage (no reasoning count)",
    { prompt_tokens: 10, completion_tokens: 9, total_tokens: 19, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 10 },
    buckets({ freshInput: 10, cacheRead: 0, output: 9 })
  ],
  [
    "mistralai",
    "the prompt-caching page's example",
    { prompt_tokens: 1013, total_tokens: 1043, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 1008 } },
    buckets({ freshInput: 5, cacheRead: 1008, output: 30 })
  ],
  [
    "mistralai",
    "Magistral: its thinking inside completion_tokens, with no count of its own",
    { prompt_tokens: 77, total_tokens: 1191, completion_tokens: 1114, prompt_tokens_details: { cached_tokens: 0 } },
    buckets({ freshInput: 77, cacheRead: 0, output: 1114 })
  ],
  [
    "moonshotai",
    "cached_tokens at the top of usage, inside prompt_tokens",
    { prompt_tokens: 19, completion_tokens: 21, total_tokens: 40, cached_tokens: 10 },
    buckets({ freshInput: 9, cacheRead: 10, output: 21 })
  ],
  [
    "z-ai",
    "cached_tokens under prompt_tokens_details",
    { prompt_tokens: 2048, completion_tokens: 300, total_tokens: 2348, prompt_tokens_details: { cached_tokens: 1536 } },
    buckets({ freshInput: 512, cacheRead: 1536, output: 300 })
  ],
  [
    "qwen",
    "an explicit cache write inside prompt_tokens, reasoning inside completion_tokens",
    {
      prompt_tokens: 2059,
      completion_tokens: 201,
      total_tokens: 2260,
      prompt_tokens_details: { cached_tokens: 0, cache_creation_input_tokens: 2048, cache_creation: { ephemeral_5m_input_tokens: 2048 } },
      completion_tokens_details: { reasoning_tokens: 170 }
    },
    buckets({ freshInput: 11, cacheRead: 0, cacheWrite5m: 2048, output: 201, reasoning: 170 })
  ],
  [
    "qwen",
    "an implicit cache hit",
    { prompt_tokens: 3019, completion_tokens: 104, total_tokens: 3123, prompt_tokens_details: { cached_tokens: 2048 } },
    buckets({ freshInput: 971, cacheRead: 2048, output: 104 })
  ],
  [
    "minimax",
    "reasoning inside completion_tokens",
    { total_tokens: 249, prompt_tokens: 26, completion_tokens: 223, completion_tokens_details: { reasoning_tokens: 214 } },
    buckets({ freshInput: 26, output: 223, reasoning: 214 })
  ],
  [
    "cohere",
    "prompt, completion and total only",
    { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
    buckets({ freshInput: 10, output: 20 })
  ]
]

describe("usageOf reads each vendor's usage into the disjoint buckets", () => {
  it.each(documented)("%s: %s", (vendor, _what, usage, expected) => {
    const mapped = usageOf(usage, vendor)
    expect(mapped).toStrictEqual(expected)
    // The buckets account for the vendor's whole count, output including reasoning.
    expect(whole(mapped)).toBe(usage.total_tokens)
  })

  it("xAI's visible output is billed: output = completion_tokens + reasoning_tokens, where OpenAI's rule would leave 20 of 320", () => {
    const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 420, completion_tokens_details: { reasoning_tokens: 300 } }
    expect(usageOf(usage, "x-ai")).toMatchObject({ output: 320, reasoning: 300 })
    expect(usageOf(usage, "openai")).toMatchObject({ output: 20, reasoning: 300 })
  })

  it("keeps a count the vendor did not report undefined, xAI's output included", () => {
    expect(usageOf({ prompt_tokens: 5 }, "x-ai")).toStrictEqual(buckets({ freshInput: 5 }))
    expect(usageOf({ completion_tokens_details: { reasoning_tokens: 7 } }, "x-ai")).toStrictEqual(buckets({ reasoning: 7 }))
    expect(usageOf({ completion_tokens: 3 }, "x-ai")).toStrictEqual(buckets({ output: 3 }))
  })

  it("reads the vendor's terms through both parsers: a whole xAI reply, and an xAI stream's usage chunk", () => {
    const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 420, completion_tokens_details: { reasoning_tokens: 300 } }
    const reply = parseOpenaiChatResponse(
      { id: "x-1", choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }], usage },
      "x-ai"
    )
    expect(Either.getOrThrow(reply).at(-1)).toEqual({ type: "usage", usage: { freshInput: 100, output: 320, reasoning: 300 } })
    const parse = makeOpenaiChatStreamParser("x-ai")
    const events = [
      JSON.stringify({ id: "x-2", choices: [{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }] }),
      JSON.stringify({ id: "x-2", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
      JSON.stringify({ id: "x-2", choices: [], usage }),
      "[DONE]"
    ].flatMap((payload) => Either.getOrThrow(parse(payload)))
    expect(events.at(-1)).toEqual({ type: "usage", usage: { freshInput: 100, output: 320, reasoning: 300 } })
  })

  it("reads Moonshot's stream usage inside the finishing choice, with its top-level cached_tokens", () => {
    const parse = makeOpenaiChatStreamParser("moonshotai")
    const events = [
      JSON.stringify({ id: "k", choices: [{ index: 0, delta: { content: "Hi" } }] }),
      JSON.stringify({
        id: "k",
        choices: [{ index: 0, delta: {}, finish_reason: "stop", usage: { prompt_tokens: 19, completion_tokens: 21, total_tokens: 40, cached_tokens: 10 } }]
      })
    ].flatMap((payload) => Either.getOrThrow(parse(payload)))
    expect(events.at(-1)).toEqual({ type: "usage", usage: { freshInput: 9, cacheRead: 10, output: 21 } })
  })
})

// ---------------------------------------------------------------------------------------------------------
// (b) Each vendor over the real stack

const VENDOR_CARDS = new URL("./fixtures/exchange-vendors/cards", import.meta.url).pathname

/** A vendor's usage object as the simulator wrote it (the fields this test reads). */
interface Reported {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
  readonly prompt_tokens_details?: { readonly cached_tokens?: number }
  readonly completion_tokens_details?: { readonly reasoning_tokens?: number }
  readonly prompt_cache_hit_tokens?: number
  readonly cached_tokens?: number
}

/** What the vendor's numbers mean, written from its documentation (docs/decisions.md); undefined: not reported. */
interface Meaning {
  readonly input: number
  readonly cacheRead: number | undefined
  readonly output: number
  readonly reasoning: number | undefined
}

/** OpenAI's rule, which most vendors follow: cache and reasoning inside the totals, under the details objects. */
const openaiMeaning = (u: Reported): Meaning => ({
  input: u.prompt_tokens,
  cacheRead: u.prompt_tokens_details?.cached_tokens,
  output: u.completion_tokens,
  reasoning: u.completion_tokens_details?.reasoning_tokens
})

interface VendorCase {
  readonly vendor: string
  readonly model: string
  readonly sdkId: string
  /** USD per million, as on the fixture card; a kind the card does not price is billed at input (cache) or output. */
  readonly rates: { readonly input: string; readonly output: string; readonly cachedInput?: string; readonly reasoningOutput?: string }
  /** Ask for reasoning where the vendor's model reasons only when asked. */
  readonly reasoningEffort?: "low"
  readonly meaning: (u: Reported) => Meaning
  /**
   * Whether the vendor reports how much of the output was reasoning (the simulator reasons on every case's model but
   * Cohere's); Mistral, Moonshot and Z.ai count it inside completion_tokens without a count of its own.
   */
  readonly reasoningCount: boolean
  /** The vendor reports a cache hit on the second request (the simulator's implicit cache). */
  readonly reportsCache: boolean
}

const cases: ReadonlyArray<VendorCase> = [
  {
    vendor: "OpenAI",
    model: "openai/gpt-5",
    sdkId: "gpt-5",
    rates: { input: "1.25", output: "10", cachedInput: "0.125", reasoningOutput: "10" },
    meaning: openaiMeaning,
    reasoningCount: true,
    reportsCache: true
  },
  {
    vendor: "xAI",
    model: "x-ai/grok-4",
    sdkId: "grok-4-0709",
    rates: { input: "6", output: "30", cachedInput: "1.5", reasoningOutput: "30" },
    // completion_tokens leaves the reasoning out: the output is both.
    meaning: (u) => ({
      input: u.prompt_tokens,
      cacheRead: u.prompt_tokens_details?.cached_tokens,
      output: u.completion_tokens + (u.completion_tokens_details?.reasoning_tokens ?? 0),
      reasoning: u.completion_tokens_details?.reasoning_tokens
    }),
    reasoningCount: true,
    reportsCache: true
  },
  {
    vendor: "DeepSeek",
    model: "deepseek/deepseek-reasoner",
    sdkId: "deepseek-reasoner",
    rates: { input: "0.28", output: "0.42", cachedInput: "0.028", reasoningOutput: "0.42" },
    meaning: (u) => ({ ...openaiMeaning(u), cacheRead: u.prompt_cache_hit_tokens }),
    reasoningCount: true,
    reportsCache: true
  },
  {
    vendor: "Mistral",
    model: "mistralai/magistral-medium-1.2",
    sdkId: "magistral-medium-2509",
    rates: { input: "4", output: "20", cachedInput: "0.4", reasoningOutput: "20" },
    reasoningEffort: "low",
    meaning: openaiMeaning,
    reasoningCount: false,
    reportsCache: true
  },
  {
    vendor: "Moonshot",
    model: "moonshotai/kimi-k2.6",
    sdkId: "kimi-k2.6",
    rates: { input: "4", output: "20", cachedInput: "1", reasoningOutput: "20" },
    reasoningEffort: "low",
    meaning: (u) => ({ ...openaiMeaning(u), cacheRead: u.cached_tokens }),
    reasoningCount: false,
    reportsCache: true
  },
  {
    vendor: "Z.ai",
    model: "z-ai/glm-4.6",
    sdkId: "glm-4.6",
    rates: { input: "4", output: "20", cachedInput: "0.8", reasoningOutput: "20" },
    reasoningEffort: "low",
    meaning: openaiMeaning,
    reasoningCount: false,
    reportsCache: true
  },
  {
    vendor: "Alibaba",
    model: "qwen/qwen-plus",
    sdkId: "qwen-plus",
    rates: { input: "4", output: "20", cachedInput: "0.8", reasoningOutput: "20" },
    reasoningEffort: "low",
    meaning: openaiMeaning,
    reasoningCount: true,
    reportsCache: true
  },
  {
    vendor: "MiniMax",
    model: "minimax/minimax-m2.5",
    sdkId: "MiniMax-M2.5",
    rates: { input: "4", output: "20", cachedInput: "0.4", reasoningOutput: "20" },
    reasoningEffort: "low",
    meaning: openaiMeaning,
    reasoningCount: true,
    reportsCache: true
  },
  {
    vendor: "Cohere",
    model: "cohere/command-a",
    sdkId: "command-a-03-2025",
    rates: { input: "4", output: "20" },
    meaning: openaiMeaning,
    reasoningCount: false,
    reportsCache: false
  }
]

let fx: ExchangeFixture
let key: { id: string; secret: string }
let openai: OpenAI
let priceDir: string

beforeAll(async () => {
  // The shared exchange fixtures plus a model per other OpenAI-compatible vendor, in a catalog of this suite's own
  // (the other suites' catalog, and what they assert of it, stays as it is).
  priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-vendor-usage-prices-"))
  Fs.cpSync(EXCHANGE_FIXTURES, priceDir, { recursive: true })
  Fs.cpSync(VENDOR_CARDS, Path.join(priceDir, "cards"), { recursive: true })
  fx = await startExchangeFixture({ PRICE_DATA_DIR: priceDir })
  key = await fx.issueKey({ label: "vendor usage" })
  await fx.grant(100n * ONE_CREDIT)
  openai = sdkClients(fx.baseUrl, key.secret).openai
}, 120_000)

afterAll(async () => {
  await fx?.close()
  if (priceDir !== undefined) Fs.rmSync(priceDir, { recursive: true, force: true })
})

const simulator = (method: string, path: string, body?: unknown) =>
  fetch(`${fx.simulatorUrl}${path}`, {
    method,
    headers: { authorization: "Bearer replay", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

/** The chat bodies the simulator received for a model, oldest first. */
const received = async (sdkId: string): Promise<Array<Record<string, unknown>>> => {
  const log = (await (await simulator("GET", "/__control/requests")).json()) as Array<{ path: string; body: any }>
  return log.filter((entry) => entry.path.endsWith("/chat/completions") && entry.body?.model === sdkId).map((entry) => entry.body)
}

/** The usage the simulator answers a body with: a whole reply's, or the last one a stream carried (top level or choice). */
const replay = async (body: Record<string, unknown>): Promise<Reported> => {
  const answer = await simulator("POST", "/v1/chat/completions", body)
  expect(answer.status).toBe(200)
  if (body["stream"] !== true) return ((await answer.json()) as { usage: Reported }).usage
  let usage: Reported | undefined
  for (const line of (await answer.text()).split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue
    const chunk = JSON.parse(line.slice(6)) as { usage?: Reported | null; choices?: Array<{ usage?: Reported | null }> }
    usage = chunk.usage ?? chunk.choices?.[0]?.usage ?? usage
  }
  if (usage === undefined) throw new Error("the replayed stream carried no usage")
  return usage
}

const generation = async (id: string) => {
  const answer = await makeClient(fx.baseUrl).call("GET", `/v1/generations/${id}`, undefined, { headers: { authorization: `Bearer ${key.secret}` } })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}

/** The bill SPEC "Billing" defines, from the meaning and the card's rates: legs summed, x1.05 once, one floor. */
const expectedBill = (m: Meaning, rates: VendorCase["rates"]) => {
  const cached = m.cacheRead ?? 0
  const reasoning = m.reasoning ?? 0
  return expectedChargeWei([
    [m.input - cached, rates.input],
    [cached, rates.cachedInput ?? rates.input],
    [m.output - reasoning, rates.output],
    [reasoning, rates.reasoningOutput ?? rates.output]
  ]).toString()
}

// A shared prefix long enough (over 1024 tokens) for the second request to hit the vendor's implicit cache.
const prefix = "Rule: answer in one sentence, plainly, with no lists or headings. ".repeat(120)

describe("each OpenAI-compatible vendor's usage, through our server, means what the vendor says it means", () => {
  it.each(cases)("$vendor ($model): a reply and a stream, the client's usage and the bill", async (c) => {
    await simulator("DELETE", "/__control/cache")
    const before = (await received(c.sdkId)).length
    const request = (question: string) => ({
      model: c.model,
      max_tokens: 2048,
      ...(c.reasoningEffort === undefined ? {} : { reasoning_effort: c.reasoningEffort }),
      messages: [
        { role: "system" as const, content: prefix },
        { role: "user" as const, content: question }
      ]
    })

    // 1. A whole reply, the first with this prefix.
    const reply = await openai.chat.completions.create(request(`First question for ${c.vendor}`))
    // 2. A stream sharing the prefix; our server writes the usage on its final chunk.
    const stream = await openai.chat.completions.create({ ...request(`Second question for ${c.vendor}`), stream: true })
    const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
    for await (const chunk of stream) chunks.push(chunk)
    const streamed = chunks.at(-1)!
    expect(streamed.usage, "the final chunk carries the usage").toBeTruthy()

    // What the vendor answered: the same two bodies, replayed from the same (empty) cache memory.
    const bodies = (await received(c.sdkId)).slice(before)
    expect(bodies.map((b) => b["stream"] === true)).toEqual([false, true])
    await simulator("DELETE", "/__control/cache")
    const reported = [await replay(bodies[0]!), await replay(bodies[1]!)]

    for (const [answer, usage, id] of [
      [reply.usage!, reported[0]!, reply.id],
      [streamed.usage!, reported[1]!, streamed.id]
    ] as const) {
      const meaning = c.meaning(usage)
      if (c.reasoningCount) expect(meaning.reasoning, "the vendor counted reasoning").toBeGreaterThan(0)
      else expect(meaning.reasoning, "the vendor counts no reasoning of its own").toBeUndefined()
      expect(answer).toMatchObject({
        prompt_tokens: meaning.input,
        completion_tokens: meaning.output,
        total_tokens: meaning.input + meaning.output,
        prompt_tokens_details: { cached_tokens: meaning.cacheRead ?? 0 },
        completion_tokens_details: { reasoning_tokens: meaning.reasoning ?? 0 }
      })
      const stored = await generation(id)
      // A count the vendor did not report is stored as such (null), never as 0.
      expect(stored.usage).toEqual({
        freshInput: meaning.input - (meaning.cacheRead ?? 0),
        cacheRead: meaning.cacheRead ?? null,
        cacheWrite5m: null,
        cacheWrite1h: null,
        output: meaning.output,
        reasoning: meaning.reasoning ?? null,
        source: "vendor"
      })
      expect(stored.modelUsed).toBe(c.model)
      expect(stored.bill.chargeWei).toBe(expectedBill(meaning, c.rates))
    }

    // The second request hit the vendor's cache where the vendor reports one, and was billed at the cached rate.
    const second = c.meaning(reported[1]!)
    if (c.reportsCache) expect(second.cacheRead).toBeGreaterThanOrEqual(1024)
    else expect(second.cacheRead).toBeUndefined()
  })

  it("xAI: the visible output is billed beside the reasoning, at the output rate", async () => {
    const reply = await openai.chat.completions.create({ model: "x-ai/grok-4", max_tokens: 2048, messages: [{ role: "user", content: "Answer briefly" }] })
    const [body] = (await received("grok-4-0709")).slice(-1)
    const vendor = await replay(body!)
    const reasoning = vendor.completion_tokens_details!.reasoning_tokens!
    // The vendor's own arithmetic: prompt + completion + reasoning = total.
    expect(vendor.prompt_tokens + vendor.completion_tokens + reasoning).toBe(vendor.total_tokens)
    expect(reasoning).toBeGreaterThan(vendor.completion_tokens)
    expect(reply.usage!.completion_tokens).toBe(vendor.completion_tokens + reasoning)
    const legs = ((await generation(reply.id)).bill.legs as Array<{ kind: string; tokens: number }>).map((l) => [l.kind, l.tokens])
    expect(legs).toEqual([
      ["input", vendor.prompt_tokens],
      ["output", vendor.completion_tokens],
      ["reasoningOutput", reasoning]
    ])
  })
})
