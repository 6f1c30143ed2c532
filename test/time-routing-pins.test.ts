/**
 * A conversation's pin in time (its next turns go where it went; SPEC "Model selection" 5 releases it when the
 * routing bias changes; docs/decisions.md lets it lapse after PIN_IDLE_MS without a request), driven by TestClock
 * over the live AutoRouter on a scratch PostgreSQL database.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, TestClock } from "effect"
import { TestAppConfig } from "../layers/Test.ts"
import { AutoRouter, PIN_IDLE_MS } from "../services/exchange/AutoRouter.ts"
import { ScratchDatabase } from "./support/database.ts"
import { createIdentity } from "./support/ledger.ts"

// The service's background fibers (the operator's list re-read every ROUTING_LIST_REFRESH_MS, idle pins swept every
// 10 minutes) sleep on the same TestClock, and moving it runs each of their wake-ups in turn: the clock stays near the
// epoch where it starts, and the list is re-read once a day here, so that an hour moved wakes them a few times only.
const Router = AutoRouter.Default.pipe(
  Layer.provideMerge(ScratchDatabase()),
  Layer.provideMerge(TestAppConfig({ ROUTING_LIST_REFRESH_MS: String(24 * 3_600_000) })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
)

const served = { model: "openai/gpt-4.1", provider: "openai", upstreamKey: "openai#1" }

layer(Router, { timeout: 60_000 })("conversation pins in time", (it) => {
  it.effect("a pin holds while the conversation is used at least once an hour, and lapses after an idle hour", () =>
    Effect.gen(function* () {
      const router = yield* AutoRouter
      const { accountId } = yield* createIdentity
      yield* router.savePin(accountId, "conv-1", served, undefined)
      const pinned = Option.some({ modelKey: served.model, upstreamKey: served.upstreamKey })

      // Used again 59 minutes later: the turn re-pins, and the hour starts over from there.
      yield* TestClock.adjust(PIN_IDLE_MS - 60_000)
      expect(yield* router.findPin(accountId, "conv-1", undefined)).toEqual(pinned)
      yield* router.savePin(accountId, "conv-1", served, undefined)
      yield* TestClock.adjust(PIN_IDLE_MS - 1)
      expect(yield* router.findPin(accountId, "conv-1", undefined)).toEqual(pinned)

      // One more millisecond past the idle hour: no pin, and the stale row is gone.
      yield* TestClock.adjust(2)
      expect(yield* router.findPin(accountId, "conv-1", undefined)).toEqual(Option.none())
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT 1 FROM conversation_pins WHERE account_id = ${accountId}::bigint`
      expect(rows).toHaveLength(0)
    }))

  it.effect("a pin made under another routing bias is released, whatever its age", () =>
    Effect.gen(function* () {
      const router = yield* AutoRouter
      const { accountId } = yield* createIdentity
      yield* router.savePin(accountId, "conv-2", served, "cheaper")
      expect(yield* router.findPin(accountId, "conv-2", "better")).toEqual(Option.none())
      expect(yield* router.findPin(accountId, "conv-2", "cheaper")).toEqual(Option.none())
    }))
})
