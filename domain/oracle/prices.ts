/**
 * A model's price at an instant and over time, by SPEC's price-at rule: the confirmed revision in force at the
 * instant attests it ('manifest'), else the catalog's temporal history answers ('catalog'). Only chat models are
 * tracked here (lookups.ts): an embedding model has no output price, and its history is in the catalog.
 */
import { requireOutput } from "../catalog/card.ts"
import { pricePointAt } from "../catalog/governance.ts"
import { usd18ToNumber, type Usd18 } from "../money.ts"
import type { ConfirmedRevision, StoredPoint } from "./inputs.ts"
import type { Granularity, PriceAtResponse, PriceHistoryResponse } from "./schemas.ts"
import { bucketStarts, clampToNow, newest, revisionAt } from "./series.ts"

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
    outputPriceUsdPerMillion: usd18ToNumber(requireOutput(point).usd18),
    observedAt: point.observedAt.toISOString(),
    revisionVersion: null,
    methodologyVersion: null,
    metadataHash: null,
    family
  }
}

/** The price-at resource: the manifest-only fields appear on manifest answers alone. */
export const priceAtView = ({ metadataHash, methodologyVersion, revisionVersion, ...rest }: PriceAt): PriceAtResponse =>
  rest.source === "manifest" && revisionVersion !== null && methodologyVersion !== null && metadataHash !== null
    ? { ...rest, revisionVersion, methodologyVersion, metadataHash }
    : rest

/**
 * The model's price series. per-revision: a point at every revision's publication and every catalog price change;
 * daily/weekly: a point at each bucket start (midnight UTC; weeks from Monday), carrying the last price forward.
 * Per-revision, consecutive points with the same source and prices collapse into the first. The range runs from
 * `from` (default: the model's first known price) to `to` clamped to now; at most `limit` points, the newest kept.
 * Revisions in range without a manifest are listed as unavailable.
 */
export const priceHistory = (input: {
  readonly modelKey: string
  readonly revisions: ReadonlyArray<ConfirmedRevision>
  readonly history: ReadonlyArray<StoredPoint>
  readonly family: string | null
  readonly granularity: Granularity
  readonly from: Date | null
  readonly to: Date | null
  readonly limit: number
  readonly now: Date
}): PriceHistoryResponse => {
  const from = input.from ?? input.history[0]?.effectiveFrom ?? input.revisions[0]?.publishedAt ?? input.now
  const to = clampToNow(input.to, input.now)
  let instants: Array<number>
  if (input.granularity === "per-revision") {
    instants = [
      ...input.revisions.map((r) => r.publishedAt.getTime()),
      ...input.history.map((p) => p.effectiveFrom.getTime())
    ].filter((t) => t >= from.getTime() && t <= to.getTime())
    // The state at the start of the range, when it falls between changes.
    instants.push(from.getTime())
  } else {
    instants = bucketStarts(input.granularity, from.getTime(), to.getTime())
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
  const kept = newest(points, input.limit)
  const data = kept.items.map((p) => ({
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
    truncated: kept.truncated,
    unavailableRevisions: input.revisions
      .filter((r) => r.manifest === null && r.publishedAt >= from && r.publishedAt <= to)
      .map((r) => r.revisionVersion),
    data
  }
}
