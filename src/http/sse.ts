/**
 * A streamed reply as server-sent events (SPEC "Streaming"): each canonical event as the format's frames, then, once
 * the request is settled, the final frames carrying the usage and the bill, or the `stream_interrupted` frames when
 * the stream ended before its end. Frames are pulled one by one, so a slow client slows the vendor (the exchange's
 * buffer is bounded) rather than filling memory.
 */
import { replyBillOf } from "../../domain/exchange/canonical.ts"
import { Effect, Stream } from "effect"
import type { SettledReply } from "../../services/exchange/Exchange.ts"
import type { EventFramer, StreamReply } from "./inbound/InboundFormat.ts"

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-accel-buffering": "no"
}

/**
 * The reply's frames through `framer`; `afterFinish` runs once the final frames are rendered and before they are
 * written (what a format keeps of a finished answer is kept before the client learns it finished).
 */
export const sseFrames = <R = never>(
  framer: EventFramer,
  reply: StreamReply,
  afterFinish: (settled: SettledReply) => Effect.Effect<void, never, R> = () => Effect.void
): Stream.Stream<string, never, R> =>
  Stream.concat(
    Stream.filter(Stream.map(reply.events, framer.event), (frame) => frame !== ""),
    Stream.fromEffect(
      Effect.flatMap(reply.settled, (settled) => {
        if (settled.failure !== undefined) return Effect.succeed(framer.interrupted(settled.failure))
        const last = framer.finish(settled.usage, replyBillOf(settled))
        return Effect.as(afterFinish(settled), last)
      })
    )
  )
