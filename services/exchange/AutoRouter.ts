/**
 * The state `auto` routing reads (DESIGN.md section 10 "Routing"): the operator's preference list (stored, re-read
 * every ROUTING_LIST_REFRESH_MS so a change made through another replica shows up; a list that cannot be read makes
 * `auto` answer 503), the conversation pins (1 h idle expiry, released when the conversation's routing_bias changes),
 * the quality scores, the control arm, and the operator alert raised when the list can serve nothing. The choice
 * itself is domain/exchange/autoRouting.ts.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, Either, Option, ParseResult, Ref, Schedule, Schema } from "effect"
import * as Fs from "node:fs"
import { ServiceUnavailable, ValidationFailed } from "../../domain/errors.ts"
import { type AutoChoice, chooseAuto, inControlArm, type RoutingBias } from "../../domain/exchange/autoRouting.ts"
import { parseQuality, qualityOf } from "../../domain/exchange/quality.ts"
import type { CandidatePlan, RoutableCatalog, RoutableModel } from "../../domain/exchange/routing.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { StartupFailure } from "../platform/Startup.ts"

const qualityFile = new URL("../../data/exchange/quality.yaml", import.meta.url).pathname

/** How long a conversation pin lives without a request. */
export const PIN_IDLE_MS = 60 * 60 * 1000
/** At most one operator alert per this interval while the list keeps failing. */
const ALERT_INTERVAL_MS = 60_000
/** The longest list an operator may store. */
export const MAX_LIST_ENTRIES = 64

export interface AutoListView {
  readonly models: ReadonlyArray<string>
  readonly updatedAt: string | null
}

export interface AutoRoutingHealth {
  /** Entries on the operator's list (0: the engine chooses). */
  readonly listEntries: number
  /** False when the last read of the stored list failed (`auto` answers 503 until it succeeds). */
  readonly listReadable: boolean
  /** The last time an `auto` request found nothing on a non-empty list that could serve it; null if never. */
  readonly lastUnservableAt: string | null
}

/** How the list's entries are checked: against the catalog (any model in it), and which of them are routable here. */
export interface ListNames {
  readonly resolve: RoutableCatalog["resolveInCatalog"]
  readonly routable: (modelKey: string) => boolean
}

/** The names of a routable catalog, for `setList`. */
export const catalogNames = (catalog: RoutableCatalog): ListNames => ({
  resolve: catalog.resolveInCatalog,
  routable: (key) => catalog.models.has(key)
})

export interface Pin {
  readonly modelKey: string
  readonly upstreamKey: string
}

interface ListState {
  readonly readable: boolean
  readonly models: ReadonlyArray<string>
  readonly updatedAt: Date | null
}

/** Where a candidate stands for this request: whether its provider can take it now, and what it would hold. */
export interface CandidateStanding {
  readonly model: RoutableModel
  readonly hasCapacity: boolean
  readonly priceWei: bigint
}

export interface AutoRequest {
  readonly plan: CandidatePlan
  /** One per candidate of the plan. */
  readonly standing: ReadonlyArray<CandidateStanding>
  readonly bias: RoutingBias | undefined
  /** What only a send sees: the conversation's pin and the control arm (a quote passes neither). */
  readonly send?: { readonly pinnedModel: string | undefined; readonly conversationId: string | undefined } | undefined
}

export class AutoRouter extends Effect.Service<AutoRouter>()("AutoRouter", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const quality = yield* Effect.try({
      try: () => Fs.readFileSync(qualityFile, "utf8"),
      catch: (e) => new StartupFailure({ message: `${qualityFile} cannot be read: ${(e as Error).message}` })
    }).pipe(
      Effect.flatMap((text) => Either.mapLeft(parseQuality(text), (problem) => new StartupFailure({ message: `${qualityFile}: ${problem}` })))
    )
    const list = yield* Ref.make<ListState>({ readable: false, models: [], updatedAt: null })
    const lastUnservable = yield* Ref.make<{ at: number; alertedAt: number } | undefined>(undefined)

    const listRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ modelKey: Schema.String, updatedAt: Schema.DateFromSelf }),
      execute: () => sql`SELECT model_key, updated_at FROM routing_auto_list ORDER BY position`
    })
    // A row that does not decode is corrupt stored data: a defect, not "unreadable" (which is the database away).
    const readList = listRows(undefined).pipe(
      Effect.catchIf(ParseResult.isParseError, Effect.die),
      Effect.map((rows): ListState => ({ readable: true, models: rows.map((r) => r.modelKey), updatedAt: rows[0]?.updatedAt ?? null }))
    )
    // One writer of the list at a time: a periodic read that began before a PUT committed must not land after it
    // (it would bring the old list back until the next refresh).
    const writer = yield* Effect.makeSemaphore(1)
    const refresh = readList.pipe(
      Effect.flatMap((state) => Ref.set(list, state)),
      writer.withPermits(1),
      Effect.catchAll((error) =>
        Ref.getAndUpdate(list, (state) => ({ ...state, readable: false })).pipe(
          Effect.flatMap((before) =>
            before.readable
              ? Effect.logError("operator alert: the auto routing list cannot be read; auto requests answer 503 until it can").pipe(
                Effect.annotateLogs({ alert: "auto_list_unreadable", error: String(error) })
              )
              : Effect.void
          )
        )
      )
    )
    yield* refresh
    yield* Effect.forkScoped(Effect.repeat(refresh, Schedule.spaced(Duration.millis(config.exchange.routingListRefreshMs))))

    const currentList = Effect.flatMap(Ref.get(list), (state) =>
      state.readable
        ? Effect.succeed(state.models)
        : Effect.fail(new ServiceUnavailable({ message: "The operator's auto routing list cannot be read right now; name a model or retry shortly." }))
    )

    const noteUnservable = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const previous = yield* Ref.get(lastUnservable)
      const alert = previous === undefined || now - previous.alertedAt >= ALERT_INTERVAL_MS
      yield* Ref.set(lastUnservable, { at: now, alertedAt: alert ? now : previous!.alertedAt })
      if (alert) {
        const models = (yield* Ref.get(list)).models
        yield* Effect.logError("operator alert: nothing on the auto routing list can serve; auto falls to the cheapest model that can").pipe(
          Effect.annotateLogs({ alert: "auto_list_unservable", list: models.join(", ") })
        )
      }
    })

    /** The `auto` candidates of a request (capability and window already checked) and how they were chosen. */
    const choose = (request: AutoRequest): Effect.Effect<CandidatePlan & { readonly choice: AutoChoice }, ServiceUnavailable> =>
      Effect.gen(function* () {
        const models = yield* currentList
        const controlArm = request.send !== undefined &&
          inControlArm(config.exchange.autoControlArmPercent, request.send.conversationId, Math.random)
        const standing = new Map(request.standing.map((s) => [s.model.key, s]))
        const choice = chooseAuto({
          eligible: request.plan.candidates,
          hasCapacity: (m) => standing.get(m.key)?.hasCapacity ?? false,
          list: models,
          bias: request.bias,
          pinnedModel: request.send?.pinnedModel,
          controlArm,
          quality: (m) => qualityOf(quality, m.key),
          price: (m) => standing.get(m.key)?.priceWei ?? 0n
        })
        if (choice.listUnservable) yield* noteUnservable
        return { ...request.plan, candidates: choice.candidates, chooser: choice.chooser, choice }
      })

    /** The stored list, replaced whole; every entry must name a catalog model (routable or not) once. */
    const setList = (entries: ReadonlyArray<string>, names: ListNames) =>
      Effect.gen(function* () {
        if (entries.length > MAX_LIST_ENTRIES) {
          return yield* new ValidationFailed({ message: `The list holds at most ${MAX_LIST_ENTRIES} models.`, param: "models" })
        }
        const keys: Array<string> = []
        for (const [i, entry] of entries.entries()) {
          const found = names.resolve(entry)
          if (entry.trim().toLowerCase() === "auto" || found._tag !== "Found") {
            return yield* new ValidationFailed({ message: `models.${i}: "${entry}" is not a catalog model.`, param: `models.${i}` })
          }
          if (keys.includes(found.modelKey)) {
            return yield* new ValidationFailed({ message: `models.${i}: ${found.modelKey} is on the list twice.`, param: `models.${i}` })
          }
          keys.push(found.modelKey)
        }
        const at = new Date(yield* Clock.currentTimeMillis)
        const store = sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`DELETE FROM routing_auto_list`
            if (keys.length > 0) {
              yield* sql`INSERT INTO routing_auto_list ${sql.insert(keys.map((modelKey, position) => ({ position, modelKey, updatedAt: at })))}`
            }
          })
        )
        yield* orDieUnlessUnavailable(store).pipe(
          Effect.zipRight(Ref.set(list, { readable: true, models: keys, updatedAt: keys.length > 0 ? at : null })),
          writer.withPermits(1)
        )
        const unroutable = keys.filter((key) => !names.routable(key))
        if (unroutable.length > 0) {
          yield* Effect.logWarning("the auto routing list names models no configured provider serves").pipe(
            Effect.annotateLogs({ models: unroutable.join(", ") })
          )
        }
        return { models: keys, updatedAt: keys.length > 0 ? at.toISOString() : null } satisfies AutoListView
      })

    const getList = Effect.flatMap(
      orDieUnlessUnavailable(readList),
      (state): Effect.Effect<AutoListView> =>
        Effect.as(Ref.set(list, state), { models: state.models, updatedAt: state.updatedAt?.toISOString() ?? null })
    ).pipe(writer.withPermits(1))

    const pinRow = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, conversationId: Schema.String }),
      Result: Schema.Struct({
        modelKey: Schema.String,
        upstreamKey: Schema.String,
        routingBias: Schema.NullOr(Schema.String),
        lastUsedAt: Schema.DateFromSelf
      }),
      execute: ({ accountId, conversationId }) => sql`
        SELECT model_key, upstream_key, routing_bias, last_used_at FROM conversation_pins
        WHERE account_id = ${accountId}::bigint AND conversation_id = ${conversationId}`
    })

    /** The conversation's live pin of the same bias; a pin of another bias is released (SPEC Model selection 5). */
    const findPin = (accountId: string, conversationId: string, bias: RoutingBias | undefined) =>
      Effect.gen(function* () {
        const found = yield* pinRow({ accountId, conversationId }).pipe(Effect.catchIf(ParseResult.isParseError, Effect.die))
        if (Option.isNone(found)) return Option.none<Pin>()
        const row = found.value
        if ((row.routingBias ?? undefined) !== bias || row.lastUsedAt.getTime() < (yield* Clock.currentTimeMillis) - PIN_IDLE_MS) {
          yield* sql`DELETE FROM conversation_pins WHERE account_id = ${accountId}::bigint AND conversation_id = ${conversationId}`
          return Option.none<Pin>()
        }
        return Option.some<Pin>({ modelKey: row.modelKey, upstreamKey: row.upstreamKey })
      }).pipe(orDieUnlessUnavailable)

    /** Pins (or re-pins) the conversation to what served it. */
    const savePin = (accountId: string, conversationId: string, served: { model: string; provider: string; upstreamKey: string }, bias: RoutingBias | undefined) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        orDieUnlessUnavailable(sql`
        INSERT INTO conversation_pins (account_id, conversation_id, model_key, provider, upstream_key, routing_bias, last_used_at)
        VALUES (${accountId}::bigint, ${conversationId}, ${served.model}, ${served.provider}, ${served.upstreamKey}, ${bias ?? null}, ${new Date(now)})
        ON CONFLICT (account_id, conversation_id) DO UPDATE
        SET model_key = EXCLUDED.model_key, provider = EXCLUDED.provider, upstream_key = EXCLUDED.upstream_key,
            routing_bias = EXCLUDED.routing_bias, last_used_at = EXCLUDED.last_used_at`)).pipe(Effect.asVoid)

    // Pins idle for longer than PIN_IDLE_MS are ignored already; this only keeps the table small.
    const sweepPins = Effect.flatMap(Clock.currentTimeMillis, (now) => sql`DELETE FROM conversation_pins WHERE last_used_at < ${new Date(now - PIN_IDLE_MS)}`)
    yield* Effect.forkScoped(Effect.repeat(Effect.ignore(sweepPins), Schedule.spaced(Duration.minutes(10))))

    const health = Effect.map(
      Effect.all([Ref.get(list), Ref.get(lastUnservable)]),
      ([state, unservable]): AutoRoutingHealth => ({
        listEntries: state.models.length,
        listReadable: state.readable,
        lastUnservableAt: unservable === undefined ? null : new Date(unservable.at).toISOString()
      })
    )

    return { choose, currentList, setList, getList, findPin, savePin, health } as const
  })
}) {}
