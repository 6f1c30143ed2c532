/** `POST /v1/chat/completions`: OpenAI's chat-completions format (domain/exchange/translate/openaiChat*.ts). */
import { replyBillOf } from "../../../domain/exchange/canonical.ts"
import { Effect } from "effect"
import { type DecodedChat, decodeChatCompletionsRequest, makeChatCompletionStream, renderChatCompletion } from "../../../domain/exchange/translate/openaiChatInbound.ts"
import { sseFrames } from "../sse.ts"
import type { InboundFormat } from "./InboundFormat.ts"

export const chatCompletionsFormat: InboundFormat<DecodedChat, never> = {
  name: "chat",
  decode: (json) => decodeChatCompletionsRequest(json),
  whole: (reply) => Effect.sync(() => JSON.stringify(renderChatCompletion(reply.result, reply.meta, replyBillOf(reply.settled)))),
  frames: (reply) => sseFrames(makeChatCompletionStream(reply.meta), reply)
}
