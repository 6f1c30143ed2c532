/**
 * A model's price at an instant and over time, by SPEC's price-at rule: the confirmed revision in force at the
 * instant attests it ('manifest'), else the catalog's temporal history answers ('catalog').
 */
import type { PricePoint } from "../catalog/card.ts"
import { pricePointAt } from "../catalog/governance.ts"
import { usd18ToNumber, type Usd18 } from "../money.ts"
import { type ConfirmedRevision, type Granularity, revisionAt } from "./views.ts"

export type StoredPoint = PricePoint & { readonly observedAt: Date }

export interface PriceAt {
  readonly source: "manifest" | "catalog"
  readonly modelKey: string
  readonly date: string
  readonly inputPriceUsdPerMillion: number
  readonly outputPriceUsdPerMillion: number
  readonly observedAt: string
  readonly revisionVersion: number | null
  readonly methodologyVersion: number | null
  readonly metadataHash: string | null
  readonly family: string | null
}

export const priceAt = (
  modelKey: string,
  at: Date,
  revisions: ReadonlyArray<ConfirmedRevision>,
  history: ReadonlyArray<StoredPoint>,
  family: string | null
): PriceAt | undefined => {
  const revision = revisionAt(revisions, at)
  const attested = revision?.manifest?.models.find((m) => m.modelKey === modelKey)
  if (revision !== undefined && attested !== undefined) {
    return {
      source: "manifest",
      modelKey,
      date: at.toISOString(),
      inputPriceUsdPerMillion: usd18ToNumber(BigInt(attested.inputPrice) as Usd18),
      outputPriceUsdPerMillion: usd18ToNumber(BigInt(attested.outputPrice) as Usd18),
      observedAt: revision.publishedAt.toISOString(),
      revisionVersion: revision.revisionVersion,
      methodologyVersion: revision.methodologyVersion,
      metadataHash: revision.metadataHash,
      family: attested.family
    }
  }
  const point = pricePointAt(history, at) as StoredPoint | undefined
  if (point === undefined) return undefined
  return {
    source: "catalog",
    modelKey,
    date: at.toISOString(),
    inputPriceUsdPerMillion: usd18ToNumber(point.input.usd18),
    outputPriceUsdPerMillion: usd18ToNumber(point.output.usd18),
    observedAt: point.observedAt.toISOString(),
    revisionVersion: null,
    methodologyVersion: null,
    metadataHash: null,
    family
  }
}

const DAY_MS = 86_400_000

/**
 * The model's price series. per-revision: a point at every revision's publication and every catalog price change;
 * daily/weekly: a point at each bucket start (midnight UTC; weeks from Monday), carrying the last price forward.
 * Per-revision, consecutive points with the same source and prices collapse into the first. At most `limit`
 * points, the oldest dropped. Revisions in range without a manifest are listed as unavailable.
 */
export const priceHistory = (input: {
  readonly modelKey: string
  readonly revisions: ReadonlyArray<ConfirmedRevision>
  readonly history: ReadonlyArray<StoredPoint>
  readonly family: string | null
  readonly granularity: Granularity
  readonly from: Date
  readonly to: Date
  readonly limit: number
}) => {
  const { from, to } = input
  let instants: Array<number>
  if (input.granularity === "per-revision") {
    instants = [
      ...input.revisions.map((r) => r.publishedAt.getTime()),
      ...input.history.map((p) => p.effectiveFrom.getTime())
    ].filter((t) => t >= from.getTime() && t <= to.getTime())
    // The state at the start of the range, when it falls between changes.
    instants.push(from.getTime())
  } else {
    const step = input.granularity === "daily" ? DAY_MS : 7 * DAY_MS
    let cursor = Math.floor(from.getTime() / DAY_MS) * DAY_MS
    if (input.granularity === "weekly") cursor -= ((new Date(cursor).getUTCDay() + 6) % 7) * DAY_MS
    if (cursor < from.getTime()) cursor += step
    instants = []
    for (; cursor <= to.getTime(); cursor += step) instants.push(cursor)
  }
  const sorted = [...new Set(instants)].sort((a, b) => a - b)
  const points: Array<PriceAt> = []
  for (const t of sorted) {
    const point = priceAt(input.modelKey, new Date(t), input.revisions, input.history, input.family)
    if (point === undefined) continue
    const last = points[points.length - 1]
    // Per-revision points collapse when nothing changed; daily and weekly keep one point per bucket.
    const unchanged =
      last !== undefined &&
      last.source === point.source &&
      last.inputPriceUsdPerMillion === point.inputPriceUsdPerMillion &&
      last.outputPriceUsdPerMillion === point.outputPriceUsdPerMillion
    if (input.granularity === "per-revision" && unchanged) continue
    points.push(point)
  }
  const truncated = points.length > input.limit
  const data = (truncated ? points.slice(points.length - input.limit) : points).map((p) => ({
    date: p.date,
    inputPriceUsdPerMillion: p.inputPriceUsdPerMillion,
    outputPriceUsdPerMillion: p.outputPriceUsdPerMillion,
    source: p.source,
    revisionVersion: p.revisionVersion,
    methodologyVersion: p.methodologyVersion,
    metadataHash: p.metadataHash
  }))
  return {
    modelKey: input.modelKey,
    family: input.family,
    from: from.toISOString(),
    to: to.toISOString(),
    granularity: input.granularity,
    count: data.length,
    truncated,
    unavailableRevisions: input.revisions
      .filter((r) => r.manifest === null && r.publishedAt >= from && r.publishedAt <= to)
      .map((r) => r.revisionVersion),
    data
  }
}

export const PRICE_HISTORY_CSV_HEADER =
  "date,inputPriceUsdPerMillion,outputPriceUsdPerMillion,source,revisionVersion,methodologyVersion,metadataHash"

export const priceHistoryCsv = (view: ReturnType<typeof priceHistory>): string =>
  [
    PRICE_HISTORY_CSV_HEADER,
    ...view.data.map((p) =>
      [p.date, p.inputPriceUsdPerMillion, p.outputPriceUsdPerMillion, p.source, p.revisionVersion ?? "", p.methodologyVersion ?? "", p.metadataHash ?? ""].join(",")
    )
  ].join("\r\n") + "\r\n"
