/**
 * The price data the service ships with (data/): every card and decision checks, and together they cover what
 * the index needs (issue 3: at least 20 families from 8 providers; cache, reasoning and context-tier prices).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parse as parseYaml } from "yaml"
import { describe, expect, it } from "vitest"
import type { PriceCard } from "../domain/catalog/card.ts"
import { checkDecisions } from "../domain/catalog/decisions.ts"
import { DEFAULT_RULES, proposeBasket } from "../domain/catalog/governance.ts"
import { formatProvenanceReport, provenanceReport } from "../domain/catalog/provenanceReport.ts"
import { parseCard } from "../services/oracle/CardSources.ts"
import { projectRoot } from "./support/process.ts"

const dataDir = Path.join(projectRoot, "data")
const cardFiles = Fs.readdirSync(Path.join(dataDir, "cards"))
  .filter((name) => name.endsWith(".yaml"))
  .sort()

const outcomes = cardFiles.map((name) =>
  parseCard(`data/cards/${name}`, Fs.readFileSync(Path.join(dataDir, "cards", name), "utf8"))
)
const cards: ReadonlyArray<PriceCard> = outcomes.flatMap((outcome) => (outcome._tag === "Read" ? [outcome.card] : []))
const models = cards.flatMap((card) => card.models)
const decisionsOutcome = checkDecisions(
  "data/decisions.yaml",
  parseYaml(Fs.readFileSync(Path.join(dataDir, "decisions.yaml"), "utf8"), { schema: "failsafe" })
)

describe("the bundled price cards", () => {
  it("all pass the card check", () => {
    const problems = outcomes.flatMap((outcome) => (outcome._tag === "Invalid" ? outcome.problems : []))
    expect(problems).toEqual([])
    expect(cards).toHaveLength(cardFiles.length)
  })

  it("cover at least 20 families from at least 8 providers", () => {
    const providers = new Set(cards.map((card) => card.provider.key))
    const indexedFamilies = new Set(models.filter((m) => m.kind === "text" && m.availability === "ga").map((m) => m.family))
    expect(providers.size).toBeGreaterThanOrEqual(8)
    expect(indexedFamilies.size).toBeGreaterThanOrEqual(20)
  })

  it("price cache on at least 10 models, reasoning on at least 5, and context tiers on at least one", () => {
    const latest = models.map((m) => m.prices[m.prices.length - 1]!)
    expect(latest.filter((p) => p.cachedInput !== null || p.cacheWrite5m !== null || p.cacheWrite1h !== null).length).toBeGreaterThanOrEqual(10)
    expect(latest.filter((p) => p.reasoningOutput !== null).length).toBeGreaterThanOrEqual(5)
    expect(models.filter((m) => m.prices.some((p) => p.contextTiers.length > 0)).length).toBeGreaterThanOrEqual(1)
  })

  it("give every model a distinct id across providers, and history back to the index genesis", () => {
    expect(new Set(models.map((m) => m.id)).size).toBe(models.length)
    const genesis = new Date("2025-06-17T00:00:00Z")
    expect(models.some((m) => m.releasedAt <= genesis)).toBe(true)
  })
})

describe("the provenance of the bundled prices", () => {
  // The day of the operators' last pass over every price (docs/provenance.md is the report as of that day).
  const lastPass = new Date("2026-11-26T00:00:00Z")
  const report = provenanceReport(cards, lastPass)

  it("gives every inferred number in force the reason no vendor page states it, in its entry's note", () => {
    const unexplained = report.providers
      .flatMap((p) => p.inferred)
      .filter((n) => n.derivedFrom === null || n.note === null || !/not verified/i.test(n.note))
      .map((n) => `${n.model} ${n.number}`)
    expect(unexplained).toEqual([])
    const { verified, inferred, promotional } = report.counts
    console.log(`[data] numbers in force on ${lastPass.toISOString().slice(0, 10)}: ${verified} verified, ${inferred} inferred, ${promotional} promotional`)
  })

  it("is published in docs/provenance.md exactly as the report prints it", () => {
    const published = Fs.readFileSync(Path.join(projectRoot, "docs", "provenance.md"), "utf8")
    const block = /```text\n([\s\S]*?)\n```/.exec(published)?.[1]
    expect(block).toBe(formatProvenanceReport(report, { verbose: false }).join("\n"))
  })
})

describe("the bundled family decisions", () => {
  it("pass their check and name only models on the cards", () => {
    if (decisionsOutcome._tag === "Left") expect(decisionsOutcome.left).toEqual([])
    const decisions = decisionsOutcome._tag === "Right" ? decisionsOutcome.right : []
    const ids = new Set(models.map((m) => m.id))
    const families = new Set(cards.flatMap((card) => card.families.map((f) => f.key)))
    for (const decision of decisions) {
      if (decision.model !== null) expect(ids, decision.id).toContain(decision.model)
      expect(ids.has(decision.subject) || families.has(decision.subject), decision.id).toBe(true)
    }
  })
})

describe("the basket the bundled data supports", () => {
  it("has one member per family at genesis and now, and prints its size", () => {
    const decisions = decisionsOutcome._tag === "Right" ? decisionsOutcome.right : []
    const families = cards.flatMap((card) => card.families)
    const states = models.map((card) => ({ card, deletedAt: null, live: true }))
    const at = (iso: string) =>
      proposeBasket({ asOf: new Date(iso), families, models: states, decisions, rules: DEFAULT_RULES, previous: [] })
    const genesis = at("2025-06-17T00:00:00Z")
    const now = at("2026-11-22T00:00:00Z")
    console.log(`[data] basket at genesis: ${genesis.members.length} members; now: ${now.members.length} members`)
    for (const basket of [genesis, now]) {
      expect(new Set(basket.members.map((m) => m.family)).size).toBe(basket.members.length)
    }
    expect(genesis.members.length).toBeGreaterThanOrEqual(8)
    expect(now.members.length).toBeGreaterThanOrEqual(18)
  })
})
