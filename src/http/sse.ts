/**
 * A streamed reply as server-sent events, framed per inbound format (SPEC "Streaming"): each canonical event as the
 * format's frames, then, once the request is settled, the final frame carrying the usage and the bill, or the
 * `stream_interrupted` error frame when the stream ended before its end. Frames are pulled one by one, so a slow
 * client slows the vendor (the exchange's buffer is bounded) rather than filling memory.
 */
import { Effect, Stream } from "effect"
import { makeMessagesStream } from "../../domain/exchange/translate/anthropicStream.ts"
import { makeChatCompletionStream } from "../../domain/exchange/translate/openaiChatStream.ts"
import type { InboundFormat, Reply } from "../../services/exchange/Exchange.ts"

const framers = { chat: makeChatCompletionStream, messages: makeMessagesStream } as const

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-accel-buffering": "no"
}

export const sseFrames = (format: InboundFormat, reply: Extract<Reply, { _tag: "Stream" }>): Stream.Stream<string> => {
  const framer = framers[format](reply.meta)
  return Stream.concat(
    Stream.filter(Stream.map(reply.events, framer.event), (frame) => frame !== ""),
    Stream.fromEffect(
      Effect.map(reply.settled, (settled) =>
        settled.failure === undefined ? framer.finish(settled.usage, settled.bill) : framer.interrupted(settled.failure))
    )
  )
}
