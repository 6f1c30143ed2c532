/**
 * The price scan: reads every card source, records in one transaction what changed, and works out the basket
 * the next revision should carry, with the reason for every change. A source that is unreachable or invalid is
 * reported and skipped: its provider's prices stay as they were.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { PriceCard } from "../../domain/catalog/card.ts"
import type { BasketMember, BasketProposal } from "../../domain/catalog/governance.ts"
import type { Usd18 } from "../../domain/money.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"
import { BasketGovernance } from "./BasketGovernance.ts"
import { CardSources, type SourceOutcome } from "./CardSources.ts"
import { type CatalogChange, CatalogRepository } from "./CatalogRepository.ts"
import { OracleChangeFeed } from "./OracleChangeFeed.ts"

export type ScanTrigger = "schedule" | "cli" | "boot" | "admin" | "test"

export interface SourceReport {
  readonly source: string
  readonly status: "read" | "unreachable" | "invalid" | "superseded"
  readonly provider: string | null
  readonly models: number
  readonly problems: ReadonlyArray<string>
}

export interface ScanReport {
  readonly scanId: string
  readonly trigger: ScanTrigger
  readonly startedAt: Date
  readonly finishedAt: Date
  readonly outcome: "succeeded" | "partial" | "failed"
  readonly sources: ReadonlyArray<SourceReport>
  readonly decisions: SourceReport
  readonly changes: ReadonlyArray<CatalogChange>
  readonly basket: BasketProposal
}

interface StoredMember {
  readonly family: string
  readonly modelKey: string
  readonly displayName: string
  readonly providerKey: string
  readonly sdkId: string
  readonly inputPrice18: string
  readonly outputPrice18: string
  readonly priceFrom: string
}

const storeMember = (m: BasketMember): StoredMember => ({
  ...m,
  inputPrice18: m.inputPrice18.toString(),
  outputPrice18: m.outputPrice18.toString(),
  priceFrom: m.priceFrom.toISOString()
})

const loadMember = (m: StoredMember): BasketMember => ({
  ...m,
  inputPrice18: BigInt(m.inputPrice18) as Usd18,
  outputPrice18: BigInt(m.outputPrice18) as Usd18,
  priceFrom: new Date(m.priceFrom)
})

const reportOf = (outcome: SourceOutcome, superseded: ReadonlySet<SourceOutcome>): SourceReport => {
  switch (outcome._tag) {
    case "Read":
      return superseded.has(outcome)
        ? {
            source: outcome.source,
            status: "superseded",
            provider: outcome.card.provider.key,
            models: outcome.card.models.length,
            problems: [`provider ${outcome.card.provider.key} is also on a later source, which is used instead`]
          }
        : { source: outcome.source, status: "read", provider: outcome.card.provider.key, models: outcome.card.models.length, problems: [] }
    case "Unreachable":
      return { source: outcome.source, status: "unreachable", provider: null, models: 0, problems: [outcome.reason] }
    case "Invalid":
      return { source: outcome.source, status: "invalid", provider: null, models: 0, problems: outcome.problems }
  }
}

export class PriceScan extends Effect.Service<PriceScan>()("PriceScan", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const repository = yield* CatalogRepository
    const sources = yield* CardSources
    const governance = yield* BasketGovernance
    const feed = yield* OracleChangeFeed

    const previousBasket = (scanId: string) =>
      sql<{ basket: { members: ReadonlyArray<StoredMember> } }>`
        SELECT basket FROM price_scans WHERE id < ${scanId} AND basket IS NOT NULL ORDER BY id DESC LIMIT 1`.pipe(
        Effect.map((rows) => (rows[0]?.basket.members ?? []).map(loadMember)),
        orDieUnlessUnavailable
      )

    /** Reads, records and governs; returns the full report. Callers serialize runs through Jobs. */
    const run = (trigger: ScanTrigger) =>
      Effect.gen(function* () {
        const [scan] = yield* sql<{ id: string; startedAt: Date }>`
          INSERT INTO price_scans ${sql.insert({ trigger })} RETURNING id, started_at`.pipe(orDieUnlessUnavailable)
        const scanId = scan!.id
        yield* Effect.logInfo("price scan started").pipe(Effect.annotateLogs({ scanId, trigger }))

        const outcomes = yield* sources.readAll
        const decisionsOutcome = yield* sources.readDecisions

        // One provider, one card: when two sources carry the same provider, the later one (URLs come after
        // bundled files) is used and the earlier reported as superseded.
        const chosen = new Map<string, SourceOutcome & { _tag: "Read" }>()
        const superseded = new Set<SourceOutcome>()
        for (const outcome of outcomes) {
          if (outcome._tag !== "Read") continue
          const earlier = chosen.get(outcome.card.provider.key)
          if (earlier !== undefined) superseded.add(earlier)
          chosen.set(outcome.card.provider.key, outcome)
        }
        const cards: ReadonlyArray<PriceCard> = [...chosen.values()].map((outcome) => outcome.card)

        const changes = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const all: Array<CatalogChange> = []
              for (const card of cards) all.push(...(yield* repository.applyCard(card, scanId)))
              if (decisionsOutcome._tag === "Read") yield* repository.saveDecisions(decisionsOutcome.decisions)
              return all
            })
          )
          .pipe(orDieUnlessUnavailable)

        const asOf = new Date(yield* Clock.currentTimeMillis)
        const basket = yield* governance.propose(asOf, yield* previousBasket(scanId), { _tag: "Scans", upToScan: scanId })

        const sourceReports = outcomes.map((outcome) => reportOf(outcome, superseded))
        const decisionsReport: SourceReport =
          decisionsOutcome._tag === "Read"
            ? { source: decisionsOutcome.source, status: "read", provider: null, models: 0, problems: [] }
            : decisionsOutcome._tag === "Missing"
              ? { source: decisionsOutcome.source, status: "unreachable", provider: null, models: 0, problems: ["file not found"] }
              : { source: decisionsOutcome.source, status: "invalid", provider: null, models: 0, problems: decisionsOutcome.problems }
        const failed = [...sourceReports, decisionsReport].filter((r) => r.status === "unreachable" || r.status === "invalid")
        const outcome = cards.length === 0 ? "failed" : failed.length > 0 ? "partial" : "succeeded"

        const [finished] = yield* sql<{ finishedAt: Date }>`
          UPDATE price_scans SET finished_at = now(), outcome = ${outcome},
            sources = ${JSON.stringify([...sourceReports, decisionsReport])}::jsonb,
            changes = ${JSON.stringify(changes)}::jsonb,
            basket = ${JSON.stringify({ asOf: asOf.toISOString(), members: basket.members.map(storeMember) })}::jsonb
          WHERE id = ${scanId} RETURNING finished_at`.pipe(orDieUnlessUnavailable)

        for (const report of failed) {
          yield* Effect.logWarning(`price source ${report.status}; skipped`).pipe(
            Effect.annotateLogs({ source: report.source, problems: report.problems.join(" | ") })
          )
        }
        yield* Effect.logInfo("price scan finished").pipe(
          Effect.annotateLogs({
            scanId,
            outcome,
            sourcesRead: cards.length,
            sourcesFailed: failed.length,
            changes: changes.length,
            basketSize: basket.members.length,
            basketChanges: basket.changes.length
          })
        )
        yield* feed.bump
        return {
          scanId,
          trigger,
          startedAt: scan!.startedAt,
          finishedAt: finished!.finishedAt,
          outcome,
          sources: sourceReports,
          decisions: decisionsReport,
          changes,
          basket
        } satisfies ScanReport
      })

    /** The basket the catalog supports right now, against the last scan's. */
    const currentBasket = Effect.gen(function* () {
      const [last] = yield* sql<{ id: string }>`SELECT id FROM price_scans ORDER BY id DESC LIMIT 1`.pipe(orDieUnlessUnavailable)
      const previous = last === undefined ? [] : yield* previousBasket(String(BigInt(last.id) + 1n))
      return yield* governance.propose(new Date(yield* Clock.currentTimeMillis), previous, { _tag: "Scans", upToScan: null })
    })

    return { run, currentBasket } as const
  }),
  dependencies: [CatalogRepository.Default, CardSources.Default, BasketGovernance.Default, OracleChangeFeed.Default]
}) {}
