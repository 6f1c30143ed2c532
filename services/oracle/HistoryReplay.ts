/**
 * Replays the index's history on the embedded chain: from genesis (2025-06-17) to now, every instant at which
 * the basket changed becomes a revision published in a block stamped with that instant. Resumable: it continues
 * after the latest confirmed revision, so an interrupted replay finishes on the next start, and a completed one
 * is never run again.
 */
import { Clock, Effect, FiberRef, HashSet, Logger, LogLevel, Option } from "effect"
import { basketChangeInstants } from "../../domain/catalog/governance.ts"
import { EmbeddedChainTag, GENESIS } from "../chain/EmbeddedChain.ts"
import { BasketGovernance } from "./BasketGovernance.ts"
import { Publisher } from "./Publisher.ts"
import { RevisionRepository } from "./RevisionRepository.ts"

/**
 * Runs `effect` with its INFO lines written as DEBUG: the publisher logs each revision's draft, broadcast and
 * confirmation at INFO, which is right for a live publish and hundreds of lines for a replay. Lines demoted below
 * the configured LOG_LEVEL are dropped, as the runtime would have dropped them.
 */
const infoAsDebug = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) =>
    Effect.locallyWith(effect, FiberRef.currentLoggers, (loggers) =>
      HashSet.map(loggers, (logger) =>
        Logger.make<unknown, void>((options) => {
          const logLevel = options.logLevel._tag === "Info" ? LogLevel.Debug : options.logLevel
          if (LogLevel.greaterThanEqual(logLevel, minimum)) logger.log({ ...options, logLevel })
        })
      )
    )
  )

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
      let reportedTenths = 0
      for (const [index, at] of pending.entries()) {
        const revision = yield* infoAsDebug(publisher.publishIfChanged({ asOf: at, at, liveness: { _tag: "AllSeen" } }))
        if (Option.isSome(revision)) {
          published++
          yield* Effect.logDebug(
            `replay ${index + 1}/${pending.length}: revision ${revision.value.revisionVersion} at ${at.toISOString()}: ${revision.value.summary}`
          )
        }
        // Progress at INFO about every 10%; the per-revision detail above is DEBUG (hundreds of lines on a first start).
        const tenths = Math.floor(((index + 1) * 10) / pending.length)
        if (tenths > reportedTenths && index + 1 < pending.length) {
          reportedTenths = tenths
          yield* Effect.logInfo(
            `replaying index history: ${tenths * 10}% (${index + 1}/${pending.length} instants, ${published} revisions)`
          )
        }
      }
      // From here on the chain keeps the present's time.
      yield* control.setTime(now)
      yield* control.persist
      if (published > 0) yield* Effect.logInfo(`history replayed: ${published} revisions published`)
      return published
    }).pipe(Effect.withSpan("HistoryReplay.replay"))

    return { replay } as const
  })
}) {}
