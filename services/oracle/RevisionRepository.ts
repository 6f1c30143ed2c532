/**
 * Revisions in PostgreSQL: drafts on their way to the chain, the confirmed ones every reader sees, the
 * reconstitution log, and what the chain sync last saw.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { Manifest } from "../../domain/index/manifest.ts"
import type { ReconstitutionChange, RevisionDraft } from "../../domain/index/revision.ts"
import type { LogInput } from "../../domain/oracle/views.ts"
import { orDieUnlessUnavailable } from "../platform/Database.ts"

export type RevisionStatus = "PENDING" | "BROADCAST" | "CONFIRMED" | "DISCARDED"

export interface StoredRevision {
  readonly id: string
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly scuUsd18: bigint
  readonly contentHash: `0x${string}`
  readonly metadataHash: `0x${string}`
  /** Absent for a revision the chain sync found on chain without its manifest. */
  readonly manifest: Option.Option<Manifest>
  readonly manifestJcs: Option.Option<string>
  readonly changes: ReadonlyArray<ReconstitutionChange>
  readonly summary: string
  readonly status: RevisionStatus
  readonly requiresApproval: boolean
  readonly intendedAt: Date | null
  readonly txHash: `0x${string}` | null
  readonly broadcastAt: Date | null
  readonly publishedBlock: bigint | null
  readonly publishedAt: Date | null
  readonly confirmedAt: Date | null
  readonly failureReason: string | null
  readonly failureMessage: string | null
  readonly createdAt: Date
}

interface RevisionRow {
  readonly id: string
  readonly revisionVersion: number
  readonly methodologyVersion: number
  readonly scuUsd18: string
  readonly contentHash: `0x${string}`
  readonly metadataHash: `0x${string}`
  readonly manifestJcs: string | null
  readonly basketChanges: ReadonlyArray<ReconstitutionChange>
  readonly summary: string
  readonly status: RevisionStatus
  readonly requiresApproval: boolean
  readonly intendedAt: Date | null
  readonly txHash: `0x${string}` | null
  readonly broadcastAt: Date | null
  readonly publishedBlock: string | null
  readonly publishedAt: Date | null
  readonly confirmedAt: Date | null
  readonly failureReason: string | null
  readonly failureMessage: string | null
  readonly createdAt: Date
}

const fromRow = (row: RevisionRow): StoredRevision => ({
  ...row,
  scuUsd18: BigInt(row.scuUsd18),
  manifest: Option.map(Option.fromNullable(row.manifestJcs), (text) => JSON.parse(text) as Manifest),
  manifestJcs: Option.fromNullable(row.manifestJcs),
  changes: row.basketChanges,
  publishedBlock: row.publishedBlock === null ? null : BigInt(row.publishedBlock)
})

/** A reconstitution-log entry as the oracle publishes it. */
export type LogEntry = LogInput

export interface ChainSyncState {
  readonly chainId: number
  readonly registryAddress: string
  readonly lastSyncAt: Date | null
  readonly lastBlock: bigint | null
  readonly lastRevisionVersion: number | null
  readonly lastError: string | null
  readonly lastErrorAt: Date | null
}

export class RevisionRepository extends Effect.Service<RevisionRepository>()("RevisionRepository", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const select = sql`SELECT * FROM revisions`

    const confirmed = sql<RevisionRow>`${select} WHERE status = 'CONFIRMED' ORDER BY revision_version`.pipe(
      Effect.map((rows) => rows.map(fromRow)),
      orDieUnlessUnavailable
    )

    const latestConfirmed = sql<RevisionRow>`
      ${select} WHERE status = 'CONFIRMED' ORDER BY revision_version DESC LIMIT 1`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow)),
      orDieUnlessUnavailable
    )

    /** The revision on its way to the chain (PENDING or BROADCAST), if any: there is at most one. */
    const inFlight = sql<RevisionRow>`
      ${select} WHERE status IN ('PENDING', 'BROADCAST') ORDER BY revision_version LIMIT 1`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow)),
      orDieUnlessUnavailable
    )

    const byVersion = (revisionVersion: number) =>
      sql<RevisionRow>`${select} WHERE revision_version = ${revisionVersion} AND status <> 'DISCARDED'`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), fromRow)),
        orDieUnlessUnavailable
      )

    const lastVersion = sql<{ v: number | null }>`
      SELECT max(revision_version) AS v FROM revisions WHERE status <> 'DISCARDED'`.pipe(
      Effect.map((rows) => rows[0]?.v ?? 0),
      orDieUnlessUnavailable
    )

    const insertDraft = (
      draft: RevisionDraft,
      options: { readonly requiresApproval: boolean; readonly intendedAt: Date | null }
    ) =>
      sql<RevisionRow>`INSERT INTO revisions ${sql.insert({
        revisionVersion: draft.revisionVersion,
        methodologyVersion: draft.methodologyVersion,
        scuUsd18: draft.scu18.toString(),
        contentHash: draft.contentHash,
        metadataHash: draft.metadataHash,
        manifestJcs: draft.manifestJcs,
        basketChanges: JSON.stringify(draft.changes),
        summary: draft.summary,
        status: "PENDING",
        requiresApproval: options.requiresApproval,
        intendedAt: options.intendedAt
      })} RETURNING *`.pipe(
        Effect.map((rows) => fromRow(rows[0]!)),
        orDieUnlessUnavailable
      )

    const markApproved = (id: string) =>
      sql`UPDATE revisions SET approved_at = now(), updated_at = now() WHERE id = ${id}`.pipe(orDieUnlessUnavailable)

    const markBroadcast = (id: string, txHash: string) =>
      sql`UPDATE revisions SET status = 'BROADCAST', tx_hash = ${txHash}, broadcast_at = now(),
            failure_reason = NULL, failure_message = NULL, updated_at = now() WHERE id = ${id}`.pipe(orDieUnlessUnavailable)

    const markFailure = (id: string, reason: string, message: string) =>
      sql`UPDATE revisions SET failure_reason = ${reason}, failure_message = ${message}, updated_at = now()
          WHERE id = ${id}`.pipe(orDieUnlessUnavailable)

    const markDiscarded = (id: string, message: string) =>
      sql`UPDATE revisions SET status = 'DISCARDED', failure_message = ${message}, updated_at = now()
          WHERE id = ${id} AND status = 'PENDING'`.pipe(orDieUnlessUnavailable)

    /** CONFIRMED, with its reconstitution-log entry, in one transaction. */
    const markConfirmed = (
      revision: StoredRevision,
      receipt: { readonly txHash: string; readonly blockNumber: bigint; readonly blockTimestamp: Date }
    ) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const [previous] = yield* sql<{ revisionVersion: number; scuUsd18: string }>`
              SELECT revision_version, scu_usd18 FROM revisions
              WHERE status = 'CONFIRMED' AND revision_version < ${revision.revisionVersion}
              ORDER BY revision_version DESC LIMIT 1`
            yield* sql`UPDATE revisions SET status = 'CONFIRMED', tx_hash = ${receipt.txHash},
                         published_block = ${receipt.blockNumber.toString()}, published_at = ${receipt.blockTimestamp},
                         confirmed_at = now(), failure_reason = NULL, failure_message = NULL, updated_at = now()
                       WHERE id = ${revision.id}`
            yield* sql`INSERT INTO reconstitution_log ${sql.insert({
              revisionVersion: revision.revisionVersion,
              previousVersion: previous?.revisionVersion ?? null,
              publishedAt: receipt.blockTimestamp,
              methodologyVersion: revision.methodologyVersion,
              summary: revision.summary,
              scuBeforeUsd18: previous?.scuUsd18 ?? null,
              scuAfterUsd18: revision.scuUsd18.toString(),
              changes: JSON.stringify(revision.changes),
              txHash: receipt.txHash
            })}`
          })
        )
        .pipe(orDieUnlessUnavailable)

    /** A revision the chain holds that this database never drafted (its manifest is unavailable). */
    const recordFromChain = (header: {
      readonly revisionVersion: number
      readonly methodologyVersion: number
      readonly scuUsd18: bigint
      readonly contentHash: string
      readonly metadataHash: string
      readonly publishedAt: Date
      readonly txHash: string
      readonly blockNumber: bigint
    }) =>
      sql`INSERT INTO revisions ${sql.insert({
        revisionVersion: header.revisionVersion,
        methodologyVersion: header.methodologyVersion,
        scuUsd18: header.scuUsd18.toString(),
        contentHash: header.contentHash,
        metadataHash: header.metadataHash,
        manifestJcs: null,
        summary: "recorded from the chain; manifest unavailable",
        status: "CONFIRMED",
        txHash: header.txHash,
        publishedBlock: header.blockNumber.toString(),
        publishedAt: header.publishedAt,
        confirmedAt: new Date()
      })}`.pipe(orDieUnlessUnavailable)

    const log = sql<{
      id: string
      revisionVersion: number
      previousVersion: number | null
      publishedAt: Date
      methodologyVersion: number
      summary: string
      scuBeforeUsd18: string | null
      scuAfterUsd18: string
      changes: ReadonlyArray<ReconstitutionChange>
      txHash: `0x${string}`
    }>`SELECT * FROM reconstitution_log ORDER BY revision_version`.pipe(
      Effect.map((rows) =>
        rows.map(
          (row): LogEntry => ({
            ...row,
            id: String(row.id),
            scuBeforeUsd18: row.scuBeforeUsd18 === null ? null : BigInt(row.scuBeforeUsd18),
            scuAfterUsd18: BigInt(row.scuAfterUsd18)
          })
        )
      ),
      orDieUnlessUnavailable
    )

    const syncState = sql<{
      chainId: number
      registryAddress: string
      lastSyncAt: Date | null
      lastBlock: string | null
      lastRevisionVersion: number | null
      lastError: string | null
      lastErrorAt: Date | null
    }>`SELECT * FROM chain_sync WHERE id = 1`.pipe(
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (row): ChainSyncState => ({
          ...row,
          lastBlock: row.lastBlock === null ? null : BigInt(row.lastBlock)
        }))
      ),
      orDieUnlessUnavailable
    )

    const recordSync = (state: { chainId: number; registryAddress: string; lastBlock: bigint; lastRevisionVersion: number }) =>
      sql`INSERT INTO chain_sync (id, chain_id, registry_address, last_sync_at, last_block, last_revision_version)
          VALUES (1, ${state.chainId}, ${state.registryAddress}, now(), ${state.lastBlock.toString()}, ${state.lastRevisionVersion})
          ON CONFLICT (id) DO UPDATE SET chain_id = excluded.chain_id, registry_address = excluded.registry_address,
            last_sync_at = excluded.last_sync_at, last_block = excluded.last_block,
            last_revision_version = excluded.last_revision_version, last_error = NULL, last_error_at = NULL`.pipe(
        orDieUnlessUnavailable
      )

    const recordSyncError = (state: { chainId: number; registryAddress: string; message: string }) =>
      sql`INSERT INTO chain_sync (id, chain_id, registry_address, last_error, last_error_at)
          VALUES (1, ${state.chainId}, ${state.registryAddress}, ${state.message}, now())
          ON CONFLICT (id) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at`.pipe(
        orDieUnlessUnavailable
      )

    const recordDeployment = (deployment: {
      chainId: number
      registryAddress: string
      implementationAddress: string | null
      deployedBlock: bigint | null
    }) =>
      sql`INSERT INTO chain_deployments ${sql.insert({
        ...deployment,
        deployedBlock: deployment.deployedBlock?.toString() ?? null
      })} ON CONFLICT DO NOTHING`.pipe(orDieUnlessUnavailable)

    return {
      confirmed,
      latestConfirmed,
      inFlight,
      byVersion,
      lastVersion,
      insertDraft,
      markApproved,
      markBroadcast,
      markFailure,
      markDiscarded,
      markConfirmed,
      recordFromChain,
      log,
      syncState,
      recordSync,
      recordSyncError,
      recordDeployment
    } as const
  })
}) {}
