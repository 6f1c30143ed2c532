/**
 * The price scan: reads every card source, records in one transaction what changed, and works out the basket
 * the next revision should carry, with the reason for every change. A source that is unreachable or invalid is
 * reported and skipped: its provider's prices stay as they were. One scan runs at a time across replicas (the
 * price-scan job's lock), whoever asks for it.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import type { PriceCard } from "../../domain/catalog/card.ts"
import type { BasketProposal } from "../../domain/catalog/governance.ts"
import { Usd18FromNumericString } from "../../domain/money.ts"
import { Jobs } from "../platform/Jobs.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { BasketGovernance } from "./BasketGovernance.ts"
import { CardSources, type SourceOutcome } from "./CardSources.ts"
import { type CatalogChange, CatalogRepository } from "./CatalogRepository.ts"
import { OracleChangeFeed } from "./OracleChangeFeed.ts"

const ScanTrigger = Schema.Literal("schedule", "cli", "boot", "admin", "test")
export type ScanTrigger = typeof ScanTrigger.Type
const ScanOutcome = Schema.Literal("succeeded", "partial", "failed")

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
  readonly outcome: typeof ScanOutcome.Type
  readonly sources: ReadonlyArray<SourceReport>
  readonly decisions: SourceReport
  readonly changes: ReadonlyArray<CatalogChange>
  readonly basket: BasketProposal
}

export const PRICE_SCAN_JOB = "price-scan"

/** A basket member as `price_scans.basket` stores it (JSON: prices as usd18 digits, dates as ISO text). */
const StoredMember = Schema.Struct({
  family: Schema.String,
  modelKey: Schema.String,
  displayName: Schema.String,
  providerKey: Schema.String,
  sdkId: Schema.String,
  inputPrice18: Usd18FromNumericString,
  outputPrice18: Usd18FromNumericString,
  priceFrom: Schema.Date
})
const StoredBasket = Schema.Struct({ asOf: Schema.Date, members: Schema.Array(StoredMember) })

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
    const jobs = yield* Jobs

    const latestBasketBefore = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ basket: StoredBasket }),
      execute: (scanId) => sql`
        SELECT basket FROM price_scans WHERE id < ${scanId} AND basket IS NOT NULL ORDER BY id DESC LIMIT 1`
    })

    /** The basket stored with the latest scan before `scanId` (none before the first). */
    const previousBasket = (scanId: string) =>
      latestBasketBefore(scanId).pipe(
        Effect.map(Option.match({ onNone: () => [], onSome: (row) => row.basket.members })),
        orDieAtRepository
      )

    // A scan's stamps come from Clock, like the rest of its times (the basket's asOf).
    const startScan = SqlSchema.single({
      Request: Schema.Struct({ trigger: ScanTrigger, startedAt: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String, startedAt: Schema.DateFromSelf }),
      execute: ({ startedAt, trigger }) => sql`INSERT INTO price_scans ${sql.insert({ trigger, startedAt })} RETURNING id, started_at`
    })

    const finishScan = SqlSchema.single({
      Request: Schema.Struct({
        id: Schema.String,
        outcome: ScanOutcome,
        sources: Schema.String,
        changes: Schema.String,
        basket: Schema.parseJson(StoredBasket),
        finishedAt: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ finishedAt: Schema.DateFromSelf }),
      execute: (row) => sql`
        UPDATE price_scans SET finished_at = ${row.finishedAt}::timestamptz, outcome = ${row.outcome}, sources = ${row.sources}::jsonb,
          changes = ${row.changes}::jsonb, basket = ${row.basket}::jsonb
        WHERE id = ${row.id} RETURNING finished_at`
    })

    /** Reads, records and governs; returns the full report. Only ever run under the price-scan job's lock. */
    const scanOnce = (trigger: ScanTrigger) =>
      Effect.gen(function* () {
        const scan = yield* orDieAtRepository(startScan({ trigger, startedAt: new Date(yield* Clock.currentTimeMillis) }))
        const scanId = scan.id
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
          .pipe(orDieAtRepository)

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

        const finished = yield* orDieAtRepository(
          finishScan({
            id: scanId,
            outcome,
            sources: JSON.stringify([...sourceReports, decisionsReport]),
            changes: JSON.stringify(changes),
            basket: { asOf, members: basket.members },
            finishedAt: new Date(yield* Clock.currentTimeMillis)
          })
        )

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
          startedAt: scan.startedAt,
          finishedAt: finished.finishedAt,
          outcome,
          sources: sourceReports,
          decisions: decisionsReport,
          changes,
          basket
        } satisfies ScanReport
      })

    const summarize = (report: ScanReport) =>
      `${report.outcome}: ${report.changes.length} catalog changes, ${report.basket.changes.length} basket changes`

    /** A scan unless one is running here or on another replica: None when skipped (the schedule looks again later). */
    const runIfIdle = Effect.fn("PriceScan.runIfIdle")(function* (trigger: ScanTrigger) {
      return yield* jobs.runExclusive(PRICE_SCAN_JOB, scanOnce(trigger), summarize)
    })

    /** A scan someone asked for (a maintainer, the CLI, a test): refused with 409 conflict while one is running. */
    const run = Effect.fn("PriceScan.run")(function* (trigger: ScanTrigger) {
      return yield* jobs.runOrRefuse(PRICE_SCAN_JOB, scanOnce(trigger), summarize)
    })

    const latestScan = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.String }),
      execute: () => sql`SELECT id FROM price_scans ORDER BY id DESC LIMIT 1`
    })

    /** The basket the catalog supports right now, against the last scan's. */
    const currentBasket = Effect.gen(function* () {
      const last = yield* orDieAtRepository(latestScan(undefined))
      const previous = Option.isNone(last) ? [] : yield* previousBasket(String(BigInt(last.value.id) + 1n))
      return yield* governance.propose(new Date(yield* Clock.currentTimeMillis), previous, { _tag: "Scans", upToScan: null })
    }).pipe(Effect.withSpan("PriceScan.currentBasket"))

    return { run, runIfIdle, currentBasket } as const
  }),
  dependencies: [CatalogRepository.Default, CardSources.Default, BasketGovernance.Default, OracleChangeFeed.Default, Jobs.Default]
}) {}
