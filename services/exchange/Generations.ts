/**
 * The stored bills of inference requests (migration 0009): written in the settlement's transaction, read back by
 * `GET /v1/generations/{id}`, summed for the cache counters of `/v1/usage` and for the spend an app reads.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"

export const UsageRecord = Schema.Struct({
  freshInput: Schema.NullOr(Schema.Number),
  cacheRead: Schema.NullOr(Schema.Number),
  cacheWrite5m: Schema.NullOr(Schema.Number),
  cacheWrite1h: Schema.NullOr(Schema.Number),
  output: Schema.NullOr(Schema.Number),
  reasoning: Schema.NullOr(Schema.Number),
  /** Where the counts came from: the vendor's report, or (a part it never reported) our own count. */
  source: Schema.Literal("vendor", "partly_estimated")
})

export const BillLegRecord = Schema.Struct({
  kind: Schema.String,
  tokens: Schema.Number,
  rateUsd18PerMillion: Schema.String,
  provenance: Schema.String,
  pricedAs: Schema.String
})

export const BillRecord = Schema.Struct({
  legs: Schema.Array(BillLegRecord),
  tierFromInputTokens: Schema.NullOr(Schema.Number),
  subtotalUsd18: Schema.String,
  markup: Schema.Struct({ numerator: Schema.Number, denominator: Schema.Number }),
  pegUsd18: Schema.String,
  priceEffectiveFrom: Schema.String,
  priceObservedAt: Schema.String,
  revision: Schema.NullOr(Schema.Struct({ revisionVersion: Schema.Number, metadataHash: Schema.String }))
})

export const AttemptRecord = Schema.Struct({
  model: Schema.String,
  provider: Schema.String,
  key: Schema.NullOr(Schema.String),
  outcome: Schema.String,
  status: Schema.NullOr(Schema.Number),
  message: Schema.NullOr(Schema.String),
  ms: Schema.Number
})

export const GenerationRow = Schema.Struct({
  id: Schema.String,
  accountId: Schema.String,
  apiKeyId: Schema.NullOr(Schema.String),
  inboundFormat: Schema.Literal("chat", "messages"),
  stream: Schema.Boolean,
  status: Schema.Literal("completed", "interrupted"),
  modelRequested: Schema.String,
  modelUsed: Schema.String,
  provider: Schema.String,
  upstreamKey: Schema.String,
  chooser: Schema.NullOr(Schema.String),
  usage: UsageRecord,
  bill: BillRecord,
  attempts: Schema.Array(AttemptRecord),
  holdWei: Schema.BigInt,
  chargeWei: Schema.BigInt,
  createdAt: Schema.DateFromSelf,
  settledAt: Schema.DateFromSelf
})
export type GenerationRow = typeof GenerationRow.Type

const COLUMNS = `id, account_id::text AS account_id, api_key_id, inbound_format, stream, status, model_requested, model_used,
  provider, upstream_key, chooser, usage, bill, attempts, hold_wei::text AS hold_wei, charge_wei::text AS charge_wei, created_at, settled_at`

export interface CacheTotals {
  readonly cachedInputTokens: number | null
  readonly cacheWrite5mTokens: number | null
  readonly cacheWrite1hTokens: number | null
}

export type SpendGrouping = "model" | "key" | "day"

export interface SpendGroup {
  /** The model key, the credential id or the UTC day (YYYY-MM-DD). */
  readonly bucket: string | null
  readonly chargeWei: bigint
  readonly requests: number
}

export class Generations extends Effect.Service<Generations>()("Generations", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const encode = Schema.encodeSync(GenerationRow)

    /**
     * The bill's insert, to run in the settlement's own statement (Ledger.settle's `alongside`): it is written only when
     * that statement charged the request (`settled.outcome`), so a settlement repeated writes nothing twice.
     */
    const insertOnSettle = (row: GenerationRow) => {
      const e = encode(row)
      return sql`
        INSERT INTO generations (id, account_id, api_key_id, inbound_format, stream, status, model_requested, model_used, provider,
          upstream_key, chooser, usage, bill, attempts, hold_wei, charge_wei, cache_read_tokens, cache_write_5m_tokens,
          cache_write_1h_tokens, created_at, settled_at)
        SELECT ${e.id}, ${e.accountId}::bigint, ${e.apiKeyId}, ${e.inboundFormat}, ${e.stream}, ${e.status}, ${e.modelRequested},
          ${e.modelUsed}, ${e.provider}, ${e.upstreamKey}, ${e.chooser}, ${JSON.stringify(e.usage)}::jsonb,
          ${JSON.stringify(e.bill)}::jsonb, ${JSON.stringify(e.attempts)}::jsonb, ${e.holdWei}::numeric, ${e.chargeWei}::numeric,
          ${row.usage.cacheRead ?? 0}::bigint, ${row.usage.cacheWrite5m ?? 0}::bigint, ${row.usage.cacheWrite1h ?? 0}::bigint,
          ${row.createdAt}::timestamptz, ${row.settledAt}::timestamptz
        FROM settled WHERE settled.outcome = 'settled'
        ON CONFLICT (id) DO NOTHING
      `
    }

    const findOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, accountId: Schema.String }),
      Result: GenerationRow,
      execute: ({ accountId, id }) => sql`SELECT ${sql.literal(COLUMNS)} FROM generations WHERE id = ${id} AND account_id = ${accountId}`
    })

    /** A generation of this account; None for another account's (indistinguishable from none). */
    const find = (accountId: string, id: string): Effect.Effect<Option.Option<GenerationRow>> =>
      orDieAtRepository(findOne({ id, accountId }))

    /** The account's cumulative cache counters; each null until some request recorded a non-zero count of it. */
    const cacheTotals = (accountId: string): Effect.Effect<CacheTotals> =>
      orDieAtRepository(
        Effect.map(
          sql<{ read: string | null; w5: string | null; w1: string | null }>`
            SELECT NULLIF(sum(cache_read_tokens), 0)::text AS read, NULLIF(sum(cache_write_5m_tokens), 0)::text AS w5,
              NULLIF(sum(cache_write_1h_tokens), 0)::text AS w1
            FROM generations WHERE account_id = ${accountId}
          `,
          ([row]) => ({
            cachedInputTokens: row?.read == null ? null : Number(row.read),
            cacheWrite5mTokens: row?.w5 == null ? null : Number(row.w5),
            cacheWrite1hTokens: row?.w1 == null ? null : Number(row.w1)
          })
        )
      )

    /**
     * What the account's requests since `since` were charged, grouped by the model that served them, the credential
     * (key or app grant id; null for none) or the UTC day: biggest first, days in order.
     */
    const spendBreakdown = (accountId: string, since: Date, by: SpendGrouping): Effect.Effect<ReadonlyArray<SpendGroup>> => {
      const group = by === "model" ? sql`model_used` : by === "key" ? sql`api_key_id` : sql`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
      return orDieAtRepository(
        SqlSchema.findAll({
          Request: Schema.Void,
          Result: Schema.Struct({ bucket: Schema.NullOr(Schema.String), chargeWei: Schema.BigInt, requests: Schema.NumberFromString }),
          execute: () => sql`
            SELECT ${group} AS bucket, sum(charge_wei)::text AS charge_wei, count(*)::text AS requests
            FROM generations WHERE account_id = ${accountId}::bigint AND created_at >= ${since}
            GROUP BY 1
            ORDER BY ${by === "day" ? sql`1` : sql`sum(charge_wei) DESC, 1`}`
        })(undefined)
      )
    }

    return { insertOnSettle, find, cacheTotals, spendBreakdown } as const
  })
}) {}
