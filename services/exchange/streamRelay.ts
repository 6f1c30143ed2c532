/**
 * A vendor's stream relayed to one client (DESIGN.md section 10, "Streaming"): events pass through a bounded buffer,
 * so a slow client slows the vendor rather than filling memory; when the client stops reading (it left, or its stream
 * ended) the buffer is emptied and the vendor is read on to its usage, for at most the drain timeout. Every event is
 * kept for the bill, the client's reasoning filter notwithstanding.
 */
import { Deferred, Effect, Either, Queue, Stream } from "effect"
import { type ChatEvent, type ChatResult, foldEvents } from "../../domain/exchange/canonical.ts"
import type { UpstreamFailure } from "./upstreamHttp.ts"

/** Events buffered between the vendor and a slow client before the vendor's stream is paused. */
const STREAM_BUFFER = 64

export interface RelayOutcome {
  /** What the vendor sent, folded (everything, for the bill). */
  readonly result: ChatResult
  /** The vendor's stream reached its stop event and its end. */
  readonly completed: boolean
  /** Why it did not complete; undefined when it did. */
  readonly why: string | undefined
}

export const relayStream = (options: {
  readonly upstream: Stream.Stream<ChatEvent, UpstreamFailure>
  /** Events the client does not get (reasoning it asked to exclude); they are still billed. */
  readonly withheld: (event: ChatEvent) => boolean
  readonly drainTimeoutMs: number
}) =>
  Effect.gen(function* () {
    const buffer = yield* Queue.bounded<ChatEvent | null>(STREAM_BUFFER)
    const clientGone = yield* Deferred.make<void>()
    let gone = false
    const seen: Array<ChatEvent> = []
    let stopped = false

    /** The client's side: the events as they come, until the vendor's end (or until the client stops reading). */
    const events: Stream.Stream<ChatEvent> = Stream.fromQueue(buffer).pipe(
      Stream.takeWhile((event): event is ChatEvent => event !== null),
      // The client stopped reading: nothing more is buffered for it, and a vendor paused on a full buffer resumes.
      Stream.ensuring(Effect.suspend(() => {
        gone = true
        return Effect.zipRight(Queue.takeAll(buffer), Deferred.succeed(clientGone, undefined))
      }))
    )

    /** The vendor's side, to its end or to the drain timeout after the client left. */
    const run: Effect.Effect<RelayOutcome> = Effect.gen(function* () {
      const consume = Stream.runForEach(options.upstream, (event) => {
        seen.push(event)
        if (event.type === "stop") stopped = true
        return gone || options.withheld(event) ? Effect.void : Queue.offer(buffer, event)
      })
      const outcome: Either.Either<void, UpstreamFailure | "drain_timeout"> = yield* Effect.raceFirst(
        Effect.either(consume),
        Effect.zipRight(Deferred.await(clientGone), Effect.sleep(options.drainTimeoutMs)).pipe(
          Effect.as(Either.left("drain_timeout" as const))
        )
      )
      const completed = Either.isRight(outcome) && stopped
      const why = completed
        ? undefined
        : Either.isLeft(outcome)
        ? typeof outcome.left === "string" ? "the client left and the upstream did not finish in time" : outcome.left.message
        : "the upstream ended the stream before its end"
      return { result: foldEvents(seen), completed, why }
    })

    /** Ends the client's stream (after its last frame is known). */
    const end = Effect.suspend(() => (gone ? Effect.void : Queue.offer(buffer, null)))

    return { events, run, end } as const
  })
