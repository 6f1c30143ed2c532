/**
 * The public oracle's reads, one operation per endpoint, each answered from the current snapshot: the rules a
 * request is held to (a date in the future, a range that runs backwards, a key that names nothing) live here, so a
 * handler only decodes, calls one of these and encodes. No read touches the database.
 */
import { Clock, Effect, Option } from "effect"
import { NotFound, ValidationFailed } from "../../domain/errors.ts"
import type { Lookup } from "../../domain/oracle/lookups.ts"
import { priceAt, priceAtView, priceHistory } from "../../domain/oracle/prices.ts"
import type * as S from "../../domain/oracle/schemas.ts"
import { clampToNow, historyView, scuAtView, type SeriesQuery } from "../../domain/oracle/series.ts"
import { healthView, revisionView } from "../../domain/oracle/views.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { type BodyName, OracleSnapshot } from "./OracleSnapshot.ts"

/** SPEC "Limits": one resolve call names at most 100 models. */
export const RESOLVE_BATCH_LIMIT = 100
/** SPEC "Limits": a series has at most 10000 points. */
export const SERIES_LIMIT = 10_000

const invalid = (param: string, message: string) =>
  new ValidationFailed({ message, param, issues: [{ param, path: [param], message }] })

/** A key that does not parse as one is refused (422, param key); one that names nothing is not found. */
const found = <A>(lookup: Lookup<A>): Effect.Effect<A, ValidationFailed | NotFound> =>
  lookup._tag === "Found"
    ? Effect.succeed(lookup.value)
    : lookup._tag === "Invalid"
      ? Effect.fail(new ValidationFailed({ message: lookup.message, param: "key" }))
      : Effect.fail(new NotFound({ message: lookup.message }))

export interface RangeQuery {
  readonly from?: Date | undefined
  readonly to?: Date | undefined
  readonly granularity?: S.Granularity | undefined
  readonly limit?: number | undefined
}

export class OracleReads extends Effect.Service<OracleReads>()("OracleReads", {
  effect: Effect.gen(function* () {
    const snapshots = yield* OracleSnapshot
    const config = yield* AppConfig
    const baseUrl = Option.match(config.publicBaseUrl, { onNone: () => "", onSome: (url) => url.replace(/\/$/, "") })
    const staleAfterMs = config.chain.staleAfterSeconds * 1000
    const snapshot = snapshots.current
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const notInFuture = (param: string, date: Date) =>
      Effect.flatMap(now, (at) => (date > at ? Effect.fail(invalid(param, `${date.toISOString()} is in the future`)) : Effect.succeed(date)))

    /** A range's bounds: `to` in the future means now; a range that ends before it starts is refused. */
    const seriesQuery = (query: RangeQuery) =>
      Effect.gen(function* () {
        const to = clampToNow(query.to ?? null, yield* now)
        if (query.from !== undefined && query.from > to) {
          return yield* Effect.fail(invalid("from", `from (${query.from.toISOString()}) is after ${query.to === undefined || query.to > to ? "now" : "to"}`))
        }
        return {
          granularity: query.granularity ?? "per-revision",
          from: query.from ?? null,
          to: query.to ?? null,
          limit: query.limit ?? SERIES_LIMIT
        } satisfies SeriesQuery
      })

    return {
      /** The SCU now, typed (for a program embedding the oracle); None before the first confirmed revision. */
      scu: Effect.map(snapshot, (snap) => Option.fromNullable(snap.scu)).pipe(Effect.withSpan("OracleReads.scu")),

      /** A pre-serialized body; undefined when there is nothing to serve yet (204). */
      body: Effect.fn("OracleReads.body")(function* (name: BodyName) {
        return yield* Effect.map(snapshot, (snap) => snap.bodies[name])
      }),

      model: Effect.fn("OracleReads.model")(function* (key: string) {
        return yield* Effect.flatMap(snapshot, (snap) => found(snap.lookups.model(key)))
      }),

      priceAt: Effect.fn("OracleReads.priceAt")(function* (key: string, date: Date) {
        const snap = yield* snapshot
        const model = yield* found(snap.lookups.tracked(key))
        const at = yield* notInFuture("date", date)
        const point = priceAt(model.modelKey, at, snap.inputs.revisions, model.history, model.family)
        if (point === undefined) return yield* Effect.fail(new NotFound({ message: `no price for ${model.modelKey} at ${at.toISOString()}` }))
        return priceAtView(point)
      }),

      priceHistory: Effect.fn("OracleReads.priceHistory")(function* (key: string, query: RangeQuery) {
        const snap = yield* snapshot
        const model = yield* found(snap.lookups.tracked(key))
        if (model.history.length === 0 && !model.everAttested) {
          return yield* Effect.fail(new NotFound({ message: `no attested or catalog price for ${model.modelKey}` }))
        }
        const series = yield* seriesQuery(query)
        return priceHistory({
          modelKey: model.modelKey,
          revisions: snap.inputs.revisions,
          history: model.history,
          family: model.family,
          ...series,
          now: yield* now
        })
      }),

      history: Effect.fn("OracleReads.history")(function* (query: RangeQuery) {
        const series = yield* seriesQuery(query)
        const snap = yield* snapshot
        return historyView({ ...snap.inputs, now: yield* now }, series)
      }),

      /** The SCU in force at `date`; undefined before genesis (204). */
      scuAt: Effect.fn("OracleReads.scuAt")(function* (date: Date) {
        const at = yield* notInFuture("date", date)
        return scuAtView((yield* snapshot).inputs, at)
      }),

      resolveOne: Effect.fn("OracleReads.resolveOne")(function* (name: string) {
        return yield* Effect.flatMap(snapshot, (snap) => {
          const answer = snap.lookups.resolveName(name)
          return answer.unknownVendor === null
            ? Effect.succeed(answer.result)
            : Effect.fail(new ValidationFailed({ message: `unknown vendor "${answer.unknownVendor}"`, param: "key" }))
        })
      }),

      /** Comma-separated names, each resolved on its own, in order. */
      resolveMany: Effect.fn("OracleReads.resolveMany")(function* (keys: string) {
        const names = keys.split(",").map((k) => k.trim()).filter((k) => k !== "")
        if (names.length === 0) return yield* Effect.fail(invalid("keys", "name at least one model"))
        if (names.length > RESOLVE_BATCH_LIMIT) {
          return yield* Effect.fail(invalid("keys", `at most ${RESOLVE_BATCH_LIMIT} keys, got ${names.length}`))
        }
        const snap = yield* snapshot
        return { results: names.map((name) => snap.lookups.resolveName(name).result) } satisfies S.ResolveBatch
      }),

      revision: Effect.fn("OracleReads.revision")(function* (version: number) {
        return yield* Effect.flatMap(snapshot, (snap) => {
          const revision = snap.revisionsByVersion.get(version)
          return revision === undefined
            ? Effect.fail(new NotFound({ message: `no confirmed revision ${version}` }))
            : Effect.succeed(revisionView(revision, baseUrl))
        })
      }),

      /** The manifest's canonical (JCS) text, exactly as hashed. */
      manifest: Effect.fn("OracleReads.manifest")(function* (metadataHash: string) {
        return yield* Effect.flatMap(snapshot, (snap) => {
          const body = snap.manifestsByHash.get(metadataHash.toLowerCase())
          return body === undefined
            ? Effect.fail(new NotFound({ message: `no confirmed revision has metadataHash ${metadataHash}` }))
            : Effect.succeed(body)
        })
      }),

      health: Effect.gen(function* () {
        const snap = yield* snapshot
        return healthView(snap.sync, snap.builtAt, yield* now, staleAfterMs)
      }).pipe(Effect.withSpan("OracleReads.health")),

      activity: Effect.fn("OracleReads.activity")(function* (page: { readonly limit?: number | undefined; readonly offset?: number | undefined }) {
        return yield* Effect.map(snapshot, (snap): S.ActivityPage => {
          const limit = page.limit ?? 20
          const offset = page.offset ?? 0
          const events = snap.activity
          return {
            object: "list",
            data: events.slice(offset, offset + limit),
            limit,
            offset,
            total: events.length,
            hasMore: offset + limit < events.length
          }
        })
      }),

      methodologyVersion: Effect.fn("OracleReads.methodologyVersion")(function* (version: number) {
        return yield* Effect.flatMap(snapshot, (snap) => {
          const record = snap.methodologies.find((m) => m.version === version)
          return record === undefined ? Effect.fail(new NotFound({ message: `no methodology version ${version}` })) : Effect.succeed(record)
        })
      })
    } as const
  })
}) {}
