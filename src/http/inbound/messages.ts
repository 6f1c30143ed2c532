/** `POST /v1/messages`: Anthropic's messages format (domain/exchange/translate/anthropic*.ts), betas from the head. */
import { replyBillOf } from "../../../domain/exchange/canonical.ts"
import { Effect } from "effect"
import { betasOf, type DecodedMessages, decodeMessagesRequest } from "../../../domain/exchange/translate/anthropicInbound.ts"
import { renderMessage } from "../../../domain/exchange/translate/anthropicRender.ts"
import { makeMessagesStream } from "../../../domain/exchange/translate/anthropicStream.ts"
import { sseFrames } from "../sse.ts"
import type { InboundFormat } from "./InboundFormat.ts"

export const messagesFormat: InboundFormat<DecodedMessages, never> = {
  name: "messages",
  decode: (json, _credential, head) => decodeMessagesRequest(json, betasOf(head.anthropicBeta)),
  // The reply names the model as the request did (domain/exchange/translate/anthropicRender.ts says why).
  whole: (reply, decoded) =>
    Effect.sync(() => JSON.stringify(renderMessage(reply.result, reply.meta, replyBillOf(reply.settled), decoded.route.model ?? reply.meta.model))),
  frames: (reply, decoded) => sseFrames(makeMessagesStream(reply.meta, decoded.route.model ?? reply.meta.model), reply)
}
