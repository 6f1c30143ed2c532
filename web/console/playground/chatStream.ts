/**
 * The playground's one chat request: `POST /v1/chat/completions` with `stream: true`, spent from the key the user
 * chose, read as the OpenAI SDK reads it: server-sent `data:` lines, each decoded by the same chunk Schema the server
 * encodes with, until `[DONE]`. The routing headers arrive before the first chunk; a refusal before the stream is the
 * API's error envelope. Interrupting the returned fiber aborts the fetch (the server then bills what was produced).
 */
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Schema, Stream } from "effect"
import { ChatCompletionChunk, ChatStreamError } from "../../../domain/exchange/wire/openaiChat.ts"
import { baseUrl } from "../api.ts"

export interface ChatTarget {
  /** A model key, `auto`, or the first of a fallback list. */
  readonly model: string
  /** The rest of a fallback list (`models`), tried in order when the first cannot serve. */
  readonly fallbacks: ReadonlyArray<string>
}

/** What the exchange's headers say about the request: who chose the model, which one served, whether it fell back. */
export interface RoutingHeaders {
  readonly requestId: string | null
  readonly modelRequested: string | null
  readonly modelUsed: string | null
  readonly fallbackUsed: string | null
  readonly chooser: string | null
  readonly provider: string | null
  readonly routingStrategy: string | null
}

export type ChatEvent =
  | { readonly _tag: "Started"; readonly headers: RoutingHeaders }
  | { readonly _tag: "Delta"; readonly content: string; readonly reasoning: string }
  | { readonly _tag: "Finished"; readonly chunk: ChatCompletionChunk }

export class ChatRefused extends Schema.TaggedError<ChatRefused>()("ChatRefused", { status: Schema.Number, message: Schema.String }) {}
export class StreamBroken extends Schema.TaggedError<StreamBroken>()("StreamBroken", { message: Schema.String }) {}

const ErrorEnvelope = Schema.Struct({ error: Schema.Struct({ message: Schema.String }) })
const StreamLine = Schema.parseJson(Schema.Union(ChatCompletionChunk, ChatStreamError))

const routingHeaders = (headers: Record<string, string>): RoutingHeaders => ({
  requestId: headers["x-request-id"] ?? null,
  modelRequested: headers["x-model-requested"] ?? null,
  modelUsed: headers["x-model-used"] ?? null,
  fallbackUsed: headers["x-fallback-used"] ?? null,
  chooser: headers["x-model-chooser"] ?? null,
  provider: headers["x-provider"] ?? null,
  routingStrategy: headers["x-routing-strategy"] ?? null
})

/** Sends the chat and hands every event to `onEvent` as it arrives. */
export const streamChat = (input: {
  readonly secret: string
  readonly target: ChatTarget
  readonly prompt: string
  readonly onEvent: (event: ChatEvent) => void
}): Effect.Effect<void, ChatRefused | StreamBroken> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const request = HttpClientRequest.post(`${baseUrl}/v1/chat/completions`).pipe(
      HttpClientRequest.bearerToken(input.secret),
      HttpClientRequest.bodyUnsafeJson({
        model: input.target.model,
        ...(input.target.fallbacks.length === 0 ? {} : { models: [input.target.model, ...input.target.fallbacks] }),
        messages: [{ role: "user", content: input.prompt }],
        stream: true
      })
    )
    const response = yield* client.execute(request)
    if (response.status !== 200) {
      const message = yield* Effect.flatMap(response.json, Schema.decodeUnknown(ErrorEnvelope)).pipe(
        Effect.map((body) => body.error.message),
        Effect.orElseSucceed(() => `The exchange answered ${response.status}.`)
      )
      return yield* new ChatRefused({ status: response.status, message })
    }
    input.onEvent({ _tag: "Started", headers: routingHeaders(response.headers) })
    yield* response.stream.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.filter((line) => line.startsWith("data: ")),
      Stream.map((line) => line.slice("data: ".length)),
      Stream.takeWhile((data) => data !== "[DONE]"),
      Stream.mapEffect((data) => Schema.decodeUnknown(StreamLine)(data)),
      Stream.runForEach((line) => {
        if ("error" in line) return new StreamBroken({ message: line.error.message })
        const delta = line.choices[0]?.delta
        if (delta !== undefined && (delta.content !== undefined || delta.reasoning !== undefined)) {
          input.onEvent({ _tag: "Delta", content: delta.content ?? "", reasoning: delta.reasoning ?? "" })
        }
        if (line.usage !== null) input.onEvent({ _tag: "Finished", chunk: line })
        return Effect.void
      })
    )
  }).pipe(
    Effect.catchTags({
      RequestError: (error) => new StreamBroken({ message: `The request did not reach the exchange: ${error.message}` }),
      ResponseError: (error) => new StreamBroken({ message: `The answer broke off: ${error.message}` }),
      ParseError: (error) => new StreamBroken({ message: `A chunk of the answer was not what the API documents: ${error.message}` })
    }),
    Effect.provide(FetchHttpClient.layer)
  )
