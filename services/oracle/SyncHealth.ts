/**
 * The oracle's health as the last chain sync left it (`/v1/oracle/health`, the snapshot's sync state): the latest
 * confirmed revision, when the registry was last read, whether that is older than CHAIN_STALE_AFTER_SECONDS, and the
 * age of a publication in flight. Read from PostgreSQL alone, so it serves (and embeds) without a chain client;
 * ChainSync.ts is what writes the state it reads.
 */
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../platform/AppConfig.ts"
import { RevisionRepository } from "./RevisionRepository.ts"

export interface OracleHealth {
  readonly latestRevisionVersion: number | null
  readonly methodologyVersion: number | null
  readonly latestRevisionConfirmedAt: Date | null
  readonly lastSyncAt: Date | null
  readonly stale: boolean
  /** Only the age: a broadcast publish's version and hashes are never exposed. */
  readonly pendingRevision: { readonly ageMs: number } | null
}

export class SyncHealth extends Effect.Service<SyncHealth>()("SyncHealth", {
  effect: Effect.gen(function* () {
    const repository = yield* RevisionRepository
    const config = yield* AppConfig

    const health = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const latest = yield* repository.latestConfirmed
      const state = yield* repository.syncState
      const inFlight = yield* repository.inFlight
      const lastSyncAt = Option.match(state, { onNone: () => null, onSome: (s) => s.lastSyncAt })
      return {
        latestRevisionVersion: Option.match(latest, { onNone: () => null, onSome: (r) => r.revisionVersion }),
        methodologyVersion: Option.match(latest, { onNone: () => null, onSome: (r) => r.methodologyVersion }),
        latestRevisionConfirmedAt: Option.match(latest, { onNone: () => null, onSome: (r) => r.confirmedAt }),
        lastSyncAt,
        stale: lastSyncAt === null || now - lastSyncAt.getTime() > config.chain.staleAfterSeconds * 1000,
        pendingRevision: Option.match(inFlight, {
          onNone: () => null,
          onSome: (r) => (r.status === "BROADCAST" && r.broadcastAt !== null ? { ageMs: now - r.broadcastAt.getTime() } : null)
        })
      } satisfies OracleHealth
    })

    return { health } as const
  })
}) {}
