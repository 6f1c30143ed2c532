/**
 * Revisions in PostgreSQL: drafts on their way to the chain, the confirmed ones every reader sees, the
 * reconstitution log, and what the chain sync last saw. Every read is decoded through the row schemas below, so a
 * corrupt row (a manifest that is not one, a change of unknown type) is a defect, never a cast.
 */
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Clock, Effect, Option, ParseResult, Schema } from "effect"
import { Manifest } from "../../domain/index/manifest.ts"
import { ReconstitutionChange, type RevisionDraft } from "../../domain/index/revision.ts"
import { Usd18FromNumericString } from "../../domain/money.ts"
import type { LogInput } from "../../domain/oracle/inputs.ts"
import { orDieAtRepository } from "../platform/RepositoryBoundary.ts"

const RevisionStatus = Schema.Literal("PENDING", "BROADCAST", "CONFIRMED", "DISCARDED")
export type RevisionStatus = typeof RevisionStatus.Type

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

// Row schemas: every read below is decoded through them, so a corrupt row is a defect, never a cast.
const Hash = Schema.TemplateLiteral("0x", Schema.String).pipe(Schema.pattern(/^0x[0-9a-f]{64}$/))
const Timestamp = Schema.DateFromSelf
const NullableText = Schema.NullOr(Schema.String)

const ChangesRow = Schema.Array(ReconstitutionChange)

/** `manifest_jcs`: the canonical text as stored (served byte for byte) and the manifest it must parse to. */
const StoredManifest = Schema.transformOrFail(
  Schema.String,
  Schema.Struct({ jcs: Schema.String, manifest: Schema.typeSchema(Manifest) }),
  {
    strict: true,
    decode: (jcs) => ParseResult.map(ParseResult.decodeUnknown(Schema.parseJson(Manifest))(jcs), (manifest) => ({ jcs, manifest })),
    encode: ({ jcs }) => ParseResult.succeed(jcs)
  }
)

const RevisionRow = Schema.Struct({
  id: Schema.String,
  revisionVersion: Schema.Int,
  methodologyVersion: Schema.Int,
  scuUsd18: Usd18FromNumericString,
  contentHash: Hash,
  metadataHash: Hash,
  manifestJcs: Schema.NullOr(StoredManifest),
  basketChanges: ChangesRow,
  summary: Schema.String,
  status: RevisionStatus,
  requiresApproval: Schema.Boolean,
  intendedAt: Schema.NullOr(Timestamp),
  txHash: Schema.NullOr(Hash),
  broadcastAt: Schema.NullOr(Timestamp),
  publishedBlock: Schema.NullOr(Schema.BigInt),
  publishedAt: Schema.NullOr(Timestamp),
  confirmedAt: Schema.NullOr(Timestamp),
  failureReason: NullableText,
  failureMessage: NullableText,
  createdAt: Timestamp
})

const fromRow = ({ basketChanges, manifestJcs, ...row }: typeof RevisionRow.Type): StoredRevision => ({
  ...row,
  manifest: Option.map(Option.fromNullable(manifestJcs), (stored) => stored.manifest),
  manifestJcs: Option.map(Option.fromNullable(manifestJcs), (stored) => stored.jcs),
  changes: basketChanges
})

/** A new draft; `basket_changes` is written as its JSON text. */
const DraftInsert = Schema.Struct({
  revisionVersion: Schema.Int,
  methodologyVersion: Schema.Int,
  scuUsd18: Usd18FromNumericString,
  contentHash: Hash,
  metadataHash: Hash,
  manifestJcs: Schema.String,
  basketChanges: Schema.parseJson(ChangesRow),
  summary: Schema.String,
  status: Schema.Literal("PENDING"),
  requiresApproval: Schema.Boolean,
  intendedAt: Schema.NullOr(Timestamp)
})

const LogRow = Schema.Struct({
  id: Schema.String,
  revisionVersion: Schema.Int,
  previousVersion: Schema.NullOr(Schema.Int),
  publishedAt: Timestamp,
  methodologyVersion: Schema.Int,
  summary: Schema.String,
  scuBeforeUsd18: Schema.NullOr(Usd18FromNumericString),
  scuAfterUsd18: Usd18FromNumericString,
  changes: ChangesRow,
  txHash: Hash
})

const SyncRow = Schema.Struct({
  chainId: Schema.Int,
  registryAddress: Schema.String,
  lastSyncAt: Schema.NullOr(Timestamp),
  lastBlock: Schema.NullOr(Schema.BigInt),
  lastRevisionVersion: Schema.NullOr(Schema.Int),
  lastError: NullableText,
  lastErrorAt: Schema.NullOr(Timestamp)
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
    const revisions = (where: Statement.Fragment) =>
      SqlSchema.findAll({ Request: Schema.Void, Result: RevisionRow, execute: () => sql`${select} ${where}` })(undefined).pipe(
        Effect.map((rows) => rows.map(fromRow)),
        orDieAtRepository
      )
    const first = (where: Statement.Fragment) => Effect.map(revisions(where), (found) => Option.fromNullable(found[0]))

    const confirmed = revisions(sql`WHERE status = 'CONFIRMED' ORDER BY revision_version`)

    const latestConfirmed = first(sql`WHERE status = 'CONFIRMED' ORDER BY revision_version DESC LIMIT 1`)

    /** The revision on its way to the chain (PENDING or BROADCAST), if any: there is at most one. */
    const inFlight = first(sql`WHERE status IN ('PENDING', 'BROADCAST') ORDER BY revision_version LIMIT 1`)

    const byVersion = (revisionVersion: number) =>
      first(sql`WHERE revision_version = ${revisionVersion} AND status <> 'DISCARDED'`)

    const lastVersion = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ v: Schema.NullOr(Schema.Int) }),
      execute: () => sql`SELECT max(revision_version) AS v FROM revisions WHERE status <> 'DISCARDED'`
    })(undefined).pipe(
      Effect.map((row) => row.v ?? 0),
      orDieAtRepository
    )

    const insertDraftRow = SqlSchema.single({
      Request: DraftInsert,
      Result: RevisionRow,
      execute: (row) => sql`INSERT INTO revisions ${sql.insert(row)} RETURNING *`
    })

    const insertDraft = (
      draft: RevisionDraft,
      options: { readonly requiresApproval: boolean; readonly intendedAt: Date | null }
    ) =>
      insertDraftRow({
        revisionVersion: draft.revisionVersion,
        methodologyVersion: draft.methodologyVersion,
        scuUsd18: draft.scu18,
        contentHash: draft.contentHash,
        metadataHash: draft.metadataHash,
        manifestJcs: draft.manifestJcs,
        basketChanges: draft.changes,
        summary: draft.summary,
        status: "PENDING",
        requiresApproval: options.requiresApproval,
        intendedAt: options.intendedAt
      }).pipe(Effect.map(fromRow), orDieAtRepository)

    /** A statement whose stamps are one instant read from Clock (never the database's own clock). */
    const stamped = <A, E, R>(statement: (now: Date) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(Clock.currentTimeMillis, (millis) => statement(new Date(millis)))

    const markApproved = (id: string) =>
      stamped((now) => sql`UPDATE revisions SET approved_at = ${now}::timestamptz, updated_at = ${now}::timestamptz WHERE id = ${id}`)
        .pipe(orDieAtRepository)

    const markBroadcast = (id: string, txHash: string) =>
      stamped((now) => sql`UPDATE revisions SET status = 'BROADCAST', tx_hash = ${txHash}, broadcast_at = ${now}::timestamptz,
            failure_reason = NULL, failure_message = NULL, updated_at = ${now}::timestamptz WHERE id = ${id}`).pipe(orDieAtRepository)

    const markFailure = (id: string, reason: string, message: string) =>
      stamped((now) => sql`UPDATE revisions SET failure_reason = ${reason}, failure_message = ${message}, updated_at = ${now}::timestamptz
          WHERE id = ${id}`).pipe(orDieAtRepository)

    const markDiscarded = (id: string, message: string) =>
      stamped((now) => sql`UPDATE revisions SET status = 'DISCARDED', failure_message = ${message}, updated_at = ${now}::timestamptz
          WHERE id = ${id} AND status = 'PENDING'`).pipe(orDieAtRepository)

    const confirmedBefore = SqlSchema.findOne({
      Request: Schema.Int,
      Result: Schema.Struct({ revisionVersion: Schema.Int, scuUsd18: Usd18FromNumericString }),
      execute: (revisionVersion) => sql`
        SELECT revision_version, scu_usd18 FROM revisions
        WHERE status = 'CONFIRMED' AND revision_version < ${revisionVersion}
        ORDER BY revision_version DESC LIMIT 1`
    })

    /** CONFIRMED, with its reconstitution-log entry, in one transaction. */
    const markConfirmed = (
      revision: StoredRevision,
      receipt: { readonly txHash: string; readonly blockNumber: bigint; readonly blockTimestamp: Date }
    ) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const previous = Option.getOrUndefined(yield* confirmedBefore(revision.revisionVersion))
            const now = new Date(yield* Clock.currentTimeMillis)
            yield* sql`UPDATE revisions SET status = 'CONFIRMED', tx_hash = ${receipt.txHash},
                         published_block = ${receipt.blockNumber.toString()}, published_at = ${receipt.blockTimestamp},
                         confirmed_at = ${now}::timestamptz, failure_reason = NULL, failure_message = NULL, updated_at = ${now}::timestamptz
                       WHERE id = ${revision.id}`
            yield* sql`INSERT INTO reconstitution_log ${sql.insert({
              revisionVersion: revision.revisionVersion,
              previousVersion: previous?.revisionVersion ?? null,
              publishedAt: receipt.blockTimestamp,
              methodologyVersion: revision.methodologyVersion,
              summary: revision.summary,
              scuBeforeUsd18: previous?.scuUsd18.toString() ?? null,
              scuAfterUsd18: revision.scuUsd18.toString(),
              changes: JSON.stringify(revision.changes),
              txHash: receipt.txHash
            })}`
          })
        )
        .pipe(orDieAtRepository)

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
      Effect.flatMap(Clock.currentTimeMillis, (now) => sql`INSERT INTO revisions ${sql.insert({
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
        confirmedAt: new Date(now)
      })}`).pipe(orDieAtRepository)

    const log: Effect.Effect<ReadonlyArray<LogEntry>> = SqlSchema.findAll({
      Request: Schema.Void,
      Result: LogRow,
      execute: () => sql`SELECT * FROM reconstitution_log ORDER BY revision_version`
    })(undefined).pipe(orDieAtRepository)

    const syncState: Effect.Effect<Option.Option<ChainSyncState>> = SqlSchema.findOne({
      Request: Schema.Void,
      Result: SyncRow,
      execute: () => sql`SELECT * FROM chain_sync WHERE id = 1`
    })(undefined).pipe(orDieAtRepository)

    // Stamped with the service's clock: the health's staleness compares it with that clock.
    const recordSync = (state: { chainId: number; registryAddress: string; lastBlock: bigint; lastRevisionVersion: number }) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => sql`INSERT INTO chain_sync (id, chain_id, registry_address, last_sync_at, last_block, last_revision_version)
          VALUES (1, ${state.chainId}, ${state.registryAddress}, ${new Date(now)}, ${state.lastBlock.toString()}, ${state.lastRevisionVersion})
          ON CONFLICT (id) DO UPDATE SET chain_id = excluded.chain_id, registry_address = excluded.registry_address,
            last_sync_at = excluded.last_sync_at, last_block = excluded.last_block,
            last_revision_version = excluded.last_revision_version, last_error = NULL, last_error_at = NULL`).pipe(
        orDieAtRepository
      )

    const recordSyncError = (state: { chainId: number; registryAddress: string; message: string }) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => sql`INSERT INTO chain_sync (id, chain_id, registry_address, last_error, last_error_at)
          VALUES (1, ${state.chainId}, ${state.registryAddress}, ${state.message}, ${new Date(now)})
          ON CONFLICT (id) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at`).pipe(
        orDieAtRepository
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
      })} ON CONFLICT DO NOTHING`.pipe(orDieAtRepository)

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
