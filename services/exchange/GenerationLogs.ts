/**
 * The account's request log and activity, read from the stored bills (migration 0009; indexes 0018): a keyset page
 * over (created_at, id) newest first with the filters applied in SQL, and spend and tokens per UTC day aggregated in
 * SQL, split by model, key or member. Wei stays bigint end to end.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Either, Schema } from "effect"
import type { ValidationFailed } from "../../domain/errors.ts"
import { type ActivityWindow, activityWindow, checkRange, daysOf, encodeCursor, type LogCursor, parseCursor } from "../../domain/exchange/logs.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { GenerationRow } from "./Generations.ts"

export interface LogQuery {
  readonly limit: number
  readonly cursor?: string | undefined
  readonly model?: string | undefined
  readonly key?: string | undefined
  readonly status?: "completed" | "interrupted" | undefined
  readonly from?: Date | undefined
  readonly to?: Date | undefined
}

/** A page's row: the stored bill's columns the list shows (GenerationRow's own schemas), and the cursor's instant. */
const LogRow = Schema.Struct({
  ...GenerationRow.pick(
    "id", "apiKeyId", "inboundFormat", "stream", "status", "modelRequested", "modelUsed", "provider", "usage", "chargeWei", "createdAt"
  ).fields,
  cursorAt: Schema.String
})
export type LogRow = typeof LogRow.Type

export interface LogPage {
  readonly rows: ReadonlyArray<LogRow>
  readonly nextCursor: string | null
}

export type ActivitySplit = "model" | "key" | "member"

export interface Figures {
  readonly requests: number
  readonly chargeWei: bigint
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  readonly reasoningTokens: number
}

const Count = Schema.NumberFromString
const CellRow = Schema.Struct({
  day: Schema.String,
  grp: Schema.NullOr(Schema.String),
  label: Schema.NullOr(Schema.String),
  requests: Count,
  chargeWei: Schema.BigInt,
  inputTokens: Count,
  outputTokens: Count,
  cacheReadTokens: Count,
  cacheWriteTokens: Count,
  reasoningTokens: Count
})

export interface Activity {
  readonly by: ActivitySplit
  readonly window: ActivityWindow
  readonly days: ReadonlyArray<{ readonly day: string } & Figures>
  readonly groups: ReadonlyArray<{ readonly group: string | null; readonly label: string | null } & Figures>
  readonly series: ReadonlyArray<{ readonly day: string; readonly group: string | null } & Figures>
}

const ZERO: Figures = { requests: 0, chargeWei: 0n, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }

const add = (a: Figures, b: Figures): Figures => ({
  requests: a.requests + b.requests,
  chargeWei: a.chargeWei + b.chargeWei,
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
  cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  reasoningTokens: a.reasoningTokens + b.reasoningTokens
})

const figuresOf = (row: typeof CellRow.Type): Figures => ({
  requests: row.requests,
  chargeWei: row.chargeWei,
  inputTokens: row.inputTokens,
  outputTokens: row.outputTokens,
  cacheReadTokens: row.cacheReadTokens,
  cacheWriteTokens: row.cacheWriteTokens,
  reasoningTokens: row.reasoningTokens
})

/** The instant as the cursor carries it: microseconds, UTC (a JavaScript Date would drop the last three digits). */
const CURSOR_AT_SQL = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`

export class GenerationLogs extends Effect.Service<GenerationLogs>()("GenerationLogs", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const page = (accountId: string, query: LogQuery, after: LogCursor | undefined) => {
      const where = [
        sql`account_id = ${accountId}::bigint`,
        ...(query.model === undefined ? [] : [sql`(model_used = ${query.model} OR model_requested = ${query.model})`]),
        ...(query.key === undefined ? [] : [sql`api_key_id = ${query.key}`]),
        ...(query.status === undefined ? [] : [sql`status = ${query.status}`]),
        ...(query.from === undefined ? [] : [sql`created_at >= ${query.from}`]),
        ...(query.to === undefined ? [] : [sql`created_at < ${query.to}`]),
        ...(after === undefined ? [] : [sql`(created_at, id) < (${after.at}::timestamptz, ${after.id})`])
      ]
      return SqlSchema.findAll({
        Request: Schema.Void,
        Result: LogRow,
        // One more row than asked tells whether another page follows, without a count.
        execute: () => sql`
          SELECT id, api_key_id, inbound_format, stream, status, model_requested, model_used, provider, usage,
            charge_wei::text AS charge_wei, created_at, ${sql.literal(CURSOR_AT_SQL)}
          FROM generations WHERE ${sql.and(where)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${query.limit + 1}`
      })(undefined)
    }

    /** One page, newest first; a cursor that is not one of ours is refused (422 naming `cursor`). */
    const list = Effect.fn("GenerationLogs.list")(function* (accountId: string, query: LogQuery): Effect.fn.Return<LogPage, ValidationFailed> {
      yield* Either.match(checkRange(query.from, query.to), { onLeft: Effect.fail, onRight: Effect.succeed })
      const after = yield* Either.match(parseCursor(query.cursor), { onLeft: Effect.fail, onRight: Effect.succeed })
      const rows = yield* orDieAtRepository(page(accountId, query, after))
      const more = rows.length > query.limit
      const shown = more ? rows.slice(0, query.limit) : rows
      const last = shown[shown.length - 1]
      return { rows: shown, nextCursor: more && last !== undefined ? encodeCursor({ at: last.cursorAt, id: last.id }) : null }
    })

    // Only columns the account index carries (migration 0018): each day is an index-only range scan.
    const sums = sql.literal(`count(*)::text AS requests, sum(charge_wei)::text AS charge_wei,
      COALESCE(sum(input_tokens), 0)::text AS input_tokens, COALESCE(sum(output_tokens), 0)::text AS output_tokens,
      sum(cache_read_tokens)::text AS cache_read_tokens,
      sum(cache_write_5m_tokens + cache_write_1h_tokens)::text AS cache_write_tokens,
      COALESCE(sum(reasoning_tokens), 0)::text AS reasoning_tokens`)
    const resums = sql.literal(`sum(requests::bigint)::text AS requests, sum(charge_wei::numeric)::text AS charge_wei,
      sum(input_tokens::bigint)::text AS input_tokens, sum(output_tokens::bigint)::text AS output_tokens,
      sum(cache_read_tokens::bigint)::text AS cache_read_tokens, sum(cache_write_tokens::bigint)::text AS cache_write_tokens,
      sum(reasoning_tokens::bigint)::text AS reasoning_tokens`)

    const cells = (accountId: string, window: ActivityWindow, by: ActivitySplit) => {
      // One small aggregate per UTC day rather than one GROUP BY over the window: the planner cannot tell how many
      // (day, group) pairs a day expression makes and sorts every row on disk; per day, it hashes a handful of groups.
      // The days go in as an array literal so the planner knows their number (no JIT for an imagined thousand).
      const days = `{${daysOf(window).map((day) => `${day}T00:00:00Z`).join(",")}}`
      const perDay = (column: "model_used" | "api_key_id") => sql`
        SELECT to_char(d.day AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, s.* FROM unnest(${days}::timestamptz[]) AS d(day)
        CROSS JOIN LATERAL (
          SELECT ${sql.literal(column)} AS grp, ${sums} FROM generations
          WHERE account_id = ${accountId}::bigint
            AND created_at >= greatest(d.day, ${window.from}::timestamptz) AND created_at < least(d.day + interval '24 hours', ${window.to}::timestamptz)
          GROUP BY 1
        ) s`
      const statement =
        by === "model"
          ? sql`SELECT c.*, NULL::text AS label FROM (${perDay("model_used")}) c`
          : by === "key"
          ? sql`
            SELECT s.*, COALESCE(k.label, g.app_name) AS label FROM (${perDay("api_key_id")}) s
            LEFT JOIN api_keys k ON k.id = s.grp AND k.account_id = ${accountId}::bigint
            LEFT JOIN app_grants g ON g.id = s.grp AND g.account_id = ${accountId}::bigint`
          : // A key's spending counts for its holder; a grant's for who connected the app.
            sql`
            SELECT m.day, m.member AS grp, i.display_name AS label, ${resums} FROM (
              SELECT s.*, COALESCE(k.holder_cf_id, k.issued_by_cf_id, g.issued_by_cf_id) AS member FROM (${perDay("api_key_id")}) s
              LEFT JOIN api_keys k ON k.id = s.grp AND k.account_id = ${accountId}::bigint
              LEFT JOIN app_grants g ON g.id = s.grp AND g.account_id = ${accountId}::bigint
            ) m
            LEFT JOIN identities i ON i.cf_id = m.member
            GROUP BY m.day, m.member, i.display_name`
      return SqlSchema.findAll({ Request: Schema.Void, Result: CellRow, execute: () => statement })(undefined)
    }

    /** Spend and tokens per UTC day of the window; totals per day and per group are summed here, exactly. */
    const activity = Effect.fn("GenerationLogs.activity")(function* (
      accountId: string,
      query: { readonly by: ActivitySplit; readonly from?: Date | undefined; readonly to?: Date | undefined; readonly days?: number | undefined }
    ): Effect.fn.Return<Activity, ValidationFailed> {
      const now = new Date(yield* Clock.currentTimeMillis)
      const window = yield* Either.match(activityWindow(query, now), { onLeft: Effect.fail, onRight: Effect.succeed })
      const rows = yield* orDieAtRepository(cells(accountId, window, query.by))
      const perDay = new Map<string, Figures>(daysOf(window).map((day) => [day, ZERO]))
      const perGroup = new Map<string | null, { label: string | null; figures: Figures }>()
      for (const row of rows) {
        const figures = figuresOf(row)
        perDay.set(row.day, add(perDay.get(row.day) ?? ZERO, figures))
        const group = perGroup.get(row.grp)
        perGroup.set(row.grp, { label: group?.label ?? row.label, figures: add(group?.figures ?? ZERO, figures) })
      }
      const byDay = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
      return {
        by: query.by,
        window,
        days: [...perDay].sort(([a], [b]) => byDay(a, b)).map(([day, figures]) => ({ day, ...figures })),
        groups: [...perGroup]
          .map(([group, { figures, label }]) => ({ group, label, ...figures }))
          .sort((a, b) => (a.chargeWei === b.chargeWei ? byDay(a.group ?? "", b.group ?? "") : a.chargeWei > b.chargeWei ? -1 : 1)),
        series: [...rows]
          .sort((a, b) => byDay(a.day, b.day) || byDay(a.grp ?? "", b.grp ?? ""))
          .map((row) => ({ day: row.day, group: row.grp, ...figuresOf(row) }))
      }
    })

    return { list, activity } as const
  })
}) {}
