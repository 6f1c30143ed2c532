/**
 * Views over the reconstitution log: the log itself, the activity feed and the aggregate statistics.
 */
import type { ConfirmedRevision, LogInput, OracleInputs } from "./inputs.ts"
import { latestRevision } from "./inputs.ts"
import { indexNumber, iso, num } from "./numbers.ts"
import type { ActivityEvent, ReconstitutionLog, StatsResponse } from "./schemas.ts"

export const reconstitutionsView = (log: ReadonlyArray<LogInput>): ReconstitutionLog => ({
  entries: log.map((entry) => ({
    id: entry.id,
    revisionVersion: entry.revisionVersion,
    previousVersion: entry.previousVersion,
    publishedAt: iso(entry.publishedAt),
    methodologyVersion: entry.methodologyVersion,
    summary: entry.summary,
    scuBefore: entry.scuBeforeUsd18 === null ? null : num(entry.scuBeforeUsd18),
    scuAfter: num(entry.scuAfterUsd18),
    changes: entry.changes.map((c) => ({ type: c.type, modelKey: c.modelKey, description: c.description })),
    txHash: entry.txHash
  }))
})

/** Aggregate protocol statistics (`/v1/oracle/stats`, shape designed here; see docs/decisions.md). */
export const statsView = (inputs: OracleInputs, log: ReadonlyArray<LogInput>): StatsResponse => {
  const revisions = inputs.revisions
  const first = revisions[0]
  const latest = latestRevision(inputs)
  const everInBasket = new Set(revisions.flatMap((r) => (r.manifest?.models ?? []).map((m) => m.modelKey)))
  let low: ConfirmedRevision | undefined
  let high: ConfirmedRevision | undefined
  for (const r of revisions) {
    if (low === undefined || r.scuUsd18 < low.scuUsd18) low = r
    if (high === undefined || r.scuUsd18 > high.scuUsd18) high = r
  }
  const byType = { ModelAdded: 0, ModelRemoved: 0, PriceChanged: 0 }
  for (const entry of log) for (const change of entry.changes) byType[change.type]++
  const extreme = (r: ConfirmedRevision | undefined) =>
    r === undefined ? null : { scuUsd: num(r.scuUsd18), revisionVersion: r.revisionVersion, publishedAt: iso(r.publishedAt) }
  return {
    revisions: {
      confirmed: revisions.length,
      genesis: first === undefined ? null : { revisionVersion: first.revisionVersion, publishedAt: iso(first.publishedAt) },
      latest: latest === undefined ? null : { revisionVersion: latest.revisionVersion, publishedAt: iso(latest.publishedAt) }
    },
    basketSize: latest?.manifest?.models.length ?? 0,
    catalog: {
      providers: new Set(inputs.catalog.map((l) => l.card.providerKey)).size,
      families: new Set(inputs.catalog.map((l) => l.card.family)).size,
      models: inputs.catalog.length,
      modelsEverInBasket: everInBasket.size
    },
    scu: {
      currentUsd: latest === undefined ? null : num(latest.scuUsd18),
      baselineUsd: first === undefined ? null : num(first.scuUsd18),
      computeIndex: latest === undefined || first === undefined ? null : indexNumber(first.scuUsd18, latest.scuUsd18),
      lowest: extreme(low),
      highest: extreme(high)
    },
    reconstitutionChanges: byType,
    generatedAt: iso(inputs.now)
  }
}

const changeEventType = { ModelAdded: "model.added", ModelRemoved: "model.removed", PriceChanged: "price.changed" } as const

/** Every protocol event, newest first: each revision's publication, then its change items. */
export const activityEvents = (log: ReadonlyArray<LogInput>): ReadonlyArray<ActivityEvent> =>
  [...log].reverse().flatMap((entry) => [
    {
      id: `r${entry.revisionVersion}`,
      type: "revision.published" as const,
      occurredAt: iso(entry.publishedAt),
      revisionVersion: entry.revisionVersion,
      modelKey: null,
      description: `Revision ${entry.revisionVersion} published: ${entry.summary}`,
      txHash: entry.txHash
    },
    ...entry.changes.map((change, i) => ({
      id: `r${entry.revisionVersion}.${i + 1}`,
      type: changeEventType[change.type],
      occurredAt: iso(entry.publishedAt),
      revisionVersion: entry.revisionVersion,
      modelKey: change.modelKey,
      description: change.description,
      txHash: entry.txHash
    }))
  ])
