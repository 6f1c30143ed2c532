/**
 * The public pages' data (DESIGN.md section 13): what each server-rendered page shows, read in-process from the
 * oracle's snapshot and embedded in the page as JSON, so the browser hydrates the same figures it was sent. Plain
 * JSON values only (strings, numbers, booleans, arrays, objects): the page decodes them with `JSON.parse`, not Schema.
 *
 * The routes, their query parameters and the canonical path of each page are here too, so the server and the
 * browser read a URL the same way.
 */
import type { MethodologyDocument } from "./methodologyDocument.ts"
import type * as S from "./schemas.ts"

export type CatalogEntry = S.CatalogResponse["models"][number]
export type EmbeddingEntry = S.CatalogResponse["embeddingModels"][number]
export type Billed = S.PricingResponse["models"][string]
export type EmbeddingBilled = S.PricingResponse["embeddingModels"][string]
export type HistoryGranularity = S.Granularity
export type ReconstitutionEntry = S.ReconstitutionLog["entries"][number]
export type PricePoint = S.PriceHistoryResponse["data"][number]

/** What every page says about itself to crawlers and link previews. */
export interface PageMeta {
  readonly title: string
  readonly description: string
  /** The page's canonical path below the service's root: `/models/openai/gpt-5`. */
  readonly path: string
}

export interface IndexHeadline {
  readonly scuUsd18: string
  readonly computeIndex: number | null
  readonly revisionVersion: number
  readonly publishedAt: string
  readonly basketSize: number
  readonly referenceWorkload: { readonly inputTokens: number; readonly outputTokens: number }
  /** Over 24 h, 7 d, 30 d: the signed percent change of the compute index, or why there is none. */
  readonly changes: ReadonlyArray<{ readonly label: string; readonly text: string }>
  readonly stale: boolean
  readonly lastSyncAt: string | null
}

export interface BasketRow {
  readonly family: string
  readonly modelKey: string
  readonly input: number
  readonly output: number
  readonly blended: number
  /** The catalog's marks of the two prices that enter the index; null when the model has left the catalog. */
  readonly sources: { readonly input: CatalogEntry["priceSources"]["input"]; readonly output: CatalogEntry["priceSources"]["output"] } | null
}

export interface RevisionRow {
  readonly revisionVersion: number
  readonly publishedAt: string
  readonly computeIndex: number | null
  readonly scuUsd18: string
  readonly metadataHash: string
  readonly txHash: string
  readonly methodologyVersion: number
  /** The reconstitution's one-line summary when the revision changed the basket or its prices. */
  readonly summary: string | null
}

export interface ChartPoint {
  readonly at: string
  readonly value: number
}

export interface IndexPageData {
  readonly page: "index"
  readonly meta: PageMeta
  /** The moment the page's relative figures ("3 h ago", changes over 24 h) were computed. */
  readonly now: string
  readonly headline: IndexHeadline | null
  readonly history: { readonly granularity: HistoryGranularity; readonly points: ReadonlyArray<ChartPoint> }
  /** Reconstitutions that changed who is in the basket: the chart's marks. */
  readonly marks: ReadonlyArray<{ readonly at: string; readonly label: string }>
  readonly basket: ReadonlyArray<BasketRow>
  readonly revisions: { readonly count: number; readonly latest: ReadonlyArray<RevisionRow> }
  readonly log: ReadonlyArray<ReconstitutionEntry>
  readonly methodology: { readonly version: number; readonly title: string; readonly formulaSummary: string; readonly rationale: string } | null
  readonly contract: { readonly address: string; readonly chainId: number; readonly version: string | null } | null
}

export interface ModelsQuery {
  readonly q: string
  readonly provider: string
  readonly routable: boolean
  readonly sort: ModelsSortKey
  readonly dir: "ascending" | "descending"
}

export const MODELS_SORT_KEYS = ["model", "provider", "family", "input", "output", "cacheRead", "reasoning", "window"] as const
export type ModelsSortKey = (typeof MODELS_SORT_KEYS)[number]

export interface ModelsPageData {
  readonly page: "models"
  readonly meta: PageMeta
  readonly generatedAt: string
  readonly truncated: boolean
  readonly models: ReadonlyArray<CatalogEntry>
  readonly embeddingModels: ReadonlyArray<EmbeddingEntry>
  readonly pricing: S.PricingResponse
  readonly query: ModelsQuery
}

export interface PriceAtLookup {
  readonly date: string
  readonly time: string
  readonly result: { readonly ok: true; readonly value: S.PriceAtResponse } | { readonly ok: false; readonly message: string }
}

export interface ModelPageData {
  readonly page: "model"
  readonly meta: PageMeta
  readonly now: string
  readonly model:
    | { readonly kind: "text"; readonly entry: CatalogEntry; readonly billed: Billed | null }
    | { readonly kind: "embedding"; readonly entry: EmbeddingEntry; readonly billed: EmbeddingBilled | null }
  readonly pegUsd: number
  readonly history: {
    readonly from: string
    readonly to: string
    readonly truncated: boolean
    readonly unavailableRevisions: ReadonlyArray<number>
    readonly points: ReadonlyArray<PricePoint>
  } | null
  /** The other models of its family, newest first. */
  readonly family: ReadonlyArray<{ readonly modelKey: string; readonly displayName: string; readonly indexMember: boolean }>
  /** Whether the exchange routes requests for it now (a configured provider serves it). */
  readonly routableNow: boolean
  /** A price-at lookup asked for in the URL (`?date=&time=`), answered by the server. */
  readonly priceAt: PriceAtLookup | null
}

export interface RevisionsPageData {
  readonly page: "revisions"
  readonly meta: PageMeta
  readonly revisions: ReadonlyArray<RevisionRow>
}

export interface RevisionPageData {
  readonly page: "revision"
  readonly meta: PageMeta
  readonly revision: S.RevisionResponse
  readonly computeIndex: number | null
  readonly metadataHash: string
  readonly contentHash: string
  readonly reconstitution: ReconstitutionEntry | null
  readonly previous: number | null
  readonly next: number | null
}

export interface MethodologyPageData {
  readonly page: "methodology"
  readonly meta: PageMeta
  readonly document: MethodologyDocument
  readonly activeVersion: number
  readonly entries: S.MethodologyChangelog["entries"]
}

export interface NotFoundPageData {
  readonly page: "notFound"
  readonly meta: PageMeta
  readonly message: string
}

export type PageData = IndexPageData | ModelsPageData | ModelPageData | RevisionsPageData | RevisionPageData | MethodologyPageData | NotFoundPageData

/** A public page's route, read from its path and query. */
export type PublicRoute =
  | { readonly page: "index"; readonly granularity: HistoryGranularity }
  | { readonly page: "models"; readonly query: ModelsQuery }
  /** `/models?model=<key>`: the older address of a model, now redirected to its own page. */
  | { readonly page: "modelRedirect"; readonly modelKey: string }
  | { readonly page: "model"; readonly modelKey: string; readonly date: string | null; readonly time: string | null }
  | { readonly page: "revisions" }
  | { readonly page: "revision"; readonly version: number }
  | { readonly page: "methodology" }
  | { readonly page: "notFound"; readonly path: string }

const GRANULARITIES: ReadonlyArray<HistoryGranularity> = ["per-revision", "daily", "weekly"]

/** The models table's state as a URL holds it; anything unknown reads as the default. */
export const modelsQueryOf = (params: URLSearchParams): ModelsQuery => {
  const sort = params.get("sort")
  return {
    q: (params.get("q") ?? "").slice(0, 200),
    provider: (params.get("provider") ?? "").slice(0, 100),
    routable: params.get("routable") === "1" || params.get("routable") === "on" || params.get("routable") === "true",
    sort: (MODELS_SORT_KEYS as ReadonlyArray<string>).includes(sort ?? "") ? (sort as ModelsSortKey) : "model",
    dir: params.get("dir") === "descending" ? "descending" : "ascending"
  }
}

/** The query string that reproduces a models table state (defaults left out), with its leading `?` when not empty. */
export const modelsQueryString = (query: ModelsQuery): string => {
  const params = new URLSearchParams()
  if (query.q !== "") params.set("q", query.q)
  if (query.provider !== "") params.set("provider", query.provider)
  if (query.routable) params.set("routable", "1")
  if (query.sort !== "model") params.set("sort", query.sort)
  if (query.dir !== "ascending") params.set("dir", query.dir)
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

const safeDecode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/** Which public page a path and query name. `path` has no query and no path prefix. */
export const publicRouteOf = (path: string, params: URLSearchParams): PublicRoute => {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  if (trimmed === "/" || trimmed === "") {
    const granularity = params.get("granularity")
    return { page: "index", granularity: GRANULARITIES.find((g) => g === granularity) ?? "per-revision" }
  }
  if (trimmed === "/models") {
    const model = params.get("model")
    return model !== null && model.trim() !== "" ? { page: "modelRedirect", modelKey: model.trim() } : { page: "models", query: modelsQueryOf(params) }
  }
  if (trimmed.startsWith("/models/")) {
    const key = safeDecode(trimmed.slice("/models/".length))
    if (key === undefined || key === "") return { page: "notFound", path }
    const date = params.get("date")
    const time = params.get("time")
    return { page: "model", modelKey: key, date: date === null || date === "" ? null : date.slice(0, 40), time: time === null || time === "" ? null : time.slice(0, 20) }
  }
  if (trimmed === "/revisions") return { page: "revisions" }
  const revision = /^\/revisions\/(\d{1,9})$/.exec(trimmed)
  if (revision !== null) return { page: "revision", version: Number(revision[1]) }
  if (trimmed === "/methodology") return { page: "methodology" }
  return { page: "notFound", path }
}

/** A model's page, below the service's root: `/models/openai/gpt-5` (each segment of the key escaped on its own). */
export const modelPath = (modelKey: string): string => `/models/${modelKey.split("/").map(encodeURIComponent).join("/")}`

export const revisionPath = (version: number): string => `/revisions/${version}`
