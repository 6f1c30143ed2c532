/**
 * One upstream format behind one interface (DESIGN.md section 10): an adapter builds its vendor's request from the
 * canonical one (domain/exchange/translate/*Upstream.ts), sends it with the key's credentials, and answers with
 * canonical events. A failure before the reply starts (status, timeout, network, an unreadable non-streaming body) is
 * an `UpstreamFailure` of the call itself, which the router answers by trying the next key or candidate; a failure
 * inside a started stream is a failure of the event stream.
 */
import type { Effect, Stream } from "effect"
import type { ChatEvent, ChatRequest } from "../../../domain/exchange/canonical.ts"
import type { EmbeddedBatch, EmbeddingText } from "../../../domain/exchange/translate/embeddings.ts"
import type { ProviderConfig, UpstreamFormat, UpstreamKey } from "../../../domain/exchange/providers.ts"
import type { ModelTraits } from "../../../domain/exchange/traits.ts"
import type { UpstreamFailure } from "../upstreamHttp.ts"

/** Where one attempt goes: the provider, the key it is made with, and what the model needs from the request. */
export interface UpstreamTarget {
  readonly provider: ProviderConfig
  readonly key: UpstreamKey
  /** The vendor's own model id (the card's sdkId). */
  readonly upstreamModel: string
  /** The catalog vendor (quirks of OpenAI-compatible vendors). */
  readonly vendor: string
  /** `max_tokens` when the client set none and the format requires one (Anthropic). */
  readonly defaultMaxTokens: number
  readonly firstByteTimeoutMs: number
  /** How long a started answer may stay silent before it is left; unset: the first-byte timeout. */
  readonly idleTimeoutMs?: number
  /** How the model takes reasoning and what it refuses (data/exchange/model-traits.yaml). */
  readonly traits: ModelTraits
}

/** A token count sends the prompt only: no output limit, and no vendor quirks of the reply. */
export type CountTarget = Pick<UpstreamTarget, "provider" | "key" | "upstreamModel" | "firstByteTimeoutMs" | "idleTimeoutMs" | "traits">

export interface ProviderAdapter {
  readonly format: UpstreamFormat
  /** The whole answer, read and parsed: canonical events as an array (no Stream for an answer that arrived whole). */
  readonly complete: (chat: ChatRequest, target: UpstreamTarget) => Effect.Effect<ReadonlyArray<ChatEvent>, UpstreamFailure>
  /** Succeeds once the response head (2xx) and its first event arrived; the events follow on the stream. */
  readonly stream: (chat: ChatRequest, target: UpstreamTarget) => Effect.Effect<Stream.Stream<ChatEvent, UpstreamFailure>, UpstreamFailure>
  /** The vendor's own input count, where it publishes a counter (absent for OpenAI-shaped vendors). */
  readonly countTokens?: (chat: ChatRequest, target: CountTarget) => Effect.Effect<number, UpstreamFailure>
  /**
   * One call of the vendor's embeddings API (at most its batch size of inputs): the vectors in input order, and its
   * token count when it reports one. Absent where the format sells no embeddings (Anthropic).
   */
  readonly embed?: (inputs: ReadonlyArray<EmbeddingText>, dimensions: number | undefined, target: CountTarget) => Effect.Effect<EmbeddedBatch, UpstreamFailure>
}
