/**
 * The read side of the public oracle: an in-memory snapshot of confirmed revisions and the live catalog, with the
 * hot responses pre-serialized. It is rebuilt on the first read after any writer bumped the change feed (a revision
 * confirmed, a scan finished, a sync ran), and every few seconds from the database so replicas converge; requests
 * never recompute it.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, Option, Ref, Schema } from "effect"
import * as Fs from "node:fs"
import { parse as parseYaml } from "yaml"
import { checkMethodologies, type MethodologyRecord } from "../../domain/oracle/methodology.ts"
import type { ConfirmedRevision, LogInput, OracleInputs } from "../../domain/oracle/inputs.ts"
import { activityEvents, reconstitutionsView, statsView } from "../../domain/oracle/log.ts"
import { buildLookups, type OracleLookups } from "../../domain/oracle/lookups.ts"
import { historyCsv, reconstitutionsMarkdown } from "../../domain/oracle/render.ts"
import * as S from "../../domain/oracle/schemas.ts"
import { historyView } from "../../domain/oracle/series.ts"
import { basketView, baselineView, catalogView, latestView, modelsView, pricingView, scuView, type SyncState } from "../../domain/oracle/views.ts"
import { parseUsd18, type Usd18 } from "../../domain/money.ts"
import { makeRoutableCatalog, type RoutableCatalog } from "../../domain/exchange/routing.ts"
import { Providers } from "../exchange/Providers.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"
import { CatalogRepository } from "./CatalogRepository.ts"
import { OracleChangeFeed } from "./OracleChangeFeed.ts"
import { RevisionRepository } from "./RevisionRepository.ts"
import { SyncHealth } from "./SyncHealth.ts"
import { recordIndexState } from "../platform/metrics.ts"

const utf8 = new TextEncoder()

/** Encoded through its schema, serialized and turned into bytes once per rebuild, not per request. */
const encodeJson = <A, I>(schema: Schema.Schema<A, I>, value: A): Uint8Array => utf8.encode(JSON.stringify(Schema.encodeSync(schema)(value)))

/** Pre-serialized response bodies, by name (src/http/hotReads.ts maps paths to them). */
export interface SnapshotBodies {
  /** Absent when there is no confirmed revision (the endpoint answers 204). */
  readonly scu: Uint8Array | undefined
  readonly basket: Uint8Array | undefined
  readonly latest: Uint8Array | undefined
  readonly baseline: Uint8Array | undefined
  readonly models: Uint8Array
  readonly catalog: Uint8Array
  readonly pricing: Uint8Array
  readonly reconstitutions: Uint8Array
  readonly reconstitutionsMarkdown: Uint8Array
  readonly methodology: Uint8Array
  readonly historyDefault: Uint8Array
  readonly historyDailyDefault: Uint8Array
  readonly historyDailyCsvDefault: Uint8Array
  readonly stats: Uint8Array
}

export type BodyName = keyof SnapshotBodies

export interface Snapshot {
  readonly version: number
  readonly builtAt: Date
  readonly inputs: OracleInputs
  readonly log: ReadonlyArray<LogInput>
  /** The chain sync's state when the snapshot was built (staleness is judged per request). */
  readonly sync: SyncState
  /** The methodology in force now: the latest revision's, or the newest record before any revision. */
  readonly methodologyVersion: number
  readonly methodologies: ReadonlyArray<MethodologyRecord>
  readonly revisionsByVersion: ReadonlyMap<number, ConfirmedRevision>
  readonly manifestsByHash: ReadonlyMap<string, string>
  /** Key, tracked-model and name lookups, built with the snapshot. */
  readonly lookups: OracleLookups
  /** The exchange's routable catalog (models served by a configured provider), built with the snapshot. */
  readonly routableCatalog: RoutableCatalog
  /** The SCU now as a value (its encoded body is `bodies.scu`); absent before the first confirmed revision. */
  readonly scu: S.ScuResponse | undefined
  /** The catalog and the billed prices as values (their encoded bodies are `bodies.catalog` and `bodies.pricing`). */
  readonly catalog: S.CatalogResponse
  readonly pricing: S.PricingResponse
  readonly bodies: SnapshotBodies
  readonly activity: ReadonlyArray<S.ActivityEvent>
}

const HISTORY_LIMIT = 10_000

export class OracleSnapshot extends Effect.Service<OracleSnapshot>()("OracleSnapshot", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const catalog = yield* CatalogRepository
    const revisions = yield* RevisionRepository
    const syncHealth = yield* SyncHealth
    const feed = yield* OracleChangeFeed
    const upstreams = yield* Providers
    // Validated by AppConfig (a positive decimal); kept as text there so the configuration stays printable.
    const pegUsd18 = parseUsd18((yield* AppConfig).exchange.creditPegUsd)

    // Methodology records are part of the product, not of an operator's price cards: always the bundled file.
    const methodologyFile = new URL("../../data/methodology.yaml", import.meta.url).pathname
    const methodologies = yield* Effect.try(() =>
      checkMethodologies(methodologyFile, parseYaml(Fs.readFileSync(methodologyFile, "utf8"), { schema: "failsafe" }))
    ).pipe(
      Effect.flatMap((result) => (result._tag === "Right" ? Effect.succeed(result.right) : Effect.fail(new Error(result.left)))),
      Effect.orDie
    )

    const build = (version: number) =>
      Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        const stored = yield* revisions.confirmed
        const confirmed: Array<ConfirmedRevision> = stored.map((r) => ({
          revisionVersion: r.revisionVersion,
          methodologyVersion: r.methodologyVersion,
          scuUsd18: r.scuUsd18 as Usd18,
          contentHash: r.contentHash,
          metadataHash: r.metadataHash,
          manifest: Option.getOrNull(r.manifest),
          publishedAt: r.publishedAt!,
          publishedBlock: r.publishedBlock ?? 0n,
          confirmedAt: r.confirmedAt!,
          txHash: r.txHash!
        }))
        const listings = (yield* catalog.catalogNow(now)).map(({ card, price }) => ({ card, price }))
        const providers = yield* catalog.providers
        const log: ReadonlyArray<LogInput> = yield* revisions.log
        const { stale: _, ...sync } = yield* syncHealth.health
        const histories = new Map(
          (yield* catalog.modelsWithHistory)
            .filter((m) => m.deletedAt === null)
            .map((m) => [m.card.id, { family: m.card.family, prices: m.prices }] as const)
        )
        const routableCatalog = makeRoutableCatalog(listings, providers.map((p) => p.vendorSlug), upstreams.providers, now, upstreams.traits)
        const inputs: OracleInputs = {
          revisions: confirmed,
          catalog: listings,
          providers,
          pegUsd18: pegUsd18,
          // What the exchange can route (the catalog's `integrated` flag): text models of configured providers.
          routable: new Set([...routableCatalog.models.keys(), ...routableCatalog.embeddings.keys()]),
          now
        }
        const latest = confirmed[confirmed.length - 1]
        recordIndexState({ latestRevision: latest?.revisionVersion, publishedAt: latest?.publishedAt, lastSyncAt: sync.lastSyncAt })
        const methodologyVersion = latest?.methodologyVersion ?? methodologies[methodologies.length - 1]!.version
        const scu = scuView(inputs)
        const basket = basketView(inputs)
        const latestBody = latestView(inputs)
        const baseline = baselineView(inputs)
        const daily = historyView(inputs, { granularity: "daily", from: null, to: null, limit: HISTORY_LIMIT })
        const models = modelsView(inputs)
        const catalogNow = catalogView(inputs, new Map([...histories].map(([key, h]) => [key, h.prices])))
        const pricing = pricingView(inputs)
        return {
          version,
          builtAt: now,
          inputs,
          log,
          sync,
          methodologyVersion,
          methodologies,
          revisionsByVersion: new Map(confirmed.map((r) => [r.revisionVersion, r])),
          manifestsByHash: new Map(
            stored.flatMap((r) => (Option.isSome(r.manifestJcs) ? [[r.metadataHash, r.manifestJcs.value] as const] : []))
          ),
          lookups: buildLookups(inputs, models.models, histories),
          routableCatalog,
          scu,
          catalog: catalogNow,
          pricing,
          bodies: {
            scu: scu === undefined ? undefined : encodeJson(S.ScuResponse, scu),
            basket: basket === undefined ? undefined : encodeJson(S.BasketResponse, basket),
            latest: latestBody === undefined ? undefined : encodeJson(S.LatestResponse, latestBody),
            baseline: baseline === undefined ? undefined : encodeJson(S.BaselineResponse, baseline),
            models: encodeJson(S.ModelsResponse, models),
            catalog: encodeJson(S.CatalogResponse, catalogNow),
            pricing: encodeJson(S.PricingResponse, pricing),
            reconstitutions: encodeJson(S.ReconstitutionLog, reconstitutionsView(log)),
            reconstitutionsMarkdown: utf8.encode(reconstitutionsMarkdown(log, now)),
            methodology: encodeJson(S.MethodologyChangelog, { activeVersion: methodologyVersion, entries: methodologies }),
            historyDefault: encodeJson(
              S.HistoryResponse,
              historyView(inputs, { granularity: "per-revision", from: null, to: null, limit: HISTORY_LIMIT })
            ),
            historyDailyDefault: encodeJson(S.HistoryResponse, daily),
            historyDailyCsvDefault: utf8.encode(historyCsv(daily)),
            stats: encodeJson(S.StatsResponse, statsView(inputs, log))
          },
          activity: activityEvents(log)
        } satisfies Snapshot
      })

    const state = yield* Ref.make<Snapshot | undefined>(undefined)
    // The same snapshot, readable without running an effect (the fast path reads it on every hot request).
    let latest: Snapshot | undefined
    const lock = yield* Effect.makeSemaphore(1)

    /** The snapshot for the current change version, rebuilding it first when a writer has changed the data. */
    const current: Effect.Effect<Snapshot> = Effect.gen(function* () {
      const wanted = yield* feed.version
      const held = yield* Ref.get(state)
      if (held !== undefined && held.version === wanted) return held
      return yield* lock.withPermits(1)(
        Effect.gen(function* () {
          const again = yield* Ref.get(state)
          const version = yield* feed.version
          if (again !== undefined && again.version === version) return again
          const built = yield* build(version)
          yield* Ref.set(state, built)
          latest = built
          return built
        })
      )
    })

    // Other replicas write to the same database: notice their changes (and the time passing for `stale`).
    const fingerprint = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ f: Schema.String }),
      execute: () => sql`
      SELECT concat_ws('|',
        (SELECT count(*) FROM revisions WHERE status = 'CONFIRMED'),
        (SELECT max(updated_at) FROM revisions),
        (SELECT max(id) FROM price_scans WHERE finished_at IS NOT NULL),
        (SELECT last_sync_at FROM chain_sync WHERE id = 1),
        (SELECT last_error_at FROM chain_sync WHERE id = 1)) AS f`
    })(undefined).pipe(
      Effect.map((row) => row.f),
      orDieAtRepository
    )
    const lastFingerprint = yield* Ref.make("")
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* Effect.sleep(Duration.seconds(5))
          const seen = yield* fingerprint
          if (seen !== (yield* Ref.getAndSet(lastFingerprint, seen))) yield* feed.bump
        }).pipe(Effect.catchAllCause(() => Effect.void))
      )
    )

    /** The held snapshot when it is current, without waiting (for the fast path); undefined when it must be rebuilt. */
    const peek = (): Snapshot | undefined => (latest !== undefined && latest.version === feed.versionNow() ? latest : undefined)

    return { current, peek } as const
  })
}) {}
