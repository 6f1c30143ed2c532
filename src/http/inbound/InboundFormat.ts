/**
 * The one interface every inbound wire format implements (DESIGN.md section 10, "Agents' dialects"): chat
 * completions, messages and responses, one file each beside this one. A format decodes its body into the canonical
 * request, renders a whole answer, and frames a stream's events; refusals are rendered by the one error renderer
 * (src/http/errorEnvelope.ts) for every format, whose envelope each vendor's SDK reads (`error.message`, `code`).
 * src/http/inference.ts runs the request program over whichever format the route names.
 */
import type { Effect, Stream } from "effect"
import type { NotFound, ValidationFailed } from "../../../domain/errors.ts"
import type { ChatEvent, ChatRequest, ReplyBill, RouteRequest, StreamFailure, Usage } from "../../../domain/exchange/canonical.ts"
import type { Credential } from "../../../domain/accounts/credential.ts"
import type { InboundFormatName, Reply } from "../../../services/exchange/Exchange.ts"

/** What the request's head adds to its body: Anthropic clients name their betas in a header. */
export interface InferenceHead {
  readonly anthropicBeta?: string | ReadonlyArray<string> | undefined
}

/** What every format's decoder yields: the canonical request and how to route it. */
export interface DecodedInference {
  readonly chat: ChatRequest
  readonly route: RouteRequest
  readonly stream: boolean
  readonly endUser: string | undefined
  /** Fields accepted and dropped whatever serves the request (X-Dropped-Parameters). */
  readonly dropped?: ReadonlyArray<string> | undefined
}

export type WholeReply = Extract<Reply, { readonly _tag: "Whole" }>
export type StreamReply = Extract<Reply, { readonly _tag: "Stream" }>

/**
 * Declared with methods, so a format over its own decoded type stands in the route table beside the others: each
 * format only ever receives back the value its own `decode` produced.
 */
export interface InboundFormat<D extends DecodedInference, R, E extends ValidationFailed | NotFound = ValidationFailed> {
  readonly name: InboundFormatName
  /** The body (already JSON) into the canonical request, or the refusal naming every offending field. */
  decode(json: unknown, credential: Credential, head: InferenceHead): Effect.Effect<D, E, R>
  /** A whole answer as the format's JSON text. */
  whole(reply: WholeReply, decoded: D, credential: Credential): Effect.Effect<string, never, R>
  /** A streamed answer as the format's server-sent events, pulled frame by frame. */
  frames(reply: StreamReply, decoded: D, credential: Credential): Stream.Stream<string, never, R>
}

/** A format's stream renderer over canonical events: frames per event, then the end or the interruption. */
export interface EventFramer {
  readonly event: (event: ChatEvent) => string
  readonly finish: (usage: Usage, bill: ReplyBill) => string
  readonly interrupted: (failure: StreamFailure) => string
}
