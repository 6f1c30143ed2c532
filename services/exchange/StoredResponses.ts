/**
 * Stored responses (migration 0021; DESIGN.md section 10, "Agents' dialects"): a `/v1/responses` answer kept with the
 * input items of its request for STORED_RESPONSE_TTL_DAYS under the paying account. Read back whole, as the
 * conversation a `previous_response_id` continues (one recursive statement), or as OpenAI's input_items list; deleted by
 * its account or purged once expired. Another account's response and an expired one read as absent.
 *
 * Time comes only from Clock (TestClock moves it). The JSON columns travel as text both ways: the client's
 * result-name transform (snake_case -> camelCase) reaches into jsonb values it reads as objects, and would rename
 * `previous_response_id` inside a stored Response.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"

/** A JSON object (a Response, an item); to be narrowed to the Responses wire schemas. */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type JsonObject = typeof JsonObject.Type

export const STORED_RESPONSE_TTL_DAYS = 30
const TTL_MS = STORED_RESPONSE_TTL_DAYS * 24 * 60 * 60 * 1000

/** Longest conversation read through `previous_response_id` links (the stored response itself included). */
export const CONVERSATION_MAX_DEPTH = 1000

/** Rows deleted per purge statement. */
export const PURGE_BATCH = 1000

/** OpenAI's bounds for `GET /v1/responses/{id}/input_items`. */
export const INPUT_ITEMS_DEFAULT_LIMIT = 20
export const INPUT_ITEMS_MAX_LIMIT = 100

/** The JSON columns as the statements send and read them: text, parsed here (never by the client's transforms). */
const JsonObjectText = Schema.parseJson(JsonObject)
const JsonArrayText = Schema.parseJson(Schema.Array(JsonObject))

export interface NewStoredResponse {
  readonly id: string
  readonly accountId: string
  /** The request's bill, `gen_...` (`GET /v1/generations/{id}`). */
  readonly requestId: string
  readonly previousResponseId: string | null
  /** The Response object as rendered to the client. */
  readonly response: JsonObject
  /** This request's input items, each with its `id`. */
  readonly inputItems: ReadonlyArray<JsonObject>
}

export const StoredResponse = Schema.Struct({
  id: Schema.String,
  requestId: Schema.String,
  previousResponseId: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  response: JsonObjectText,
  inputItems: JsonArrayText
})
export type StoredResponse = typeof StoredResponse.Type

/** One turn of a conversation: its request's input items, then its response's `output` items. */
export const ConversationTurn = Schema.Struct({
  id: Schema.String,
  inputItems: JsonArrayText,
  // The response's `output` (absent: no item), read from the stored response's text.
  outputItems: Schema.transform(JsonObjectText, Schema.typeSchema(Schema.Array(JsonObject)), {
    strict: true,
    decode: (response) => (Array.isArray(response.output) ? response.output.filter((item): item is JsonObject => typeof item === "object" && item !== null && !Array.isArray(item)) : []),
    encode: (output) => ({ output })
  })
})
export type ConversationTurn = typeof ConversationTurn.Type

export interface InputItemsQuery {
  /** 1 to 100; default 20 (out-of-range values are brought into it). */
  readonly limit?: number | undefined
  /** Default `desc`, newest item first, as OpenAI pages. */
  readonly order?: "asc" | "desc" | undefined
  /** An item id: the page starts after it, in `order`. */
  readonly after?: string | undefined
  /** An item id: the page ends before it, in `order` (the `limit` items closest to it). */
  readonly before?: string | undefined
}

/** OpenAI's list object, as `GET /v1/responses/{id}/input_items` answers it (ids null on an empty page). */
export interface InputItemsPage {
  readonly object: "list"
  readonly data: ReadonlyArray<JsonObject>
  readonly first_id: string | null
  readonly last_id: string | null
  readonly has_more: boolean
}

const itemId = (item: JsonObject): string | undefined => (typeof item.id === "string" ? item.id : undefined)

/**
 * One page of `items` (in request order) as OpenAI lists them: in `order`, strictly after `after` and before `before`;
 * with `before` alone the page is the `limit` items just before it, so paging backwards meets the page it came from.
 * A cursor naming no item gives an empty page. `has_more`: more items lie beyond the page, away from the cursor side.
 */
export const pageInputItems = (items: ReadonlyArray<JsonObject>, query: InputItemsQuery): InputItemsPage => {
  const limit = Math.min(INPUT_ITEMS_MAX_LIMIT, Math.max(1, Math.trunc(query.limit ?? INPUT_ITEMS_DEFAULT_LIMIT)))
  const ordered = query.order === "asc" ? items : [...items].reverse()
  const ids = ordered.map(itemId)
  const empty: InputItemsPage = { object: "list", data: [], first_id: null, last_id: null, has_more: false }
  const start = query.after === undefined ? 0 : ids.indexOf(query.after) + 1
  const end = query.before === undefined ? ordered.length : ids.indexOf(query.before)
  if (start === 0 && query.after !== undefined) return empty
  if (end < 0) return empty
  const window = ordered.slice(start, Math.max(start, end))
  const fromEnd = query.before !== undefined && query.after === undefined
  const data = fromEnd ? window.slice(Math.max(0, window.length - limit)) : window.slice(0, limit)
  const first = data[0]
  const last = data[data.length - 1]
  return {
    object: "list",
    data,
    first_id: first === undefined ? null : itemId(first) ?? null,
    last_id: last === undefined ? null : itemId(last) ?? null,
    has_more: window.length > limit
  }
}

const Lookup = Schema.Struct({ accountId: Schema.String, id: Schema.String, now: Schema.DateFromSelf })

export class StoredResponses extends Effect.Service<StoredResponses>()("StoredResponses", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

    const insert = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        accountId: Schema.String,
        requestId: Schema.String,
        previousResponseId: Schema.NullOr(Schema.String),
        createdAt: Schema.DateFromSelf,
        expiresAt: Schema.DateFromSelf,
        response: JsonObjectText,
        inputItems: JsonArrayText
      }),
      execute: (row) => sql`
        INSERT INTO stored_responses (id, account_id, request_id, previous_response_id, created_at, expires_at, response, input_items)
        VALUES (${row.id}, ${row.accountId}::bigint, ${row.requestId}, ${row.previousResponseId}, ${row.createdAt}, ${row.expiresAt},
          ${row.response}, ${row.inputItems})`
    })

    /** Keeps `input` from the Clock's now for STORED_RESPONSE_TTL_DAYS; its id must be new. */
    const save = Effect.fn("StoredResponses.save")(function* (input: NewStoredResponse): Effect.fn.Return<void> {
      const createdAt = yield* now
      yield* orDieAtRepository(insert({ ...input, createdAt, expiresAt: new Date(createdAt.getTime() + TTL_MS) }))
    })

    const findOne = SqlSchema.findOne({
      Request: Lookup,
      Result: StoredResponse,
      execute: ({ accountId, id, now }) => sql`
        SELECT id, request_id, previous_response_id, created_at, expires_at, response, input_items
        FROM stored_responses WHERE id = ${id} AND account_id = ${accountId}::bigint AND expires_at > ${now}`
    })

    /** The account's unexpired response; None for another account's, an expired or an unknown one alike. */
    const find = Effect.fn("StoredResponses.find")(function* (accountId: string, id: string): Effect.fn.Return<Option.Option<StoredResponse>> {
      return yield* orDieAtRepository(findOne({ accountId, id, now: yield* now }))
    })

    // Walks from the response back through `previous_response_id`, within the account and unexpired rows, until a link
    // is missing or CONVERSATION_MAX_DEPTH turns are read; oldest first. A missing `output` reads as no output item.
    const chain = SqlSchema.findAll({
      Request: Lookup,
      Result: ConversationTurn,
      execute: ({ accountId, id, now }) => sql`
        WITH RECURSIVE chain (id, previous_response_id, input_items, response, depth) AS (
          SELECT id, previous_response_id, input_items, response, 1
          FROM stored_responses WHERE id = ${id} AND account_id = ${accountId}::bigint AND expires_at > ${now}
          UNION ALL
          SELECT s.id, s.previous_response_id, s.input_items, s.response, chain.depth + 1
          FROM chain JOIN stored_responses s ON s.id = chain.previous_response_id
          WHERE s.account_id = ${accountId}::bigint AND s.expires_at > ${now} AND chain.depth < ${CONVERSATION_MAX_DEPTH}
        )
        SELECT id, input_items, response AS output_items
        FROM chain ORDER BY depth DESC`
    })

    /** The conversation ending at the account's response `id`, oldest turn first; None when `find` would be. */
    const conversation = Effect.fn("StoredResponses.conversation")(function* (
      accountId: string,
      id: string
    ): Effect.fn.Return<Option.Option<ReadonlyArray<ConversationTurn>>> {
      const turns = yield* orDieAtRepository(chain({ accountId, id, now: yield* now }))
      return turns.length === 0 ? Option.none() : Option.some(turns)
    })

    const deleteOne = SqlSchema.findAll({
      Request: Lookup,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ accountId, id, now }) => sql`
        DELETE FROM stored_responses WHERE id = ${id} AND account_id = ${accountId}::bigint AND expires_at > ${now} RETURNING id`
    })

    /** Deletes the account's response: false when `find` would not have found it (another's, expired, unknown). */
    const remove = Effect.fn("StoredResponses.remove")(function* (accountId: string, id: string): Effect.fn.Return<boolean> {
      const deleted = yield* orDieAtRepository(deleteOne({ accountId, id, now: yield* now }))
      return deleted.length > 0
    })

    const findItems = SqlSchema.findOne({
      Request: Lookup,
      Result: Schema.Struct({ inputItems: JsonArrayText }),
      execute: ({ accountId, id, now }) => sql`
        SELECT input_items
        FROM stored_responses WHERE id = ${id} AND account_id = ${accountId}::bigint AND expires_at > ${now}`
    })

    /** A page of the response's input items (`pageInputItems`); None when `find` would be. */
    const inputItems = Effect.fn("StoredResponses.inputItems")(function* (
      accountId: string,
      id: string,
      query: InputItemsQuery = {}
    ): Effect.fn.Return<Option.Option<InputItemsPage>> {
      const row = yield* orDieAtRepository(findItems({ accountId, id, now: yield* now }))
      return Option.map(row, ({ inputItems }) => pageInputItems(inputItems, query))
    })

    const purgeBatch = SqlSchema.single({
      Request: Schema.Struct({ now: Schema.DateFromSelf, batch: Schema.Int }),
      Result: Schema.Struct({ deleted: Schema.NumberFromString }),
      execute: ({ batch, now }) => sql`
        WITH doomed AS (SELECT id FROM stored_responses WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${batch}),
          gone AS (DELETE FROM stored_responses s USING doomed WHERE s.id = doomed.id RETURNING 1)
        SELECT count(*)::text AS deleted FROM gone`
    })

    /** Deletes every response expired at the Clock's now, PURGE_BATCH rows per statement; the number deleted. */
    const purge = Effect.gen(function* () {
      const at = yield* now
      let total = 0
      for (;;) {
        const { deleted } = yield* orDieAtRepository(purgeBatch({ now: at, batch: PURGE_BATCH }))
        total += deleted
        if (deleted < PURGE_BATCH) return total
      }
    }).pipe(Effect.withSpan("StoredResponses.purge"))

    return { save, find, conversation, remove, inputItems, purge } as const
  })
}) {}
