/**
 * The provenance report (`npm run oracle -- provenance`): per provider, the marks of every number in force on a day,
 * and the vendor pages read too long ago. Built here from the fixture cards, edited to put each rule on its edge.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import type { PriceCard } from "../domain/catalog/card.ts"
import { currentNumbers, formatProvenanceReport, provenanceReport } from "../domain/catalog/provenanceReport.ts"
import { parseCard } from "../services/oracle/CardSources.ts"
import { fixturesDir } from "./support/catalogFixtures.ts"

const text = (name: string) => Fs.readFileSync(Path.join(fixturesDir, "cards", name), "utf8")
const card = (name: string, edit: (text: string) => string = (t) => t): PriceCard => {
  const outcome = parseCard(name, edit(text(name)))
  if (outcome._tag !== "Read") throw new Error(JSON.stringify(outcome))
  return outcome.card
}
const asOf = new Date("2026-11-26T00:00:00Z")
const SMALL_1_READ = "        checkedAt: 2026-11-26\n        input: 0.1\n"

describe("the provenance report", () => {
  it("counts every number of each served model's price in force, per provider and in all", () => {
    const report = provenanceReport([card("zeta.yaml"), card("acme.yaml")], asOf)
    // acme/embed-1, an embedding model, has one number: its input price.
    expect(report.providers.map((p) => [p.provider, p.models, p.counts])).toEqual([
      ["acme", 5, { verified: 15, inferred: 0, promotional: 0 }],
      ["zeta", 2, { verified: 2, inferred: 3, promotional: 0 }]
    ])
    expect(report.counts).toEqual({ verified: 17, inferred: 3, promotional: 0 })
    expect(report.providers[1]!.inferred.map((n) => `${n.model} ${n.number}`)).toEqual([
      "zeta-labs/zeta-pro cachedInput",
      "zeta-labs/zeta-mini input",
      "zeta-labs/zeta-mini output"
    ])
  })

  it("leaves out a retired model and a price not yet in force, and names each context tier's numbers", () => {
    const edited = card("acme.yaml", (t) =>
      t
        .replace("    maxInputTokens: 200000\n", "    maxInputTokens: 200000\n    retiredAt: 2026-11-26\n")
        .replace("        note: input price halved\n", "        note: input price halved\n      - from: 2027-01-01\n        sourceUrl: https://acme.example/pricing\n        checkedAt: 2026-11-20\n        input: 0.5\n        output: 5\n")
    )
    const numbers = currentNumbers(edited, asOf)
    expect(numbers.some((n) => n.model === "acme/big-1")).toBe(false)
    const big2 = numbers.filter((n) => n.model === "acme/big-2")
    expect(big2.map((n) => [n.number, n.effectiveFrom.toISOString().slice(0, 10)])).toEqual([
      ["input", "2025-12-01"],
      ["output", "2025-12-01"],
      ["cachedInput", "2025-12-01"],
      ["reasoningOutput", "2025-12-01"]
    ])
    const tiered = currentNumbers(edited, new Date("2025-10-01T00:00:00Z")).filter((n) => n.model === "acme/big-2").map((n) => n.number)
    expect(tiered).toContain("contextTiers[>=200001].input")
    expect(tiered).toContain("contextTiers[>=200001].output")
  })

  it("leaves out a preview once a GA model of its family is released after it, and keeps one still the newest", () => {
    const ga = [
      "  - id: acme/small-2",
      "    family: acme.small",
      "    displayName: Small 2",
      "    sdkId: small-2",
      "    releasedAt: 2026-01-15",
      "    availability: ga",
      "    kind: text",
      "    reasoning: false",
      "    prices:",
      "      - from: 2026-01-15",
      "        sourceUrl: https://acme.example/pricing",
      "        checkedAt: 2026-11-26",
      "        input: 0.05",
      "        output: 0.2",
      ""
    ].join("\n")
    const followed = card("acme.yaml", (t) => t.replace("  - id: acme/embed-1\n", `${ga}  - id: acme/embed-1\n`))
    const models = (day: string) => [...new Set(currentNumbers(followed, new Date(`${day}T00:00:00Z`)).map((n) => n.model))]
    // No retiredAt on the preview: current until its GA successor ships, then not.
    expect(models("2026-01-14")).toContain("acme/small-2-preview")
    expect(models("2026-01-15")).not.toContain("acme/small-2-preview")
    expect(models("2026-11-26")).toEqual(["acme/big-1", "acme/big-2", "acme/small-1", "acme/small-2", "acme/embed-1"])
    // Without it the preview is the newest of its family (small-1, GA, came before it) and counts.
    expect(currentNumbers(card("acme.yaml"), asOf).some((n) => n.model === "acme/small-2-preview")).toBe(true)
  })

  it("lists a source read more than 90 days before the day, and not one read exactly 90 days before", () => {
    const readOn = (day: string) => card("acme.yaml", (t) => t.replace(SMALL_1_READ, SMALL_1_READ.replace("2026-11-26", day)))
    const stale = provenanceReport([readOn("2026-08-27")], asOf).providers[0]!.staleSources
    expect(stale).toEqual([
      { sourceUrl: "https://acme.example/pricing", checkedAt: new Date("2026-08-27T00:00:00Z"), ageDays: 91, numbers: ["acme/small-1 input", "acme/small-1 output"] }
    ])
    expect(provenanceReport([readOn("2026-08-28")], asOf).providers[0]!.staleSources).toEqual([])
  })

  it("judges a number with its own source by that source's reading, not its entry's", () => {
    const own = "cachedInput: { usd: 0.3, provenance: verified, sourceUrl: https://acme.example/caching, checkedAt: 2026-01-05 }\n"
    const report = provenanceReport([card("acme.yaml", (t) => t.replace("cachedInput: 0.3\n", own))], asOf)
    expect(report.providers[0]!.staleSources).toEqual([
      { sourceUrl: "https://acme.example/caching", checkedAt: new Date("2026-01-05T00:00:00Z"), ageDays: 325, numbers: ["acme/big-1 cachedInput"] }
    ])
  })

  it("lists a promotional price still in force after the end date its vendor gave", () => {
    const promoted = (until: string) =>
      card("acme.yaml", (t) => t.replace(SMALL_1_READ, SMALL_1_READ.replace("input: 0.1", `input: { usd: 0.1, provenance: promotional, until: ${until}, regular: 0.2 }`)))
    const past = provenanceReport([promoted("2026-11-25")], asOf).providers[0]!
    expect(past.counts.promotional).toBe(1)
    expect(past.promotionsPastEnd.map((n) => `${n.model} ${n.number}`)).toEqual(["acme/small-1 input"])
    expect(provenanceReport([promoted("2026-11-26")], asOf).providers[0]!.promotionsPastEnd).toEqual([])
  })

  it("prints a table with the verified share, the stale sources, and with --verbose every inferred number", () => {
    const lines = formatProvenanceReport(provenanceReport([card("acme.yaml"), card("zeta.yaml")], asOf), { verbose: true })
    expect(lines[0]).toBe(
      "Provenance of the prices in force on 2026-11-26 (every number of each served model's current price: input, output, cache, reasoning, context tiers)"
    )
    expect(lines.find((line) => line.startsWith("all "))?.split(/ +/)).toEqual(["all", "7", "20", "17", "(85.0%)", "3", "0"])
    expect(lines).toContain("  none")
    expect(lines).toContain("  zeta-labs/zeta-mini input (from 2025-07-15): a reseller's list; the vendor page did not load")
  })
})
