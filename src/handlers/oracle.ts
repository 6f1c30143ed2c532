/**
 * The public oracle endpoints: every answer comes from the in-memory snapshot (mostly pre-serialized), so a
 * request does no database work.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Schema } from "effect"
import { NotFound, ValidationFailed } from "../../domain/errors.ts"
import { makeKeyIndex } from "../../domain/oracle/keys.ts"
import { priceAt, priceHistory, priceHistoryCsv } from "../../domain/oracle/prices.ts"
import { makeResolver } from "../../domain/oracle/resolve.ts"
import { cacheBlock, type Granularity, historyCsv, historyView, reasoningBlock, revisionView, scuAtView } from "../../domain/oracle/views.ts"
import { usd18ToNumber, type Usd18 } from "../../domain/money.ts"
import { ContractMetadata } from "../../services/oracle/ContractMetadata.ts"
import { OracleSnapshot, type Snapshot } from "../../services/oracle/OracleSnapshot.ts"
import { AppConfig } from "../../services/platform/AppConfig.ts"
import * as S from "../../domain/oracle/schemas.ts"
import { ServerApi } from "../api/ServerApi.ts"

const json = (body: Uint8Array, headers: Record<string, string> = {}) =>
  HttpServerResponse.uint8Array(body, { contentType: "application/json", headers })
const jsonText = (body: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(body, { contentType: "application/json", headers })
const encoded = <A, I>(schema: Schema.Schema<A, I>, value: unknown, headers: Record<string, string> = {}) =>
  jsonText(JSON.stringify(Schema.encodeSync(schema)(value as A)), headers)
const noContent = HttpServerResponse.empty({ status: 204 })

const DAY = /^\d{4}-\d{2}-\d{2}$/
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

const invalid = (param: string, message: string) =>
  new ValidationFailed({ message, param, issues: [{ param, path: [param], message }] })

/** A full instant with its offset (or, where allowed, a date); refuses the future. */
const parseInstant = (param: string, text: string, now: number, options: { readonly allowDateOnly?: boolean } = {}) => {
  const date = INSTANT.test(text) ? new Date(text) : options.allowDateOnly && DAY.test(text) ? new Date(`${text}T00:00:00Z`) : undefined
  if (date === undefined || Number.isNaN(date.getTime())) {
    return Effect.fail(invalid(param, `"${text}" is not an ISO-8601 instant with a time and an offset (e.g. 2026-01-01T00:00:00Z)`))
  }
  if (date.getTime() > now) return Effect.fail(invalid(param, `"${text}" is in the future`))
  return Effect.succeed(date)
}

/** A date (midnight UTC) or an instant. */
const parseBound = (param: string, text: string | undefined) => {
  if (text === undefined) return Effect.succeed(null)
  const date = DAY.test(text) ? new Date(`${text}T00:00:00Z`) : INSTANT.test(text) ? new Date(text) : undefined
  return date === undefined || Number.isNaN(date.getTime())
    ? Effect.fail(invalid(param, `"${text}" is not an ISO-8601 date or instant`))
    : Effect.succeed(date)
}

const wantsCsv = (request: HttpServerRequest.HttpServerRequest) => /\btext\/csv\b/i.test(request.headers["accept"] ?? "")

export const OracleHandlers = HttpApiBuilder.group(ServerApi, "oracle", (handlers) =>
  Effect.gen(function* () {
    const snapshots = yield* OracleSnapshot
    const contract = yield* ContractMetadata
    const config = yield* AppConfig
    const baseUrl = config.publicBaseUrl._tag === "Some" ? config.publicBaseUrl.value.replace(/\/$/, "") : ""
    const snapshot = snapshots.current
    const now = Clock.currentTimeMillis

    const resolveModel = (key: string) =>
      Effect.gen(function* () {
        const snap = yield* snapshot
        const models = snap.models
        const index = makeKeyIndex(
          snap.providers.map((p) => p.vendorSlug),
          models.map((m) => m.id),
          snap.inputs.catalog.map((l) => l.card.id)
        )
        const resolution = index.resolve(key)
        // The key parsed; it names a vendor or a vendor/model pair that does not exist: refused, not malformed.
        if (resolution._tag === "Invalid") return yield* Effect.fail(new ValidationFailed({ message: resolution.message, param: "key" }))
        if (resolution._tag === "NotFound") return yield* Effect.fail(new NotFound({ message: resolution.message }))
        return models.find((m) => m.id === resolution.modelKey)!
      })

    /** A model the oracle tracks (in the catalog now, or in any manifest), for price-at and price-history. */
    const resolveTracked = (key: string) =>
      Effect.gen(function* () {
        const snap = yield* snapshot
        const everInManifest = new Set(snap.inputs.revisions.flatMap((r) => (r.manifest?.models ?? []).map((m) => m.modelKey)))
        const tracked = new Set([...snap.histories.keys(), ...everInManifest])
        const index = makeKeyIndex(snap.providers.map((p) => p.vendorSlug), tracked)
        const resolution = index.resolve(key)
        if (resolution._tag === "Invalid") return yield* Effect.fail(new ValidationFailed({ message: resolution.message, param: "key" }))
        if (resolution._tag === "NotFound") return yield* Effect.fail(new NotFound({ message: resolution.message }))
        const modelKey = resolution.modelKey
        // The family of the model's most recent basket appearance, else its catalog family.
        const lastManifest = [...snap.inputs.revisions].reverse().find((r) => r.manifest?.models.some((m) => m.modelKey === modelKey))
        const family =
          lastManifest?.manifest?.models.find((m) => m.modelKey === modelKey)?.family ?? snap.histories.get(modelKey)?.card.family ?? null
        return { snap, modelKey, family, history: snap.histories.get(modelKey)?.prices ?? [] }
      })

    const resolverOf = (snap: Snapshot) =>
      makeResolver({
        vendors: new Map(snap.providers.map((p) => [p.vendorSlug, p.key])),
        modelKeys: snap.inputs.catalog.map((l) => l.card.id)
      })

    const resolveName = (snap: Snapshot, name: string, resolver: ReturnType<typeof makeResolver>) => {
      const outcome = resolver(name)
      if (outcome._tag !== "Resolved") {
        return {
          inputKey: name,
          resolvedKey: outcome._tag === "OffBasket" ? outcome.normalizedKey : name.trim().toLowerCase(),
          family: null,
          provider: null,
          priceSource: "off-basket" as const,
          prices: null,
          cache: null,
          reasoning: null,
          inBasket: false,
          unknownVendor: outcome._tag === "UnknownVendor" ? outcome.vendor : undefined
        }
      }
      const listing = snap.inputs.catalog.find((l) => l.card.id === outcome.modelKey)!
      const latest = snap.inputs.revisions[snap.inputs.revisions.length - 1]
      const attested = latest?.manifest?.models.find((m) => m.modelKey === outcome.modelKey)
      const provider = snap.providers.find((p) => p.key === listing.card.providerKey)
      return {
        inputKey: name,
        resolvedKey: outcome.modelKey,
        family: listing.card.family,
        provider: { key: listing.card.providerKey, name: provider?.name ?? listing.card.providerKey },
        priceSource: attested !== undefined ? ("oracle-basket" as const) : ("oracle-catalog" as const),
        prices: {
          inputUsdPerMillion: usd18ToNumber((attested === undefined ? listing.price.input.usd18 : BigInt(attested.inputPrice)) as Usd18),
          outputUsdPerMillion: usd18ToNumber((attested === undefined ? listing.price.output.usd18 : BigInt(attested.outputPrice)) as Usd18),
          provenance: { input: listing.price.input.provenance, output: listing.price.output.provenance }
        },
        cache: cacheBlock(listing.price),
        reasoning: reasoningBlock(listing),
        inBasket: attested !== undefined,
        unknownVendor: undefined
      }
    }

    const withoutMarker = ({ unknownVendor: _, ...result }: ReturnType<typeof resolveName>) => result

    return handlers
      .handle("priceAt", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { family, history, modelKey, snap } = yield* resolveTracked(path.key)
          const at = yield* parseInstant("date", urlParams.date, yield* now, { allowDateOnly: true })
          const view = priceAt(modelKey, at, snap.inputs.revisions, history, family)
          if (view === undefined) return yield* Effect.fail(new NotFound({ message: `no price for ${modelKey} at ${at.toISOString()}` }))
          const { metadataHash, methodologyVersion, revisionVersion, ...rest } = view
          return encoded(
            S.PriceAtResponse,
            view.source === "manifest" ? { ...rest, revisionVersion, methodologyVersion, metadataHash } : rest,
            { "cache-control": "public, max-age=60" }
          )
        })
      )
      .handle("priceHistory", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const { family, history, modelKey, snap } = yield* resolveTracked(path.key)
          if (history.length === 0 && !snap.inputs.revisions.some((r) => r.manifest?.models.some((m) => m.modelKey === modelKey))) {
            return yield* Effect.fail(new NotFound({ message: `no attested or catalog price for ${modelKey}` }))
          }
          const from = (yield* parseBound("from", urlParams.from)) ?? history[0]?.effectiveFrom ?? snap.inputs.revisions[0]?.publishedAt ?? snap.builtAt
          const to = (yield* parseBound("to", urlParams.to)) ?? new Date(yield* now)
          if (from > to) return yield* Effect.fail(invalid("from", "from is after to"))
          const view = priceHistory({
            modelKey,
            revisions: snap.inputs.revisions,
            history,
            family,
            granularity: urlParams.granularity ?? "per-revision",
            from,
            to,
            limit: urlParams.limit ?? 10_000
          })
          return wantsCsv(request)
            ? HttpServerResponse.text(priceHistoryCsv(view), { contentType: "text/csv; charset=utf-8" })
            : encoded(S.PriceHistoryResponse, view)
        })
      )
      .handle("resolveOne", ({ path }) =>
        Effect.gen(function* () {
          const snap = yield* snapshot
          const result = resolveName(snap, path.key, resolverOf(snap))
          if (result.unknownVendor !== undefined) {
            return yield* Effect.fail(new ValidationFailed({ message: `unknown vendor "${result.unknownVendor}"`, param: "key" }))
          }
          return encoded(S.ResolveResult, withoutMarker(result))
        })
      )
      .handle("resolveMany", ({ urlParams }) =>
        Effect.gen(function* () {
          const names = urlParams.keys.split(",").map((k) => k.trim()).filter((k) => k !== "")
          if (names.length === 0) return yield* Effect.fail(invalid("keys", "name at least one model"))
          if (names.length > 100) return yield* Effect.fail(invalid("keys", `at most 100 keys, got ${names.length}`))
          const snap = yield* snapshot
          const resolver = resolverOf(snap)
          return encoded(S.ResolveBatch, { results: names.map((name) => withoutMarker(resolveName(snap, name, resolver))) })
        })
      )
      .handle("scu", () => Effect.map(snapshot, (s) => (s.bodies.scu === undefined ? noContent : json(s.bodies.scu))))
      .handle("models", () => Effect.map(snapshot, (s) => json(s.bodies.models)))
      .handle("model", ({ path }) => Effect.map(resolveModel(path.key), (model) => encoded(S.ModelEntry, model)))
      .handle("catalog", () => Effect.map(snapshot, (s) => json(s.bodies.catalog, { "cache-control": "public, max-age=60" })))
      .handle("basket", () => Effect.map(snapshot, (s) => (s.bodies.basket === undefined ? noContent : json(s.bodies.basket))))
      .handle("baseline", () => Effect.map(snapshot, (s) => (s.bodies.baseline === undefined ? noContent : json(s.bodies.baseline))))
      .handle("latest", () => Effect.map(snapshot, (s) => (s.bodies.latest === undefined ? noContent : json(s.bodies.latest))))
      .handle("scuAt", ({ urlParams }) =>
        Effect.gen(function* () {
          const at = yield* parseInstant("date", urlParams.date, yield* now)
          const view = scuAtView((yield* snapshot).inputs, at)
          return view === undefined ? noContent : encoded(S.ScuAtResponse, view)
        })
      )
      .handle("history", ({ urlParams }) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const snap = yield* snapshot
          const granularity: Granularity = urlParams.granularity ?? "per-revision"
          const isDefault = urlParams.from === undefined && urlParams.to === undefined && urlParams.limit === undefined
          if (isDefault && granularity === "daily") {
            return wantsCsv(request)
              ? HttpServerResponse.uint8Array(snap.bodies.historyDailyCsvDefault, { contentType: "text/csv; charset=utf-8" })
              : json(snap.bodies.historyDailyDefault)
          }
          if (isDefault && granularity === "per-revision" && !wantsCsv(request)) return json(snap.bodies.historyDefault)
          const from = yield* parseBound("from", urlParams.from)
          const to = yield* parseBound("to", urlParams.to)
          if (from !== null && to !== null && from > to) return yield* Effect.fail(invalid("from", "from is after to"))
          const view = historyView(snap.inputs, { granularity, from, to, limit: urlParams.limit ?? 10_000 })
          return wantsCsv(request)
            ? HttpServerResponse.text(historyCsv(view), { contentType: "text/csv; charset=utf-8" })
            : encoded(S.HistoryResponse, view)
        })
      )
      .handle("reconstitutions", () => Effect.map(snapshot, (s) => json(s.bodies.reconstitutions)))
      .handle("reconstitutionsExport", () =>
        Effect.map(snapshot, (s) =>
          HttpServerResponse.uint8Array(s.bodies.reconstitutionsMarkdown, {
            contentType: "text/markdown; charset=utf-8",
            headers: { "content-disposition": 'attachment; filename="scu-reconstitutions.md"' }
          })
        )
      )
      .handle("revision", ({ path }) =>
        Effect.gen(function* () {
          const snap = yield* snapshot
          const revision = snap.revisionsByVersion.get(path.revision)
          if (revision === undefined) return yield* Effect.fail(new NotFound({ message: `no confirmed revision ${path.revision}` }))
          return encoded(S.RevisionResponse, revisionView(revision, baseUrl))
        })
      )
      .handle("health", () =>
        Effect.gen(function* () {
          const snap = yield* snapshot
          const at = yield* now
          const health = snap.health
          const lastSyncAt = health.lastSyncAt
          return encoded(S.HealthResponse, {
            latestRevisionVersion: health.latestRevisionVersion,
            methodologyVersion: health.methodologyVersion,
            latestRevisionConfirmedAt: health.latestRevisionConfirmedAt?.toISOString() ?? null,
            lastSyncAt: lastSyncAt?.toISOString() ?? null,
            stale: lastSyncAt === null || at - lastSyncAt.getTime() > config.chain.staleAfterSeconds * 1000,
            pendingRevision:
              health.pendingRevision === null ? null : { ageMs: health.pendingRevision.ageMs + (at - snap.builtAt.getTime()) }
          })
        })
      )
      .handle("contractMetadata", () =>
        Effect.map(contract.current, (view) => encoded(S.ContractMetadata, view, { "cache-control": "public, max-age=300" }))
      )
      .handle("manifest", ({ path }) =>
        Effect.gen(function* () {
          const body = (yield* snapshot).manifestsByHash.get(path.metadataHash.toLowerCase())
          if (body === undefined) return yield* Effect.fail(new NotFound({ message: `no confirmed revision has metadataHash ${path.metadataHash}` }))
          return jsonText(body, { "cache-control": "public, max-age=31536000, immutable" })
        })
      )
      .handle("stats", () => Effect.map(snapshot, (s) => json(s.bodies.stats)))
      .handle("activity", ({ urlParams }) =>
        Effect.map(snapshot, (snap) => {
          const limit = urlParams.limit ?? 20
          const offset = urlParams.offset ?? 0
          const events = snap.activity
          return encoded(S.ActivityPage, {
            object: "list",
            data: events.slice(offset, offset + limit),
            limit,
            offset,
            total: events.length,
            hasMore: offset + limit < events.length
          })
        })
      )
      .handle("pricing", () => Effect.map(snapshot, (s) => json(s.bodies.pricing)))
      .handle("methodology", () => Effect.map(snapshot, (s) => json(s.bodies.methodology)))
      .handle("methodologyVersion", ({ path }) =>
        Effect.gen(function* () {
          const record = (yield* snapshot).methodologies.find((m) => m.version === path.version)
          if (record === undefined) return yield* Effect.fail(new NotFound({ message: `no methodology version ${path.version}` }))
          return encoded(S.MethodologyEntry, record)
        })
      )
  })
)
