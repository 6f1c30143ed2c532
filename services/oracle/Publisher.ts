/**
 * The publication pipeline: a basket change becomes a revision (manifest, SCU, hashes), a PENDING row, the
 * on-chain publish, and CONFIRMED once the configured confirmations are in, with its reconstitution-log entry.
 * A revision is never published twice: before sending, the chain is asked whether it already holds that number,
 * and a broadcast revision is only ever followed up, never re-sent. Everything that drives a revision towards the
 * chain (the schedule, a maintainer's publish/approve/discard/refork, the chain sync's follow-up) holds the publish
 * job's lock, so two replicas or a maintainer and the schedule never act on the same revision at once.
 */
import { Effect, Option } from "effect"
import { type Abi, getAbiItem, type Hex } from "viem"
import { ContractError, NotFound } from "../../domain/errors.ts"
import { CURRENT_METHODOLOGY_VERSION, draftRevision, membersOfManifest } from "../../domain/index/revision.ts"
import { ChainFailure, Registry, registryAbi } from "../chain/Registry.ts"
import { EmbeddedChainTag } from "../chain/EmbeddedChain.ts"
import { AppConfig } from "../platform/AppConfig.ts"
import { Jobs } from "../platform/Jobs.ts"
import { BasketGovernance, type Liveness } from "./BasketGovernance.ts"
import { OracleChangeFeed } from "./OracleChangeFeed.ts"
import { RevisionRepository, type StoredRevision } from "./RevisionRepository.ts"

/** What a maintainer or a test sees of a failed publish: SPEC's contract_error with its reason. */
export const toContractError = (failure: ChainFailure): ContractError =>
  new ContractError({ message: failure.message, details: { chainFailure: { reason: failure.reason } } })

export const PUBLISH_JOB = "publish"

const describeOutcome = (revision: Option.Option<StoredRevision>) =>
  Option.match(revision, { onNone: () => "basket unchanged", onSome: (r) => `revision ${r.revisionVersion} ${r.status}` })

const revisionPublished = getAbiItem({ abi: registryAbi as Abi, name: "RevisionPublished" })

export class Publisher extends Effect.Service<Publisher>()("Publisher", {
  effect: Effect.gen(function* () {
    const repository = yield* RevisionRepository
    const governance = yield* BasketGovernance
    const registry = yield* Registry
    const embedded = yield* EmbeddedChainTag
    const config = yield* AppConfig
    const feed = yield* OracleChangeFeed
    const jobs = yield* Jobs

    const previousMembers = Effect.map(repository.latestConfirmed, (latest) =>
      Option.match(Option.flatMap(latest, (r) => Option.map(r.manifest, (m) => ({ m, at: r.publishedAt! }))), {
        onNone: () => [],
        onSome: ({ at, m }) => membersOfManifest(m, at)
      })
    )

    /** The basket the catalog supports at `asOf`, against the latest confirmed revision. */
    const propose = Effect.fn("Publisher.propose")(function* (asOf: Date, liveness: Liveness) {
      return yield* Effect.flatMap(previousMembers, (previous) => governance.propose(asOf, previous, liveness))
    })

    const fail = (revision: StoredRevision, failure: ChainFailure) =>
      Effect.zipRight(
        repository.markFailure(revision.id, failure.reason, failure.message),
        Effect.zipRight(
          Effect.logWarning(`revision ${revision.revisionVersion} not published: ${failure.reason}`).pipe(
            Effect.annotateLogs({ message: failure.message })
          ),
          Effect.fail(failure)
        )
      )

    /** The transaction that published revision `n`, found from the registry's event. */
    const publishingTransaction = (revisionVersion: number) =>
      Effect.tryPromise({
        try: () =>
          registry.client.getLogs({
            address: registry.endpoint.registryAddress,
            event: revisionPublished as never,
            args: { revisionVersion: BigInt(revisionVersion) } as never,
            fromBlock: 0n
          }),
        catch: (error) => new ChainFailure({ reason: "chain_unavailable", message: String(error) })
      }).pipe(Effect.map((logs) => Option.fromNullable((logs as ReadonlyArray<{ transactionHash: Hex | null }>)[0]?.transactionHash)))

    const confirm = (revision: StoredRevision, txHash: Hex) =>
      Effect.gen(function* () {
        const receipt = yield* registry
          .awaitConfirmation(txHash, `${config.chain.confirmationTimeoutMs} millis`)
          .pipe(Effect.catchAll((failure) => fail(revision, failure)))
        yield* repository.markConfirmed(revision, receipt)
        yield* feed.bump
        if (Option.isSome(embedded)) {
          yield* embedded.value.persist.pipe(
            Effect.catchAll((error) => Effect.logError("could not save the embedded chain's state", error))
          )
        }
        yield* Effect.logInfo(`revision ${revision.revisionVersion} confirmed`).pipe(
          Effect.annotateLogs({
            txHash,
            block: receipt.blockNumber.toString(),
            publishedAt: receipt.blockTimestamp.toISOString(),
            metadataHash: revision.metadataHash
          })
        )
        return Option.getOrThrow(yield* repository.byVersion(revision.revisionVersion))
      })

    /** Drives a PENDING or BROADCAST revision to CONFIRMED. */
    const advance = Effect.fn("Publisher.advance")(function* (revision: StoredRevision): Effect.fn.Return<StoredRevision, ChainFailure> {
      if (revision.status === "CONFIRMED" || revision.status === "DISCARDED") return revision
      if (revision.status === "BROADCAST" && revision.txHash !== null) return yield* confirm(revision, revision.txHash)

      const onChain = yield* registry.lastRevisionVersion.pipe(Effect.catchAll((failure) => fail(revision, failure)))
      if (onChain >= revision.revisionVersion) {
        // Sent before (a crash between broadcast and bookkeeping): adopt it if it is ours, never send again.
        const header = yield* registry.getRevision(revision.revisionVersion).pipe(Effect.catchAll((f) => fail(revision, f)))
        if (header.metadataHash !== revision.metadataHash) {
          return yield* fail(
            revision,
            new ChainFailure({
              reason: "contract_rejected",
              message: `the registry already holds revision ${revision.revisionVersion} with other content (${header.metadataHash})`
            })
          )
        }
        const txHash = yield* publishingTransaction(revision.revisionVersion).pipe(Effect.catchAll((f) => fail(revision, f)))
        if (Option.isNone(txHash)) {
          return yield* fail(revision, new ChainFailure({ reason: "confirmation_pending", message: "publishing transaction not found yet" }))
        }
        yield* repository.markBroadcast(revision.id, txHash.value)
        return yield* confirm(revision, txHash.value)
      }
      if (onChain < revision.revisionVersion - 1) {
        return yield* fail(
          revision,
          new ChainFailure({
            reason: "contract_rejected",
            message: `the registry holds ${onChain} revisions; revision ${revision.revisionVersion} cannot follow`
          })
        )
      }
      if (revision.intendedAt !== null && Option.isSome(embedded)) {
        yield* embedded.value.setNextBlockTimestamp(revision.intendedAt).pipe(
          Effect.catchAll((error) => fail(revision, new ChainFailure({ reason: "chain_unavailable", message: error.message })))
        )
      }
      const txHash = yield* registry
        .publish({
          revisionVersion: revision.revisionVersion,
          methodologyVersion: revision.methodologyVersion,
          scuUsd18: revision.scuUsd18,
          contentHash: revision.contentHash,
          metadataHash: revision.metadataHash
        })
        .pipe(Effect.catchAll((failure) => fail(revision, failure)))
      yield* repository.markBroadcast(revision.id, txHash)
      yield* Effect.logInfo(`revision ${revision.revisionVersion} broadcast`).pipe(Effect.annotateLogs({ txHash }))
      return yield* confirm(revision, txHash)
    })

    /**
     * Publishes the basket at `asOf` if it differs from the latest confirmed revision. `at` stamps the block
     * (history replay on the embedded chain). With REVISION_APPROVAL=manual a new revision waits for approval.
     */
    const publishIfChanged = Effect.fn("Publisher.publishIfChanged")(function* (options: { readonly asOf: Date; readonly at?: Date; readonly liveness: Liveness }) {
      const inFlight = yield* repository.inFlight
      if (Option.isSome(inFlight)) {
        if (inFlight.value.requiresApproval && inFlight.value.status === "PENDING") return inFlight
        return Option.some(yield* advance(inFlight.value))
      }
      const proposal = yield* propose(options.asOf, options.liveness)
      if (proposal.members.length === 0 || proposal.changes.length === 0) return Option.none<StoredRevision>()
      const draft = draftRevision({
        revisionVersion: (yield* repository.lastVersion) + 1,
        methodologyVersion: CURRENT_METHODOLOGY_VERSION,
        members: proposal.members,
        changes: proposal.changes
      })
      const requiresApproval = config.revisions.approval === "manual" && options.at === undefined
      const revision = yield* repository.insertDraft(draft, { requiresApproval, intendedAt: options.at ?? null })
      yield* Effect.logInfo(`revision ${draft.revisionVersion} drafted: ${draft.summary}`).pipe(
        Effect.annotateLogs({ scu18: draft.scu18.toString(), metadataHash: draft.metadataHash, requiresApproval })
      )
      if (requiresApproval) return Option.some(revision)
      return Option.some(yield* advance(revision))
    })

    const pendingOrNotFound = (revisionVersion: number) =>
      Effect.flatMap(repository.byVersion(revisionVersion), (found) =>
        Option.isSome(found) && found.value.status === "PENDING"
          ? Effect.succeed(found.value)
          : Effect.fail(new NotFound({ message: `no pending revision ${revisionVersion}` }))
      )

    const publishCurrent = (asOf: Date) => publishIfChanged({ asOf, liveness: { _tag: "Scans", upToScan: null } })

    /** The scheduled publication: None when a publication already holds the lock (the schedule looks again later). */
    const publishIfIdle = Effect.fn("Publisher.publishIfIdle")(function* (asOf: Date) {
      return yield* jobs.runExclusive(PUBLISH_JOB, publishCurrent(asOf), describeOutcome)
    })

    /** A maintainer's publish: refused with 409 conflict while a publication is running here or on another replica. */
    const publish = Effect.fn("Publisher.publish")(function* (asOf: Date) {
      return yield* jobs.runOrRefuse(PUBLISH_JOB, publishCurrent(asOf).pipe(Effect.mapError(toContractError)), describeOutcome)
    })

    /**
     * The chain sync's follow-up of a revision already sent: None when a publication holds the lock, since that
     * publication is driving the revision itself.
     */
    const followUp = Effect.fn("Publisher.followUp")(function* (revision: StoredRevision) {
      return yield* jobs.runExclusive(PUBLISH_JOB, advance(revision), (r) => `revision ${r.revisionVersion} ${r.status}`)
    })

    /** A maintainer approves a revision held for approval: it is published now. */
    const approve = Effect.fn("Publisher.approve")(function* (revisionVersion: number) {
      return yield* jobs.runOrRefuse(
        PUBLISH_JOB,
        Effect.gen(function* () {
          const revision = yield* pendingOrNotFound(revisionVersion)
          yield* repository.markApproved(revision.id)
          return yield* advance(revision).pipe(Effect.mapError(toContractError))
        }),
        (r) => `revision ${r.revisionVersion} approved: ${r.status}`
      )
    })

    /** A maintainer drops a revision that was never sent; its number is free again. */
    const discard = Effect.fn("Publisher.discard")(function* (revisionVersion: number) {
      return yield* jobs.runOrRefuse(
        PUBLISH_JOB,
        Effect.gen(function* () {
          const revision = yield* pendingOrNotFound(revisionVersion)
          yield* repository.markDiscarded(revision.id, "discarded by a maintainer")
          yield* Effect.logInfo(`revision ${revisionVersion} discarded`)
          return revision
        }),
        () => `revision ${revisionVersion} discarded`
      )
    })

    /** A maintainer rebuilds the pending revision from the catalog as it is now (discarding the stale draft). */
    const refork = Effect.fn("Publisher.refork")(function* (asOf: Date) {
      return yield* jobs.runOrRefuse(
        PUBLISH_JOB,
        Effect.gen(function* () {
          const inFlight = yield* repository.inFlight
          if (Option.isSome(inFlight)) {
            if (inFlight.value.status !== "PENDING") {
              return yield* Effect.fail(
                toContractError(new ChainFailure({ reason: "confirmation_pending", message: `revision ${inFlight.value.revisionVersion} was already broadcast` }))
              )
            }
            yield* repository.markDiscarded(inFlight.value.id, "reforked from the current catalog")
          }
          return yield* publishCurrent(asOf).pipe(Effect.mapError(toContractError))
        }),
        (revision) => `reforked: ${describeOutcome(revision)}`
      )
    })

    return { propose, advance, publishIfChanged, publishIfIdle, publish, followUp, approve, discard, refork } as const
  })
}) {}
