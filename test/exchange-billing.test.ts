import { Either } from "effect"
import { readFileSync } from "node:fs"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import { describe, expect, it } from "vitest"
import type { MarkedPrice, PricePoint, Provenance } from "../domain/catalog/card.ts"
import type { ChatRequest } from "../domain/exchange/canonical.ts"
import { holdWei, priceUsage, sideRatesAt } from "../domain/exchange/billing.ts"
import {
  boundInputTokensO200k,
  countInputTokensO200k,
  DEFAULT_TOKEN_RATIO,
  estimateInputTokens,
  estimateOutputTokens,
  parseTokenRatios,
  ratioFor,
  TOKEN_RATIOS_PATH
} from "../domain/exchange/estimate.ts"
import { parseUsd18, type Usd18 } from "../domain/money.ts"

const mark = (usd: string, provenance: Provenance = "verified"): MarkedPrice => ({
  usd18: parseUsd18(usd),
  provenance,
  sourceUrl: null,
  checkedAt: null,
  derivedFrom: provenance === "inferred" ? "test" : null,
  until: null,
  regular18: null
})

const point = (fields: Partial<PricePoint> & Pick<PricePoint, "input" | "output">): PricePoint => ({
  effectiveFrom: new Date("2026-01-01T00:00:00Z"),
  sourceUrl: "https://example.com/pricing",
  checkedAt: null,
  note: null,
  cachedInput: null,
  cacheWrite5m: null,
  cacheWrite1h: null,
  reasoningOutput: null,
  contextTiers: [],
  ...fields
})

const E18 = 10n ** 18n
const usd = (text: string): bigint => parseUsd18(text)
const ONE_USD_PEG = parseUsd18("1")

/** The debit computed independently: sum of tokens * rate18, x105/100, /1e6, x1e18/peg, one floor at the end. */
const expectedWei = (legs: ReadonlyArray<readonly [number, bigint]>, peg: bigint): bigint => {
  const sum = legs.reduce((acc, [tokens, rate]) => acc + BigInt(tokens) * rate, 0n)
  return (sum * 105n * E18) / (100n * 1_000_000n * peg)
}

const sonnetLike = point({
  input: mark("3"),
  output: mark("15"),
  cachedInput: mark("0.30"),
  cacheWrite5m: mark("3.75"),
  cacheWrite1h: mark("6")
})

const usageAll = { freshInput: 1000, cacheRead: 2000, cacheWrite5m: 500, cacheWrite1h: 100, output: 800, reasoning: 300 }

describe("priceUsage", () => {
  it("charges each kind at its own rate, reasoning at output when unpriced, one markup and one floor", () => {
    const bill = priceUsage(sonnetLike, usageAll, ONE_USD_PEG)
    expect(bill.tierFromInputTokens).toBeNull()
    expect(bill.legs).toStrictEqual([
      { kind: "input", tokens: 1000, rateUsd18PerMillion: usd("3"), provenance: "verified", pricedAs: "input" },
      { kind: "cachedInput", tokens: 2000, rateUsd18PerMillion: usd("0.3"), provenance: "verified", pricedAs: "cachedInput" },
      { kind: "cacheWrite5m", tokens: 500, rateUsd18PerMillion: usd("3.75"), provenance: "verified", pricedAs: "cacheWrite5m" },
      { kind: "cacheWrite1h", tokens: 100, rateUsd18PerMillion: usd("6"), provenance: "verified", pricedAs: "cacheWrite1h" },
      { kind: "output", tokens: 500, rateUsd18PerMillion: usd("15"), provenance: "verified", pricedAs: "output" },
      { kind: "reasoningOutput", tokens: 300, rateUsd18PerMillion: usd("15"), provenance: "verified", pricedAs: "output" }
    ])
    // By hand: 1000*3 + 2000*0.3 + 500*3.75 + 100*6 + 500*15 + 300*15 = 18075 USD per million = $0.018075;
    // x1.05 = $0.01897875 = 18978750000000000 wei at a 1 USD peg.
    const independent = expectedWei(
      [[1000, 3n * E18], [2000, 3n * E18 / 10n], [500, 375n * E18 / 100n], [100, 6n * E18], [500, 15n * E18], [300, 15n * E18]],
      E18
    )
    expect(independent).toBe(18_978_750_000_000_000n)
    expect(bill.chargeWei).toBe(independent)
    expect(bill.subtotalUsd18).toBe(18_075_000_000_000_000n)
  })

  it("uses a priced reasoning rate", () => {
    const bill = priceUsage(point({ input: mark("1.1"), output: mark("4.4"), reasoningOutput: mark("8.8", "inferred") }), { freshInput: 10, output: 800, reasoning: 300 }, ONE_USD_PEG)
    expect(bill.legs.map((l) => [l.kind, l.tokens, l.pricedAs, l.provenance])).toStrictEqual([
      ["input", 10, "input", "verified"],
      ["output", 500, "output", "verified"],
      ["reasoningOutput", 300, "reasoningOutput", "inferred"]
    ])
    expect(bill.chargeWei).toBe(expectedWei([[10, usd("1.1")], [500, usd("4.4")], [300, usd("8.8")]], E18))
  })

  it("bills cache kinds the model does not price at the input rate, with the input's mark", () => {
    const bill = priceUsage(point({ input: mark("2", "inferred"), output: mark("8") }), usageAll, ONE_USD_PEG)
    const cache = bill.legs.filter((l) => l.kind.startsWith("cache"))
    expect(cache.map((l) => [l.kind, l.rateUsd18PerMillion, l.pricedAs, l.provenance])).toStrictEqual([
      ["cachedInput", usd("2"), "input", "inferred"],
      ["cacheWrite5m", usd("2"), "input", "inferred"],
      ["cacheWrite1h", usd("2"), "input", "inferred"]
    ])
    expect(bill.chargeWei).toBe(expectedWei([[1000 + 2000 + 500 + 100, usd("2")], [800, usd("8")]], E18))
  })

  describe("context tiers", () => {
    const tiered = point({
      input: mark("1.25"),
      output: mark("10"),
      cachedInput: mark("0.31"),
      reasoningOutput: mark("10"),
      contextTiers: [
        { fromInputTokens: 128_001, input: mark("2"), output: mark("12") },
        { fromInputTokens: 200_001, input: mark("2.5"), output: mark("15") }
      ]
    })

    it("selects by the whole input side; exactly on the threshold takes the higher tier", () => {
      // The input side is fresh + cache reads + writes: 150_000 + 49_000 + 800 + 200 = 200_000 (threshold - 1).
      const below = { freshInput: 150_000, cacheRead: 49_000, cacheWrite5m: 800, cacheWrite1h: 200, output: 1000, reasoning: 400 }
      const billBelow = priceUsage(tiered, below, ONE_USD_PEG)
      expect(billBelow.tierFromInputTokens).toBe(128_001)
      expect(billBelow.chargeWei).toBe(
        expectedWei([[150_000, usd("2")], [49_000, usd("0.31")], [800 + 200, usd("2")], [600, usd("12")], [400, usd("10")]], E18)
      )

      const on = priceUsage(tiered, { ...below, freshInput: 150_001 }, ONE_USD_PEG)
      expect(on.tierFromInputTokens).toBe(200_001)
      const above = priceUsage(tiered, { ...below, freshInput: 400_000 }, ONE_USD_PEG)
      expect(above.tierFromInputTokens).toBe(200_001)
      for (const [bill, fresh] of [[on, 150_001], [above, 400_000]] as const) {
        // Input and output at the tier; cache reads and reasoning at the point's own (untiered) rates;
        // cache writes, unpriced, at the tier's input rate.
        expect(bill.legs.map((l) => [l.kind, l.rateUsd18PerMillion])).toStrictEqual([
          ["input", usd("2.5")],
          ["cachedInput", usd("0.31")],
          ["cacheWrite5m", usd("2.5")],
          ["cacheWrite1h", usd("2.5")],
          ["output", usd("15")],
          ["reasoningOutput", usd("10")]
        ])
        expect(bill.chargeWei).toBe(
          expectedWei([[fresh, usd("2.5")], [49_000, usd("0.31")], [1000, usd("2.5")], [600, usd("15")], [400, usd("10")]], E18)
        )
      }
    })

    it("uses the base rates below the first tier", () => {
      expect(sideRatesAt(tiered, 128_000)).toMatchObject({ tierFromInputTokens: null, input: { usd18: usd("1.25") } })
      expect(sideRatesAt(tiered, 128_001).tierFromInputTokens).toBe(128_001)
      expect(sideRatesAt(tiered, 0).tierFromInputTokens).toBeNull()
      expect(priceUsage(tiered, { freshInput: 1000, output: 10 }, ONE_USD_PEG).tierFromInputTokens).toBeNull()
    })
  })

  it("converts through a non-1 peg with a single floor", () => {
    for (const pegText of ["2.5", "0.37", "3"]) {
      const peg = parseUsd18(pegText)
      const bill = priceUsage(sonnetLike, usageAll, peg)
      expect(bill.chargeWei).toBe(
        expectedWei([[1000, usd("3")], [2000, usd("0.3")], [500, usd("3.75")], [100, usd("6")], [500, usd("15")], [300, usd("15")]], peg)
      )
    }
    // $0.01897875 at 2.5 USD per credit = 0.0075915 credits.
    expect(priceUsage(sonnetLike, usageAll, parseUsd18("2.5")).chargeWei).toBe(7_591_500_000_000_000n)
    // At 0.37 the quotient is not whole: floored once, at the end.
    const at037 = priceUsage(sonnetLike, usageAll, parseUsd18("0.37")).chargeWei
    expect(at037).toBe((18_075n * E18 * 105n * E18) / (100n * 1_000_000n * parseUsd18("0.37")))
  })

  it("bills unreported counts as 0 and omits empty legs", () => {
    const empty = priceUsage(sonnetLike, {}, ONE_USD_PEG)
    expect(empty).toStrictEqual({ tierFromInputTokens: null, legs: [], subtotalUsd18: 0n, chargeWei: 0n })
    const outputOnly = priceUsage(sonnetLike, { output: 7 }, ONE_USD_PEG)
    expect(outputOnly.legs.map((l) => l.kind)).toStrictEqual(["output"])
    // 7 tokens at $15/M = $0.000105, x1.05 = $0.00011025.
    expect(outputOnly.chargeWei).toBe(110_250_000_000_000n)
    expect(outputOnly.subtotalUsd18).toBe(105_000_000_000_000n)
  })

  it("never bills less than a reported reasoning count larger than the output", () => {
    const bill = priceUsage(sonnetLike, { output: 100, reasoning: 150 }, ONE_USD_PEG)
    expect(bill.legs.map((l) => [l.kind, l.tokens])).toStrictEqual([["reasoningOutput", 150]])
  })

  it("refuses counts that are not non-negative integers", () => {
    expect(() => priceUsage(sonnetLike, { freshInput: -1 }, ONE_USD_PEG)).toThrow(RangeError)
    expect(() => priceUsage(sonnetLike, { output: 1.5 }, ONE_USD_PEG)).toThrow(RangeError)
  })
})

describe("holdWei", () => {
  const tiered = point({
    input: mark("1.25"),
    output: mark("10"),
    reasoningOutput: mark("12"),
    cachedInput: mark("0.1"),
    contextTiers: [{ fromInputTokens: 200_001, input: mark("2.5"), output: mark("15") }]
  })

  it("prices the input as fresh at its tier and the output at the dearer of output and reasoning", () => {
    // Below the tier the reasoning rate (12) beats output (10).
    expect(holdWei(tiered, { inputTokens: 200_000, outputTokens: 4096 }, ONE_USD_PEG)).toBe(
      expectedWei([[200_000, usd("1.25")], [4096, usd("12")]], E18)
    )
    // From the tier on, the tier's output (15) beats the untiered reasoning rate.
    expect(holdWei(tiered, { inputTokens: 200_001, outputTokens: 4096 }, ONE_USD_PEG)).toBe(
      expectedWei([[200_001, usd("2.5")], [4096, usd("15")]], E18)
    )
    const peg = parseUsd18("0.37") as Usd18
    expect(holdWei(sonnetLike, { inputTokens: 1234, outputTokens: 567 }, peg)).toBe(
      expectedWei([[1234, usd("3")], [567, usd("15")]], peg)
    )
  })

  it("covers the bill of any usage within the estimate", () => {
    const hold = holdWei(sonnetLike, { inputTokens: 3600, outputTokens: 800 }, ONE_USD_PEG)
    expect(priceUsage(sonnetLike, usageAll, ONE_USD_PEG).chargeWei).toBeLessThanOrEqual(hold)
  })
})

describe("estimate", () => {
  const chat: ChatRequest = {
    messages: [
      { role: "system", parts: [{ type: "text", text: "You are a careful assistant.", cache: { ttl: "5m" } }] },
      { role: "user", parts: [{ type: "text", text: "What's the weather in Paris?" }, { type: "text", text: " And in Rome?" }] },
      {
        role: "assistant",
        parts: [{ type: "text", text: "Let me look." }],
        toolCalls: [{ id: "c1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }],
        reasoning: "Two cities; call the tool."
      },
      { role: "tool", toolCallId: "c1", parts: [{ type: "text", text: "18C and sunny <|endoftext|>" }] }
    ],
    stop: [],
    tools: [{ name: "get_weather", description: "Current weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
    toolChoice: { type: "auto" },
    responseFormat: { type: "json_schema", name: "w", schema: { type: "object", properties: { summary: { type: "string" } } } }
  }

  const n = (text: string) => encode(text, { disallowedSpecial: new Set() }).length

  it("counts messages, tool calls, reasoning, tools, the response schema and the chat framing", () => {
    const expected =
      n("You are a careful assistant.") +
      n("What's the weather in Paris?") + n(" And in Rome?") +
      n("Let me look.") + n("get_weather") + n("{\"city\":\"Paris\"}") + n("Two cities; call the tool.") +
      n("18C and sunny <|endoftext|>") +
      n("get_weather") + n("Current weather") + n(JSON.stringify({ type: "object", properties: { city: { type: "string" } } })) +
      n(JSON.stringify({ type: "object", properties: { summary: { type: "string" } } })) +
      4 * 4 + 3
    expect(countInputTokensO200k(chat)).toBe(expected)
    expect(estimateInputTokens(chat, 1)).toBe(expected)
    // x1.25, rounded up, in integer arithmetic.
    expect(estimateInputTokens(chat, 1.25)).toBe(Math.floor((expected * 125 + 99) / 100))
  })

  it("rounds up without adding a token for a float artefact", () => {
    // 93 tokens of text + 4 framing + 3 reply = 100; 100 * 1.1 is 110.00000000000001 in floating point.
    const hundred: ChatRequest = { messages: [{ role: "user", parts: [{ type: "text", text: "a" + " a".repeat(92) }] }], stop: [], tools: [] }
    expect(countInputTokensO200k(hundred)).toBe(100)
    expect(estimateInputTokens(hundred, 1.1)).toBe(110)
    expect(estimateInputTokens(hundred, 1.15)).toBe(115)
    expect(estimateInputTokens(hundred, 1.234)).toBe(124)
    const empty: ChatRequest = { messages: [], stop: [], tools: [] }
    expect(estimateInputTokens(empty, 1)).toBe(3)
  })

  it("bounds the count by the input's UTF-8 bytes, measured over the same parts", () => {
    const bytes = (text: string) => Buffer.byteLength(text, "utf8")
    const expected =
      bytes("You are a careful assistant.") +
      bytes("What's the weather in Paris?") + bytes(" And in Rome?") +
      bytes("Let me look.") + bytes("get_weather") + bytes("{\"city\":\"Paris\"}") + bytes("Two cities; call the tool.") +
      bytes("18C and sunny <|endoftext|>") +
      bytes("get_weather") + bytes("Current weather") + bytes(JSON.stringify({ type: "object", properties: { city: { type: "string" } } })) +
      bytes(JSON.stringify({ type: "object", properties: { summary: { type: "string" } } })) +
      4 * 4 + 3
    expect(boundInputTokensO200k(chat)).toBe(expected)
    expect(boundInputTokensO200k(chat)).toBeGreaterThan(countInputTokensO200k(chat))
  })

  it("never has the bound below the count, whatever the text (seeded random texts over many scripts)", () => {
    // Letters, digits, spaces, punctuation, accents, CJK, emoji (surrogate pairs), special-token spellings.
    const pieces = ["a", "Z", "7", " ", "  ", "\n", ".", "{", "é", "ß", "ж", "漢", "字", "😀", "👩‍💻", "<|endoftext|>", "\u0000", "\t"]
    let seed = 20261126
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648)
    for (let i = 0; i < 500; i++) {
      const length = next() % 400
      let text = ""
      for (let j = 0; j < length; j++) text += pieces[next() % pieces.length]
      const request: ChatRequest = { messages: [{ role: "user", parts: [{ type: "text", text }] }], stop: [], tools: [] }
      const count = countInputTokensO200k(request)
      const bound = boundInputTokensO200k(request)
      if (bound < count) expect.fail(`seed text ${i} (${JSON.stringify(text)}): bound ${bound} below count ${count}`)
    }
  })

  it("estimates the output at the asked limit, else 4096", () => {
    expect(estimateOutputTokens(chat)).toBe(4096)
    expect(estimateOutputTokens({ ...chat, maxOutputTokens: 321 })).toBe(321)
  })
})

describe("token ratios", () => {
  it("parses the bundled file: every catalog vendor with its figure", () => {
    const ratios = Either.getOrThrow(parseTokenRatios(readFileSync(TOKEN_RATIOS_PATH, "utf8")))
    expect([...ratios.keys()].sort()).toStrictEqual(
      ["alibaba", "anthropic", "cohere", "deepseek", "google", "minimax", "mistral", "moonshot", "openai", "xai", "zhipu"]
    )
    expect(ratios.get("openai")).toBe(1)
    for (const ratio of ratios.values()) expect(ratio).toBeGreaterThanOrEqual(1)
    expect(ratioFor(ratios, "anthropic")).toBe(ratios.get("anthropic"))
    expect(ratioFor(ratios, "unknown-vendor")).toBe(DEFAULT_TOKEN_RATIO)
  })

  const problem = (yaml: string): string => {
    const parsed = parseTokenRatios(yaml)
    if (Either.isRight(parsed)) throw new Error(`expected ${JSON.stringify(yaml)} to be refused`)
    return parsed.left
  }

  it("refuses a broken file, naming the problem", () => {
    expect(problem("ratios: [unclosed")).toContain("not valid YAML")
    expect(problem("openai: 1")).toContain("ratios")
    expect(problem("ratios:\n  openai:\n    source: x\n")).toContain("ratios.openai.ratio")
    expect(problem("ratios:\n  openai:\n    ratio: 0\n    note: x\n")).toContain("outside")
    expect(problem("ratios:\n  openai:\n    ratio: \"1.2\"\n    note: x\n")).toContain("ratios.openai.ratio")
    expect(problem("ratios:\n  openai:\n    ratio: 1.2\n")).toContain("needs a source or a note")
    expect(problem("ratios:\n  openai:\n    ratio: 1.2\n    note: \"  \"\n")).toContain("must not be empty")
    expect(problem("ratios:\n  openai:\n    ratio: 1.2\n    note: x\n    ratioo: 2\n")).toContain("ratioo")
    expect(problem("ratios:\n  Open AI:\n    ratio: 1.2\n    note: x\n")).toContain("catalog vendor key")
  })

  it("reads a minimal valid file", () => {
    const ratios = Either.getOrThrow(parseTokenRatios("ratios:\n  acme:\n    ratio: 1.3\n    source: measured\n"))
    expect([...ratios]).toStrictEqual([["acme", 1.3]])
  })
})

describe("an input-only price point (an embedding model)", () => {
  const embedding = point({ input: mark("0.02"), output: null })

  it("bills its input as one leg, and holds its input only", () => {
    const bill = priceUsage(embedding, { freshInput: 1234, output: 0 }, ONE_USD_PEG)
    expect(bill.legs).toStrictEqual([{ kind: "input", tokens: 1234, rateUsd18PerMillion: usd("0.02"), provenance: "verified", pricedAs: "input" }])
    expect(bill.chargeWei).toBe(expectedWei([[1234, usd("0.02")]], E18))
    expect(holdWei(embedding, { inputTokens: 1234, outputTokens: 0 }, ONE_USD_PEG)).toBe(expectedWei([[1234, usd("0.02")]], E18))
    expect(sideRatesAt(embedding, 1234).output).toBeNull()
  })

  it("billing or holding output tokens at it is a defect", () => {
    expect(() => priceUsage(embedding, { freshInput: 10, output: 1 }, ONE_USD_PEG)).toThrow(/without an output price/)
    expect(() => holdWei(embedding, { inputTokens: 10, outputTokens: 1 }, ONE_USD_PEG)).toThrow(/without an output price/)
  })
})
