/**
 * Replays the index's history on the embedded chain: from genesis (2025-06-17) to now, every instant at which
 * the basket changed becomes a revision published in a block stamped with that instant. Resumable: it continues
 * after the latest confirmed revision, so an interrupted replay finishes on the next start, and a completed one
 * is never run again.
 */
import { Clock, Effect, Option } from "effect"
import { basketChangeInstants } from "../../domain/catalog/governance.ts"
import { EmbeddedChainTag, GENESIS } from "../chain/EmbeddedChain.ts"
import { BasketGovernance } from "./BasketGovernance.ts"
import { Publisher } from "./Publisher.ts"
import { RevisionRepository } from "./RevisionRepository.ts"

export class HistoryReplay extends Effect.Service<HistoryReplay>()("HistoryReplay", {
  effect: Effect.gen(function* () {
    const embedded = yield* EmbeddedChainTag
    const governance = yield* BasketGovernance
    const publisher = yield* Publisher
    const repository = yield* RevisionRepository

    /** Publishes every historical revision not yet published; returns how many it published. */
    const replay = Effect.gen(function* () {
      if (Option.isNone(embedded)) return 0
      const control = embedded.value
      const now = new Date(yield* Clock.currentTimeMillis)
      const { decisions, states } = yield* governance.inputs({ _tag: "AllSeen" })
      const instants = [GENESIS, ...basketChangeInstants(states, decisions, governance.rules)].filter(
        (t) => t >= GENESIS && t <= now
      )
      const unique = [...new Set(instants.map((t) => t.getTime()))].sort((a, b) => a - b).map((ms) => new Date(ms))
      const latest = yield* repository.latestConfirmed
      const after = Option.match(latest, { onNone: () => -Infinity, onSome: (r) => r.publishedAt!.getTime() })
      const pending = unique.filter((t) => t.getTime() > after)
      if (pending.length > 0) {
        yield* Effect.logInfo(`replaying index history: ${pending.length} instants from ${pending[0]!.toISOString().slice(0, 10)}`)
      }
      let published = 0
      for (const [index, at] of pending.entries()) {
        const revision = yield* publisher.publishIfChanged({ asOf: at, at, liveness: { _tag: "AllSeen" } })
        if (Option.isSome(revision)) {
          published++
          yield* Effect.logInfo(
            `replay ${index + 1}/${pending.length}: revision ${revision.value.revisionVersion} at ${at.toISOString()}: ${revision.value.summary}`
          )
        }
      }
      // From here on the chain keeps the present's time.
      yield* control.setTime(now)
      yield* control.persist
      if (published > 0) yield* Effect.logInfo(`history replayed: ${published} revisions published`)
      return published
    })

    return { replay } as const
  })
}) {}
