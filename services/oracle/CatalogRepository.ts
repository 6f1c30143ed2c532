/**
 * The catalog in PostgreSQL: what the cards declare (providers, families, models) and every price they ever
 * stated, as append-only rows. Reads answer "the price of m at t" and "the catalog now" from the
 * (model_id, effective_from, observed_at) index, one row per model.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type {
  ContextTier,
  FamilyRecord,
  MarkedPrice,
  ModelCard,
  PriceCard,
  PriceComponent,
  PricePoint,
  ProviderRecord,
  Provenance
} from "../../domain/catalog/card.ts"
import type { FamilyDecision } from "../../domain/catalog/decisions.ts"
import { priceFingerprint } from "../../domain/catalog/fingerprint.ts"
import type { Usd18 } from "../../domain/money.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"

const COMPONENT_COLUMN: Record<PriceComponent, string> = {
  input: "input",
  output: "output",
  cachedInput: "cached_input",
  cacheWrite5m: "cache_write_5m",
  cacheWrite1h: "cache_write_1h",
  reasoningOutput: "reasoning_output"
}
const COMPONENT_OF_COLUMN = Object.fromEntries(
  Object.entries(COMPONENT_COLUMN).map(([component, column]) => [column, component as PriceComponent])
)

interface ModelRow {
  readonly id: string
  readonly providerKey: string
  readonly familyKey: string
  readonly displayName: string
  readonly sdkId: string
  readonly releasedAt: Date
  readonly availability: "ga" | "preview"
  readonly kind: ModelCard["kind"]
  readonly reasoning: boolean
  readonly maxInputTokens: number | null
  readonly retiredAt: Date | null
  readonly deletedAt: Date | null
  readonly lastSeenScan: string
}

interface PriceRowRow {
  readonly id: string
  readonly modelId: string
  readonly effectiveFrom: Date
  readonly observedAt: Date
  readonly sourceUrl: string
  readonly note: string | null
  readonly fingerprint: string
}

interface ComponentRow {
  readonly priceRowId: string
  readonly component: string
  readonly usd18: string
  readonly provenance: Provenance
  readonly derivedFrom: string | null
  readonly promotionUntil: Date | null
  readonly regularUsd18: string | null
}

interface TierRow {
  readonly priceRowId: string
  readonly fromInputTokens: number
  readonly inputUsd18: string
  readonly outputUsd18: string
  readonly inputProvenance: Provenance
  readonly outputProvenance: Provenance
  readonly inputDerivedFrom: string | null
  readonly outputDerivedFrom: string | null
}

/** A stored price point, with when we recorded it. */
export interface StoredPricePoint extends PricePoint {
  readonly rowId: string
  readonly observedAt: Date
}

/** A model as the catalog holds it, with its whole price history (latest observation per effective date). */
export interface CatalogModel {
  readonly card: ModelCard
  readonly deletedAt: Date | null
  readonly lastSeenScan: bigint
  readonly prices: ReadonlyArray<StoredPricePoint>
}

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

const asUsd18 = (digits: string) => BigInt(digits) as Usd18

const mark = (row: ComponentRow): MarkedPrice => ({
  usd18: asUsd18(row.usd18),
  provenance: row.provenance,
  derivedFrom: row.derivedFrom,
  until: row.promotionUntil,
  regular18: row.regularUsd18 === null ? null : asUsd18(row.regularUsd18)
})

const describePoint = (point: PricePoint) =>
  `input ${point.input.usd18 / 10n ** 12n}e-6, output ${point.output.usd18 / 10n ** 12n}e-6 USD/M`

export class CatalogRepository extends Effect.Service<CatalogRepository>()("CatalogRepository", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** Builds price points from their rows, components and tiers. */
    const assemble = (
      rows: ReadonlyArray<PriceRowRow>,
      components: ReadonlyArray<ComponentRow>,
      tiers: ReadonlyArray<TierRow>
    ): Map<string, StoredPricePoint> => {
      const componentsByRow = new Map<string, Map<PriceComponent, MarkedPrice>>()
      for (const row of components) {
        const map = componentsByRow.get(row.priceRowId) ?? new Map()
        map.set(COMPONENT_OF_COLUMN[row.component]!, mark(row))
        componentsByRow.set(row.priceRowId, map)
      }
      const tiersByRow = new Map<string, Array<ContextTier>>()
      for (const tier of tiers) {
        const list = tiersByRow.get(tier.priceRowId) ?? []
        list.push({
          fromInputTokens: tier.fromInputTokens,
          input: mark({
            priceRowId: tier.priceRowId,
            component: "input",
            usd18: tier.inputUsd18,
            provenance: tier.inputProvenance,
            derivedFrom: tier.inputDerivedFrom,
            promotionUntil: null,
            regularUsd18: null
          }),
          output: mark({
            priceRowId: tier.priceRowId,
            component: "output",
            usd18: tier.outputUsd18,
            provenance: tier.outputProvenance,
            derivedFrom: tier.outputDerivedFrom,
            promotionUntil: null,
            regularUsd18: null
          })
        })
        tiersByRow.set(tier.priceRowId, list)
      }
      const points = new Map<string, StoredPricePoint>()
      for (const row of rows) {
        const parts = componentsByRow.get(row.id) ?? new Map<PriceComponent, MarkedPrice>()
        points.set(row.id, {
          rowId: row.id,
          observedAt: row.observedAt,
          effectiveFrom: row.effectiveFrom,
          sourceUrl: row.sourceUrl,
          note: row.note,
          input: parts.get("input")!,
          output: parts.get("output")!,
          cachedInput: parts.get("cachedInput") ?? null,
          cacheWrite5m: parts.get("cacheWrite5m") ?? null,
          cacheWrite1h: parts.get("cacheWrite1h") ?? null,
          reasoningOutput: parts.get("reasoningOutput") ?? null,
          contextTiers: (tiersByRow.get(row.id) ?? []).sort((a, b) => a.fromInputTokens - b.fromInputTokens)
        })
      }
      return points
    }

    const loadPoints = (rows: ReadonlyArray<PriceRowRow>) =>
      Effect.gen(function* () {
        if (rows.length === 0) return new Map<string, StoredPricePoint>()
        const ids = rows.map((row) => row.id)
        const components = yield* sql<ComponentRow>`SELECT * FROM price_components WHERE price_row_id IN ${sql.in(ids)}`
        const tiers = yield* sql<TierRow>`SELECT * FROM price_tiers WHERE price_row_id IN ${sql.in(ids)}`
        return assemble(rows, components, tiers)
      })

    const toCard = (row: ModelRow, prices: ReadonlyArray<PricePoint>): ModelCard => ({
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
      prices
    })

    /** The price of `modelId` in force at `at` (latest effective date, then latest observation), if any. */
    const priceAt = (modelId: string, at: Date) =>
      Effect.gen(function* () {
        const rows = yield* sql<PriceRowRow>`
          SELECT id, model_id, effective_from, observed_at, source_url, note, fingerprint FROM price_rows
          WHERE model_id = ${modelId} AND effective_from <= ${at}
          ORDER BY effective_from DESC, observed_at DESC, id DESC LIMIT 1`
        const points = yield* loadPoints(rows)
        return rows[0] === undefined ? undefined : points.get(rows[0].id)
      }).pipe(orDieUnlessUnavailable)

    /** Every listed model (not soft-deleted) with the price in force now. */
    const catalogNow = (now: Date) =>
      Effect.gen(function* () {
        const models = yield* sql<ModelRow>`SELECT * FROM models WHERE deleted_at IS NULL ORDER BY id`
        // One index probe per listed model, rather than a pass over the whole price history.
        const rows = yield* sql<PriceRowRow>`
          SELECT p.id, p.model_id, p.effective_from, p.observed_at, p.source_url, p.note, p.fingerprint
          FROM models m CROSS JOIN LATERAL (
            SELECT * FROM price_rows r WHERE r.model_id = m.id AND r.effective_from <= ${now}
            ORDER BY r.effective_from DESC, r.observed_at DESC, r.id DESC LIMIT 1
          ) p
          WHERE m.deleted_at IS NULL`
        const points = yield* loadPoints(rows)
        const byModel = new Map(rows.map((row) => [row.modelId, points.get(row.id)!]))
        return models.flatMap((model) => {
          const price = byModel.get(model.id)
          return price === undefined ? [] : [{ card: toCard(model, [price]), deletedAt: model.deletedAt, price }]
        })
      }).pipe(orDieUnlessUnavailable)

    /** All models, deleted ones included, each with its full price history (latest observation per date). */
    const modelsWithHistory = Effect.gen(function* () {
      const models = yield* sql<ModelRow>`SELECT * FROM models ORDER BY id`
      const rows = yield* sql<PriceRowRow>`
        SELECT DISTINCT ON (model_id, effective_from) id, model_id, effective_from, observed_at, source_url, note, fingerprint
        FROM price_rows ORDER BY model_id, effective_from, observed_at DESC, id DESC`
      const points = yield* loadPoints(rows)
      const history = new Map<string, Array<StoredPricePoint>>()
      for (const row of rows) {
        const list = history.get(row.modelId) ?? []
        list.push(points.get(row.id)!)
        history.set(row.modelId, list)
      }
      return models.map((model): CatalogModel => {
        const prices = history.get(model.id) ?? []
        return { card: toCard(model, prices), deletedAt: model.deletedAt, lastSeenScan: BigInt(model.lastSeenScan), prices }
      })
    }).pipe(orDieUnlessUnavailable)

    const families = sql<FamilyRecord>`SELECT key, provider_key, name, description FROM families ORDER BY key`.pipe(
      orDieUnlessUnavailable
    )

    const providers = sql<ProviderRecord>`SELECT key, name, vendor_slug, pricing_url FROM providers ORDER BY key`.pipe(
      orDieUnlessUnavailable
    )

    const decisions = sql<{
      id: string
      decidedOn: string
      subject: string
      effect: FamilyDecision["effect"]
      modelId: string | null
      ruling: string
      rationale: string
      validFrom: Date | null
      validUntil: Date | null
    }>`SELECT id, decided_on::text AS decided_on, subject, effect, model_id, ruling, rationale, valid_from, valid_until
       FROM family_decisions ORDER BY decided_on, id`.pipe(
      Effect.map((rows) =>
        rows.map(
          (row): FamilyDecision => ({
            id: row.id,
            decidedOn: new Date(`${row.decidedOn}T00:00:00Z`),
            subject: row.subject,
            effect: row.effect,
            model: row.modelId,
            validFrom: row.validFrom,
            validUntil: row.validUntil,
            ruling: row.ruling,
            rationale: row.rationale
          })
        )
      ),
      orDieUnlessUnavailable
    )

    const insertPricePoint = (modelId: string, point: PricePoint, scanId: string, fingerprint: string) =>
      Effect.gen(function* () {
        const [row] = yield* sql<{ id: string }>`
          INSERT INTO price_rows ${sql.insert({
            modelId,
            effectiveFrom: point.effectiveFrom,
            scanId,
            sourceUrl: point.sourceUrl,
            note: point.note,
            fingerprint
          })} RETURNING id`
        const components = (Object.keys(COMPONENT_COLUMN) as Array<PriceComponent>).flatMap((component) => {
          const value = point[component]
          return value === null
            ? []
            : [
                {
                  priceRowId: row!.id,
                  component: COMPONENT_COLUMN[component],
                  usd18: value.usd18.toString(),
                  provenance: value.provenance,
                  derivedFrom: value.derivedFrom,
                  promotionUntil: value.until,
                  regularUsd18: value.regular18?.toString() ?? null
                }
              ]
        })
        yield* sql`INSERT INTO price_components ${sql.insert(components)}`
        if (point.contextTiers.length > 0) {
          yield* sql`INSERT INTO price_tiers ${sql.insert(
            point.contextTiers.map((tier) => ({
              priceRowId: row!.id,
              fromInputTokens: tier.fromInputTokens,
              inputUsd18: tier.input.usd18.toString(),
              outputUsd18: tier.output.usd18.toString(),
              inputProvenance: tier.input.provenance,
              outputProvenance: tier.output.provenance,
              inputDerivedFrom: tier.input.derivedFrom,
              outputDerivedFrom: tier.output.derivedFrom
            }))
          )}`
        }
      })

    /**
     * Brings the catalog in line with one provider's card, inside the caller's transaction: new and changed
     * descriptions are written, models gone from the card are soft-deleted, and every price entry not stored
     * yet (or stored with other content) becomes a new row. Returns what changed.
     */
    const applyCard = (card: PriceCard, scanId: string) =>
      Effect.gen(function* () {
        const changes: Array<CatalogChange> = []
        const provider = card.provider
        const [existingProvider] = yield* sql<ProviderRecord>`SELECT key, name, vendor_slug, pricing_url FROM providers WHERE key = ${provider.key}`
        if (existingProvider === undefined) {
          yield* sql`INSERT INTO providers ${sql.insert({ ...provider, source: card.source })}`
          changes.push({ type: "ProviderAdded", provider: provider.key })
        } else if (
          existingProvider.name !== provider.name ||
          existingProvider.vendorSlug !== provider.vendorSlug ||
          existingProvider.pricingUrl !== provider.pricingUrl
        ) {
          yield* sql`UPDATE providers SET name = ${provider.name}, vendor_slug = ${provider.vendorSlug},
                     pricing_url = ${provider.pricingUrl}, source = ${card.source}, updated_at = now() WHERE key = ${provider.key}`
          changes.push({ type: "ProviderUpdated", provider: provider.key })
        }

        const storedFamilies = new Map(
          (yield* sql<FamilyRecord>`SELECT key, provider_key, name, description FROM families WHERE provider_key = ${provider.key}`).map(
            (f) => [f.key, f]
          )
        )
        for (const family of card.families) {
          const stored = storedFamilies.get(family.key)
          if (stored === undefined) {
            yield* sql`INSERT INTO families ${sql.insert({ ...family })}`
            changes.push({ type: "FamilyAdded", family: family.key })
          } else if (stored.name !== family.name || stored.description !== family.description) {
            yield* sql`UPDATE families SET name = ${family.name}, description = ${family.description}, updated_at = now() WHERE key = ${family.key}`
            changes.push({ type: "FamilyUpdated", family: family.key })
          }
        }

        const storedModels = new Map(
          (yield* sql<ModelRow>`SELECT * FROM models WHERE provider_key = ${provider.key}`).map((m) => [m.id, m])
        )
        for (const model of card.models) {
          const description = {
            familyKey: model.family,
            displayName: model.displayName,
            sdkId: model.sdkId,
            releasedAt: model.releasedAt,
            availability: model.availability,
            kind: model.kind,
            reasoning: model.reasoning,
            maxInputTokens: model.maxInputTokens,
            retiredAt: model.retiredAt
          }
          const stored = storedModels.get(model.id)
          if (stored === undefined) {
            yield* sql`INSERT INTO models ${sql.insert({
              id: model.id,
              providerKey: provider.key,
              ...description,
              firstSeenScan: scanId,
              lastSeenScan: scanId
            })}`
            changes.push({ type: "ModelAdded", model: model.id })
          } else {
            const differs = (Object.keys(description) as Array<keyof typeof description>).filter((key) => {
              const a = description[key]
              const b = stored[key]
              return a instanceof Date || b instanceof Date
                ? (a as Date | null)?.getTime() !== (b as Date | null)?.getTime()
                : a !== b
            })
            yield* sql`UPDATE models SET ${sql.update({ ...description, lastSeenScan: scanId, deletedAt: null })}, updated_at = now()
                       WHERE id = ${model.id}`
            if (stored.deletedAt !== null) changes.push({ type: "ModelRestored", model: model.id })
            if (differs.length > 0) changes.push({ type: "ModelUpdated", model: model.id, detail: differs.join(", ") })
          }
        }
        const onCard = new Set(card.models.map((m) => m.id))
        for (const stored of storedModels.values()) {
          if (!onCard.has(stored.id) && stored.deletedAt === null) {
            yield* sql`UPDATE models SET deleted_at = now(), updated_at = now() WHERE id = ${stored.id}`
            changes.push({ type: "ModelDeleted", model: stored.id, detail: `no longer on ${card.source}` })
          }
        }

        const latestFingerprints = yield* sql<{ modelId: string; effectiveFrom: Date; fingerprint: string }>`
          SELECT DISTINCT ON (r.model_id, r.effective_from) r.model_id, r.effective_from, r.fingerprint
          FROM price_rows r JOIN models m ON m.id = r.model_id
          WHERE m.provider_key = ${provider.key}
          ORDER BY r.model_id, r.effective_from, r.observed_at DESC, r.id DESC`
        const stored = new Map(
          latestFingerprints.map((row) => [`${row.modelId}@${row.effectiveFrom.toISOString()}`, row.fingerprint])
        )
        for (const model of card.models) {
          for (const point of model.prices) {
            const key = `${model.id}@${point.effectiveFrom.toISOString()}`
            const fingerprint = priceFingerprint(point)
            const previous = stored.get(key)
            if (previous === fingerprint) continue
            yield* insertPricePoint(model.id, point, scanId, fingerprint)
            changes.push({
              type: previous === undefined ? "PriceRecorded" : "PriceCorrected",
              model: model.id,
              effectiveFrom: point.effectiveFrom.toISOString(),
              detail: describePoint(point)
            })
          }
        }
        return changes
      })

    const saveDecisions = (list: ReadonlyArray<FamilyDecision>) =>
      Effect.forEach(
        list,
        (d) => sql`
          INSERT INTO family_decisions ${sql.insert({
            id: d.id,
            decidedOn: d.decidedOn,
            subject: d.subject,
            effect: d.effect,
            modelId: d.model,
            ruling: d.ruling,
            rationale: d.rationale,
            validFrom: d.validFrom,
            validUntil: d.validUntil
          })}
          ON CONFLICT (id) DO UPDATE SET decided_on = excluded.decided_on, subject = excluded.subject,
            effect = excluded.effect, model_id = excluded.model_id, ruling = excluded.ruling,
            rationale = excluded.rationale, valid_from = excluded.valid_from, valid_until = excluded.valid_until,
            updated_at = now()`,
        { discard: true }
      )

    return {
      priceAt,
      catalogNow,
      modelsWithHistory,
      families,
      providers,
      decisions,
      applyCard,
      saveDecisions
    } as const
  })
}) {}
