/**
 * What every upstream format does the same way: POST a JSON body to the provider's base URL, read a whole answer as
 * JSON, read a streamed one as server-sent events, and turn a pure parser's verdict into the call's failure. The
 * formats differ only in their headers, their request builders and their parsers (one file each beside this one).
 */
import { Effect, Either, Stream } from "effect"
import type { ChatEvent } from "../../../domain/exchange/canonical.ts"
import type { UpstreamProtocolError, UpstreamStreamError } from "../../../domain/exchange/upstreamErrors.ts"
import { openSse, postJson, readText, UpstreamFailure, type UpstreamResponse } from "../upstreamHttp.ts"
import type { UpstreamTarget } from "./ProviderAdapter.ts"

/** A vendor request as the pure builders make it: the path below the provider's base URL and the JSON body. */
export interface UpstreamRequest {
  readonly path: string
  readonly body: unknown
}

type ParserError = UpstreamProtocolError | UpstreamStreamError

/** A stateful parser of one stream's SSE messages (`event:` name, `data:` payload) into canonical events. */
export type SseParser = (event: string | undefined, data: string) => Either.Either<ReadonlyArray<ChatEvent>, ParserError>

type Destination = Pick<UpstreamTarget, "provider" | "firstByteTimeoutMs" | "idleTimeoutMs">

/** How long a started answer may stay silent: the target's idle timeout, else its first-byte timeout. */
const idleTimeoutOf = (destination: Destination) => destination.idleTimeoutMs ?? destination.firstByteTimeoutMs

/** A pure parser's refusal as the call's failure: an error the vendor reported mid-stream stays a `stream` failure. */
export const protocolFailure = (error: ParserError): UpstreamFailure =>
  new UpstreamFailure({
    kind: error._tag === "UpstreamStreamError" ? "stream" : "protocol",
    message: error.message,
    status: error.status
  })

const parsed = <A>(result: Either.Either<A, ParserError>): Either.Either<A, UpstreamFailure> => Either.mapLeft(result, protocolFailure)

const send = (destination: Destination, headers: Readonly<Record<string, string>>, request: UpstreamRequest) =>
  postJson(`${destination.provider.baseUrl}${request.path}`, headers, JSON.stringify(request.body), destination.firstByteTimeoutMs)

/** The whole body parsed as JSON once; `notJson` says what was expected when it is not. */
export const readJson = (response: UpstreamResponse, idleTimeoutMs: number, notJson: string): Effect.Effect<unknown, UpstreamFailure> =>
  Effect.flatMap(readText(response, idleTimeoutMs), (text) =>
    Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new UpstreamFailure({ kind: "protocol", message: notJson })
    }))

/** Sends a non-streaming request and parses the whole answer into its events, without a Stream. */
export const completeJson = (
  destination: Destination,
  headers: Readonly<Record<string, string>>,
  request: UpstreamRequest,
  parse: (json: unknown) => Either.Either<ReadonlyArray<ChatEvent>, ParserError>
): Effect.Effect<ReadonlyArray<ChatEvent>, UpstreamFailure> =>
  Effect.gen(function* () {
    const response = yield* send(destination, headers, request)
    const json = yield* readJson(response, idleTimeoutOf(destination), "the upstream answer is not JSON")
    return yield* parsed(parse(json))
  })

/**
 * Sends a streaming request; succeeds once the answer's head and first event arrived and parsed (openSse), so a
 * vendor that fails, stays silent or sends garbage before it is still a failed attempt, not a broken stream.
 */
export const streamSse = (
  destination: Destination,
  headers: Readonly<Record<string, string>>,
  request: UpstreamRequest,
  parse: SseParser
): Effect.Effect<Stream.Stream<ChatEvent, UpstreamFailure>, UpstreamFailure> =>
  Effect.gen(function* () {
    const response = yield* send(destination, headers, request)
    return yield* openSse(
      response,
      { firstEventMs: destination.firstByteTimeoutMs, idleMs: idleTimeoutOf(destination) },
      (message) => parsed(parse(message.event, message.data))
    )
  })

/** A whole JSON answer to one request (a token count, embeddings), parsed by the format's pure reader. */
export const callJson = <A>(
  destination: Destination,
  headers: Readonly<Record<string, string>>,
  request: UpstreamRequest,
  parse: (json: unknown) => Either.Either<A, ParserError>
): Effect.Effect<A, UpstreamFailure> =>
  Effect.gen(function* () {
    const response = yield* send(destination, headers, request)
    const json = yield* readJson(response, idleTimeoutOf(destination), "the upstream answer is not JSON")
    return yield* parsed(parse(json))
  })
