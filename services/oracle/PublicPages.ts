/**
 * The public pages' data, read in-process from the oracle's snapshot (no HTTP hop, no read pacing): one operation
 * per page, each answering the page's figures as plain JSON values (domain/oracle/publicPages.ts), and the key under
 * which a rendered page stays valid (the snapshot it was read from). The HTTP layer renders and caches them.
 */
import { Clock, Effect, Option } from "effect"
import * as Fs from "node:fs"
import { formatScaled, percentChange, plainNumber } from "../../web/shared/format.ts"
import { type MethodologyDocument, parseMethodologyDocument } from "../../domain/oracle/methodologyDocument.ts"
import { reconstitutionsView } from "../../domain/oracle/log.ts"
import * as P from "../../domain/oracle/publicPages.ts"
import { revisionView } from "../../domain/oracle/views.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { ContractMetadata } from "./ContractMetadata.ts"
import { OracleReads } from "./OracleReads.ts"
import { OracleSnapshot, type Snapshot } from "./OracleSnapshot.ts"

const DAY = 86_400_000
/** The index page lists the newest revisions and reconstitutions; the rest are a link away. */
const INDEX_REVISIONS = 10
const INDEX_LOG_ENTRIES = 5

/** What a page route answers: a page, or the page a retired address now lives at. */
export type PageAnswer = { readonly _tag: "Page"; readonly data: P.PageData; readonly status: 200 | 404 } | { readonly _tag: "Redirect"; readonly location: string }

const page = (data: P.PageData, status: 200 | 404 = 200): PageAnswer => ({ _tag: "Page", data, status })

const notFound = (path: string, message: string): PageAnswer =>
  page({ page: "notFound", meta: { title: "Not found: Standard Compute Unit", description: message, path }, message }, 404)

/** The index level in force at `at`: the last point published at or before it. */
const levelAt = (points: ReadonlyArray<P.ChartPoint>, at: number): number | undefined => {
  let found: number | undefined
  for (const point of points) {
    if (new Date(point.at).getTime() <= at) found = point.value
    else break
  }
  return found
}

const revisionRows = (snap: Snapshot, history: ReadonlyArray<{ readonly revisionVersion: number; readonly computeIndex: number | null }>): Array<P.RevisionRow> => {
  const indexOf = new Map(history.map((p) => [p.revisionVersion, p.computeIndex]))
  const summaries = new Map(reconstitutionsView(snap.log).entries.map((e) => [e.revisionVersion, e.summary]))
  return snap.inputs.revisions.map((r) => ({
    revisionVersion: r.revisionVersion,
    publishedAt: r.publishedAt.toISOString(),
    computeIndex: indexOf.get(r.revisionVersion) ?? null,
    scuUsd18: r.scuUsd18.toString(),
    metadataHash: r.metadataHash,
    txHash: r.txHash,
    methodologyVersion: r.methodologyVersion,
    summary: summaries.get(r.revisionVersion) ?? null
  }))
}

export class PublicPages extends Effect.Service<PublicPages>()("PublicPages", {
  effect: Effect.gen(function* () {
    const snapshots = yield* OracleSnapshot
    const reads = yield* OracleReads
    const contract = yield* ContractMetadata
    const config = yield* AppConfig
    const baseUrl = Option.match(config.publicBaseUrl, { onNone: () => "", onSome: (url) => url.replace(/\/$/, "") })
    const methodologyDocument: MethodologyDocument = parseMethodologyDocument(
      Fs.readFileSync(new URL("../../docs/methodology.md", import.meta.url), "utf8")
    )
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const perRevision = reads.history({ granularity: "per-revision" }).pipe(Effect.orDie)

    const index = Effect.fn("PublicPages.index")(function* (granularity: P.HistoryGranularity) {
      const snap = yield* snapshots.current
      const at = yield* now
      const history = yield* perRevision
      const chosen = granularity === "per-revision" ? history : yield* reads.history({ granularity }).pipe(Effect.orDie)
      const health = yield* reads.health
      const pointsOf = (data: typeof history.data) => data.flatMap((p) => (p.computeIndex === null ? [] : [{ at: p.date, value: p.computeIndex }]))
      const indexPoints = pointsOf(history.data)
      const last = history.data.at(-1)
      const latest = snap.inputs.revisions.at(-1)
      const log = reconstitutionsView(snap.log).entries
      const scu = snap.scu
      const headline: P.IndexHeadline | null =
        last === undefined || latest === undefined || scu === undefined
          ? null
          : {
            scuUsd18: latest.scuUsd18.toString(),
            computeIndex: last.computeIndex,
            revisionVersion: latest.revisionVersion,
            publishedAt: latest.publishedAt.toISOString(),
            basketSize: latest.manifest?.models.length ?? 0,
            referenceWorkload: scu.referenceWorkload,
            changes: ([["24 h", DAY], ["7 d", 7 * DAY], ["30 d", 30 * DAY]] as const).map(([label, span]) => {
              const then = levelAt(indexPoints, at.getTime() - span)
              return { label, text: then === undefined || last.computeIndex === null ? "n/a (older than the index)" : percentChange(then, last.computeIndex) }
            }),
            stale: health.stale,
            lastSyncAt: health.lastSyncAt
          }
      const sources = new Map(snap.catalog.models.map((m) => [m.modelKey, m.priceSources]))
      const basket: Array<P.BasketRow> = (scu?.breakdown.familyRepresentatives ?? [])
        .map((r) => {
          const found = sources.get(r.modelKey)
          return {
            family: r.family,
            modelKey: r.modelKey,
            input: r.inputPriceUsdPerMillion,
            output: r.outputPriceUsdPerMillion,
            blended: r.blendedCostUsd,
            sources: found === undefined ? null : { input: found.input, output: found.output }
          }
        })
        .sort((a, b) => a.family.localeCompare(b.family, "en"))
      const active = snap.methodologies.find((m) => m.version === snap.methodologyVersion)
      const registry = yield* contract.current.pipe(Effect.option)
      const rows = revisionRows(snap, history.data)
      const scuText = headline === null ? undefined : formatScaled(headline.scuUsd18, 18, 18)
      return page({
        page: "index",
        meta: {
          title: "Standard Compute Unit: the price index of LLM inference",
          description:
            headline === null || scuText === undefined
              ? "The Standard Compute Unit: a price index of LLM inference from the vendors' own price cards, every revision hashed and anchored on-chain."
              : `SCU ${scuText} USD per reference workload, compute index ${headline.computeIndex === null ? "n/a" : plainNumber(headline.computeIndex)} at revision #${headline.revisionVersion}: the geometric mean of ${headline.basketSize} model families' list prices, anchored on-chain.`,
          path: granularity === "per-revision" ? "/" : `/?granularity=${granularity}`
        },
        now: at.toISOString(),
        headline,
        history: { granularity, points: pointsOf(chosen.data) },
        marks: log
          .filter((e) => e.previousVersion !== null && e.changes.some((c) => c.type !== "PriceChanged"))
          .map((e) => ({ at: e.publishedAt, label: e.summary })),
        basket,
        revisions: { count: rows.length, latest: rows.slice(-INDEX_REVISIONS).reverse() },
        log: log.slice(-INDEX_LOG_ENTRIES).reverse(),
        methodology: active === undefined ? null : { version: active.version, title: active.title, formulaSummary: active.formulaSummary, rationale: active.rationale },
        contract: Option.match(registry, { onNone: () => null, onSome: (view) => ({ address: view.address, chainId: view.chainId, version: view.version }) })
      })
    })

    const models = Effect.fn("PublicPages.models")(function* (query: P.ModelsQuery) {
      const snap = yield* snapshots.current
      const routable = snap.catalog.models.filter((m) => m.integrated).length
      return page({
        page: "models",
        meta: {
          title: "Models and their prices: Standard Compute Unit",
          description: `${snap.catalog.models.length} language models and ${snap.catalog.embeddingModels.length} embedding models with their vendors' list prices, the billed price (+5%), cache, reasoning and context-tier prices, each marked verified, inferred or promotional; ${routable} routable through the exchange.`,
          path: `/models${P.modelsQueryString(query)}`
        },
        generatedAt: snap.catalog.generatedAt,
        truncated: snap.catalog.truncated,
        models: snap.catalog.models,
        embeddingModels: snap.catalog.embeddingModels,
        pricing: snap.pricing,
        query
      })
    })

    /** A catalog model by its key as written, or case-insensitively. */
    const findModel = (snap: Snapshot, key: string): P.ModelPageData["model"] | undefined => {
      const lower = key.toLowerCase()
      const text = snap.catalog.models.find((m) => m.modelKey === key) ?? snap.catalog.models.find((m) => m.modelKey.toLowerCase() === lower)
      if (text !== undefined) return { kind: "text", entry: text, billed: snap.pricing.models[text.modelKey] ?? null }
      const embedding =
        snap.catalog.embeddingModels.find((m) => m.modelKey === key) ?? snap.catalog.embeddingModels.find((m) => m.modelKey.toLowerCase() === lower)
      return embedding === undefined ? undefined : { kind: "embedding", entry: embedding, billed: snap.pricing.embeddingModels[embedding.modelKey] ?? null }
    }

    const priceAtLookup = (modelKey: string, date: string | null, time: string | null) =>
      Effect.gen(function* () {
        if (date === null) return null
        const lookup = { date, time: time ?? "" }
        const fail = (message: string): P.PriceAtLookup => ({ ...lookup, result: { ok: false, message } })
        if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return fail("enter a date (YYYY-MM-DD).")
        if (time !== null && !/^\d{2}:\d{2}$/.test(time)) return fail("enter a time as HH:MM, or none for midnight.")
        const at = new Date(`${date}T${time ?? "00:00"}:00.000Z`)
        if (Number.isNaN(at.getTime())) return fail("that date or time does not exist.")
        return yield* reads.priceAt(modelKey, at).pipe(
          Effect.map((value): P.PriceAtLookup => ({ ...lookup, result: { ok: true, value } })),
          Effect.catchTags({ NotFound: (e) => Effect.succeed(fail(e.message)), ValidationFailed: (e) => Effect.succeed(fail(e.message)) })
        )
      })

    const model = Effect.fn("PublicPages.model")(function* (key: string, date: string | null, time: string | null) {
      const snap = yield* snapshots.current
      const found = findModel(snap, key)
      if (found === undefined) return notFound(P.modelPath(key), `The catalog has no model with the key “${key}”.`)
      const entry = found.entry
      if (entry.modelKey !== key) return { _tag: "Redirect", location: P.modelPath(entry.modelKey) } satisfies PageAnswer
      const history = yield* reads.priceHistory(entry.modelKey, { granularity: "per-revision" }).pipe(Effect.option)
      const listedInput = found.kind === "text" ? found.entry.currentPrice.inputPriceUsdPerMillion : found.entry.currentPrice.inputPriceUsdPerMillion
      const output = found.kind === "text" ? ` and ${plainNumber(found.entry.currentPrice.outputPriceUsdPerMillion)} output` : ""
      return page({
        page: "model",
        meta: {
          title: `${entry.displayName} (${entry.modelKey}) prices: Standard Compute Unit`,
          description: `${entry.displayName} by ${entry.provider.name}: ${plainNumber(listedInput)} USD input${output} per million tokens as listed, with its billed price, price marks, sources${found.kind === "text" ? ", context tiers" : ""} and price history.`,
          path: P.modelPath(entry.modelKey)
        },
        now: (yield* now).toISOString(),
        model: found,
        pegUsd: snap.pricing.pegUsd,
        history: Option.match(history, {
          onNone: () => null,
          onSome: (h) => ({ from: h.from, to: h.to, truncated: h.truncated, unavailableRevisions: h.unavailableRevisions, points: h.data })
        }),
        family:
          found.kind === "text"
            ? snap.catalog.models
              .filter((m) => m.family === found.entry.family && m.modelKey !== entry.modelKey)
              .map((m) => ({ modelKey: m.modelKey, displayName: m.displayName, indexMember: m.indexMember }))
            : [],
        routableNow: snap.routableCatalog.models.has(entry.modelKey) || snap.routableCatalog.embeddings.has(entry.modelKey),
        priceAt: yield* priceAtLookup(entry.modelKey, date, time)
      })
    })

    const revisions = Effect.fn("PublicPages.revisions")(function* () {
      const snap = yield* snapshots.current
      const rows = revisionRows(snap, (yield* perRevision).data).reverse()
      return page({
        page: "revisions",
        meta: {
          title: "Revisions of the index: Standard Compute Unit",
          description: `Every confirmed revision of the Standard Compute Unit (${rows.length}), newest first: its SCU, compute index, manifest hash and the transaction that anchored it.`,
          path: "/revisions"
        },
        revisions: rows
      })
    })

    const revision = Effect.fn("PublicPages.revision")(function* (version: number) {
      const snap = yield* snapshots.current
      const stored = snap.revisionsByVersion.get(version)
      if (stored === undefined) return notFound(P.revisionPath(version), `No confirmed revision #${version}.`)
      const view = revisionView(stored, baseUrl)
      const point = (yield* perRevision).data.find((p) => p.revisionVersion === version)
      const versions = snap.inputs.revisions.map((r) => r.revisionVersion)
      const at = versions.indexOf(version)
      const scuText = formatScaled(view.scuUsd18, 18, 18)
      return page({
        page: "revision",
        meta: {
          title: `Revision #${version} of the index: Standard Compute Unit`,
          description: `Revision #${version}, published ${view.publishedAt}: SCU ${scuText} USD, compute index ${point?.computeIndex === null || point === undefined ? "n/a" : plainNumber(point.computeIndex)}, ${view.basketSize} families, anchored in transaction ${view.txHash}.`,
          path: P.revisionPath(version)
        },
        revision: view,
        computeIndex: point?.computeIndex ?? null,
        metadataHash: stored.metadataHash,
        contentHash: stored.contentHash,
        reconstitution: reconstitutionsView(snap.log).entries.find((e) => e.revisionVersion === version) ?? null,
        previous: at > 0 ? versions[at - 1]! : null,
        next: at >= 0 && at < versions.length - 1 ? versions[at + 1]! : null
      })
    })

    const methodology = Effect.fn("PublicPages.methodology")(function* () {
      const snap = yield* snapshots.current
      return page({
        page: "methodology",
        meta: {
          title: "Methodology: Standard Compute Unit",
          description: `How the Standard Compute Unit is computed (methodology version ${snap.methodologyVersion}): the reference workload, the basket's families, listing criteria, provenance marks, manifests and hashes.`,
          path: "/methodology"
        },
        document: methodologyDocument,
        activeVersion: snap.methodologyVersion,
        entries: snap.methodologies
      })
    })

    return {
      /**
       * The key a rendered page stays valid under: the snapshot it was read from, the chain's freshness (judged per
       * request) and, for pages that say how long ago something happened, the minute.
       */
      cacheKey: Effect.gen(function* () {
        const snap = yield* snapshots.current
        const health = yield* reads.health
        const minute = Math.floor((yield* Clock.currentTimeMillis) / 60_000)
        return `${snap.version}:${health.stale ? "stale" : "fresh"}:${minute}`
      }),

      page: (route: P.PublicRoute): Effect.Effect<PageAnswer> => {
        switch (route.page) {
          case "index":
            return index(route.granularity)
          case "models":
            return models(route.query)
          case "modelRedirect":
            return Effect.succeed({ _tag: "Redirect", location: P.modelPath(route.modelKey) })
          case "model":
            return model(route.modelKey, route.date, route.time)
          case "revisions":
            return revisions()
          case "revision":
            return revision(route.version)
          case "methodology":
            return methodology()
          case "notFound":
            return Effect.succeed(notFound(route.path, `There is no page at ${route.path}.`))
        }
      },

      /** Every public page's canonical path, for the sitemap. */
      paths: Effect.gen(function* () {
        const snap = yield* snapshots.current
        return [
          "/",
          "/models",
          ...snap.catalog.models.map((m) => P.modelPath(m.modelKey)),
          ...snap.catalog.embeddingModels.map((m) => P.modelPath(m.modelKey)),
          "/revisions",
          ...snap.inputs.revisions.map((r) => P.revisionPath(r.revisionVersion)),
          "/methodology"
        ]
      })
    } as const
  })
}) {}
