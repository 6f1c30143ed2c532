/**
 * The exchange's endpoints (SPEC "Inference endpoints"): both chat wire formats (JSON or server-sent events), the
 * routable model list, and the stored bill of a request. The inference bodies are decoded by the wire format's own
 * rules (domain/exchange/translate/*Inbound.ts, which report every offending field), so the routes take the raw
 * request; the schemas here are what the document shows.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  AllKeysExhausted,
  ApiKeyFrozen,
  ApiKeyRevoked,
  AppGrantFrozen,
  AppGrantRevoked,
  InsufficientBalance,
  InvalidApiKey,
  InvalidAppGrant,
  ModelRestricted,
  NotFound,
  RateLimited,
  SpendingLimitReached,
  ValidationFailed
} from "../../domain/errors.ts"
import { MessageReply } from "../../domain/exchange/wire/anthropicMessagesReply.ts"
import { ChatCompletion } from "../../domain/exchange/wire/openaiChat.ts"
import { EmbeddingsReply } from "../../domain/exchange/wire/openaiEmbeddings.ts"
import { DeletedResponse, InputItemList, InputTokensCount, ResponseObject } from "../../domain/exchange/wire/openaiResponsesReply.ts"
import { errorsWire, errorWire } from "../http/errorEnvelope.ts"
import { CurrentCredential } from "../../services/accounts/CurrentIdentity.ts"
import { ApiKeyAuth, credentialBearer, CredentialFailure } from "./ApiKeyAuth.ts"
import { reportAllIssues } from "./shared.ts"

/** `POST /v1/messages` also takes the key as `x-api-key` (SPEC Authentication 2). */
export class MessagesKeyAuth extends HttpApiMiddleware.Tag<MessagesKeyAuth>()("MessagesKeyAuth", {
  provides: CurrentCredential,
  failure: CredentialFailure,
  security: { bearer: credentialBearer, apiKey: HttpApiSecurity.apiKey({ in: "header", key: "x-api-key" }) }
}) {}

const EventStream = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })).annotations({
  description: "With `stream: true`: server-sent events in the format's own order (see the endpoint description)"
})

const ChatBody = Schema.Struct({ model: Schema.optional(Schema.String), messages: Schema.Array(Schema.Unknown) }).annotations({
  identifier: "ChatCompletionsRequest",
  description:
    "The OpenAI chat-completions request. Extensions: `models` (ordered fallback list, 1-8 ids), `conversation_id`, `routing_bias` " +
    "(cheaper | balanced | better, only with `auto`). `model` omitted or `auto` lets the exchange choose."
})

const MessagesBody = Schema.Struct({ model: Schema.optional(Schema.String), max_tokens: Schema.Int, messages: Schema.Array(Schema.Unknown) }).annotations({
  identifier: "MessagesRequest",
  description: "The Anthropic messages request. Extensions: `models` (ordered fallback list, 1-8 ids), `routing_bias` (only with `auto`)."
})

const CountTokensBody = Schema.Struct({ model: Schema.optional(Schema.String), messages: Schema.Array(Schema.Unknown) }).annotations({
  identifier: "CountTokensRequest",
  description: "The prompt of a messages request (`model`, `messages`, `system`, `tools`, `tool_choice`, `thinking`, ...); `max_tokens` optional."
})

/** Anthropic's answer shape (`MessageTokensCount`). */
export const MessageTokensCount = Schema.Struct({
  input_tokens: Schema.Int.annotations({ description: "The input count a send would reserve for" })
}).annotations({ identifier: "MessageTokensCount" })

/*
 * What the inference endpoints answer besides their credential check's errors (a group's middleware) and the API's
 * 500 and 503, each set declared once: on the group where every endpoint of it answers the set, else on the endpoints.
 */
/** A request naming a model, checked against the key's rules and its rate: a refused body (422), a model the key may not use (403), over the key's rate (429). */
const ModelRequestErrors = errorsWire(ValidationFailed, ModelRestricted, RateLimited)
/** A request the exchange routes and bills: the balance or a cap cannot cover its hold, or no upstream key can take it. */
const BilledRequestErrors = errorsWire(InsufficientBalance, SpendingLimitReached, AllKeysExhausted)

export class ChatGroup extends HttpApiGroup.make("chat")
  .add(
      HttpApiEndpoint.post("chatCompletions", "/v1/chat/completions")
        .setPayload(ChatBody)
        .addSuccess(ChatCompletion)
        .addSuccess(EventStream)
        .addError(BilledRequestErrors)
        .addError(ModelRequestErrors)
        .annotate(OpenApi.Summary, "Chat completion (OpenAI wire format), streaming or not, billed from the key's account")
        .annotate(
          OpenApi.Description,
          "Streaming: `data:` chunks (`chat.completion.chunk`), the first delta carrying `role`, `delta.reasoning` before content; " +
            "the final chunk carries `finish_reason`, `usage`, `x_credits_used`, `x_credits_remaining` and `x_ratelimit_requests_remaining`, " +
            "then `data: [DONE]`. An upstream failure after the first byte ends the stream with an `error` chunk of code `stream_interrupted`."
        )
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Chat completions") {}

const EmbeddingsBody = Schema.Struct({
  model: Schema.optional(Schema.String),
  input: Schema.Union(Schema.String, Schema.Array(Schema.Unknown))
}).annotations({
  identifier: "EmbeddingsRequest",
  description:
    "The OpenAI embeddings request: `input` (a string, strings, token ids or arrays of token ids), `model`, `dimensions`, " +
    "`encoding_format` (float or base64), `user`. Extension: `models` (ordered fallback list of embedding models). " +
    "`auto` is refused: vectors compare only within one model."
})

export class EmbeddingsGroup extends HttpApiGroup.make("embeddings")
  .add(
    HttpApiEndpoint.post("embeddings", "/v1/embeddings")
      .setPayload(EmbeddingsBody)
      .addSuccess(EmbeddingsReply)
      .addError(BilledRequestErrors)
      .addError(ModelRequestErrors)
      .annotate(OpenApi.Summary, "Embeddings (OpenAI wire format) of an embedding model, billed per input token from the key's account")
      .annotate(
        OpenApi.Description,
        "The inputs are sent in the model's batch size, in order, and answered in input order. The bill is the vendor's " +
          "prompt_tokens (the exchange's count where the vendor reports none) at the model's input price; the answer carries " +
          "`x_credits_used` and `x_credits_remaining`, and the routing headers as chat does."
      )
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Embeddings") {}

export class MessagesGroup extends HttpApiGroup.make("messages")
  .add(
      HttpApiEndpoint.post("messages", "/v1/messages")
        .setPayload(MessagesBody)
        .addSuccess(MessageReply)
        .addSuccess(EventStream)
        .addError(BilledRequestErrors)
        .annotate(OpenApi.Summary, "Messages (Anthropic wire format), streaming or not, billed from the key's account")
        .annotate(
          OpenApi.Description,
          "Streaming: `message_start`, `content_block_start`, `content_block_delta` (`thinking_delta`, `signature_delta`, `text_delta`, " +
            "`input_json_delta`), `content_block_stop`, `message_delta` (`stop_reason`, `stop_sequence`, `usage`, `x_credits_*`), `message_stop`. " +
            "An upstream failure after the first byte ends the stream with an `error` event of code `stream_interrupted`."
        )
  )
  .add(
    HttpApiEndpoint.post("countTokens", "/v1/messages/count_tokens")
      .setPayload(CountTokensBody)
      .addSuccess(MessageTokensCount)
      .annotate(OpenApi.Summary, "Count a messages request's input tokens (free, never billed)")
      .annotate(
        OpenApi.Description,
        "The input count a send of the same request would reserve for: the model's vendor's own counter where it publishes " +
          "one, else the exchange's estimate; for `auto` and `models[]`, the costliest candidate's. `max_tokens` is optional. " +
          "Rate-limited per key, apart from the sends."
      )
  )
  // Both the send and the count refuse these.
  .addError(ModelRequestErrors)
  .middleware(MessagesKeyAuth)
  .annotate(OpenApi.Title, "Messages") {}

const ResponsesBody = Schema.Struct({ model: Schema.optional(Schema.String), input: Schema.Union(Schema.String, Schema.Array(Schema.Unknown)) }).annotations({
  identifier: "ResponsesRequest",
  description:
    "The OpenAI Responses request (`input` as a string or items, `instructions`, `tools`, `text.format`, `reasoning`, `store`, " +
    "`previous_response_id`, `include`, ...). Extensions as on chat: `models`, `conversation_id`, `routing_bias`. " +
    "Built-in tools (web_search ...) are dropped and named in X-Dropped-Parameters."
})

const InputTokensBody = Schema.Struct({ model: Schema.optional(Schema.String), input: Schema.optional(Schema.Unknown) }).annotations({
  identifier: "ResponsesInputTokensRequest",
  description: "The input side of a Responses request (`input`, `instructions`, `tools`, `previous_response_id`, ...)."
})

const ResponseIdPath = Schema.Struct({ id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)) })

export const InputItemsQuery = reportAllIssues(
  Schema.Struct({
    limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))).annotations({
      description: "1-100, default 20",
      jsonSchema: { type: "integer", minimum: 1, maximum: 100 }
    }),
    order: Schema.optional(Schema.Literal("asc", "desc")).annotations({ description: "Default desc (newest first)" }),
    after: Schema.optional(Schema.String).annotations({ description: "An item id: the page starts after it" }),
    before: Schema.optional(Schema.String).annotations({ description: "An item id: the page ends before it" })
  })
)

export class ResponsesGroup extends HttpApiGroup.make("responses")
  .add(
    HttpApiEndpoint.post("createResponse", "/v1/responses")
      .setPayload(ResponsesBody)
      .addSuccess(ResponseObject)
      .addSuccess(EventStream)
      .addError(errorWire(ModelRestricted))
      .addError(BilledRequestErrors)
      .annotate(OpenApi.Summary, "Create a response (OpenAI Responses wire format), streaming or not, billed from the key's account")
      .annotate(
        OpenApi.Description,
        "Stored for 30 days unless `store: false` (then only the bill is kept); `previous_response_id` continues a stored response " +
          "of the same account. Streaming: `response.created`, `response.in_progress`, `response.output_item.added`, " +
          "`response.content_part.added`, `response.output_text.delta` / `.done`, `response.function_call_arguments.delta` / `.done`, " +
          "`response.reasoning_summary_text.delta`, `response.output_item.done`, then `response.completed` (or `response.incomplete`) " +
          "with usage and `x_credits_*`; each event has its `sequence_number`. An upstream failure after the first byte is " +
          "`response.failed` with error code `stream_interrupted`."
      )
  )
  .add(
    HttpApiEndpoint.post("responseInputTokens", "/v1/responses/input_tokens")
      .setPayload(InputTokensBody)
      .addSuccess(InputTokensCount)
      .addError(errorWire(ModelRestricted))
      .annotate(OpenApi.Summary, "Count a Responses request's input tokens (free, never billed; rate-limited per key)")
  )
  .add(
    HttpApiEndpoint.get("getResponse", "/v1/responses/:id")
      .setPath(ResponseIdPath)
      .addSuccess(ResponseObject)
      .annotate(OpenApi.Summary, "A stored response of the key's account")
  )
  .add(
    HttpApiEndpoint.del("deleteResponse", "/v1/responses/:id")
      .setPath(ResponseIdPath)
      .addSuccess(DeletedResponse)
      .annotate(OpenApi.Summary, "Delete a stored response (its bill stays)")
  )
  .add(
    HttpApiEndpoint.get("responseInputItems", "/v1/responses/:id/input_items")
      .setPath(ResponseIdPath)
      .setUrlParams(InputItemsQuery)
      .addSuccess(InputItemList)
      .annotate(OpenApi.Summary, "The input items of a stored response, paged as OpenAI pages them")
  )
  .addError(errorsWire(ValidationFailed, NotFound, RateLimited))
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Responses") {}

export const ModelListItem = Schema.Struct({
  id: Schema.String.annotations({ description: "`<vendor>/<model>`" }),
  object: Schema.Literal("model"),
  created: Schema.Int.annotations({ description: "Release date, epoch seconds" }),
  owned_by: Schema.String,
  displayName: Schema.String,
  routingAliases: Schema.Array(Schema.String).annotations({ description: "Other spellings that route to this model (the bare name when unambiguous)" }),
  maxInputTokens: Schema.optional(Schema.Int),
  kind: Schema.Literal("text", "embedding").annotations({ description: "text: chat, messages, responses; embedding: /v1/embeddings" }),
  dimensions: Schema.optional(Schema.Int.annotations({ description: "An embedding model's default vector size" }))
}).annotations({ identifier: "ModelListItem" })

export const ModelList = Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(ModelListItem) }).annotations({ identifier: "ModelList" })

export const AvailabilityView = Schema.Struct({
  computedAt: Schema.String.annotations({ jsonSchema: { type: "string", format: "date-time" } }),
  ttlSeconds: Schema.Int.annotations({ description: "How long this answer may be cached" }),
  models: Schema.Array(Schema.Struct({ id: Schema.String, kind: Schema.String, routable: Schema.Boolean })).annotations({
    description: "Every catalog model: whether a key of its provider can take a request now (and the caller's key allows it)"
  }),
  auto: Schema.NullOr(Schema.Struct({ id: Schema.String })).annotations({ description: "The model `auto` resolves to right now; null when none can serve" })
}).annotations({ identifier: "Availability", description: "Advisory only" })

export class ModelsGroup extends HttpApiGroup.make("models")
  .add(
    HttpApiEndpoint.get("models", "/v1/models")
      .addSuccess(ModelList)
      .annotate(OpenApi.Summary, "The routable catalogue (OpenAI list format); cached 60 s")
  )
  .add(
    HttpApiEndpoint.get("availability", "/v1/models/availability")
      .addSuccess(AvailabilityView)
      .addError(errorsWire(InvalidApiKey, ApiKeyFrozen, ApiKeyRevoked, InvalidAppGrant, AppGrantFrozen, AppGrantRevoked))
      .annotate(OpenApi.Summary, "Which models can be served now, and what `auto` resolves to; a Bearer key (or app grant) is optional")
  )
  .annotate(OpenApi.Title, "Models") {}

const TokenCount = (name: string) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 1_048_576)).annotations({
    description: `${name}, 0-1048576`,
    jsonSchema: { type: "integer", minimum: 0, maximum: 1_048_576 }
  })
const LiteralBoolean = Schema.transform(Schema.Literal("true", "false"), Schema.Boolean, {
  strict: true,
  decode: (text) => text === "true",
  encode: (value) => (value ? "true" : "false")
}).annotations({ jsonSchema: { type: "string", enum: ["true", "false"] } })

export const EstimateQuery = reportAllIssues(
  Schema.Struct({
    model: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).annotations({ description: "Default `auto`" }),
    promptTokens: Schema.optional(TokenCount("Input tokens (default 1000)")),
    completionTokens: Schema.optional(TokenCount("Output tokens (default 500)")),
    reasoningRequested: Schema.optional(LiteralBoolean),
    toolsPresent: Schema.optional(LiteralBoolean),
    routing_bias: Schema.optional(Schema.Literal("cheaper", "balanced", "better"))
  })
)

export const EstimateView = Schema.Struct({
  model: Schema.String,
  resolvedModel: Schema.String,
  promptTokens: Schema.Int,
  completionTokens: Schema.Int,
  creditsCost: Schema.Number,
  creditsWei: Schema.String.annotations({ description: "Digit string" }),
  usdCost: Schema.Number,
  reservedWei: Schema.String.annotations({ description: "Digit string: the hold a send would take (the costliest candidate)" }),
  tierFromInputTokens: Schema.NullOr(Schema.Int)
}).annotations({ identifier: "Estimate" })

export class EstimateGroup extends HttpApiGroup.make("estimate")
  .add(
    HttpApiEndpoint.get("estimate", "/v1/inference/estimate")
      .setUrlParams(EstimateQuery)
      .addSuccess(EstimateView)
      .addError(errorWire(ValidationFailed))
      .annotate(OpenApi.Summary, "Quote a request without sending it: the model the exchange would choose, its cost and the hold")
  )
  .annotate(OpenApi.Title, "Estimate") {}

