/**
 * The card check (data/README.md): a malformed card is rejected with a message naming the file, the model and
 * the field; a good one comes out with its defaults applied.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { formatUsd18 } from "../domain/money.ts"
import { parseCard } from "../services/oracle/CardSources.ts"
import { fixturesDir } from "./support/catalogFixtures.ts"

const acmeText = Fs.readFileSync(Path.join(fixturesDir, "cards", "acme.yaml"), "utf8")
/** acme/embed-1's input price, the last line of its only entry, which the embedding cases below extend. */
const EMBED_PRICE = "        input: 0.02\n"
/** acme/embed-1's traits, which the embedding cases below rewrite. */
const EMBED_TRAITS = "    dimensions: 1024\n    dimensionOptions: [256, 512, 1024]\n"
/** The source lines and first price of acme/small-1's only entry, which the cases below rewrite. */
const SMALL_1_SOURCE = "        sourceUrl: https://acme.example/pricing\n        checkedAt: 2026-11-26\n        input: 0.1\n"

/** `text` with `from` replaced by `to`, which must occur exactly once (a rewrite that matches nothing tests nothing). */
const rewrite = (text: string, from: string, to: string) => {
  if (text.split(from).length !== 2) throw new Error(`expected exactly one ${JSON.stringify(from)} in the fixture`)
  return text.replace(from, to)
}

const problemsOf = (text: string) => {
  const outcome = parseCard("data/cards/acme.yaml", text)
  if (outcome._tag !== "Invalid") throw new Error(`expected the card to be rejected, got ${outcome._tag}`)
  return outcome.problems
}

describe("a good card", () => {
  it("is read exactly, with per-number marks and defaults", () => {
    const outcome = parseCard("data/cards/acme.yaml", acmeText)
    if (outcome._tag !== "Read") throw new Error(JSON.stringify(outcome))
    const big2 = outcome.card.models.find((m) => m.id === "acme/big-2")!
    expect(big2.maxInputTokens).toBe(1_000_000)
    expect(big2.prices).toHaveLength(2)
    const launch = big2.prices[0]!
    expect(launch.sourceUrl).toBe("https://acme.example/pricing")
    expect(launch.checkedAt).toEqual(new Date("2026-11-26T00:00:00Z"))
    expect(launch.input).toEqual({
      usd18: 2n * 10n ** 18n,
      provenance: "verified",
      sourceUrl: null,
      checkedAt: null,
      derivedFrom: null,
      until: null,
      regular18: null
    })
    expect(launch.contextTiers).toEqual([
      {
        fromInputTokens: 200001,
        input: expect.objectContaining({ usd18: 4n * 10n ** 18n, provenance: "verified" }),
        output: expect.objectContaining({ usd18: 15n * 10n ** 18n })
      }
    ])
    expect(formatUsd18(outcome.card.models[0]!.prices[0]!.cachedInput!.usd18)).toBe("0.3")
  })

  it("reads a number's own source, which wins over its entry's", () => {
    const own = "cachedInput: { usd: 0.3, provenance: verified, sourceUrl: https://docs.acme.example/caching, checkedAt: 2026-10-01 }\n"
    const outcome = parseCard("x.yaml", acmeText.replace("cachedInput: 0.3\n", own))
    if (outcome._tag !== "Read") throw new Error(JSON.stringify(outcome))
    const point = outcome.card.models.find((m) => m.id === "acme/big-1")!.prices[0]!
    expect(point.cachedInput).toMatchObject({ sourceUrl: "https://docs.acme.example/caching", checkedAt: new Date("2026-10-01T00:00:00Z") })
    expect(point.input).toMatchObject({ sourceUrl: null, checkedAt: null })
  })

  it("keeps a decimal exact (no binary float on the way)", () => {
    const outcome = parseCard("x.yaml", acmeText.replace("input: 0.1\n", "input: 0.123456789012345678\n"))
    if (outcome._tag !== "Read") throw new Error(JSON.stringify(outcome))
    expect(outcome.card.models.find((m) => m.id === "acme/small-1")!.prices[0]!.input.usd18).toBe(123456789012345678n)
  })
})

describe("a malformed card", () => {
  it.each([
    ["a price that is not a decimal", acmeText.replace("input: 0.1\n", "input: 0.1.5\n"), "model acme/small-1: prices[0].input"],
    ["a missing output price", acmeText.replace("        input: 0.1\n        output: 0.4\n", "        input: 0.1\n"), "model acme/small-1: prices[0].output"],
    ["a negative price", acmeText.replace("output: 0.4", "output: -0.4"), "model acme/small-1: prices[0].output"],
    ["an unknown family", acmeText.replace("family: acme.small\n    displayName: Small 1", "family: acme.tiny\n    displayName: Small 1"), "model acme/small-1: family"],
    ["a bad date", acmeText.replace("releasedAt: 2025-06-01", "releasedAt: 2025-06-31"), "model acme/small-1: releasedAt"],
    ["prices out of order", acmeText.replace("- from: 2025-12-01", "- from: 2025-08-01"), "model acme/big-2: prices[1].from"],
    ["an unknown availability", acmeText.replace("availability: preview", "availability: soon"), "model acme/small-2-preview: availability"],
    ["an id outside the vendor's namespace", acmeText.replace("id: acme/embed-1", "id: other/embed-1"), "model other/embed-1: id"],
    ["tiers out of order", acmeText.replace("fromInputTokens: 200001", "fromInputTokens: 0"), "model acme/big-2: prices[0].contextTiers[0].fromInputTokens"],
    [
      "an inferred price without its derivation",
      acmeText.replace("input: 0.1\n", "input: { usd: 0.1, provenance: inferred }\n"),
      "model acme/small-1: prices[0].input: an inferred price needs derivedFrom"
    ],
    [
      "a verified price whose source is not the vendor's",
      acmeText.replace(SMALL_1_SOURCE, "        sourceUrl: https://reseller.example/acme\n        checkedAt: 2026-11-26\n        input: 0.1\n"),
      "model acme/small-1: prices[0].input: a verified price needs a first-party source (acme.example), not https://reseller.example/acme"
    ],
    [
      "a verified price without a source",
      acmeText.replace(SMALL_1_SOURCE, "        input: 0.1\n"),
      "model acme/small-1: prices[0].input: a verified price needs sourceUrl and checkedAt"
    ],
    [
      "a verified price whose source has no reading date",
      acmeText.replace(SMALL_1_SOURCE, "        sourceUrl: https://acme.example/pricing\n        input: 0.1\n"),
      "model acme/small-1: prices[0].input: a verified price needs sourceUrl and checkedAt"
    ],
    [
      "a promotional price without a source",
      acmeText.replace(SMALL_1_SOURCE, "        input: { usd: 0.1, provenance: promotional, until: 2026-01-31, regular: 0.2 }\n"),
      "model acme/small-1: prices[0].input: a promotional price needs sourceUrl and checkedAt"
    ],
    [
      "a promotional price without its end date",
      acmeText.replace(SMALL_1_SOURCE, SMALL_1_SOURCE.replace("input: 0.1", "input: { usd: 0.1, provenance: promotional, regular: 0.2 }")),
      "model acme/small-1: prices[0].input: a promotional price needs until"
    ],
    [
      "a number's own source without its reading date",
      acmeText.replace("output: 0.4\n", "output: { usd: 0.4, sourceUrl: https://acme.example/models/small-1 }\n"),
      "model acme/small-1: prices[0].output: a price's own sourceUrl and checkedAt go together"
    ],
    [
      "a context tier's price with its own source",
      acmeText.replace("            input: 4\n", "            input: { usd: 4, sourceUrl: https://acme.example/long-context, checkedAt: 2026-11-26 }\n"),
      "model acme/big-2: prices[0].contextTiers[0].input: a context tier's price takes its entry's sourceUrl and checkedAt"
    ],
    ["a provenance mark that does not exist", acmeText.replace("input: 0.1\n", "input: { usd: 0.1, provenance: guessed }\n"), "model acme/small-1: prices[0].input"]
  ])("is rejected for %s, naming the file, model and field", (_, text, expected) => {
    const problems = problemsOf(text)
    expect(problems.some((problem) => problem.startsWith(`data/cards/acme.yaml: ${expected}`))).toBe(true)
  })

  it("reports a YAML syntax error with its line", () => {
    const [problem] = problemsOf(acmeText.replace("  - key: acme.small\n", "  - key: [acme.small\n"))
    expect(problem).toMatch(/^data\/cards\/acme\.yaml: not valid YAML \(line \d+\)/)
  })

  it("reports a model declared twice and a family outside the provider", () => {
    const doubled = acmeText + acmeText.slice(acmeText.indexOf("  - id: acme/embed-1"))
    expect(problemsOf(doubled)).toContain("data/cards/acme.yaml: model acme/embed-1: id: declared twice")
    const foreign = problemsOf(acmeText.replace("  - key: acme.embed\n", "  - key: other.embed\n"))
    expect(foreign).toContain('data/cards/acme.yaml: families[2].key: "other.embed" must start with "acme."')
  })

  it("reports every problem at once", () => {
    const problems = problemsOf(acmeText.replace("output: 0.4", "output: lots").replace("releasedAt: 2025-06-01", "releasedAt: June"))
    expect(problems.length).toBeGreaterThanOrEqual(2)
  })
})

describe("an embedding model (kind: embedding)", () => {
  const embedText = (traits: string, price = EMBED_PRICE) => rewrite(rewrite(acmeText, EMBED_TRAITS, traits), EMBED_PRICE, price)

  it("is read with its input price only and its vectors: default size, the sizes a request may name, inputs per request", () => {
    const outcome = parseCard("data/cards/acme.yaml", acmeText)
    if (outcome._tag !== "Read") throw new Error(JSON.stringify(outcome))
    const embed = outcome.card.models.find((m) => m.id === "acme/embed-1")!
    expect(embed.kind).toBe("embedding")
    expect(embed.maxInputTokens).toBe(8192)
    expect(embed.embedding).toEqual({ dimensions: 1024, dimensionOptions: [256, 512, 1024], flexibleDimensions: false, maxDimensions: null, maxBatchInputs: 128 })
    expect(embed.prices[0]).toMatchObject({ input: { usd18: 2n * 10n ** 16n, provenance: "verified" }, output: null, cachedInput: null, contextTiers: [] })
    // Every other kind carries no traits.
    expect(outcome.card.models.filter((m) => m.kind !== "embedding").every((m) => m.embedding === null)).toBe(true)
  })

  it("reads flexible dimensions with their maximum, and normalizes the listed sizes ascending", () => {
    const flexible = parseCard("x.yaml", embedText("    dimensions: 1536\n    flexibleDimensions: true\n    maxDimensions: 3072\n"))
    if (flexible._tag !== "Read") throw new Error(JSON.stringify(flexible))
    expect(flexible.card.models.find((m) => m.id === "acme/embed-1")!.embedding).toMatchObject({ dimensions: 1536, flexibleDimensions: true, maxDimensions: 3072, dimensionOptions: null })
    const listed = parseCard("x.yaml", embedText("    dimensions: 1024\n    dimensionOptions: [1024, 256, 2048]\n"))
    if (listed._tag !== "Read") throw new Error(JSON.stringify(listed))
    expect(listed.card.models.find((m) => m.id === "acme/embed-1")!.embedding?.dimensionOptions).toEqual([256, 1024, 2048])
  })

  it.each([
    ["an output price", embedText(EMBED_TRAITS, `${EMBED_PRICE}        output: 0\n`), "prices[0].output: an embedding model has an input price only"],
    ["a cached input price", embedText(EMBED_TRAITS, `${EMBED_PRICE}        cachedInput: 0.01\n`), "prices[0].cachedInput: an embedding model is priced per input token only"],
    ["a cache write price", embedText(EMBED_TRAITS, `${EMBED_PRICE}        cacheWrite5m: 0.03\n`), "prices[0].cacheWrite5m: an embedding model is priced per input token only"],
    ["a reasoning price", embedText(EMBED_TRAITS, `${EMBED_PRICE}        reasoningOutput: 0.1\n`), "prices[0].reasoningOutput: an embedding model is priced per input token only"],
    [
      "context tiers",
      embedText(EMBED_TRAITS, `${EMBED_PRICE}        contextTiers:\n          - fromInputTokens: 4097\n            input: 0.04\n            output: 0.04\n`),
      "prices[0].contextTiers: an embedding model is priced per input token only"
    ],
    ["reasoning", rewrite(embedText(EMBED_TRAITS), "    kind: embedding\n    reasoning: false\n", "    kind: embedding\n    reasoning: true\n"), "reasoning: an embedding model does not reason"],
    ["no dimensions", embedText(""), "dimensions: an embedding model needs dimensions"],
    ["both listed sizes and any size", embedText(`${EMBED_TRAITS}    flexibleDimensions: true\n`), "flexibleDimensions: give dimensionOptions"],
    ["listed sizes without its default", embedText("    dimensions: 1024\n    dimensionOptions: [256, 512]\n"), "dimensionOptions: must include the default size"],
    ["a maximum size without flexible sizes", embedText(`${EMBED_TRAITS}    maxDimensions: 2048\n`), "maxDimensions: applies only with flexibleDimensions: true"],
    ["a dimension that is not a positive integer", embedText("    dimensions: 0\n"), "dimensions"],
    [
      "a verified input price without its source",
      rewrite(acmeText, "        sourceUrl: https://acme.example/pricing\n        checkedAt: 2026-11-26\n        input: 0.02\n", EMBED_PRICE),
      "prices[0].input: a verified price needs sourceUrl and checkedAt"
    ],
    [
      "an inferred input price without its derivation",
      embedText(EMBED_TRAITS, "        input: { usd: 0.02, provenance: inferred }\n"),
      "prices[0].input: an inferred price needs derivedFrom"
    ]
  ])("is refused with %s, naming the model and the field", (_, text, expected) => {
    const problems = problemsOf(text)
    expect(problems.some((problem) => problem.startsWith(`data/cards/acme.yaml: model acme/embed-1: ${expected}`)), problems.join("\n")).toBe(true)
  })

  it("keeps its traits to itself: a chat model with dimensions or a batch size is refused, and still needs its output price", () => {
    const small1 = "    family: acme.small\n    displayName: Small 1\n"
    for (const [field, line] of [
      ["dimensions", "    dimensions: 1536\n"],
      ["dimensionOptions", "    dimensionOptions: [256]\n"],
      ["flexibleDimensions", "    flexibleDimensions: true\n"],
      ["maxBatchInputs", "    maxBatchInputs: 100\n"]
    ] as const) {
      const problems = problemsOf(rewrite(acmeText, small1, `${small1}${line}`))
      expect(problems, field).toContain(`data/cards/acme.yaml: model acme/small-1: ${field}: only an embedding model (kind: embedding) has ${field}; this is a text model`)
    }
    const withoutOutput = problemsOf(rewrite(acmeText, "        input: 0.1\n        output: 0.4\n", "        input: 0.1\n"))
    expect(withoutOutput).toContain("data/cards/acme.yaml: model acme/small-1: prices[0].output: is missing: every model but an embedding model has an output price")
  })
})
