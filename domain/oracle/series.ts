/**
 * Time series of the oracle: the revision in force at an instant (a step function), the SCU series, and the
 * bucket starts that daily and weekly series sample (midnight UTC; weeks from Monday, ISO 8601).
 *
 * No series reaches past `now`: a `to` in the future is clamped, so no point is ever invented after the present,
 * and truncation to `limit` keeps the newest real points.
 */
import type { Granularity, HistoryResponse, ScuAtResponse } from "./schemas.ts"
import type { ConfirmedRevision, OracleInputs } from "./inputs.ts"
import { indexNumber, iso, num } from "./numbers.ts"

export const DAY_MS = 86_400_000

export const startOfDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS

/** Monday 00:00 UTC of the week holding `ms`. */
export const startOfWeek = (ms: number) => {
  const day = startOfDay(ms)
  return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS
}

/** Every bucket start of a daily or weekly series in [from, to], oldest first. */
export const bucketStarts = (granularity: Exclude<Granularity, "per-revision">, from: number, to: number): Array<number> => {
  const step = granularity === "daily" ? DAY_MS : 7 * DAY_MS
  let cursor = granularity === "daily" ? startOfDay(from) : startOfWeek(from)
  if (cursor < from) cursor += step
  const starts: Array<number> = []
  for (; cursor <= to; cursor += step) starts.push(cursor)
  return starts
}

/** The newest `limit` items, and whether any were dropped. */
export const newest = <A>(items: ReadonlyArray<A>, limit: number): { readonly items: ReadonlyArray<A>; readonly truncated: boolean } =>
  items.length > limit ? { items: items.slice(items.length - limit), truncated: true } : { items, truncated: false }

/** The end of a requested range: never after now. */
export const clampToNow = (to: Date | null, now: Date): Date => (to === null || to > now ? now : to)

/** The revision in force at `at`: the latest with publishedAt <= at; on equal publishedAt the highest number. */
export const revisionAt = (revisions: ReadonlyArray<ConfirmedRevision>, at: Date): ConfirmedRevision | undefined => {
  let found: ConfirmedRevision | undefined
  for (const revision of revisions) {
    if (revision.publishedAt.getTime() <= at.getTime()) found = revision
    else break
  }
  return found
}

export const scuAtView = (inputs: OracleInputs, at: Date): ScuAtResponse | undefined => {
  const revision = revisionAt(inputs.revisions, at)
  if (revision === undefined) return undefined
  return {
    at: iso(at),
    scuUsd: num(revision.scuUsd18),
    scuUsd18: revision.scuUsd18.toString(),
    computeIndex: indexNumber(inputs.revisions[0]!.scuUsd18, revision.scuUsd18),
    revisionVersion: revision.revisionVersion,
    methodologyVersion: revision.methodologyVersion,
    publishedAt: iso(revision.publishedAt),
    metadataHash: revision.metadataHash
  }
}

export interface SeriesQuery {
  readonly granularity: Granularity
  readonly from: Date | null
  readonly to: Date | null
  readonly limit: number
}

/**
 * The SCU series. per-revision: one point per revision published in [from, to]. daily/weekly: one point per bucket
 * start in [from, to], each the revision in force at that instant, carried forward across buckets without one.
 */
export const historyView = (inputs: OracleInputs, query: SeriesQuery): HistoryResponse => {
  const revisions = inputs.revisions
  const baseline = revisions[0]?.scuUsd18
  const point = (revision: ConfirmedRevision, date: Date) => ({
    date: iso(date),
    scuUsd: num(revision.scuUsd18),
    computeIndex: baseline === undefined ? null : indexNumber(baseline, revision.scuUsd18),
    revisionVersion: revision.revisionVersion,
    methodologyVersion: revision.methodologyVersion,
    metadataHash: revision.metadataHash
  })
  const from = query.from ?? revisions[0]?.publishedAt ?? inputs.now
  const to = clampToNow(query.to, inputs.now)
  const data: Array<ReturnType<typeof point>> = []
  if (query.granularity === "per-revision") {
    for (const r of revisions) if (r.publishedAt >= from && r.publishedAt <= to) data.push(point(r, r.publishedAt))
  } else if (revisions.length > 0) {
    const first = startOfDay(revisions[0]!.publishedAt.getTime())
    // Walk buckets and revisions together: the series is linear in both.
    let index = -1
    for (const start of bucketStarts(query.granularity, Math.max(from.getTime(), first), to.getTime())) {
      while (index + 1 < revisions.length && revisions[index + 1]!.publishedAt.getTime() <= start) index++
      if (index >= 0) data.push(point(revisions[index]!, new Date(start)))
    }
  }
  const kept = newest(data, query.limit)
  return { from: iso(from), to: iso(to), granularity: query.granularity, count: kept.items.length, truncated: kept.truncated, data: kept.items }
}
