/**
 * Basket governance (SPEC "Price index" 2, 12, 13): listing criteria, one slot per family with the latest GA
 * version, dated decisions, the hold on sharp price moves, and cache/reasoning prices kept out.
 */
import { describe, expect, it } from "vitest"
import type { ModelCard, PriceCard } from "../domain/catalog/card.ts"
import type { FamilyDecision } from "../domain/catalog/decisions.ts"
import {
  basketChangeInstants,
  type BasketMember,
  DEFAULT_RULES,
  type ModelState,
  proposeBasket
} from "../domain/catalog/governance.ts"
import { formatUsd18, parseUsd18 } from "../domain/money.ts"
import { at, loadFixtureCard } from "./support/catalogFixtures.ts"

const acme = loadFixtureCard("acme.yaml")
const zeta = loadFixtureCard("zeta.yaml")
const cards: ReadonlyArray<PriceCard> = [acme, zeta]
const families = cards.flatMap((card) => card.families)

const states = (overrides: Partial<Record<string, Partial<ModelState>>> = {}, replace: Record<string, ModelCard> = {}) =>
  cards
    .flatMap((card) => card.models)
    .map((card): ModelState => ({ card: replace[card.id] ?? card, deletedAt: null, live: true, ...overrides[card.id] }))

const basketAt = (
  iso: string,
  options: {
    models?: ReadonlyArray<ModelState>
    decisions?: ReadonlyArray<FamilyDecision>
    previous?: ReadonlyArray<BasketMember>
  } = {}
) =>
  proposeBasket({
    asOf: at(iso),
    families,
    models: options.models ?? states(),
    decisions: options.decisions ?? [],
    rules: DEFAULT_RULES,
    previous: options.previous ?? []
  })

const memberOf = (basket: ReturnType<typeof basketAt>, family: string) => basket.members.find((m) => m.family === family)

describe("listing criteria", () => {
  it("admits only generally available, in-scope text models priced on their provider's card", () => {
    const basket = basketAt("2025-11-01")
    expect(basket.members.map((m) => m.modelKey)).toEqual([
      "acme/big-2",
      "acme/small-1",
      "zeta-labs/zeta-mini",
      "zeta-labs/zeta-pro"
    ])
    const reasons = Object.fromEntries(basket.excluded.map((e) => [e.modelKey, e.reasons.join("; ")]))
    expect(reasons["acme/small-2-preview"]).toContain("not generally available")
    expect(reasons["acme/embed-1"]).toContain("not a text model")
    // A family of embedding models never holds a slot and is not reported as missing a member; a text family is.
    expect(basket.familiesWithoutMember).toEqual([])
    const withoutSmall = basketAt("2025-11-01", { models: states({ "acme/small-1": { deletedAt: at("2025-10-01") } }) })
    expect(withoutSmall.familiesWithoutMember).toEqual(["acme.small"])
  })

  it("needs a price in force: a model whose card prices it only later cannot hold a slot yet", () => {
    const small1 = acme.models.find((m) => m.id === "acme/small-1")!
    const pricedLater: ModelCard = { ...small1, prices: [{ ...small1.prices[0]!, effectiveFrom: at("2025-12-01") }] }
    const basket = basketAt("2025-11-01", { models: states({}, { "acme/small-1": pricedLater }) })
    expect(memberOf(basket, "acme.small")).toBeUndefined()
    expect(basket.excluded.find((e) => e.modelKey === "acme/small-1")?.reasons).toEqual([
      "no price on its provider's card in force at 2025-11-01T00:00:00.000Z"
    ])
  })

  it("refuses a free model: a zero cost cannot enter a geometric mean", () => {
    const small1 = acme.models.find((m) => m.id === "acme/small-1")!
    const zero = { ...small1.prices[0]!.input, usd18: 0n as typeof small1.prices[0]["input"]["usd18"] }
    const free: ModelCard = { ...small1, prices: [{ ...small1.prices[0]!, input: zero, output: zero }] }
    const basket = basketAt("2025-11-01", { models: states({}, { "acme/small-1": free }) })
    expect(basket.excluded.find((e) => e.modelKey === "acme/small-1")?.reasons).toEqual([
      "free: a zero reference-workload cost cannot enter a geometric mean"
    ])
  })

  it("ignores provenance marks: an inferred price is still the provider's price", () => {
    const zetaMini = memberOf(basketAt("2025-11-01"), "zeta.mini")!
    expect(formatUsd18(zetaMini.inputPrice18)).toBe("0.25")
  })

  it("applies seasoning: a release waits the seasoning period before taking its slot", () => {
    expect(memberOf(basketAt("2025-09-05"), "acme.big")?.modelKey).toBe("acme/big-1")
    const beforeSeasoned = basketAt("2025-09-07T23:59:59Z")
    expect(memberOf(beforeSeasoned, "acme.big")?.modelKey).toBe("acme/big-1")
    expect(beforeSeasoned.excluded.find((e) => e.modelKey === "acme/big-2")?.reasons).toEqual([
      "seasoning: released 2025-09-01, eligible from 2025-09-08"
    ])
    expect(memberOf(basketAt("2025-09-08"), "acme.big")?.modelKey).toBe("acme/big-2")
  })

  it("applies liveness: a model not seen on its card in the last scans leaves, and the family falls back", () => {
    const basket = basketAt("2025-11-01", { models: states({ "acme/big-2": { live: false } }) })
    expect(memberOf(basket, "acme.big")?.modelKey).toBe("acme/big-1")
    expect(basket.excluded.find((e) => e.modelKey === "acme/big-2")?.reasons).toEqual([
      "not seen on its price card in the last 3 scans"
    ])
  })

  it("drops retired and removed models", () => {
    const retired = { ...acme.models.find((m) => m.id === "acme/big-2")!, retiredAt: at("2025-10-15") }
    expect(memberOf(basketAt("2025-11-01", { models: states({}, { "acme/big-2": retired }) }), "acme.big")?.modelKey).toBe(
      "acme/big-1"
    )
    const removed = basketAt("2025-11-01", { models: states({ "acme/small-1": { deletedAt: at("2025-10-20") } }) })
    expect(memberOf(removed, "acme.small")).toBeUndefined()
  })
})

describe("one slot per family", () => {
  it("gives each family exactly one member, the latest generally available version", () => {
    const basket = basketAt("2026-01-15")
    expect(new Set(basket.members.map((m) => m.family)).size).toBe(basket.members.length)
    expect(memberOf(basket, "acme.big")?.modelKey).toBe("acme/big-2")
  })

  it("states why the basket changed against the previous one", () => {
    const before = basketAt("2025-09-01")
    const after = basketAt("2025-09-08", { previous: before.members })
    expect(after.changes).toEqual([
      {
        type: "ModelReplaced",
        family: "acme.big",
        modelKey: "acme/big-2",
        previousModelKey: "acme/big-1",
        description: "Big 2 replaces Big 1 in acme.big: Big 2 is the latest generally available version (released 2025-09-01)"
      }
    ])
    const first = basketAt("2025-09-08")
    expect(first.changes.map((c) => c.type)).toEqual(["ModelAdded", "ModelAdded", "ModelAdded", "ModelAdded"])
    const unchanged = basketAt("2025-10-01", { previous: after.members })
    expect(unchanged.changes).toEqual([])
  })

  it("records a family that loses its only member as ModelRemoved, with the reason", () => {
    const before = basketAt("2025-11-01")
    const after = basketAt("2025-11-02", {
      previous: before.members,
      models: states({ "acme/small-1": { deletedAt: at("2025-11-01T12:00:00Z") } })
    })
    expect(after.changes).toEqual([
      {
        type: "ModelRemoved",
        family: "acme.small",
        modelKey: "acme/small-1",
        previousModelKey: null,
        description: "Small 1 leaves acme.small and no other model qualifies: removed from the catalog on 2025-11-01"
      }
    ])
  })
})

describe("dated decisions", () => {
  const decision = (fields: Partial<FamilyDecision>): FamilyDecision => ({
    id: "test-decision",
    decidedOn: at("2025-10-01"),
    subject: "acme.big",
    effect: "note",
    model: null,
    validFrom: null,
    validUntil: null,
    ruling: "a ruling",
    rationale: "a rationale",
    ...fields
  })

  it("an exclude decision keeps a model out from its date on", () => {
    const exclude = decision({ effect: "exclude", model: "acme/big-2", ruling: "Big 2 is an alias of a preview" })
    expect(memberOf(basketAt("2025-09-20", { decisions: [exclude] }), "acme.big")?.modelKey).toBe("acme/big-2")
    const basket = basketAt("2025-10-02", { decisions: [exclude] })
    expect(memberOf(basket, "acme.big")?.modelKey).toBe("acme/big-1")
    expect(basket.excluded.find((e) => e.modelKey === "acme/big-2")?.reasons).toEqual([
      "excluded by decision test-decision: Big 2 is an alias of a preview"
    ])
  })

  it("a prefer decision holds a model in its slot for its validity, and the change names it", () => {
    const prefer = decision({ effect: "prefer", model: "acme/big-1", validUntil: at("2025-11-01"), ruling: "keep Big 1 during migration" })
    const during = basketAt("2025-10-15", { decisions: [prefer], previous: basketAt("2025-09-20").members })
    expect(memberOf(during, "acme.big")?.modelKey).toBe("acme/big-1")
    expect(during.changes[0]?.description).toBe("Big 1 replaces Big 2 in acme.big: decision test-decision: keep Big 1 during migration")
    expect(memberOf(basketAt("2025-11-01", { decisions: [prefer] }), "acme.big")?.modelKey).toBe("acme/big-2")
  })
})

describe("the hold on sharp price moves", () => {
  it("holds a move above the threshold for the hold duration, then lets it through", () => {
    // acme/big-2 halves its input price on 2025-12-01 (a 50% move, above the 30% default).
    const justAfter = basketAt("2025-12-01T06:00:00Z", { previous: basketAt("2025-11-30").members })
    const big = memberOf(justAfter, "acme.big")!
    expect(formatUsd18(big.inputPrice18)).toBe("2")
    expect(justAfter.changes).toEqual([])
    expect(justAfter.held).toEqual([
      {
        modelKey: "acme/big-2",
        until: at("2025-12-02"),
        description:
          "price change of 2025-12-01 held until 2025-12-02T00:00:00.000Z: input moved 50.00%, output 0.00% within 24 hours (threshold 30%)"
      }
    ])
    const released = basketAt("2025-12-02", { previous: justAfter.members })
    expect(formatUsd18(memberOf(released, "acme.big")!.inputPrice18)).toBe("1")
    expect(released.changes.map((c) => c.type)).toEqual(["PriceChanged"])
    expect(released.changes[0]!.description).toBe(
      "Big 2 price changed on 2025-12-01: input 2 -> 1, output 10 -> 10"
    )
  })

  it("lets a move within the threshold through at once", () => {
    const big2 = acme.models.find((m) => m.id === "acme/big-2")!
    const gentle: ModelCard = {
      ...big2,
      prices: [big2.prices[0]!, { ...big2.prices[1]!, input: { ...big2.prices[1]!.input, usd18: parseUsd18("1.6") } }]
    }
    const basket = basketAt("2025-12-01T06:00:00Z", { models: states({}, { "acme/big-2": gentle }) })
    expect(formatUsd18(memberOf(basket, "acme.big")!.inputPrice18)).toBe("1.6")
    expect(basket.held).toEqual([])
  })
})

describe("cache and reasoning prices", () => {
  it("never enter the basket: members carry input and output only, and a cache price change is no basket change", () => {
    const member = memberOf(basketAt("2025-11-01"), "acme.big")!
    expect(Object.keys(member).sort()).toEqual(
      ["displayName", "family", "inputPrice18", "modelKey", "outputPrice18", "priceFrom", "providerKey", "sdkId"]
    )
    const big2 = acme.models.find((m) => m.id === "acme/big-2")!
    const cheaperCache: ModelCard = {
      ...big2,
      prices: [
        big2.prices[0]!,
        {
          ...big2.prices[0]!,
          effectiveFrom: at("2025-10-01"),
          cachedInput: { ...big2.prices[0]!.cachedInput!, usd18: parseUsd18("0.01") },
          reasoningOutput: { ...big2.prices[0]!.reasoningOutput!, usd18: parseUsd18("99") }
        }
      ]
    }
    const before = basketAt("2025-09-20", { models: states({}, { "acme/big-2": cheaperCache }) })
    const after = basketAt("2025-10-05", { models: states({}, { "acme/big-2": cheaperCache }), previous: before.members })
    expect(after.changes).toEqual([])
    expect(after.members).toEqual(before.members.map((m) => (m.modelKey === "acme/big-2" ? { ...m, priceFrom: at("2025-10-01") } : m)))
  })
})

describe("replay instants", () => {
  it("lists every instant the basket may change at, in order", () => {
    const instants = basketChangeInstants(states(), [], DEFAULT_RULES).map((d) => d.toISOString().slice(0, 13))
    expect(instants).toContain("2025-09-08T00") // big-2 seasoned
    expect(instants).toContain("2025-12-01T00") // big-2 price change
    expect(instants).toContain("2025-12-02T00") // its hold ends
    expect([...instants].sort()).toEqual(instants)
  })
})
