/** `POST /v1/messages`: Anthropic's messages format (domain/exchange/translate/anthropic*.ts), betas from the head. */
import { Effect } from "effect"
import { betasOf, type DecodedMessages, decodeMessagesRequest } from "../../../domain/exchange/translate/anthropicInbound.ts"
import { renderMessage } from "../../../domain/exchange/translate/anthropicRender.ts"
import { makeMessagesStream } from "../../../domain/exchange/translate/anthropicStream.ts"
import { sseFrames } from "../sse.ts"
import type { InboundFormat } from "./InboundFormat.ts"

export const messagesFormat: InboundFormat<DecodedMessages, never> = {
  name: "messages",
  decode: (json, _credential, head) => decodeMessagesRequest(json, betasOf(head.anthropicBeta)),
  whole: (reply) => Effect.sync(() => JSON.stringify(renderMessage(reply.result, reply.meta, reply.settled.bill))),
  frames: (reply) => sseFrames(makeMessagesStream(reply.meta), reply)
}
