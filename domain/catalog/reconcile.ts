/**
 * Change detection for one provider's card against what the catalog holds (docs/decisions.md "Temporal rows" and
 * "Removal vs. liveness"). Pure: it decides which rows to write and why; the repository only executes the plan.
 *
 * - a provider, family or model not stored yet is inserted; a stored one whose description differs is updated;
 * - every model on the card is stamped as seen by this scan, and restored if it had been soft-deleted;
 * - a stored model missing from the card (which was read) is soft-deleted: kept with its history, no longer listed;
 * - a price entry is written only when its fingerprint is new for that model and date: a first entry for the date
 *   is recorded, a different one supersedes the stored entry as a correction, and an unchanged one writes nothing.
 */
import type { FamilyRecord, ModelCard, PriceCard, PricePoint, ProviderRecord } from "./card.ts"
import { priceFingerprint } from "./fingerprint.ts"

export type CatalogChange =
  | { readonly type: "ProviderAdded" | "ProviderUpdated"; readonly provider: string }
  | { readonly type: "FamilyAdded" | "FamilyUpdated"; readonly family: string }
  | { readonly type: "ModelAdded" | "ModelUpdated" | "ModelDeleted" | "ModelRestored"; readonly model: string; readonly detail?: string }
  | {
      readonly type: "PriceRecorded" | "PriceCorrected"
      readonly model: string
      readonly effectiveFrom: string
      readonly detail: string
    }

/** The columns of a model row that its card describes. */
export interface ModelDescription {
  readonly familyKey: string
  readonly displayName: string
  readonly sdkId: string
  readonly releasedAt: Date
  readonly availability: ModelCard["availability"]
  readonly kind: ModelCard["kind"]
  readonly reasoning: boolean
  readonly maxInputTokens: number | null
  readonly retiredAt: Date | null
  // An embedding model's traits (embeddingCard.ts), flattened into columns; null and false for every other kind.
  readonly dimensions: number | null
  readonly dimensionOptions: ReadonlyArray<number> | null
  readonly flexibleDimensions: boolean
  readonly maxDimensions: number | null
  readonly maxBatchInputs: number | null
}

export interface StoredModel extends ModelDescription {
  readonly id: string
  readonly deletedAt: Date | null
}

/** The fingerprint of the latest observation of one model's entry for one effective date. */
export interface StoredPriceEntry {
  readonly modelId: string
  readonly effectiveFrom: Date
  readonly fingerprint: string
}

/** What the catalog holds for the card's provider. */
export interface StoredProviderCatalog {
  readonly provider: ProviderRecord | null
  readonly families: ReadonlyArray<FamilyRecord>
  readonly models: ReadonlyArray<StoredModel>
  readonly prices: ReadonlyArray<StoredPriceEntry>
}

export interface ModelWrite {
  readonly id: string
  readonly description: ModelDescription
}

export interface PriceWrite {
  readonly modelId: string
  readonly point: PricePoint
  readonly fingerprint: string
  /** A new row for a date that already had one: it supersedes the stored entry, which stays. */
  readonly correction: boolean
}

export interface CatalogPlan {
  readonly provider: "insert" | "update" | "unchanged"
  readonly familiesToInsert: ReadonlyArray<FamilyRecord>
  readonly familiesToUpdate: ReadonlyArray<FamilyRecord>
  readonly modelsToInsert: ReadonlyArray<ModelWrite>
  /** Models of the card already stored: description rewritten, sighting stamped, soft-deletion lifted. */
  readonly modelsSeen: ReadonlyArray<ModelWrite & { readonly restore: boolean }>
  readonly modelsToSoftDelete: ReadonlyArray<string>
  readonly pricesToInsert: ReadonlyArray<PriceWrite>
  /** Every change with its reason, in the order a scan reports them. */
  readonly changes: ReadonlyArray<CatalogChange>
}

export const describeModel = (model: ModelCard): ModelDescription => ({
  familyKey: model.family,
  displayName: model.displayName,
  sdkId: model.sdkId,
  releasedAt: model.releasedAt,
  availability: model.availability,
  kind: model.kind,
  reasoning: model.reasoning,
  maxInputTokens: model.maxInputTokens,
  retiredAt: model.retiredAt,
  dimensions: model.embedding?.dimensions ?? null,
  dimensionOptions: model.embedding?.dimensionOptions ?? null,
  flexibleDimensions: model.embedding?.flexibleDimensions ?? false,
  maxDimensions: model.embedding?.maxDimensions ?? null,
  maxBatchInputs: model.embedding?.maxBatchInputs ?? null
})

const DESCRIPTION_FIELDS: ReadonlyArray<keyof ModelDescription> = [
  "familyKey",
  "displayName",
  "sdkId",
  "releasedAt",
  "availability",
  "kind",
  "reasoning",
  "maxInputTokens",
  "retiredAt",
  "dimensions",
  "dimensionOptions",
  "flexibleDimensions",
  "maxDimensions",
  "maxBatchInputs"
]

const sameValue = (a: unknown, b: unknown): boolean =>
  a instanceof Date || b instanceof Date
    ? (a as Date | null)?.getTime() === (b as Date | null)?.getTime()
    : Array.isArray(a) && Array.isArray(b)
      ? a.length === b.length && a.every((x, i) => x === b[i])
      : a === b

/** The description fields in which the card and the stored row disagree. */
const differingFields = (card: ModelDescription, stored: ModelDescription): ReadonlyArray<keyof ModelDescription> =>
  DESCRIPTION_FIELDS.filter((field) => !sameValue(card[field], stored[field]))

export const describePoint = (point: PricePoint): string =>
  point.output === null
    ? `input ${point.input.usd18 / 10n ** 12n}e-6 USD/M (input only)`
    : `input ${point.input.usd18 / 10n ** 12n}e-6, output ${point.output.usd18 / 10n ** 12n}e-6 USD/M`

const entryKey = (modelId: string, effectiveFrom: Date) => `${modelId}@${effectiveFrom.toISOString()}`

export const reconcileCard = (card: PriceCard, stored: StoredProviderCatalog): CatalogPlan => {
  const changes: Array<CatalogChange> = []
  const { provider } = card

  let providerWrite: CatalogPlan["provider"] = "unchanged"
  if (stored.provider === null) {
    providerWrite = "insert"
    changes.push({ type: "ProviderAdded", provider: provider.key })
  } else if (
    stored.provider.name !== provider.name ||
    stored.provider.vendorSlug !== provider.vendorSlug ||
    stored.provider.pricingUrl !== provider.pricingUrl
  ) {
    providerWrite = "update"
    changes.push({ type: "ProviderUpdated", provider: provider.key })
  }

  const storedFamilies = new Map(stored.families.map((family) => [family.key, family]))
  const familiesToInsert: Array<FamilyRecord> = []
  const familiesToUpdate: Array<FamilyRecord> = []
  for (const family of card.families) {
    const before = storedFamilies.get(family.key)
    if (before === undefined) {
      familiesToInsert.push(family)
      changes.push({ type: "FamilyAdded", family: family.key })
    } else if (before.name !== family.name || before.description !== family.description) {
      familiesToUpdate.push(family)
      changes.push({ type: "FamilyUpdated", family: family.key })
    }
  }

  const storedModels = new Map(stored.models.map((model) => [model.id, model]))
  const modelsToInsert: Array<ModelWrite> = []
  const modelsSeen: Array<ModelWrite & { readonly restore: boolean }> = []
  for (const model of card.models) {
    const description = describeModel(model)
    const before = storedModels.get(model.id)
    if (before === undefined) {
      modelsToInsert.push({ id: model.id, description })
      changes.push({ type: "ModelAdded", model: model.id })
      continue
    }
    const restore = before.deletedAt !== null
    modelsSeen.push({ id: model.id, description, restore })
    if (restore) changes.push({ type: "ModelRestored", model: model.id })
    const differs = differingFields(description, before)
    if (differs.length > 0) changes.push({ type: "ModelUpdated", model: model.id, detail: differs.join(", ") })
  }

  const onCard = new Set(card.models.map((model) => model.id))
  const modelsToSoftDelete = stored.models.filter((model) => !onCard.has(model.id) && model.deletedAt === null).map((model) => model.id)
  for (const id of modelsToSoftDelete) changes.push({ type: "ModelDeleted", model: id, detail: `no longer on ${card.source}` })

  const storedEntries = new Map(stored.prices.map((entry) => [entryKey(entry.modelId, entry.effectiveFrom), entry.fingerprint]))
  const pricesToInsert: Array<PriceWrite> = []
  for (const model of card.models) {
    for (const point of model.prices) {
      const fingerprint = priceFingerprint(point)
      const previous = storedEntries.get(entryKey(model.id, point.effectiveFrom))
      if (previous === fingerprint) continue
      const correction = previous !== undefined
      pricesToInsert.push({ modelId: model.id, point, fingerprint, correction })
      changes.push({
        type: correction ? "PriceCorrected" : "PriceRecorded",
        model: model.id,
        effectiveFrom: point.effectiveFrom.toISOString(),
        detail: describePoint(point)
      })
    }
  }

  return {
    provider: providerWrite,
    familiesToInsert,
    familiesToUpdate,
    modelsToInsert,
    modelsSeen,
    modelsToSoftDelete,
    pricesToInsert,
    changes
  }
}
