/**
 * The provenance report (`npm run oracle -- provenance`): how many of the numbers in force today are verified against
 * a vendor page, inferred, or promotional, per provider, and which vendor pages were last read too long ago to
 * stand behind a number without a new look. Pure: the cards and the day in, the report out.
 */
import { type MarkedPrice, type ModelCard, type PriceCard, type PricePoint, type Provenance, sourceOfNumber } from "./card.ts"
import { pricePointAt } from "./governance.ts"

/** A source read longer ago than this is listed for a new reading. */
export const STALE_AFTER_DAYS = 90

const DAY_MS = 86_400_000

/** One number of a price in force, named as the card names it. */
export interface CurrentNumber {
  readonly provider: string
  readonly model: string
  /** input, output, cachedInput, ..., or `contextTiers[>=200001].input`. */
  readonly number: string
  readonly effectiveFrom: Date
  readonly provenance: Provenance
  readonly sourceUrl: string | null
  readonly checkedAt: Date | null
  readonly derivedFrom: string | null
  readonly until: Date | null
  /** The entry's note: for an inferred number, why no vendor page states it. */
  readonly note: string | null
}

export interface StaleSource {
  readonly sourceUrl: string
  readonly checkedAt: Date
  readonly ageDays: number
  /** `model number` for every current number that rests on this reading. */
  readonly numbers: ReadonlyArray<string>
}

export interface ProviderProvenance {
  readonly provider: string
  readonly name: string
  readonly models: number
  readonly counts: Readonly<Record<Provenance, number>>
  readonly staleSources: ReadonlyArray<StaleSource>
  /** Promotional numbers still in force after the day the vendor gave as the promotion's end: a pass is due. */
  readonly promotionsPastEnd: ReadonlyArray<CurrentNumber>
  readonly inferred: ReadonlyArray<CurrentNumber>
}

export interface ProvenanceReport {
  readonly asOf: Date
  readonly providers: ReadonlyArray<ProviderProvenance>
  readonly counts: Readonly<Record<Provenance, number>>
}

/**
 * Whether a model is current at `asOf`: not retired then and, for a preview, not yet followed by a generally available
 * model of its family. Vendors end a preview once the GA model that follows it ships, mostly without a date the card
 * could carry as `retiredAt`; a preview still the newest of its family (no GA release after it) stays current.
 * `family` is every model of the card (those of other families are ignored).
 */
export const isCurrentAt = (model: ModelCard, family: ReadonlyArray<ModelCard>, asOf: Date): boolean => {
  if (model.retiredAt !== null && model.retiredAt <= asOf) return false
  if (model.availability !== "preview") return true
  return !family.some(
    (other) =>
      other.family === model.family && other.availability === "ga" && other.releasedAt > model.releasedAt && other.releasedAt <= asOf
  )
}

/** The entry in force at `asOf` of a model current then (isCurrentAt), if any. */
export const priceInForce = (model: ModelCard, family: ReadonlyArray<ModelCard>, asOf: Date): PricePoint | undefined =>
  isCurrentAt(model, family, asOf) ? pricePointAt(model.prices, asOf) : undefined

const numbersOf = (point: PricePoint): ReadonlyArray<readonly [string, MarkedPrice]> => {
  const named: Array<readonly [string, MarkedPrice | null]> = [
    ["input", point.input],
    ["output", point.output],
    ["cachedInput", point.cachedInput],
    ["cacheWrite5m", point.cacheWrite5m],
    ["cacheWrite1h", point.cacheWrite1h],
    ["reasoningOutput", point.reasoningOutput],
    ...point.contextTiers.flatMap((tier) => [
      [`contextTiers[>=${tier.fromInputTokens}].input`, tier.input] as const,
      [`contextTiers[>=${tier.fromInputTokens}].output`, tier.output] as const
    ])
  ]
  return named.flatMap(([name, mark]) => (mark === null ? [] : [[name, mark] as const]))
}

/** Every number of every price in force at `asOf`, with the source behind it (its own, else its entry's). */
export const currentNumbers = (card: PriceCard, asOf: Date): ReadonlyArray<CurrentNumber> =>
  card.models.flatMap((model) => {
    const point = priceInForce(model, card.models, asOf)
    if (point === undefined) return []
    return numbersOf(point).map(([number, mark]): CurrentNumber => {
      const source = sourceOfNumber(mark, point)
      return {
        provider: card.provider.key,
        model: model.id,
        number,
        effectiveFrom: point.effectiveFrom,
        provenance: mark.provenance,
        sourceUrl: source?.url ?? null,
        checkedAt: source?.checkedAt ?? null,
        derivedFrom: mark.derivedFrom,
        until: mark.until,
        note: point.note
      }
    })
  })

const tally = (numbers: ReadonlyArray<CurrentNumber>): Record<Provenance, number> => {
  const counts: Record<Provenance, number> = { verified: 0, inferred: 0, promotional: 0 }
  for (const n of numbers) counts[n.provenance] += 1
  return counts
}

const ageInDays = (asOf: Date, checkedAt: Date) => Math.floor((asOf.getTime() - checkedAt.getTime()) / DAY_MS)

export const provenanceReport = (cards: ReadonlyArray<PriceCard>, asOf: Date): ProvenanceReport => {
  const providers = [...cards]
    .sort((a, b) => (a.provider.key < b.provider.key ? -1 : 1))
    .map((card): ProviderProvenance => {
      const numbers = currentNumbers(card, asOf)
      const stale = new Map<string, { sourceUrl: string; checkedAt: Date; numbers: Array<string> }>()
      for (const n of numbers) {
        if (n.sourceUrl === null || n.checkedAt === null || ageInDays(asOf, n.checkedAt) <= STALE_AFTER_DAYS) continue
        const key = `${n.sourceUrl} ${n.checkedAt.toISOString()}`
        const entry = stale.get(key) ?? { sourceUrl: n.sourceUrl, checkedAt: n.checkedAt, numbers: [] }
        entry.numbers.push(`${n.model} ${n.number}`)
        stale.set(key, entry)
      }
      return {
        provider: card.provider.key,
        name: card.provider.name,
        models: new Set(numbers.map((n) => n.model)).size,
        counts: tally(numbers),
        staleSources: [...stale.values()]
          .map((s) => ({ ...s, ageDays: ageInDays(asOf, s.checkedAt) }))
          .sort((a, b) => b.ageDays - a.ageDays || (a.sourceUrl < b.sourceUrl ? -1 : 1)),
        promotionsPastEnd: numbers.filter((n) => n.provenance === "promotional" && n.until !== null && n.until < asOf),
        inferred: numbers.filter((n) => n.provenance === "inferred")
      }
    })
  const counts: Record<Provenance, number> = { verified: 0, inferred: 0, promotional: 0 }
  for (const p of providers) for (const mark of ["verified", "inferred", "promotional"] as const) counts[mark] += p.counts[mark]
  return { asOf, providers, counts }
}

const day = (date: Date) => date.toISOString().slice(0, 10)
const percent = (part: number, whole: number) => (whole === 0 ? "-" : `${((100 * part) / whole).toFixed(1)}%`)
const total = (counts: Readonly<Record<Provenance, number>>) => counts.verified + counts.inferred + counts.promotional

/** The report as the command prints it; `verbose` adds every inferred number with what it rests on and why. */
export const formatProvenanceReport = (report: ProvenanceReport, options: { readonly verbose: boolean }): ReadonlyArray<string> => {
  const width = Math.max(8, ...report.providers.map((p) => p.provider.length))
  const row = (label: string, models: string, counts: Readonly<Record<Provenance, number>>) =>
    `${label.padEnd(width)}  ${models.padStart(6)}  ${String(total(counts)).padStart(7)}  ${`${counts.verified} (${percent(counts.verified, total(counts))})`.padStart(14)}  ${String(counts.inferred).padStart(8)}  ${String(counts.promotional).padStart(11)}`
  const lines = [
    `Provenance of the prices in force on ${day(report.asOf)} (every number of each served model's current price: input, output, cache, reasoning, context tiers)`,
    "",
    `${"provider".padEnd(width)}  ${"models".padStart(6)}  ${"numbers".padStart(7)}  ${"verified".padStart(14)}  ${"inferred".padStart(8)}  ${"promotional".padStart(11)}`,
    ...report.providers.map((p) => row(p.provider, String(p.models), p.counts)),
    row("all", String(report.providers.reduce((n, p) => n + p.models, 0)), report.counts),
    "",
    `Sources read more than ${STALE_AFTER_DAYS} days before ${day(report.asOf)}:`
  ]
  const stale = report.providers.flatMap((p) => p.staleSources.map((s) => ({ provider: p.provider, ...s })))
  if (stale.length === 0) lines.push("  none")
  for (const s of stale) {
    lines.push(`  ${s.provider}: ${s.sourceUrl} read ${day(s.checkedAt)} (${s.ageDays} days): ${s.numbers.length} number(s): ${s.numbers.join(", ")}`)
  }
  const ended = report.providers.flatMap((p) => p.promotionsPastEnd)
  lines.push("", `Promotional prices still in force after their end date:`)
  if (ended.length === 0) lines.push("  none")
  for (const n of ended) lines.push(`  ${n.model} ${n.number}: until ${day(n.until!)} (${n.sourceUrl ?? "no source"})`)
  if (options.verbose) {
    lines.push("", "Inferred numbers in force, with what each rests on and why no vendor page states it:")
    for (const p of report.providers) {
      for (const n of p.inferred) {
        lines.push(`  ${n.model} ${n.number} (from ${day(n.effectiveFrom)}): ${n.derivedFrom ?? "-"}${n.note === null ? "" : ` | note: ${n.note}`}`)
      }
    }
  } else {
    lines.push("", "(--verbose lists every inferred number with what it rests on and why no vendor page states it)")
  }
  return lines
}
