/**
 * The catalog's change detection (docs/decisions.md "Temporal rows", "Removal vs. liveness"), as a pure function:
 * a card against what is stored gives the rows to write and the reason for each.
 */
import { describe, expect, it } from "vitest"
import type { ModelCard, PriceCard, PricePoint } from "../domain/catalog/card.ts"
import { priceFingerprint } from "../domain/catalog/fingerprint.ts"
import { describeModel, reconcileCard, type StoredProviderCatalog } from "../domain/catalog/reconcile.ts"
import { parseUsd18 } from "../domain/money.ts"
import { at, loadFixtureCard } from "./support/catalogFixtures.ts"

const zeta = loadFixtureCard("zeta.yaml")

/** What the catalog holds after storing `card` exactly (every model listed, every entry's fingerprint). */
const storedAs = (card: PriceCard): StoredProviderCatalog => ({
  provider: card.provider,
  families: card.families,
  models: card.models.map((model) => ({ id: model.id, ...describeModel(model), deletedAt: null })),
  prices: card.models.flatMap((model) =>
    model.prices.map((point) => ({ modelId: model.id, effectiveFrom: point.effectiveFrom, fingerprint: priceFingerprint(point) }))
  )
})

const withModels = (card: PriceCard, models: ReadonlyArray<ModelCard>): PriceCard => ({ ...card, models })
const editModel = (card: PriceCard, id: string, edit: (model: ModelCard) => ModelCard): PriceCard =>
  withModels(card, card.models.map((model) => (model.id === id ? edit(model) : model)))
const editFirstPrice = (model: ModelCard, edit: (point: PricePoint) => PricePoint): ModelCard => ({
  ...model,
  prices: model.prices.map((point, index) => (index === 0 ? edit(point) : point))
})
const usd = (decimal: string) => parseUsd18(decimal)

const nothingWritten = {
  provider: "unchanged",
  familiesToInsert: [],
  familiesToUpdate: [],
  modelsToInsert: [],
  modelsToSoftDelete: [],
  pricesToInsert: [],
  changes: []
}

describe("reconcileCard", () => {
  it("on an empty catalog adds the provider, its families, its models and every price entry", () => {
    const plan = reconcileCard(zeta, { provider: null, families: [], models: [], prices: [] })
    expect(plan.provider).toBe("insert")
    expect(plan.familiesToInsert.map((f) => f.key)).toEqual(["zeta.flagship", "zeta.mini"])
    expect(plan.modelsToInsert.map((m) => m.id)).toEqual(["zeta-labs/zeta-pro", "zeta-labs/zeta-mini"])
    expect(plan.modelsSeen).toEqual([])
    expect(plan.pricesToInsert.map((p) => [p.modelId, p.correction])).toEqual([
      ["zeta-labs/zeta-pro", false],
      ["zeta-labs/zeta-mini", false]
    ])
    expect(plan.changes.map((c) => c.type)).toEqual([
      "ProviderAdded",
      "FamilyAdded",
      "FamilyAdded",
      "ModelAdded",
      "ModelAdded",
      "PriceRecorded",
      "PriceRecorded"
    ])
  })

  it("writes nothing for an unchanged card, but stamps every model on it as seen", () => {
    const plan = reconcileCard(zeta, storedAs(zeta))
    expect(plan).toMatchObject(nothingWritten)
    expect(plan.modelsSeen.map((m) => [m.id, m.restore])).toEqual([
      ["zeta-labs/zeta-pro", false],
      ["zeta-labs/zeta-mini", false]
    ])
  })

  it("adds a new model with its prices, and nothing else", () => {
    const newcomer: ModelCard = { ...zeta.models[1]!, id: "zeta-labs/zeta-nano", displayName: "Zeta Nano", sdkId: "zeta-nano" }
    const plan = reconcileCard(withModels(zeta, [...zeta.models, newcomer]), storedAs(zeta))
    expect(plan.modelsToInsert).toEqual([{ id: "zeta-labs/zeta-nano", description: describeModel(newcomer) }])
    expect(plan.pricesToInsert.map((p) => [p.modelId, p.correction])).toEqual([["zeta-labs/zeta-nano", false]])
    expect(plan.changes).toEqual([
      { type: "ModelAdded", model: "zeta-labs/zeta-nano" },
      expect.objectContaining({ type: "PriceRecorded", model: "zeta-labs/zeta-nano", effectiveFrom: "2025-07-15T00:00:00.000Z" })
    ])
  })

  it("records a price change at a new date as a new entry, leaving the earlier one alone", () => {
    const cut: PricePoint = { ...zeta.models[0]!.prices[0]!, effectiveFrom: at("2026-01-15"), input: { ...zeta.models[0]!.prices[0]!.input, usd18: usd("1") } }
    const card = editModel(zeta, "zeta-labs/zeta-pro", (model) => ({ ...model, prices: [...model.prices, cut] }))
    const plan = reconcileCard(card, storedAs(zeta))
    expect(plan.pricesToInsert).toEqual([{ modelId: "zeta-labs/zeta-pro", point: cut, fingerprint: priceFingerprint(cut), correction: false }])
    expect(plan.changes).toEqual([
      {
        type: "PriceRecorded",
        model: "zeta-labs/zeta-pro",
        effectiveFrom: "2026-01-15T00:00:00.000Z",
        detail: "input 1000000e-6, output 10000000e-6 USD/M"
      }
    ])
  })

  it("records an edited entry for a date already stored as a correction that supersedes it", () => {
    const card = editModel(zeta, "zeta-labs/zeta-mini", (model) =>
      editFirstPrice(model, (point) => ({ ...point, output: { ...point.output!, usd18: usd("2.5") } }))
    )
    const plan = reconcileCard(card, storedAs(zeta))
    expect(plan.pricesToInsert.map((p) => [p.modelId, p.point.effectiveFrom.toISOString(), p.correction])).toEqual([
      ["zeta-labs/zeta-mini", "2025-07-15T00:00:00.000Z", true]
    ])
    expect(plan.changes).toEqual([expect.objectContaining({ type: "PriceCorrected", model: "zeta-labs/zeta-mini" })])
  })

  it("treats a change of mark or source as a correction too: every field of an entry counts", () => {
    const card = editModel(zeta, "zeta-labs/zeta-pro", (model) =>
      editFirstPrice(model, (point) => ({ ...point, sourceUrl: `${point.sourceUrl}#updated` }))
    )
    expect(reconcileCard(card, storedAs(zeta)).changes.map((c) => c.type)).toEqual(["PriceCorrected"])
  })

  it("soft-deletes a stored model missing from the card, saying which card dropped it", () => {
    const card = withModels(zeta, zeta.models.filter((model) => model.id !== "zeta-labs/zeta-mini"))
    const plan = reconcileCard(card, storedAs(zeta))
    expect(plan.modelsToSoftDelete).toEqual(["zeta-labs/zeta-mini"])
    expect(plan.pricesToInsert).toEqual([])
    expect(plan.changes).toEqual([{ type: "ModelDeleted", model: "zeta-labs/zeta-mini", detail: `no longer on ${zeta.source}` }])
  })

  it("does not delete a model twice", () => {
    const stored = storedAs(zeta)
    const alreadyDeleted = { ...stored, models: stored.models.map((m) => (m.id === "zeta-labs/zeta-mini" ? { ...m, deletedAt: at("2026-01-01") } : m)) }
    const plan = reconcileCard(withModels(zeta, [zeta.models[0]!]), alreadyDeleted)
    expect(plan).toMatchObject(nothingWritten)
  })

  it("restores a returning model, without re-recording prices it already had", () => {
    const stored = storedAs(zeta)
    const deleted = { ...stored, models: stored.models.map((m) => (m.id === "zeta-labs/zeta-mini" ? { ...m, deletedAt: at("2026-01-01") } : m)) }
    const plan = reconcileCard(zeta, deleted)
    expect(plan.modelsSeen.find((m) => m.id === "zeta-labs/zeta-mini")).toMatchObject({ restore: true })
    expect(plan.modelsToInsert).toEqual([])
    expect(plan.pricesToInsert).toEqual([])
    expect(plan.changes).toEqual([{ type: "ModelRestored", model: "zeta-labs/zeta-mini" }])
  })

  it("updates a changed description and names the fields that changed", () => {
    const card = editModel(zeta, "zeta-labs/zeta-pro", (model) => ({ ...model, displayName: "Zeta Pro 2", retiredAt: at("2026-06-30") }))
    const plan = reconcileCard(card, storedAs(zeta))
    expect(plan.modelsSeen.find((m) => m.id === "zeta-labs/zeta-pro")!.description).toMatchObject({ displayName: "Zeta Pro 2" })
    expect(plan.changes).toEqual([{ type: "ModelUpdated", model: "zeta-labs/zeta-pro", detail: "displayName, retiredAt" }])
  })

  it("compares dates by instant, not by object", () => {
    const stored = storedAs(zeta)
    const copies = { ...stored, models: stored.models.map((m) => ({ ...m, releasedAt: new Date(m.releasedAt.getTime()) })) }
    expect(reconcileCard(zeta, copies).changes).toEqual([])
  })

  it("updates a renamed provider or family", () => {
    const card: PriceCard = {
      ...zeta,
      provider: { ...zeta.provider, name: "Zeta Labs Inc." },
      families: zeta.families.map((f) => (f.key === "zeta.mini" ? { ...f, description: "Small and fast" } : f))
    }
    const plan = reconcileCard(card, storedAs(zeta))
    expect(plan.provider).toBe("update")
    expect(plan.familiesToUpdate.map((f) => f.key)).toEqual(["zeta.mini"])
    expect(plan.changes).toEqual([
      { type: "ProviderUpdated", provider: "zeta" },
      { type: "FamilyUpdated", family: "zeta.mini" }
    ])
  })
})
