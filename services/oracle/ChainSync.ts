/**
 * Chain sync: reads the registry into PostgreSQL. It follows up a broadcast revision until it confirms, records
 * revisions the chain holds that this database never drafted, and stamps lastSyncAt. When the RPC is down it
 * records the error and changes nothing else: readers keep being served from PostgreSQL, and health (SyncHealth.ts)
 * says stale.
 */
import { Effect, Option } from "effect"
import { Registry } from "../chain/Registry.ts"
import { OracleChangeFeed } from "./OracleChangeFeed.ts"
import { Publisher } from "./Publisher.ts"
import { RevisionRepository } from "./RevisionRepository.ts"


export class ChainSync extends Effect.Service<ChainSync>()("ChainSync", {
  effect: Effect.gen(function* () {
    const registry = yield* Registry
    const repository = yield* RevisionRepository
    const publisher = yield* Publisher
    const feed = yield* OracleChangeFeed
    const { chainId, registryAddress } = registry.endpoint

    const syncOnce = Effect.gen(function* () {
      const onChain = yield* registry.lastRevisionVersion
      const block = yield* registry.latestBlock

      const inFlight = yield* repository.inFlight
      // Follow-ups go through the publish job's lock: a publication in progress drives its revision itself.
      if (Option.isSome(inFlight) && inFlight.value.status === "BROADCAST") {
        yield* publisher.followUp(inFlight.value).pipe(Effect.catchAll(() => Effect.void))
      }

      const latest = yield* repository.latestConfirmed
      const known = Option.match(latest, { onNone: () => 0, onSome: (r) => r.revisionVersion })
      for (let version = known + 1; version <= onChain; version++) {
        const existing = yield* repository.byVersion(version)
        if (Option.isSome(existing)) {
          // Ours, but its confirmation was not recorded (a crash after broadcast): adopt it.
          yield* publisher.followUp(existing.value).pipe(Effect.catchAll(() => Effect.void))
          continue
        }
        const header = yield* registry.getRevision(version)
        yield* repository.recordFromChain({
          ...header,
          txHash: `0x${"0".repeat(64)}`,
          blockNumber: 0n
        })
        yield* Effect.logWarning(`revision ${version} found on chain without a manifest here; recorded as unavailable`)
      }
      yield* repository.recordSync({ chainId, registryAddress, lastBlock: block.number ?? 0n, lastRevisionVersion: onChain })
      yield* feed.bump
      return { onChain, block: block.number ?? 0n }
    })

    /** One pass; a chain failure is recorded (and logged), never thrown at the caller. */
    const sync = syncOnce.pipe(
      Effect.tapError((failure) =>
        Effect.zipRight(
          repository.recordSyncError({ chainId, registryAddress, message: `${failure.reason}: ${failure.message}` }),
          Effect.logWarning("chain sync failed; serving from the database").pipe(Effect.annotateLogs({ reason: failure.reason }))
        )
      ),
      Effect.option,
      Effect.withSpan("ChainSync.sync")
    )

    return { sync } as const
  })
}) {}
