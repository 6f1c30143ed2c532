/**
 * The catalog's rows as PostgreSQL holds them, as Schemas: every read is decoded through one of these (numeric
 * columns from their digit strings into usd18, marks and kinds against their literals), so a corrupt row is a
 * defect at the repository rather than a value cast into shape. Also the assembly of price points from a price
 * row, its components and its tiers.
 */
import { Effect, Schema } from "effect"
import {
  Availability,
  type ContextTier,
  type MarkedPrice,
  type ModelCard,
  ModelKind,
  type PriceComponent,
  type PricePoint,
  Provenance
} from "../../domain/catalog/card.ts"
import { DecisionEffect, type FamilyDecision } from "../../domain/catalog/decisions.ts"
import { Usd18FromNumericString } from "../../domain/money.ts"
import { CorruptStoredData } from "../platform/RepositoryBoundary.ts"

export const COMPONENT_COLUMN = {
  input: "input",
  output: "output",
  cachedInput: "cached_input",
  cacheWrite5m: "cache_write_5m",
  cacheWrite1h: "cache_write_1h",
  reasoningOutput: "reasoning_output"
} as const satisfies Record<PriceComponent, string>

type ComponentColumn = (typeof COMPONENT_COLUMN)[PriceComponent]

const COMPONENT_OF_COLUMN = Object.fromEntries(
  Object.entries(COMPONENT_COLUMN).map(([component, column]) => [column, component])
) as Record<ComponentColumn, PriceComponent>

const Timestamp = Schema.DateFromSelf
const NullableText = Schema.NullOr(Schema.String)

export const ModelRow = Schema.Struct({
  id: Schema.String,
  providerKey: Schema.String,
  familyKey: Schema.String,
  displayName: Schema.String,
  sdkId: Schema.String,
  releasedAt: Timestamp,
  availability: Availability,
  kind: ModelKind,
  reasoning: Schema.Boolean,
  maxInputTokens: Schema.NullOr(Schema.Int),
  retiredAt: Schema.NullOr(Timestamp),
  deletedAt: Schema.NullOr(Timestamp),
  lastSeenScan: Schema.BigInt,
  // An embedding model's traits (migration 0022); null and false on every other kind.
  dimensions: Schema.NullOr(Schema.Int),
  dimensionOptions: Schema.NullOr(Schema.Array(Schema.Int)),
  flexibleDimensions: Schema.Boolean,
  maxDimensions: Schema.NullOr(Schema.Int),
  maxBatchInputs: Schema.NullOr(Schema.Int)
})
export type ModelRow = typeof ModelRow.Type

/** A price row (bigserial ids arrive as strings and stay strings). */
export const PriceRowRow = Schema.Struct({
  id: Schema.String,
  modelId: Schema.String,
  effectiveFrom: Timestamp,
  observedAt: Timestamp,
  sourceUrl: Schema.String,
  checkedAt: Schema.NullOr(Timestamp),
  note: NullableText,
  fingerprint: Schema.String
})
export type PriceRowRow = typeof PriceRowRow.Type

/** A new price row: what the scan writes; the database stamps id and observed_at. */
export const PriceRowInsert = Schema.Struct({
  modelId: Schema.String,
  effectiveFrom: Timestamp,
  scanId: Schema.String,
  sourceUrl: Schema.String,
  checkedAt: Schema.NullOr(Schema.DateFromSelf),
  note: NullableText,
  fingerprint: Schema.String
})

export const ComponentRow = Schema.Struct({
  priceRowId: Schema.String,
  component: Schema.Literal(...Object.values(COMPONENT_COLUMN)),
  usd18: Usd18FromNumericString,
  provenance: Provenance,
  sourceUrl: NullableText,
  checkedAt: Schema.NullOr(Timestamp),
  derivedFrom: NullableText,
  promotionUntil: Schema.NullOr(Timestamp),
  regularUsd18: Schema.NullOr(Usd18FromNumericString)
})
export type ComponentRow = typeof ComponentRow.Type

export const TierRow = Schema.Struct({
  priceRowId: Schema.String,
  fromInputTokens: Schema.Int,
  inputUsd18: Usd18FromNumericString,
  outputUsd18: Usd18FromNumericString,
  inputProvenance: Provenance,
  outputProvenance: Provenance,
  inputDerivedFrom: NullableText,
  outputDerivedFrom: NullableText
})
export type TierRow = typeof TierRow.Type

export const FamilyRow = Schema.Struct({
  key: Schema.String,
  providerKey: Schema.String,
  name: Schema.String,
  description: NullableText
})

export const ProviderRow = Schema.Struct({
  key: Schema.String,
  name: Schema.String,
  vendorSlug: Schema.String,
  pricingUrl: Schema.String
})

/** A dated decision; `decided_on` is a SQL date, selected as its `YYYY-MM-DD` text (midnight UTC). */
export const DecisionRow = Schema.Struct({
  id: Schema.String,
  decidedOn: Schema.Date,
  subject: Schema.String,
  effect: DecisionEffect,
  modelId: NullableText,
  ruling: Schema.String,
  rationale: Schema.String,
  validFrom: Schema.NullOr(Timestamp),
  validUntil: Schema.NullOr(Timestamp)
})

export const toDecision = (row: typeof DecisionRow.Type): FamilyDecision => ({
  id: row.id,
  decidedOn: row.decidedOn,
  subject: row.subject,
  effect: row.effect,
  model: row.modelId,
  validFrom: row.validFrom,
  validUntil: row.validUntil,
  ruling: row.ruling,
  rationale: row.rationale
})

/** The latest observation's fingerprint of one model's entry for one date. */
export const EntryFingerprintRow = Schema.Struct({ modelId: Schema.String, effectiveFrom: Timestamp, fingerprint: Schema.String })

/** A stored price point, with when we recorded it. */
export interface StoredPricePoint extends PricePoint {
  readonly rowId: string
  readonly observedAt: Date
}

type MarkColumns = Pick<ComponentRow, "usd18" | "provenance" | "derivedFrom" | "promotionUntil" | "regularUsd18"> &
  Partial<Pick<ComponentRow, "sourceUrl" | "checkedAt">>

const mark = (row: MarkColumns): MarkedPrice => ({
  usd18: row.usd18,
  provenance: row.provenance,
  sourceUrl: row.sourceUrl ?? null,
  checkedAt: row.checkedAt ?? null,
  derivedFrom: row.derivedFrom,
  until: row.promotionUntil,
  regular18: row.regularUsd18
})

const tierOf = (tier: TierRow): ContextTier => ({
  fromInputTokens: tier.fromInputTokens,
  input: mark({ usd18: tier.inputUsd18, provenance: tier.inputProvenance, derivedFrom: tier.inputDerivedFrom, promotionUntil: null, regularUsd18: null }),
  output: mark({ usd18: tier.outputUsd18, provenance: tier.outputProvenance, derivedFrom: tier.outputDerivedFrom, promotionUntil: null, regularUsd18: null })
})

/**
 * Price points from their rows, components and tiers, by row id. Every row must carry its input price, and its output
 * price unless its model is priced per input token only (`inputOnly`: the embedding models): a row without them is
 * corrupt, and reading it is a defect.
 */
export const assemblePoints = (
  rows: ReadonlyArray<PriceRowRow>,
  components: ReadonlyArray<ComponentRow>,
  tiers: ReadonlyArray<TierRow>,
  inputOnly: ReadonlySet<string>
): Effect.Effect<Map<string, StoredPricePoint>> => {
  const componentsByRow = new Map<string, Map<PriceComponent, MarkedPrice>>()
  for (const row of components) {
    const map = componentsByRow.get(row.priceRowId) ?? new Map<PriceComponent, MarkedPrice>()
    map.set(COMPONENT_OF_COLUMN[row.component], mark(row))
    componentsByRow.set(row.priceRowId, map)
  }
  const tiersByRow = new Map<string, Array<ContextTier>>()
  for (const tier of tiers) {
    const list = tiersByRow.get(tier.priceRowId) ?? []
    list.push(tierOf(tier))
    tiersByRow.set(tier.priceRowId, list)
  }
  const points = new Map<string, StoredPricePoint>()
  for (const row of rows) {
    const parts = componentsByRow.get(row.id) ?? new Map<PriceComponent, MarkedPrice>()
    const input = parts.get("input")
    const output = parts.get("output") ?? null
    if (input === undefined || (output === null) !== inputOnly.has(row.modelId)) {
      const what = input === undefined ? "no input price" : output === null ? "no output price" : "an output price, but its model is priced per input only"
      return Effect.die(new CorruptStoredData({ message: `price row ${row.id} of ${row.modelId} has ${what}` }))
    }
    points.set(row.id, {
      rowId: row.id,
      observedAt: row.observedAt,
      effectiveFrom: row.effectiveFrom,
      sourceUrl: row.sourceUrl,
      checkedAt: row.checkedAt,
      note: row.note,
      input,
      output,
      cachedInput: parts.get("cachedInput") ?? null,
      cacheWrite5m: parts.get("cacheWrite5m") ?? null,
      cacheWrite1h: parts.get("cacheWrite1h") ?? null,
      reasoningOutput: parts.get("reasoningOutput") ?? null,
      contextTiers: (tiersByRow.get(row.id) ?? []).sort((a, b) => a.fromInputTokens - b.fromInputTokens)
    })
  }
  return Effect.succeed(points)
}

/** The rows a price point is written as: its components and tiers, once its row has an id. */
export const componentRowsOf = (priceRowId: string, point: PricePoint): ReadonlyArray<ComponentRow> =>
  (Object.keys(COMPONENT_COLUMN) as Array<PriceComponent>).flatMap((component) => {
    const value = point[component]
    return value === null
      ? []
      : [
          {
            priceRowId,
            component: COMPONENT_COLUMN[component],
            usd18: value.usd18,
            provenance: value.provenance,
            sourceUrl: value.sourceUrl,
            checkedAt: value.checkedAt,
            derivedFrom: value.derivedFrom,
            promotionUntil: value.until,
            regularUsd18: value.regular18
          }
        ]
  })

export const tierRowsOf = (priceRowId: string, point: PricePoint): ReadonlyArray<TierRow> =>
  point.contextTiers.map((tier) => ({
    priceRowId,
    fromInputTokens: tier.fromInputTokens,
    inputUsd18: tier.input.usd18,
    outputUsd18: tier.output.usd18,
    inputProvenance: tier.input.provenance,
    outputProvenance: tier.output.provenance,
    inputDerivedFrom: tier.input.derivedFrom,
    outputDerivedFrom: tier.output.derivedFrom
  }))

export const toCard = (row: ModelRow, prices: ReadonlyArray<PricePoint>): ModelCard => ({
  id: row.id,
  providerKey: row.providerKey,
  family: row.familyKey,
  displayName: row.displayName,
  sdkId: row.sdkId,
  releasedAt: row.releasedAt,
  availability: row.availability,
  kind: row.kind,
  reasoning: row.reasoning,
  maxInputTokens: row.maxInputTokens,
  retiredAt: row.retiredAt,
  embedding:
    row.kind === "embedding" && row.dimensions !== null
      ? {
          dimensions: row.dimensions,
          dimensionOptions: row.dimensionOptions,
          flexibleDimensions: row.flexibleDimensions,
          maxDimensions: row.maxDimensions,
          maxBatchInputs: row.maxBatchInputs
        }
      : null,
  prices
})

/** The models of `rows` priced per input token only (their price rows have no output price). */
export const inputOnlyModels = (rows: ReadonlyArray<Pick<ModelRow, "id" | "kind">>): ReadonlySet<string> =>
  new Set(rows.filter((row) => row.kind === "embedding").map((row) => row.id))
