/**
 * Every migration, statically imported so the same record works under tsx, vitest and a bundle.
 * Add a file `NNNN_name.ts` and one line here; ids only ever grow.
 *
 * Repeatable migrations (under repeatable/) are SQL texts applied after the numbered ones whenever their revision
 * rises: CREATE OR REPLACE definitions kept in one readable place (the ledger's functions).
 */
import foundation from "./0001_foundation.ts"
import catalog from "./0002_catalog.ts"
import revisions from "./0003_revisions.ts"
import identity from "./0004_identity.ts"
import ledger from "./0005_ledger.ts"
import apiKeys from "./0006_api_keys.ts"
import funding from "./0007_funding.ts"
import withdrawals from "./0008_withdrawals.ts"
import generations from "./0009_generations.ts"
import ledgerFunctions from "./0010_ledger_functions.ts"
import routing from "./0011_routing.ts"
import pointsReferrals from "./0012_points_referrals.ts"
import organizations from "./0013_organizations.ts"
import pools from "./0014_pools.ts"
import appGrants from "./0015_app_grants.ts"
import transfers from "./0016_transfers.ts"
import keyHolders from "./0017_key_holders.ts"
import generationLogs from "./0018_generation_logs.ts"
import settleBatch from "./0019_settle_batch.ts"
import priceSources from "./0020_price_sources.ts"
import storedResponses from "./0021_stored_responses.ts"
import embeddingModels from "./0022_embedding_models.ts"
import embeddingsFormat from "./0023_embeddings_format.ts"
import repeatableMigrations from "./0024_repeatable_migrations.ts"
import { ledgerFunctions as ledgerFunctionsInForce, ledgerRevision } from "./repeatable/ledger.ts"

export const migrations = {
  "0001_foundation": foundation,
  "0002_catalog": catalog,
  "0003_revisions": revisions,
  "0004_identity": identity,
  "0005_ledger": ledger,
  "0006_api_keys": apiKeys,
  "0007_funding": funding,
  "0008_withdrawals": withdrawals,
  "0009_generations": generations,
  "0010_ledger_functions": ledgerFunctions,
  "0011_routing": routing,
  "0012_points_referrals": pointsReferrals,
  "0013_organizations": organizations,
  "0014_pools": pools,
  "0015_app_grants": appGrants,
  "0016_transfers": transfers,
  "0017_key_holders": keyHolders,
  "0018_generation_logs": generationLogs,
  "0019_settle_batch": settleBatch,
  "0020_price_sources": priceSources,
  "0021_stored_responses": storedResponses,
  "0022_embedding_models": embeddingModels,
  "0023_embeddings_format": embeddingsFormat,
  "0024_repeatable_migrations": repeatableMigrations
}

/** Repeatable migrations by name, applied in this order. */
export const repeatable: ReadonlyArray<RepeatableMigration> = [{ name: "ledger", revision: ledgerRevision, sql: ledgerFunctionsInForce }]

export interface RepeatableMigration {
  readonly name: string
  /**
   * Raised with every change of the text: a database is given a text only over an older revision, so an older build
   * restarting during a rolling deploy does not put its older functions back.
   */
  readonly revision: number
  readonly sql: string
}
