/**
 * The catalog in PostgreSQL: what the cards declare (providers, families, models) and every price they ever
 * stated, as append-only rows. Reads answer "the price of m at t" and "the catalog now" from the
 * (model_id, effective_from, observed_at) index, one row per model. Every read is decoded through the row
 * schemas of CatalogRows.ts; what a card changes is decided by domain/catalog/reconcile.ts and only executed here.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { type FamilyRecord, type ModelCard, ModelKind, type PriceCard, type PricePoint, type ProviderRecord } from "../../domain/catalog/card.ts"
import type { FamilyDecision } from "../../domain/catalog/decisions.ts"
import { type CatalogChange, reconcileCard } from "../../domain/catalog/reconcile.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import {
  assemblePoints,
  ComponentRow,
  componentRowsOf,
  DecisionRow,
  EntryFingerprintRow,
  FamilyRow,
  inputOnlyModels,
  ModelRow,
  PriceRowInsert,
  PriceRowRow,
  ProviderRow,
  type StoredPricePoint,
  TierRow,
  tierRowsOf,
  toCard,
  toDecision
} from "./CatalogRows.ts"

export type { CatalogChange } from "../../domain/catalog/reconcile.ts"
export type { StoredPricePoint } from "./CatalogRows.ts"

/** A model as the catalog holds it, with its whole price history (latest observation per effective date). */
export interface CatalogModel {
  readonly card: ModelCard
  readonly deletedAt: Date | null
  readonly lastSeenScan: bigint
  readonly prices: ReadonlyArray<StoredPricePoint>
}

const RowIds = Schema.Array(Schema.String)
const ProviderKey = Schema.String

export class CatalogRepository extends Effect.Service<CatalogRepository>()("CatalogRepository", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const componentsOf = SqlSchema.findAll({
      Request: RowIds,
      Result: ComponentRow,
      execute: (ids) => sql`SELECT * FROM price_components WHERE price_row_id IN ${sql.in(ids)}`
    })
    const tiersOf = SqlSchema.findAll({
      Request: RowIds,
      Result: TierRow,
      execute: (ids) => sql`SELECT * FROM price_tiers WHERE price_row_id IN ${sql.in(ids)}`
    })

    /** The points of `rows`; `inputOnly` names the models among them priced per input token only (embeddings). */
    const loadPoints = (rows: ReadonlyArray<PriceRowRow>, inputOnly: ReadonlySet<string>) =>
      Effect.gen(function* () {
        if (rows.length === 0) return new Map<string, StoredPricePoint>()
        const ids = rows.map((row) => row.id)
        return yield* assemblePoints(rows, yield* componentsOf(ids), yield* tiersOf(ids), inputOnly)
      })
    const kindOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String, kind: ModelKind }),
      execute: (id) => sql`SELECT id, kind FROM models WHERE id = ${id}`
    })

    const latestRowAt = SqlSchema.findAll({
      Request: Schema.Struct({ modelId: Schema.String, at: Schema.DateFromSelf }),
      Result: PriceRowRow,
      execute: ({ at, modelId }) => sql`
        SELECT id, model_id, effective_from, observed_at, source_url, checked_at, note, fingerprint FROM price_rows
        WHERE model_id = ${modelId} AND effective_from <= ${at}
        ORDER BY effective_from DESC, observed_at DESC, id DESC LIMIT 1`
    })

    /** The price of `modelId` in force at `at` (latest effective date, then latest observation), if any. */
    const priceAt = (modelId: string, at: Date) =>
      Effect.gen(function* () {
        const rows = yield* latestRowAt({ modelId, at })
        const points = yield* loadPoints(rows, inputOnlyModels(yield* kindOf(modelId)))
        return rows[0] === undefined ? undefined : points.get(rows[0].id)
      }).pipe(orDieAtRepository)

    const listedModels = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ModelRow,
      execute: () => sql`SELECT * FROM models WHERE deleted_at IS NULL ORDER BY id`
    })
    // One index probe per listed model, rather than a pass over the whole price history.
    const rowsInForce = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: PriceRowRow,
      execute: (now) => sql`
        SELECT p.id, p.model_id, p.effective_from, p.observed_at, p.source_url, p.checked_at, p.note, p.fingerprint
        FROM models m CROSS JOIN LATERAL (
          SELECT * FROM price_rows r WHERE r.model_id = m.id AND r.effective_from <= ${now}
          ORDER BY r.effective_from DESC, r.observed_at DESC, r.id DESC LIMIT 1
        ) p
        WHERE m.deleted_at IS NULL`
    })

    /** Every listed model (not soft-deleted) with the price in force now. */
    const catalogNow = (now: Date) =>
      Effect.gen(function* () {
        const models = yield* listedModels(undefined)
        const rows = yield* rowsInForce(now)
        const points = yield* loadPoints(rows, inputOnlyModels(models))
        const byModel = new Map(rows.map((row) => [row.modelId, points.get(row.id)!]))
        return models.flatMap((model) => {
          const price = byModel.get(model.id)
          return price === undefined ? [] : [{ card: toCard(model, [price]), deletedAt: model.deletedAt, price }]
        })
      }).pipe(orDieAtRepository)

    const allModels = SqlSchema.findAll({ Request: Schema.Void, Result: ModelRow, execute: () => sql`SELECT * FROM models ORDER BY id` })
    const latestRowPerDate = SqlSchema.findAll({
      Request: Schema.Void,
      Result: PriceRowRow,
      execute: () => sql`
        SELECT DISTINCT ON (model_id, effective_from) id, model_id, effective_from, observed_at, source_url, checked_at, note, fingerprint
        FROM price_rows ORDER BY model_id, effective_from, observed_at DESC, id DESC`
    })

    /** All models, deleted ones included, each with its full price history (latest observation per date). */
    const modelsWithHistory = Effect.gen(function* () {
      const models = yield* allModels(undefined)
      const rows = yield* latestRowPerDate(undefined)
      const points = yield* loadPoints(rows, inputOnlyModels(models))
      const history = new Map<string, Array<StoredPricePoint>>()
      for (const row of rows) {
        const list = history.get(row.modelId) ?? []
        list.push(points.get(row.id)!)
        history.set(row.modelId, list)
      }
      return models.map((model): CatalogModel => {
        const prices = history.get(model.id) ?? []
        return { card: toCard(model, prices), deletedAt: model.deletedAt, lastSeenScan: model.lastSeenScan, prices }
      })
    }).pipe(orDieAtRepository)

    const families: Effect.Effect<ReadonlyArray<FamilyRecord>> = SqlSchema.findAll({
      Request: Schema.Void,
      Result: FamilyRow,
      execute: () => sql`SELECT key, provider_key, name, description FROM families ORDER BY key`
    })(undefined).pipe(orDieAtRepository)

    const providers: Effect.Effect<ReadonlyArray<ProviderRecord>> = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ProviderRow,
      execute: () => sql`SELECT key, name, vendor_slug, pricing_url FROM providers ORDER BY key`
    })(undefined).pipe(orDieAtRepository)

    const decisions: Effect.Effect<ReadonlyArray<FamilyDecision>> = SqlSchema.findAll({
      Request: Schema.Void,
      Result: DecisionRow,
      execute: () => sql`
        SELECT id, decided_on::text AS decided_on, subject, effect, model_id, ruling, rationale, valid_from, valid_until
        FROM family_decisions ORDER BY decided_on, id`
    })(undefined).pipe(Effect.map((rows) => rows.map(toDecision)), orDieAtRepository)

    const storedProvider = SqlSchema.findOne({
      Request: ProviderKey,
      Result: ProviderRow,
      execute: (key) => sql`SELECT key, name, vendor_slug, pricing_url FROM providers WHERE key = ${key}`
    })
    const storedFamilies = SqlSchema.findAll({
      Request: ProviderKey,
      Result: FamilyRow,
      execute: (key) => sql`SELECT key, provider_key, name, description FROM families WHERE provider_key = ${key}`
    })
    const storedModels = SqlSchema.findAll({
      Request: ProviderKey,
      Result: ModelRow,
      execute: (key) => sql`SELECT * FROM models WHERE provider_key = ${key}`
    })
    const storedEntries = SqlSchema.findAll({
      Request: ProviderKey,
      Result: EntryFingerprintRow,
      execute: (key) => sql`
        SELECT DISTINCT ON (r.model_id, r.effective_from) r.model_id, r.effective_from, r.fingerprint
        FROM price_rows r JOIN models m ON m.id = r.model_id
        WHERE m.provider_key = ${key}
        ORDER BY r.model_id, r.effective_from, r.observed_at DESC, r.id DESC`
    })

    const insertPriceRow = SqlSchema.single({
      Request: PriceRowInsert,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (row) => sql`INSERT INTO price_rows ${sql.insert(row)} RETURNING id`
    })
    const insertComponents = SqlSchema.void({
      Request: Schema.Array(ComponentRow),
      execute: (rows) => sql`INSERT INTO price_components ${sql.insert(rows)}`
    })
    const insertTiers = SqlSchema.void({
      Request: Schema.Array(TierRow),
      execute: (rows) => sql`INSERT INTO price_tiers ${sql.insert(rows)}`
    })

    const insertPricePoint = (modelId: string, point: PricePoint, scanId: string, fingerprint: string) =>
      Effect.gen(function* () {
        const { id } = yield* insertPriceRow({
          modelId,
          effectiveFrom: point.effectiveFrom,
          scanId,
          sourceUrl: point.sourceUrl,
          checkedAt: point.checkedAt,
          note: point.note,
          fingerprint
        })
        yield* insertComponents(componentRowsOf(id, point))
        if (point.contextTiers.length > 0) yield* insertTiers(tierRowsOf(id, point))
      })

    /**
     * Brings the catalog in line with one provider's card, inside the caller's transaction: reads what is
     * stored for the provider, lets reconcileCard decide, and writes exactly its plan. Returns what changed.
     */
    const applyCard = (card: PriceCard, scanId: string) =>
      Effect.gen(function* () {
        const provider = card.provider
        const plan = reconcileCard(card, {
          provider: Option.getOrNull(yield* storedProvider(provider.key)),
          families: yield* storedFamilies(provider.key),
          models: yield* storedModels(provider.key),
          prices: yield* storedEntries(provider.key)
        })
        // One instant (from Clock) stamps every row this card changes.
        const now = new Date(yield* Clock.currentTimeMillis)

        if (plan.provider === "insert") yield* sql`INSERT INTO providers ${sql.insert({ ...provider, source: card.source })}`
        if (plan.provider === "update") {
          yield* sql`UPDATE providers SET name = ${provider.name}, vendor_slug = ${provider.vendorSlug},
                     pricing_url = ${provider.pricingUrl}, source = ${card.source}, updated_at = ${now}::timestamptz WHERE key = ${provider.key}`
        }
        for (const family of plan.familiesToInsert) yield* sql`INSERT INTO families ${sql.insert({ ...family })}`
        for (const family of plan.familiesToUpdate) {
          yield* sql`UPDATE families SET name = ${family.name}, description = ${family.description}, updated_at = ${now}::timestamptz WHERE key = ${family.key}`
        }
        for (const model of plan.modelsToInsert) {
          yield* sql`INSERT INTO models ${sql.insert({
            id: model.id,
            providerKey: provider.key,
            ...model.description,
            firstSeenScan: scanId,
            lastSeenScan: scanId
          })}`
        }
        // Every model on the card was seen by this scan (liveness), and comes back if it had been deleted.
        for (const model of plan.modelsSeen) {
          yield* sql`UPDATE models SET ${sql.update({ ...model.description, lastSeenScan: scanId, deletedAt: null })}, updated_at = ${now}::timestamptz
                     WHERE id = ${model.id}`
        }
        for (const id of plan.modelsToSoftDelete) yield* sql`UPDATE models SET deleted_at = ${now}::timestamptz, updated_at = ${now}::timestamptz WHERE id = ${id}`
        for (const price of plan.pricesToInsert) yield* insertPricePoint(price.modelId, price.point, scanId, price.fingerprint)
        return [...plan.changes] as Array<CatalogChange>
      }).pipe(orDieAtRepository)

    const saveDecisions = (list: ReadonlyArray<FamilyDecision>) =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* Effect.forEach(
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
              updated_at = ${now}::timestamptz`,
          { discard: true }
        )
      }).pipe(orDieAtRepository)

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
