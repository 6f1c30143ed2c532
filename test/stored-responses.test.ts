/**
 * Stored responses (DESIGN.md section 10, "Agents' dialects"; migration 0021): what `/v1/responses` keeps for 30 days
 * under the paying account, read back whole, as the conversation `previous_response_id` continues, and as OpenAI's
 * input_items list; deleted by its account; absent once expired and purged by the job. The live StoredResponses
 * service on a scratch database, time moved only by TestClock.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import { TestAppConfig } from "../layers/Test.ts"
import { purgeStoredResponses, STORED_RESPONSE_PURGE_JOB, StoredResponsePurgeLive } from "../services/exchange/StoredResponsePurge.ts"
import { type InputItemsQuery, type JsonObject, STORED_RESPONSE_TTL_DAYS, StoredResponses } from "../services/exchange/StoredResponses.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { ScratchDatabase } from "./support/database.ts"
import { createIdentity } from "./support/ledger.ts"

const DAY = 24 * 60 * 60 * 1000
const T0 = Date.parse("2026-12-01T10:00:00.000Z")

const Stored = (env: Record<string, string> = {}) =>
  Layer.mergeAll(StoredResponses.Default, Jobs.Default).pipe(
    Layer.provideMerge(ScratchDatabase()),
    Layer.provideMerge(TestAppConfig(env)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )

const hex = (bytes: number) => randomBytes(bytes).toString("hex")
const newRequestId = () => `gen_${hex(12)}`

/** A user message as the Responses API lists input items: snake_case keys that must come back as written. */
const inputItem = (id: string): JsonObject => ({ id, type: "message", role: "user", content: [{ type: "input_text", text: `text of ${id}` }] })
const outputItem = (id: string): JsonObject => ({
  id,
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text: `answer ${id}`, annotations: [] }]
})
const responseObject = (id: string, previous: string | null, outputs: ReadonlyArray<string> | undefined): JsonObject => ({
  id,
  object: "response",
  status: "completed",
  previous_response_id: previous,
  ...(outputs === undefined ? {} : { output: outputs.map(outputItem) }),
  usage: { input_tokens: 11, output_tokens: 7, total_tokens: 18, input_tokens_details: { cached_tokens: 0 } }
})

/** Saves a response of `accountId` with these input and output item ids; its id. */
const saveTurn = (accountId: string, previous: string | null, inputs: ReadonlyArray<string>, outputs?: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const id = `resp_${hex(24)}`
    yield* (yield* StoredResponses).save({
      id,
      accountId,
      requestId: newRequestId(),
      previousResponseId: previous,
      response: responseObject(id, previous, outputs),
      inputItems: inputs.map(inputItem)
    })
    return id
  })

const storedIds = (accountId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`SELECT id FROM stored_responses WHERE account_id = ${accountId}::bigint ORDER BY created_at, id`,
      (rows) => rows.map((row) => row.id)
    ))

layer(Stored(), { timeout: 60_000 })("stored responses", (it) => {
  it.effect("save then find gives back the response and items as written, expiring 30 days on", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const stored = yield* StoredResponses
      const { accountId } = yield* createIdentity
      const id = `resp_${hex(24)}`
      const requestId = newRequestId()
      yield* stored.save({
        id,
        accountId,
        requestId,
        previousResponseId: null,
        response: responseObject(id, null, ["msg_out1"]),
        inputItems: [inputItem("msg_in1"), inputItem("msg_in2")]
      })
      expect(yield* stored.find(accountId, id)).toEqual(
        Option.some({
          id,
          requestId,
          previousResponseId: null,
          createdAt: new Date(T0),
          expiresAt: new Date(T0 + STORED_RESPONSE_TTL_DAYS * DAY),
          response: {
            id,
            object: "response",
            status: "completed",
            previous_response_id: null,
            output: [{
              id: "msg_out1",
              type: "message",
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: "answer msg_out1", annotations: [] }]
            }],
            usage: { input_tokens: 11, output_tokens: 7, total_tokens: 18, input_tokens_details: { cached_tokens: 0 } }
          },
          inputItems: [
            { id: "msg_in1", type: "message", role: "user", content: [{ type: "input_text", text: "text of msg_in1" }] },
            { id: "msg_in2", type: "message", role: "user", content: [{ type: "input_text", text: "text of msg_in2" }] }
          ]
        })
      )
      expect(STORED_RESPONSE_TTL_DAYS).toBe(30)
    }))

  it.effect("another account's response reads as absent everywhere and cannot be deleted by it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const stored = yield* StoredResponses
      const owner = yield* createIdentity
      const other = yield* createIdentity
      const id = yield* saveTurn(owner.accountId, null, ["msg_a"], ["msg_b"])
      expect(yield* stored.find(other.accountId, id)).toEqual(Option.none())
      expect(yield* stored.conversation(other.accountId, id)).toEqual(Option.none())
      expect(yield* stored.inputItems(other.accountId, id)).toEqual(Option.none())
      expect(yield* stored.remove(other.accountId, id)).toBe(false)
      expect(Option.map(yield* stored.find(owner.accountId, id), (found) => found.id)).toEqual(Option.some(id))
      // An unknown id, for the owner too.
      expect(yield* stored.find(owner.accountId, `resp_${hex(24)}`)).toEqual(Option.none())
    }))

  it.effect("remove deletes the account's response once: then it reads as absent and a second remove is false", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const stored = yield* StoredResponses
      const { accountId } = yield* createIdentity
      const kept = yield* saveTurn(accountId, null, ["msg_k"])
      const id = yield* saveTurn(accountId, null, ["msg_r"])
      expect(yield* stored.remove(accountId, id)).toBe(true)
      expect(yield* stored.find(accountId, id)).toEqual(Option.none())
      expect(yield* stored.conversation(accountId, id)).toEqual(Option.none())
      expect(yield* stored.inputItems(accountId, id)).toEqual(Option.none())
      expect(yield* stored.remove(accountId, id)).toBe(false)
      expect(yield* storedIds(accountId)).toEqual([kept])
    }))

  it.effect("a conversation reads oldest first through previous_response_id, and stops at a deleted link", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const stored = yield* StoredResponses
      const { accountId } = yield* createIdentity
      const first = yield* saveTurn(accountId, null, ["msg_1a", "msg_1b"], ["rs_1", "msg_1out"])
      const second = yield* saveTurn(accountId, first, ["msg_2"], ["msg_2out"])
      // A response without `output` (a failed one) has no output item.
      const third = yield* saveTurn(accountId, second, ["fc_3"])
      const turn = (id: string, inputs: ReadonlyArray<string>, outputs: ReadonlyArray<string>) => ({
        id,
        inputItems: inputs.map(inputItem),
        outputItems: outputs.map(outputItem)
      })
      expect(yield* stored.conversation(accountId, third)).toEqual(
        Option.some([turn(first, ["msg_1a", "msg_1b"], ["rs_1", "msg_1out"]), turn(second, ["msg_2"], ["msg_2out"]), turn(third, ["fc_3"], [])])
      )
      expect(yield* stored.conversation(accountId, second)).toEqual(
        Option.some([turn(first, ["msg_1a", "msg_1b"], ["rs_1", "msg_1out"]), turn(second, ["msg_2"], ["msg_2out"])])
      )

      // A link into another account's response is no link: that account's chain starts at its own response.
      const other = yield* createIdentity
      const foreign = yield* saveTurn(other.accountId, second, ["msg_x"], ["msg_xout"])
      expect(yield* stored.conversation(other.accountId, foreign)).toEqual(Option.some([turn(foreign, ["msg_x"], ["msg_xout"])]))

      expect(yield* stored.remove(accountId, second)).toBe(true)
      expect(yield* stored.conversation(accountId, third)).toEqual(Option.some([turn(third, ["fc_3"], [])]))
      expect(yield* stored.conversation(accountId, first)).toEqual(Option.some([turn(first, ["msg_1a", "msg_1b"], ["rs_1", "msg_1out"])]))
    }))

  it.effect("a conversation reads at most the 1000 newest turns", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const sql = yield* SqlClient.SqlClient
      const stored = yield* StoredResponses
      const { accountId } = yield* createIdentity
      // 1,001 responses, each continuing the one before, written straight into the table.
      const prefix = hex(4)
      yield* sql`
        INSERT INTO stored_responses (id, account_id, request_id, previous_response_id, created_at, expires_at, response, input_items)
        SELECT ${`resp_${prefix}`} || lpad(to_hex(n), 4, '0'), ${accountId}::bigint, 'gen_' || lpad(to_hex(n), 24, '0'),
          CASE WHEN n > 1 THEN ${`resp_${prefix}`} || lpad(to_hex(n - 1), 4, '0') END,
          ${new Date(T0)}::timestamptz, ${new Date(T0 + DAY)}::timestamptz, '{"output": []}'::jsonb,
          jsonb_build_array(jsonb_build_object('id', 'msg_' || n))
        FROM generate_series(1, 1001) AS n`.pipe(Effect.asVoid)
      const turns = Option.getOrThrow(yield* stored.conversation(accountId, `resp_${prefix}03e9`))
      expect(turns.length).toBe(1000)
      expect(turns[0]).toEqual({ id: `resp_${prefix}0002`, inputItems: [{ id: "msg_2" }], outputItems: [] })
      expect(turns[999]).toEqual({ id: `resp_${prefix}03e9`, inputItems: [{ id: "msg_1001" }], outputItems: [] })
    }))

  it.effect("input items page as OpenAI's list: limit, order, after, before, has_more, first_id and last_id", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const stored = yield* StoredResponses
      const { accountId } = yield* createIdentity
      const id = yield* saveTurn(accountId, null, ["i1", "i2", "i3", "i4", "i5"])
      const page = (query?: InputItemsQuery) =>
        Effect.map(stored.inputItems(accountId, id, query), Option.map((list) => ({ ...list, data: list.data.map((item) => item.id) })))
      const list = (data: ReadonlyArray<string>, has_more: boolean) =>
        Option.some({ object: "list", data, first_id: data[0] ?? null, last_id: data[data.length - 1] ?? null, has_more })

      // Whole items, newest first by default.
      expect(yield* stored.inputItems(accountId, id)).toEqual(
        Option.some({
          object: "list",
          data: ["i5", "i4", "i3", "i2", "i1"].map(inputItem),
          first_id: "i5",
          last_id: "i1",
          has_more: false
        })
      )
      // Descending pages of 2, each after the last id of the one before.
      expect(yield* page({ limit: 2 })).toEqual(list(["i5", "i4"], true))
      expect(yield* page({ limit: 2, after: "i4" })).toEqual(list(["i3", "i2"], true))
      expect(yield* page({ limit: 2, after: "i2" })).toEqual(list(["i1"], false))
      expect(yield* page({ limit: 2, after: "i1" })).toEqual(list([], false))
      // Ascending pages.
      expect(yield* page({ limit: 2, order: "asc" })).toEqual(list(["i1", "i2"], true))
      expect(yield* page({ limit: 2, order: "asc", after: "i2" })).toEqual(list(["i3", "i4"], true))
      expect(yield* page({ limit: 2, order: "asc", after: "i4" })).toEqual(list(["i5"], false))
      expect(yield* page({ limit: 3, order: "asc", after: "i2" })).toEqual(list(["i3", "i4", "i5"], false))
      // Before: the items just before the cursor, in the page's order; has_more when more lie further back.
      expect(yield* page({ limit: 2, order: "asc", before: "i4" })).toEqual(list(["i2", "i3"], true))
      expect(yield* page({ limit: 3, order: "asc", before: "i4" })).toEqual(list(["i1", "i2", "i3"], false))
      expect(yield* page({ limit: 2, order: "desc", before: "i2" })).toEqual(list(["i4", "i3"], true))
      expect(yield* page({ order: "desc", before: "i5" })).toEqual(list([], false))
      // Both: what lies between.
      expect(yield* page({ order: "asc", after: "i1", before: "i5" })).toEqual(list(["i2", "i3", "i4"], false))
      expect(yield* page({ limit: 2, order: "asc", after: "i1", before: "i5" })).toEqual(list(["i2", "i3"], true))
      // A cursor that names no item gives an empty page.
      expect(yield* page({ after: "nope" })).toEqual(list([], false))
      expect(yield* page({ order: "asc", before: "nope" })).toEqual(list([], false))
      // The limit is kept within 1-100.
      expect(yield* page({ limit: 0, order: "asc" })).toEqual(list(["i1"], true))
      expect(yield* page({ limit: 500, order: "asc" })).toEqual(list(["i1", "i2", "i3", "i4", "i5"], false))
    }))
})

layer(Stored(), { timeout: 60_000 })("stored responses in time", (it) => {
  it.effect("a response expires 30 days after it was stored: absent from then on, and the purge deletes exactly the expired", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const stored = yield* StoredResponses
      const { accountId } = yield* createIdentity
      const older = yield* saveTurn(accountId, null, ["msg_o"], ["msg_oout"])
      yield* TestClock.adjust(Duration.days(1))
      const newer = yield* saveTurn(accountId, older, ["msg_n"], ["msg_nout"])

      yield* TestClock.adjust(Duration.millis(29 * DAY - 1))
      expect(Option.isSome(yield* stored.find(accountId, older))).toBe(true)
      expect(Option.map(yield* stored.conversation(accountId, newer), (turns) => turns.map((turn) => turn.id))).toEqual(Option.some([older, newer]))
      expect(yield* stored.purge).toBe(0)

      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* stored.find(accountId, older)).toEqual(Option.none())
      expect(yield* stored.inputItems(accountId, older)).toEqual(Option.none())
      expect(yield* stored.conversation(accountId, older)).toEqual(Option.none())
      expect(Option.map(yield* stored.conversation(accountId, newer), (turns) => turns.map((turn) => turn.id))).toEqual(Option.some([newer]))
      expect(yield* stored.remove(accountId, older)).toBe(false)
      // Absent, yet still there until purged.
      expect(yield* storedIds(accountId)).toEqual([older, newer])
      expect(yield* stored.purge).toBe(1)
      expect(yield* storedIds(accountId)).toEqual([newer])
      expect(yield* stored.purge).toBe(0)

      yield* TestClock.adjust(Duration.days(1))
      expect(yield* stored.find(accountId, newer)).toEqual(Option.none())
      expect(yield* stored.purge).toBe(1)
      expect(yield* storedIds(accountId)).toEqual([])
    }))

  it.effect("the purge goes through more rows than one batch holds, and leaves the unexpired", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const stored = yield* StoredResponses
      const { accountId } = yield* createIdentity
      const now = yield* TestClock.currentTimeMillis
      // 2,345 responses expired a minute ago and 3 expiring in a minute, written straight into the table.
      yield* sql`
        INSERT INTO stored_responses (id, account_id, request_id, previous_response_id, created_at, expires_at, response, input_items)
        SELECT 'resp_' || lpad(to_hex(n), 8, '0'), ${accountId}::bigint, 'gen_' || lpad(to_hex(n), 24, '0'), NULL,
          ${new Date(now - 31 * DAY)}::timestamptz, CASE WHEN n <= 3 THEN ${new Date(now + 60_000)}::timestamptz ELSE ${new Date(now - 60_000)}::timestamptz END, '{}'::jsonb, '[]'::jsonb
        FROM generate_series(1, 2348) AS n`.pipe(Effect.asVoid)
      expect(yield* stored.purge).toBe(2345)
      expect(yield* storedIds(accountId)).toEqual(["resp_00000001", "resp_00000002", "resp_00000003"])
    }))
})

describe("the purge job", () => {
  // The job's loop starts sleeping when the layer is built, at the TestClock's start: its first run is due an hour on.
  layer(StoredResponsePurgeLive.pipe(Layer.provideMerge(Stored({ STORED_RESPONSE_PURGE_INTERVAL_SECONDS: "3600" }))), { timeout: 60_000 })(
    "every interval",
    (it) => {
      it.effect("runs as a recorded job, and on its own once an hour", () =>
        Effect.gen(function* () {
          const jobs = yield* Jobs
          const { accountId } = yield* createIdentity
          yield* saveTurn(accountId, null, ["msg_1"])
          yield* saveTurn(accountId, null, ["msg_2"])
          const kept = yield* saveTurn(accountId, null, ["msg_3"])
          // Once run by hand: nothing is expired yet.
          expect(yield* purgeStoredResponses).toEqual(Option.some(0))

          // Two of three expire an hour after they were stored; the clock moves an hour at a time until the job's
          // runs (each waited for in real time) have deleted them.
          yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`UPDATE stored_responses SET expires_at = created_at + interval '1 hour' WHERE account_id = ${accountId}::bigint AND id <> ${kept}`)
          const byHand = (yield* jobs.recentRuns(STORED_RESPONSE_PURGE_JOB, 100)).length
          for (let hour = 0; hour < 5 && (yield* storedIds(accountId)).length > 1; hour++) {
            const before = (yield* jobs.recentRuns(STORED_RESPONSE_PURGE_JOB, 100)).filter((run) => run.finishedAt !== null).length
            yield* TestClock.adjust(Duration.hours(1))
            for (let waited = 0; waited < 200; waited++) {
              const finished = (yield* jobs.recentRuns(STORED_RESPONSE_PURGE_JOB, 100)).filter((run) => run.finishedAt !== null).length
              if (finished > before) break
              yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
            }
          }
          expect(yield* storedIds(accountId)).toEqual([kept])
          const runs = yield* jobs.recentRuns(STORED_RESPONSE_PURGE_JOB, 100)
          expect(byHand).toBe(1)
          expect(runs.length).toBeGreaterThan(byHand)
          expect(runs.every((run) => run.outcome === "succeeded")).toBe(true)
          const purged = runs.map((run) => Number(/^(\d+) expired stored response\(s\) purged$/.exec(run.summary ?? "")?.[1] ?? NaN))
          expect(purged.reduce((a, b) => a + b, 0)).toBe(2)
        }))
    }
  )
})
