/**
 * The stored bills of inference requests (migration 0009): written in the settlement's transaction, read back by
 * `GET /v1/generations/{id}`, summed for the cache counters of `/v1/usage` and for the spend an app reads.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { RequestId } from "../../domain/accounts/ids.ts"
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
  id: RequestId,
  accountId: Schema.String,
  apiKeyId: Schema.NullOr(Schema.String),
  inboundFormat: Schema.Literal("chat", "messages", "responses", "embeddings"),
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

/**
 * A row as `insertBills` reads it (its columns' names). Built field by field against the schema's encoded side, not
 * run through the schema: the row is ours, built a few lines up the settlement, and this runs on every request.
 */
const billRecord = (row: GenerationRow) => {
  const encoded: typeof GenerationRow.Encoded = {
    ...row,
    holdWei: row.holdWei.toString(),
    chargeWei: row.chargeWei.toString()
  }
  return {
    id: encoded.id,
    account_id: encoded.accountId,
    api_key_id: encoded.apiKeyId,
    inbound_format: encoded.inboundFormat,
    stream: encoded.stream,
    status: encoded.status,
    model_requested: encoded.modelRequested,
    model_used: encoded.modelUsed,
    provider: encoded.provider,
    upstream_key: encoded.upstreamKey,
    chooser: encoded.chooser,
    usage: encoded.usage,
    bill: encoded.bill,
    attempts: encoded.attempts,
    hold_wei: encoded.holdWei,
    charge_wei: encoded.chargeWei,
    cache_read_tokens: row.usage.cacheRead ?? 0,
    cache_write_5m_tokens: row.usage.cacheWrite5m ?? 0,
    cache_write_1h_tokens: row.usage.cacheWrite1h ?? 0,
    created_at: encoded.createdAt.toISOString(),
    settled_at: encoded.settledAt.toISOString()
  }
}

export class Generations extends Effect.Service<Generations>()("Generations", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /**
     * The bills' insert, to run in the settlement batch's own statement (Ledger.settleBatch's `alongside`): a bill is
     * written only when that statement charged its request (`settled.outcome`), so a settlement repeated writes
     * nothing twice. The rows travel as one JSON parameter, so the statement's text is the same for any batch.
     */
    const insertBills = (rows: ReadonlyArray<GenerationRow>) => sql`
      INSERT INTO generations (id, account_id, api_key_id, inbound_format, stream, status, model_requested, model_used, provider,
        upstream_key, chooser, usage, bill, attempts, hold_wei, charge_wei, cache_read_tokens, cache_write_5m_tokens,
        cache_write_1h_tokens, created_at, settled_at)
      SELECT g.id, g.account_id, g.api_key_id, g.inbound_format, g.stream, g.status, g.model_requested, g.model_used, g.provider,
        g.upstream_key, g.chooser, g.usage, g.bill, g.attempts, g.hold_wei, g.charge_wei, g.cache_read_tokens,
        g.cache_write_5m_tokens, g.cache_write_1h_tokens, g.created_at, g.settled_at
      FROM jsonb_to_recordset(${JSON.stringify(rows.map(billRecord))}::jsonb) AS g (id text, account_id bigint, api_key_id text,
        inbound_format text, stream boolean, status text, model_requested text, model_used text, provider text,
        upstream_key text, chooser text, usage jsonb, bill jsonb, attempts jsonb, hold_wei numeric, charge_wei numeric,
        cache_read_tokens bigint, cache_write_5m_tokens bigint, cache_write_1h_tokens bigint, created_at timestamptz,
        settled_at timestamptz)
      JOIN settled ON settled.request_id = g.id AND settled.outcome = 'settled'
      ON CONFLICT (id) DO NOTHING
    `

    const findOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, accountId: Schema.String }),
      Result: GenerationRow,
      execute: ({ accountId, id }) => sql`SELECT ${sql.literal(COLUMNS)} FROM generations WHERE id = ${id} AND account_id = ${accountId}`
    })

    /** A generation of this account; None for another account's (indistinguishable from none). */
    const find = Effect.fn("Generations.find")(function* (accountId: string, id: string): Effect.fn.Return<Option.Option<GenerationRow>> {
      return yield* orDieAtRepository(findOne({ id, accountId }))
    })

    const cacheSums = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ read: Schema.NullOr(Schema.String), w5: Schema.NullOr(Schema.String), w1: Schema.NullOr(Schema.String) }),
      execute: (accountId) => sql`
        SELECT NULLIF(sum(cache_read_tokens), 0)::text AS read, NULLIF(sum(cache_write_5m_tokens), 0)::text AS w5,
          NULLIF(sum(cache_write_1h_tokens), 0)::text AS w1
        FROM generations WHERE account_id = ${accountId}`
    })

    /** The account's cumulative cache counters; each null until some request recorded a non-zero count of it. */
    const cacheTotals = Effect.fn("Generations.cacheTotals")(function* (accountId: string): Effect.fn.Return<CacheTotals> {
      return yield* orDieAtRepository(
        Effect.map(cacheSums(accountId), (row) => ({
          cachedInputTokens: row.read === null ? null : Number(row.read),
          cacheWrite5mTokens: row.w5 === null ? null : Number(row.w5),
          cacheWrite1hTokens: row.w1 === null ? null : Number(row.w1)
        }))
      )
    })

    /**
     * What the account's requests since `since` were charged, grouped by the model that served them, the credential
     * (key or app grant id; null for none) or the UTC day: biggest first, days in order.
     */
    const spendBreakdown = Effect.fn("Generations.spendBreakdown")(function* (accountId: string, since: Date, by: SpendGrouping): Effect.fn.Return<ReadonlyArray<SpendGroup>> {
      const group = by === "model" ? sql`model_used` : by === "key" ? sql`api_key_id` : sql`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
      return yield* orDieAtRepository(
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
    })

    return { insertBills, find, cacheTotals, spendBreakdown } as const
  })
}) {}
