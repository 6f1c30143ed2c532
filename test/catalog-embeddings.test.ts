/**
 * Embedding models in the catalog (DESIGN.md section 10; migration 0022): a scan stores one with its traits and an
 * input-only price row, reads it back unchanged, records a price change or a trait edit like any other, and never
 * moves the basket; the catalog and pricing views list it apart from the chat models, with its price history.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Exit } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { ModelCard } from "../domain/catalog/card.ts"
import { parseUsd18 } from "../domain/money.ts"
import type { OracleInputs, StoredPoint } from "../domain/oracle/inputs.ts"
import { catalogView, pricingView } from "../domain/oracle/views.ts"
import { buildLookups } from "../domain/oracle/lookups.ts"
import { CatalogRepository } from "../services/oracle/CatalogRepository.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { at } from "./support/catalogFixtures.ts"
import { type OracleHarness, startOracle } from "./support/oracle.ts"

let harness: OracleHarness | undefined
afterEach(async () => {
  await harness?.close()
  harness = undefined
})

const scan = () => Effect.flatMap(PriceScan, (s) => s.run("test"))
const sqlRows = <A extends object>(query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, query)

describe("an embedding model in the database", () => {
  it("is stored with its traits and an input-only price, read back as it was, and a rescan changes nothing", async () => {
    harness = await startOracle()
    const first = await harness.run(scan())
    expect(first.changes).toEqual(expect.arrayContaining([expect.objectContaining({ type: "ModelAdded", model: "acme/embed-1" })]))
    expect(first.changes.find((c) => c.type === "PriceRecorded" && c.model === "acme/embed-1")).toMatchObject({ detail: "input 20000e-6 USD/M (input only)" })

    const row = await harness.run(
      sqlRows((sql) => sql<Record<string, unknown>>`SELECT kind, dimensions, dimension_options, flexible_dimensions, max_dimensions, max_batch_inputs, max_input_tokens FROM models WHERE id = 'acme/embed-1'`)
    )
    expect(row).toEqual([
      { kind: "embedding", dimensions: 1024, dimensionOptions: [256, 512, 1024], flexibleDimensions: false, maxDimensions: null, maxBatchInputs: 128, maxInputTokens: 8192 }
    ])
    const components = await harness.run(
      sqlRows((sql) => sql<{ component: string }>`SELECT c.component FROM price_components c JOIN price_rows r ON r.id = c.price_row_id WHERE r.model_id = 'acme/embed-1'`)
    )
    expect(components.map((c) => c.component)).toEqual(["input"])

    const now = await harness.run(Effect.flatMap(CatalogRepository, (repo) => repo.catalogNow(new Date())))
    const embed = now.find((m) => m.card.id === "acme/embed-1")!
    expect(embed.card.embedding).toEqual({ dimensions: 1024, dimensionOptions: [256, 512, 1024], flexibleDimensions: false, maxDimensions: null, maxBatchInputs: 128 })
    expect(embed.price).toMatchObject({ input: { usd18: parseUsd18("0.02") }, output: null })
    // The chat models keep their output prices and carry no traits.
    expect(now.filter((m) => m.card.kind === "text").every((m) => m.price.output !== null && m.card.embedding === null)).toBe(true)
    expect((await harness.run(Effect.flatMap(CatalogRepository, (repo) => repo.priceAt("acme/embed-1", at("2025-06-01")))))?.output).toBeNull()

    const again = await harness.run(scan())
    expect(again.changes).toEqual([])
  })

  it("records a price change and a trait edit like any other model's, and the basket does not move", async () => {
    harness = await startOracle()
    const first = await harness.run(scan())
    harness.edit("cards/acme.yaml", (text) =>
      text
        .replace("    dimensionOptions: [256, 512, 1024]\n", "    dimensionOptions: [256, 512, 1024, 2048]\n")
        .replace(
          "        input: 0.02\n",
          "        input: 0.02\n      - from: 2025-09-01\n        sourceUrl: https://acme.example/pricing\n        checkedAt: 2026-11-26\n        input: 0.01\n"
        )
    )
    const report = await harness.run(scan())
    expect(report.changes).toEqual([
      expect.objectContaining({ type: "ModelUpdated", model: "acme/embed-1", detail: "dimensionOptions" }),
      expect.objectContaining({ type: "PriceRecorded", model: "acme/embed-1", effectiveFrom: "2025-09-01T00:00:00.000Z" })
    ])
    expect(report.basket.members).toEqual(first.basket.members)
    expect(report.basket.changes).toEqual([])
    const history = (await harness.run(Effect.flatMap(CatalogRepository, (repo) => repo.modelsWithHistory))).find((m) => m.card.id === "acme/embed-1")!
    expect(history.prices.map((p) => [p.effectiveFrom.toISOString().slice(0, 10), p.input.usd18, p.output])).toEqual([
      ["2025-01-01", parseUsd18("0.02"), null],
      ["2025-09-01", parseUsd18("0.01"), null]
    ])
    expect(history.card.embedding?.dimensionOptions).toEqual([256, 512, 1024, 2048])
  })

  it("is held to its kind by the table: traits on a chat model, or a list of sizes beside any size, are refused", async () => {
    harness = await startOracle()
    await harness.run(scan())
    for (const statement of [
      "UPDATE models SET dimensions = 1536 WHERE id = 'acme/small-1'",
      "UPDATE models SET max_batch_inputs = 10 WHERE id = 'acme/big-1'",
      "UPDATE models SET flexible_dimensions = true WHERE id = 'acme/embed-1'"
    ]) {
      const exit = await harness.run(Effect.exit(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement))))
      expect(Exit.isFailure(exit), statement).toBe(true)
    }
  })
})

const mark = (usd: string) =>
  ({ usd18: parseUsd18(usd), provenance: "verified", sourceUrl: null, checkedAt: null, derivedFrom: null, until: null, regular18: null }) as const

const point = (from: string, input: string, output: string | null): StoredPoint => ({
  effectiveFrom: new Date(from),
  observedAt: new Date("2026-11-01T00:00:00Z"),
  sourceUrl: "https://acme.example/pricing",
  checkedAt: new Date("2026-10-01T00:00:00Z"),
  note: null,
  input: mark(input),
  output: output === null ? null : mark(output),
  cachedInput: null,
  cacheWrite5m: null,
  cacheWrite1h: null,
  reasoningOutput: null,
  contextTiers: []
})

const card = (id: string, kind: ModelCard["kind"], embedding: ModelCard["embedding"]): ModelCard => ({
  id,
  providerKey: "acme",
  family: kind === "embedding" ? "acme.embed" : "acme.big",
  displayName: id,
  sdkId: id.slice(5),
  releasedAt: new Date("2025-01-01T00:00:00Z"),
  availability: "ga",
  kind,
  reasoning: false,
  maxInputTokens: 8192,
  retiredAt: null,
  embedding,
  prices: []
})

const embedHistory = [point("2025-01-01T00:00:00Z", "0.02", null), point("2025-09-01T00:00:00Z", "0.01", null)]
const inputs: OracleInputs = {
  revisions: [],
  catalog: [
    { card: card("acme/big-1", "text", null), price: point("2025-01-01T00:00:00Z", "3", "15") },
    {
      card: card("acme/embed-1", "embedding", { dimensions: 1536, dimensionOptions: null, flexibleDimensions: true, maxDimensions: 3072, maxBatchInputs: 100 }),
      price: embedHistory[1]!
    }
  ],
  providers: [{ key: "acme", name: "Acme", vendorSlug: "acme", pricingUrl: "https://acme.example/pricing" }],
  pegUsd18: parseUsd18("1"),
  routable: new Set(),
  now: new Date("2026-11-28T00:00:00Z")
}

describe("the catalog and pricing views", () => {
  it("list the embedding model apart, with its kind, input price, vectors, batch size and price history", () => {
    const catalog = catalogView(inputs, new Map([["acme/embed-1", embedHistory]]))
    expect(catalog.models.map((m) => [m.modelKey, m.kind])).toEqual([["acme/big-1", "text"]])
    expect(catalog.embeddingModels).toEqual([
      {
        modelKey: "acme/embed-1",
        displayName: "acme/embed-1",
        provider: { key: "acme", name: "Acme" },
        family: "acme.embed",
        kind: "embedding",
        releasedAt: "2025-01-01T00:00:00.000Z",
        currentPrice: { inputPriceUsdPerMillion: 0.01, provenance: "verified", observedAt: "2026-11-01T00:00:00.000Z" },
        priceSources: {
          input: { provenance: "verified", sourceUrl: "https://acme.example/pricing", checkedAt: "2026-10-01T00:00:00.000Z", derivedFrom: null, promotionUntil: null },
          note: null
        },
        dimensions: 1536,
        flexibleDimensions: true,
        maxDimensions: 3072,
        maxInputTokens: 8192,
        maxBatchInputs: 100,
        priceHistory: [
          { effectiveFrom: "2025-01-01T00:00:00.000Z", inputPriceUsdPerMillion: 0.02, provenance: "verified", observedAt: "2026-11-01T00:00:00.000Z" },
          { effectiveFrom: "2025-09-01T00:00:00.000Z", inputPriceUsdPerMillion: 0.01, provenance: "verified", observedAt: "2026-11-01T00:00:00.000Z" }
        ],
        integrated: false
      }
    ])
    // Without a history at hand, the current price is the history.
    expect(catalogView(inputs).embeddingModels[0]!.priceHistory.map((p) => p.inputPriceUsdPerMillion)).toEqual([0.01])
  })

  it("bill it per input token with the markup, apart from the chat models' input and output", () => {
    const pricing = pricingView(inputs)
    expect(Object.keys(pricing.models)).toEqual(["acme/big-1"])
    expect(pricing.embeddingModels).toEqual({
      "acme/embed-1": { input: { weiPerMillion: "10500000000000000", usdPerMillion: 0.0105, provenance: "verified" } }
    })
  })

  it("keep it out of resolve and price history, which quote output prices, and say where its history is", () => {
    const lookups = buildLookups(inputs, [], new Map([["acme/embed-1", { family: "acme.embed", prices: embedHistory }], ["acme/big-1", { family: "acme.big", prices: [inputs.catalog[0]!.price] }]]))
    expect(lookups.tracked("acme/big-1")._tag).toBe("Found")
    expect(lookups.tracked("acme/embed-1")).toEqual({
      _tag: "NotFound",
      message: "acme/embed-1 is an embedding model, priced per input token only: its price history is in /v1/oracle/catalog (embeddingModels[].priceHistory)"
    })
    expect(lookups.resolveName("acme/embed-1").result).toMatchObject({ priceSource: "off-basket", prices: null })
    expect(lookups.resolveName("acme/big-1").result).toMatchObject({ priceSource: "oracle-catalog", resolvedKey: "acme/big-1" })
    // An allowed-models list may still name it (it is a catalog model).
    expect(lookups.catalogModel("acme/embed-1")).toEqual({ _tag: "Found", value: "acme/embed-1" })
  })
})
