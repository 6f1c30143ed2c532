/**
 * `POST /v1/responses`: OpenAI's Responses format (domain/exchange/translate/responses*.ts). Decoding reads the
 * stored conversation a `previous_response_id` continues; a finished answer is stored (when `store` asks) before the
 * client learns it finished, so a follow-up that names it finds it.
 */
import { replyBillOf } from "../../../domain/exchange/canonical.ts"
import { Effect } from "effect"
import type { NotFound, ValidationFailed } from "../../../domain/errors.ts"
import { renderResponse } from "../../../domain/exchange/translate/responsesRender.ts"
import { makeResponsesStream } from "../../../domain/exchange/translate/responsesStream.ts"
import { type PreparedResponse, Responses } from "../../../services/exchange/Responses.ts"
import { sseFrames } from "../sse.ts"
import type { DecodedInference, InboundFormat } from "./InboundFormat.ts"

type DecodedResponse = DecodedInference & { readonly prepared: PreparedResponse }

export const responsesFormat: InboundFormat<DecodedResponse, Responses, ValidationFailed | NotFound> = {
  name: "responses",
  decode: (json, credential) =>
    Effect.flatMap(Responses, (responses) =>
      Effect.map(responses.prepare(credential, json), (prepared) => ({ ...prepared.decoded, prepared }))
    ),
  whole: (reply, { prepared }, credential) => {
    const response = renderResponse(reply.result, reply.meta, replyBillOf(reply.settled), prepared.decoded.options, prepared.sealer)
    const json = JSON.stringify(response)
    // store: false (Codex's way) keeps nothing, and costs nothing on the way out.
    return !prepared.decoded.options.store
      ? Effect.succeed(json)
      : Effect.as(Effect.flatMap(Responses, (responses) => responses.keep(credential, prepared, reply.meta.id, response)), json)
  },
  frames: (reply, { prepared }, credential) => {
    const framer = makeResponsesStream(reply.meta, prepared.decoded.options, prepared.sealer)
    if (!prepared.decoded.options.store) return sseFrames(framer, reply)
    return sseFrames(framer, reply, () =>
      Effect.flatMap(Responses, (responses) => {
        const response = framer.final()
        return response === undefined ? Effect.void : responses.keep(credential, prepared, reply.meta.id, response)
      }))
  }
}
