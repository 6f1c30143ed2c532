/**
 * What the Responses format adds around the exchange (DESIGN.md section 10, "Agents' dialects"): the stored
 * conversation a `previous_response_id` continues (same account only; another's, a deleted or an expired one is 404),
 * the key that seals and opens reasoning items, keeping a response that asked to be stored (`store`, default true),
 * and the reads of stored responses. The request itself is served by the Exchange like every other.
 */
import { Effect, Either, Option, Schema } from "effect"
import { NotFound, ValidationFailed } from "../../domain/errors.ts"
import {
  type ConversationLink,
  decodeResponsesRequest,
  type DecodedResponses,
  parseResponsesRequest,
  type ReasoningSealer
} from "../../domain/exchange/translate/responsesInbound.ts"
import { decodeBody } from "../../domain/exchange/translate/parseIssues.ts"
import { responseIdOf } from "../../domain/exchange/translate/responsesRender.ts"
import { InputItem, InputTokensRequest } from "../../domain/exchange/wire/openaiResponses.ts"
import { ResponseObject } from "../../domain/exchange/wire/openaiResponsesReply.ts"
import type { Credential } from "../../domain/accounts/credential.ts"
import { ReasoningSeal } from "./ReasoningSeal.ts"
import { type InputItemsQuery, type JsonObject, StoredResponses } from "./StoredResponses.ts"
import { TokenCounter } from "./TokenCounter.ts"

/** A decoded request with the sealer of its account (the renderers seal its reasoning with it). */
export interface PreparedResponse {
  readonly decoded: DecodedResponses
  readonly sealer: ReasoningSealer
}

/** Stored items were written by us: read back leniently (an item's fields beyond the input shape are ignored). */
const decodeStoredItem = Schema.decodeUnknownOption(InputItem, { onExcessProperty: "ignore" })
const decodeStoredResponse = Schema.decodeUnknownOption(ResponseObject, { onExcessProperty: "ignore" })
/** Our wire values as the JSON columns take them (each is a JSON object by its schema). */
const encodeJson = (value: ResponseObject | InputItem): JsonObject => value

const parseInputTokensRequest = decodeBody(InputTokensRequest)

const storedItems = (items: ReadonlyArray<JsonObject>): ReadonlyArray<InputItem> =>
  items.flatMap((item) => Option.toArray(decodeStoredItem(item)))

const notFound = (id: string) =>
  new NotFound({ message: `No stored response ${JSON.stringify(id)} for this account (it may have been deleted, expired, or stored with store=false).` })

/**
 * The input items as stored and listed, in OpenAI's listed form: each with an id (the client's own, else one derived
 * from the response's), a message's content as parts (`input_text`, or `output_text` on an assistant turn) with its
 * `type` and `status`.
 */
const storedInputItems = (items: ReadonlyArray<InputItem>, responseId: string): ReadonlyArray<JsonObject> =>
  items.map((item, index) => {
    const hex = responseId.slice(5)
    if ("role" in item) {
      const partType = item.role === "assistant" ? "output_text" : "input_text"
      const content = typeof item.content === "string" ? [{ type: partType, text: item.content }] : item.content
      return { ...encodeJson(item), type: "message", id: item.id ?? `msg_in_${hex}_${index}`, status: item.status ?? "completed", content }
    }
    const json = encodeJson(item)
    if (typeof json.id === "string" && json.id !== "") return json
    const kind = item.type === "reasoning" ? "rs" : item.type.endsWith("_output") ? "out" : "call"
    return { ...json, id: `${kind}_in_${hex}_${index}` }
  })

export class Responses extends Effect.Service<Responses>()("Responses", {
  effect: Effect.gen(function* () {
    const stored = yield* StoredResponses
    const seal = yield* ReasoningSeal
    const counter = yield* TokenCounter

    /** The chain a `previous_response_id` names, oldest first; 404 when the account has no such stored response. */
    const history = (accountId: string, previous: string | null | undefined) =>
      previous == null
        ? Effect.succeed<ReadonlyArray<ConversationLink>>([])
        : Effect.flatMap(stored.conversation(accountId, previous), (turns) =>
          Option.match(turns, {
            onNone: () => Effect.fail(notFound(previous)),
            onSome: (chain) =>
              Effect.succeed(chain.map((turn): ConversationLink => ({ inputItems: storedItems(turn.inputItems), outputItems: storedItems(turn.outputItems) })))
          }))

    const prepare = Effect.fn("Responses.prepare")(function* (credential: Credential, json: unknown) {
      const request = yield* parseResponsesRequest(json)
      const sealer = seal.sealerFor(credential.accountId)
      const chain = yield* history(credential.accountId, request.previous_response_id)
      const decoded = yield* decodeResponsesRequest(request, chain, sealer)
      return { decoded, sealer } satisfies PreparedResponse
    })

    /** Keeps the response and its input for 30 days when the request asked to be stored; nothing otherwise. */
    const keep = Effect.fn("Responses.keep")(function* (credential: Credential, prepared: PreparedResponse, requestId: string, response: ResponseObject) {
      if (!prepared.decoded.options.store) return
      // The answer is delivered (and billed) even when it cannot be kept: a later continuation of it is then a 404.
      yield* stored.save({
        id: response.id,
        accountId: credential.accountId,
        requestId,
        previousResponseId: prepared.decoded.options.previousResponseId,
        response: encodeJson(response),
        inputItems: storedInputItems(prepared.decoded.inputItems, response.id)
      }).pipe(Effect.catchAllCause((cause) => Effect.logError("stored response not kept", cause)))
    })

    const retrieve = Effect.fn("Responses.retrieve")(function* (accountId: string, id: string) {
      const row = yield* stored.find(accountId, id)
      if (Option.isNone(row)) return yield* notFound(id)
      return yield* Option.match(decodeStoredResponse(row.value.response), {
        onNone: () => Effect.dieMessage(`stored response ${id} does not decode`),
        onSome: Effect.succeed
      })
    })

    const remove = Effect.fn("Responses.remove")(function* (accountId: string, id: string) {
      if (!(yield* stored.remove(accountId, id))) return yield* notFound(id)
      return { id, object: "response" as const, deleted: true as const }
    })

    const inputItems = Effect.fn("Responses.inputItems")(function* (accountId: string, id: string, query: InputItemsQuery) {
      const page = yield* stored.inputItems(accountId, id, query)
      if (Option.isNone(page)) return yield* notFound(id)
      return page.value
    })

    /**
     * The stored response of the account's request `requestId` (`gen_<hex>`, the bill's id; its response is
     * `resp_<hex>`) with every input item of that request in request order, as the console shows them beside the bill.
     * 404 when there is none: not a `/v1/responses` request, stored with store=false, deleted, expired, another account's.
     */
    const ofRequest = Effect.fn("Responses.ofRequest")(function* (accountId: string, requestId: string) {
      const row = requestId.startsWith("gen_") ? yield* stored.find(accountId, responseIdOf(requestId)) : Option.none()
      if (Option.isNone(row) || row.value.requestId !== requestId) {
        return yield* new NotFound({
          message: `No stored response for request ${JSON.stringify(requestId)} on this account (not a /v1/responses request, ` +
            "stored with store=false, deleted or expired)."
        })
      }
      const response = yield* Option.match(decodeStoredResponse(row.value.response), {
        onNone: () => Effect.dieMessage(`stored response ${row.value.id} does not decode`),
        onSome: Effect.succeed
      })
      return { response, inputItems: row.value.inputItems }
    })

    /** `POST /v1/responses/input_tokens`: the count a send of the same request would reserve for. */
    const countInput = Effect.fn("Responses.countInput")(function* (credential: Credential, json: unknown) {
      const request = yield* parseInputTokensRequest(json)
      const sealer = seal.sealerFor(credential.accountId)
      const chain = yield* history(credential.accountId, request.previous_response_id)
      const decoded = yield* Either.mapLeft(
        decodeResponsesRequest({ ...request, input: request.input ?? [] }, chain, sealer),
        (refusal): ValidationFailed => refusal
      )
      if (decoded.chat.messages.length === 0) {
        return yield* new ValidationFailed({ message: "Nothing to count: send `input` or a `previous_response_id`.", param: "input" })
      }
      return yield* counter.count({ chat: decoded.chat, route: decoded.route, format: "responses", apiKey: credential })
    })

    return { prepare, keep, retrieve, remove, inputItems, ofRequest, countInput } as const
  })
}) {}
