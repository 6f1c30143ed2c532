/**
 * Temporal edges of the oracle's reads (issue 5): an instant exactly at a publishedAt, two revisions with the same
 * publishedAt, a model that left the basket and came back, and the catalog cap.
 */
import { describe, expect, it } from "vitest"
import type { ModelCard } from "../domain/catalog/card.ts"
import { buildManifest } from "../domain/index/manifest.ts"
import { parseUsd18, type Usd18 } from "../domain/money.ts"
import { priceAt } from "../domain/oracle/prices.ts"
import type { ConfirmedRevision, OracleInputs } from "../domain/oracle/inputs.ts"
import { historyView, revisionAt, scuAtView } from "../domain/oracle/series.ts"
import { CATALOG_LIMIT, catalogView, modelsView } from "../domain/oracle/views.ts"

const member = (modelKey: string, input: string) => ({
  modelKey,
  family: `acme.${modelKey.split("/")[1]}`,
  inputPrice18: parseUsd18(input),
  outputPrice18: parseUsd18("10"),
  displayName: modelKey,
  providerKey: "acme",
  sdkId: modelKey
})

const revision = (n: number, at: string, members: ReadonlyArray<ReturnType<typeof member>>): ConfirmedRevision => ({
  revisionVersion: n,
  methodologyVersion: 1,
  scuUsd18: (1_000_000_000_000_000n * BigInt(n)) as Usd18,
  contentHash: `0x${String(n).padStart(64, "0")}`,
  metadataHash: `0x${String(n).padStart(64, "a")}`,
  manifest: buildManifest({ revisionVersion: n, methodologyVersion: 1, members }),
  publishedAt: new Date(at),
  publishedBlock: BigInt(n),
  confirmedAt: new Date(at),
  txHash: `0x${String(n).padStart(64, "b")}`
})

// Revisions 2 and 3 share a publishedAt (one block); acme/b leaves at 3 and comes back at 4.
const revisions = [
  revision(1, "2025-06-17T00:00:00Z", [member("acme/a", "1"), member("acme/b", "2")]),
  revision(2, "2025-07-01T00:00:00Z", [member("acme/a", "1"), member("acme/b", "3")]),
  revision(3, "2025-07-01T00:00:00Z", [member("acme/a", "1")]),
  revision(4, "2025-08-01T00:00:00Z", [member("acme/a", "1"), member("acme/b", "4")])
]

const card = (id: string, released: string): ModelCard => ({
  id,
  providerKey: "acme",
  family: `acme.${id.split("/")[1]}`,
  displayName: id,
  sdkId: id,
  releasedAt: new Date(released),
  availability: "ga",
  kind: "text",
  reasoning: false,
  maxInputTokens: null,
  retiredAt: null,
  embedding: null,
  prices: []
})

const listing = (id: string, released = "2025-01-01T00:00:00Z") => {
  const mark = { usd18: parseUsd18("5"), provenance: "verified" as const, sourceUrl: null, checkedAt: null, derivedFrom: null, until: null, regular18: null }
  return {
    card: card(id, released),
    price: {
      effectiveFrom: new Date("2025-01-01T00:00:00Z"),
      observedAt: new Date("2025-01-02T00:00:00Z"),
      sourceUrl: "https://acme.example/pricing",
      checkedAt: new Date("2025-01-02T00:00:00Z"),
      note: null,
      input: mark,
      output: mark,
      cachedInput: null,
      cacheWrite5m: null,
      cacheWrite1h: null,
      reasoningOutput: null,
      contextTiers: []
    }
  }
}

const inputs = (overrides: Partial<OracleInputs> = {}): OracleInputs => ({
  revisions,
  catalog: [listing("acme/a"), listing("acme/b")],
  providers: [{ key: "acme", name: "Acme", vendorSlug: "acme", pricingUrl: "https://acme.example/pricing" }],
  pegUsd18: parseUsd18("1"),
  routable: new Set(),
  now: new Date("2025-09-01T00:00:00Z"),
  ...overrides
})

describe("the step function", () => {
  it("an instant exactly at a publishedAt resolves to that revision", () => {
    expect(revisionAt(revisions, new Date("2025-06-17T00:00:00Z"))?.revisionVersion).toBe(1)
    expect(revisionAt(revisions, new Date("2025-06-16T23:59:59.999Z"))).toBeUndefined()
    expect(scuAtView(inputs(), new Date("2025-08-01T00:00:00Z"))?.revisionVersion).toBe(4)
  })

  it("two revisions with the same publishedAt: the highest revision wins", () => {
    expect(revisionAt(revisions, new Date("2025-07-01T00:00:00Z"))?.revisionVersion).toBe(3)
    expect(revisionAt(revisions, new Date("2025-07-15T00:00:00Z"))?.revisionVersion).toBe(3)
    const daily = historyView(inputs(), { granularity: "daily", from: new Date("2025-06-30T00:00:00Z"), to: new Date("2025-07-02T00:00:00Z"), limit: 10 })
    expect(daily.data.map((p) => p.revisionVersion)).toEqual([1, 3, 3])
  })
})

describe("a model that left the basket and came back", () => {
  it("is a member again, with no retirement, and its price follows the manifest in force", () => {
    const models = modelsView(inputs()).models
    expect(models.find((m) => m.id === "acme/b")).toMatchObject({ inBasket: true, retiredAtRevision: null })
    const during = modelsView(inputs({ revisions: revisions.slice(0, 3) })).models
    expect(during.find((m) => m.id === "acme/b")).toMatchObject({ inBasket: false, retiredAtRevision: 3 })
    const history = [listing("acme/b").price]
    expect(priceAt("acme/b", new Date("2025-06-20T00:00:00Z"), revisions, history, "acme.b")).toMatchObject({ source: "manifest", inputPriceUsdPerMillion: 2 })
    expect(priceAt("acme/b", new Date("2025-07-10T00:00:00Z"), revisions, history, "acme.b")).toMatchObject({ source: "catalog", inputPriceUsdPerMillion: 5 })
    expect(priceAt("acme/b", new Date("2025-08-10T00:00:00Z"), revisions, history, "acme.b")).toMatchObject({ source: "manifest", inputPriceUsdPerMillion: 4, revisionVersion: 4 })
  })
})

describe("the catalog cap", () => {
  it("serves at most 1000 entries, dropping the oldest releases, and says it truncated", () => {
    const many = Array.from({ length: CATALOG_LIMIT + 5 }, (_, i) =>
      listing(`acme/m${i}`, new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString())
    )
    const view = catalogView(inputs({ catalog: many }))
    expect(view.truncated).toBe(true)
    expect(view.models).toHaveLength(CATALOG_LIMIT)
    expect(view.models.map((m) => m.modelKey)).not.toContain("acme/m0")
    expect(view.models[0]!.modelKey).toBe(`acme/m${CATALOG_LIMIT + 4}`)
  })
})

describe("context tiers in the catalog", () => {
  const tiered = (input: "verified" | "inferred" | "promotional", output: "verified" | "inferred" | "promotional") => {
    const base = listing("acme/a")
    const mark = (provenance: typeof input, usd: string) => ({ usd18: parseUsd18(usd), provenance, sourceUrl: null, checkedAt: null, derivedFrom: null, until: null, regular18: null })
    return { ...base, price: { ...base.price, contextTiers: [{ fromInputTokens: 200_001, input: mark(input, "10"), output: mark(output, "30") }] } }
  }
  const tierOf = (l: ReturnType<typeof tiered>) => catalogView(inputs({ catalog: [l] })).models[0]!.contextTiers![0]!

  it("carry ONE provenance mark, the weaker of the tier's two numbers (COMPAT.md)", () => {
    expect(tierOf(tiered("verified", "verified"))).toEqual({
      fromInputTokens: 200_001,
      inputPriceUsdPerMillion: 10,
      outputPriceUsdPerMillion: 30,
      provenance: "verified"
    })
    expect(tierOf(tiered("verified", "inferred")).provenance).toBe("inferred")
    expect(tierOf(tiered("inferred", "verified")).provenance).toBe("inferred")
    expect(tierOf(tiered("promotional", "verified")).provenance).toBe("promotional")
    expect(tierOf(tiered("inferred", "promotional")).provenance).toBe("promotional")
  })
})
