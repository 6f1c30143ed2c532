/**
 * The oracle's services over the database: the catalog, its sources, the scan, and its schedule.
 */
import { Layer } from "effect"
import { AppConfig } from "../services/platform/AppConfig.ts"
import { Jobs } from "../services/platform/Jobs.ts"
import { CatalogRepository } from "../services/oracle/CatalogRepository.ts"
import { PriceScan } from "../services/oracle/PriceScan.ts"
import { PriceScanSchedulerLive } from "../services/oracle/PriceScanScheduler.ts"

/** Catalog, scan and jobs, needing only a SqlClient. */
export const OracleLive = Layer.mergeAll(PriceScan.Default, CatalogRepository.Default, Jobs.Default).pipe(
  Layer.provideMerge(AppConfig.Default)
)

/** The same, plus the scheduled scan running in the background. */
export const OracleWithScheduleLive = PriceScanSchedulerLive.pipe(Layer.provideMerge(OracleLive))
