/**
 * The oracle's services: the catalog and its scan (database only), the anchoring of revisions (database and
 * chain), and the background schedule that drives both.
 */
import { Layer } from "effect"
import { BasketGovernance } from "../services/oracle/BasketGovernance.ts"
import { CatalogRepository } from "../services/oracle/CatalogRepository.ts"
import { ChainSync } from "../services/oracle/ChainSync.ts"
import { ContractMetadata } from "../services/oracle/ContractMetadata.ts"
import { OracleSnapshot } from "../services/oracle/OracleSnapshot.ts"
import { OracleChangeFeed } from "../services/oracle/OracleChangeFeed.ts"
import { HistoryReplay } from "../services/oracle/HistoryReplay.ts"
import { OracleReads } from "../services/oracle/OracleReads.ts"
import { OracleCycle, OracleSchedulerLive } from "../services/oracle/OracleScheduler.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { Providers } from "../services/exchange/Providers.ts"
import { Publisher } from "../services/oracle/Publisher.ts"
import { RevisionRepository } from "../services/oracle/RevisionRepository.ts"
import { SyncHealth } from "../services/oracle/SyncHealth.ts"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { ChainLive } from "./Chain.ts"
import { ChainForRolesLive, whenRole } from "./Roles.ts"

/** Catalog, scan, governance and jobs, needing only a SqlClient. */
export const OracleLive = Layer.mergeAll(
  PriceScan.Default,
  CatalogRepository.Default,
  BasketGovernance.Default,
  OracleChangeFeed.Default,
  Jobs.Default
).pipe(
  Layer.provideMerge(AppConfig.Default)
)

/** The revisions as PostgreSQL holds them, and the sync's health read from there: no chain client. */
const RevisionsLive = SyncHealth.Default.pipe(Layer.provideMerge(RevisionRepository.Default))

const PublisherLive = Publisher.Default.pipe(Layer.provideMerge(RevisionsLive))

/** Revisions on the chain: publication, sync, history replay; with the catalog services beneath. */
export const AnchoringLive = Layer.mergeAll(
  ChainSync.Default,
  OracleCycle.Default.pipe(Layer.provideMerge(HistoryReplay.Default)),
  ContractMetadata.Default
).pipe(
  Layer.provideMerge(PublisherLive),
  Layer.provideMerge(ChainLive),
  Layer.provideMerge(OracleLive)
)

/** AnchoringLive over the chain this replica's roles need (SERVICE_ROLES: none for the exchange alone). */
const AnchoringForRolesLive = Layer.mergeAll(
  ChainSync.Default,
  OracleCycle.Default.pipe(Layer.provideMerge(HistoryReplay.Default)),
  ContractMetadata.Default
).pipe(
  Layer.provideMerge(PublisherLive),
  Layer.provideMerge(ChainForRolesLive),
  Layer.provideMerge(OracleLive)
)

/**
 * Everything: the read snapshot, and the schedule running in the background on a replica that runs the jobs role
 * (SERVICE_ROLES); the snapshot reads PostgreSQL only and every replica keeps it (the exchange routes and bills by it).
 */
export const OracleWithScheduleLive = Layer.merge(whenRole("jobs", OracleSchedulerLive), OracleSnapshot.Default).pipe(
  // The exchange's providers (one instance: the exchange's layer names the same Providers.Default) mark what is routable.
  Layer.provideMerge(Providers.Default),
  Layer.provideMerge(AnchoringForRolesLive)
)

/**
 * The oracle's public reads (`OracleReads` over the snapshot of the catalog and the revisions) and the catalog's
 * services, without the chain or the schedule: what a program embedding the oracle provides with a SqlClient
 * (services/platform/Database.ts `pgClientLayer`, whose name transforms the repositories expect) and the
 * configuration. It reads what the service's scans and chain sync stored in that database.
 */
export const OracleReadsLive = OracleReads.Default.pipe(
  Layer.provideMerge(OracleSnapshot.Default),
  Layer.provideMerge(Providers.Default),
  Layer.provideMerge(RevisionsLive),
  Layer.provideMerge(OracleLive)
)
