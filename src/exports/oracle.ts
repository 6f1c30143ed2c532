/**
 * `compute-exchange/oracle`: the price-index oracle's services for a program that embeds them (README, "Use it from
 * your own Effect program"). `OracleReadsLive` needs a SqlClient (`pgClientLayer`, or `DatabaseLive` from
 * DATABASE_URL with the migrations applied) and reads the configuration like the service does; it serves what the
 * service's scans and chain sync stored in that database, without a chain client or a schedule.
 */
export { OracleLive, OracleReadsLive } from "../../layers/Oracle.ts"
export { DatabaseLive } from "../../layers/Database.ts"
export { type RangeQuery, OracleReads } from "../../services/oracle/OracleReads.ts"
export { OracleSnapshot } from "../../services/oracle/OracleSnapshot.ts"
export { type OracleHealth, SyncHealth } from "../../services/oracle/SyncHealth.ts"
export { CatalogRepository } from "../../services/oracle/CatalogRepository.ts"
export { PriceScan } from "../../services/oracle/PriceScan.ts"
export { AppConfig } from "../../services/platform/AppConfig.ts"
export { pgClientLayer } from "../../services/platform/Database.ts"
export { runMigrations as migrate } from "../../services/platform/Migrations.ts"
export * as OracleSchemas from "../../domain/oracle/schemas.ts"
