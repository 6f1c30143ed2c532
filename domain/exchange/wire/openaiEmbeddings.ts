/**
 * OpenAI's embeddings wire format (DESIGN.md section 10, "Agents' dialects"): our `POST /v1/embeddings` accepts it and
 * the OpenAI-compatible upstreams speak it. Here: the request as WE accept it (strict: an unknown field is 422 naming
 * it), the answer as we send it (Type = Encoded), and the vendors' answers as we read them (lenient: extra fields
 * pass). Shapes follow `openai` (node_modules/openai/resources/embeddings.d.ts).
 */
import { Schema } from "effect"

const NonEmptyString = Schema.String.pipe(Schema.minLength(1))

/** OpenAI's own bound on one request; a model's card may bound it lower (its batch size is the vendor's call size). */
export const MAX_EMBEDDING_INPUTS = 2048

/**
 * `input`: one text, texts, one token array, or token arrays. Its form is read by the translator
 * (domain/exchange/translate/embeddings.ts), which names the one element that fails: a union of the four forms would
 * answer each bad element with every other form's complaint.
 */
export const EmbeddingInput = Schema.Unknown.annotations({
  description: "A string, an array of strings, an array of token ids, or an array of token-id arrays (at most 2048 inputs; no empty one)",
  jsonSchema: {
    oneOf: [
      { type: "string", minLength: 1 },
      { type: "array", items: { type: "string", minLength: 1 }, minItems: 1, maxItems: MAX_EMBEDDING_INPUTS },
      { type: "array", items: { type: "integer", minimum: 0 }, minItems: 1 },
      { type: "array", items: { type: "array", items: { type: "integer", minimum: 0 }, minItems: 1 }, minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }
    ]
  }
})

export const EmbeddingsRequest = Schema.Struct({
  model: Schema.optional(NonEmptyString),
  input: EmbeddingInput,
  dimensions: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  encoding_format: Schema.optional(Schema.Literal("float", "base64")),
  user: Schema.optional(Schema.String),
  // The exchange's extension, as on chat: an ordered fallback list.
  models: Schema.optional(Schema.Array(NonEmptyString).pipe(Schema.minItems(1), Schema.maxItems(8)))
}).annotations({
  identifier: "EmbeddingsRequest",
  parseOptions: { errors: "all", onExcessProperty: "error" }
})
export type EmbeddingsRequest = typeof EmbeddingsRequest.Type

// ---------------------------------------------------------------------------------------------------------
// The answer as we send it

export const EmbeddingItem = Schema.Struct({
  object: Schema.Literal("embedding"),
  index: Schema.Number,
  /** Numbers, or with `encoding_format: "base64"` the little-endian float32 bytes in base64. */
  embedding: Schema.Union(Schema.Array(Schema.Number), Schema.String)
})

export const EmbeddingsReply = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(EmbeddingItem),
  model: Schema.String,
  usage: Schema.Struct({ prompt_tokens: Schema.Number, total_tokens: Schema.Number }),
  x_credits_used: Schema.Number,
  x_credits_remaining: Schema.Number,
  x_ratelimit_requests_remaining: Schema.NullOr(Schema.Number)
}).annotations({ identifier: "EmbeddingsReply" })
export type EmbeddingsReply = typeof EmbeddingsReply.Type

// ---------------------------------------------------------------------------------------------------------
// What the vendors answer (lenient)

/** An OpenAI-compatible vendor's answer; `float` is always asked for upstream. */
export const VendorEmbeddings = Schema.Struct({
  data: Schema.Array(Schema.Struct({ index: Schema.Number, embedding: Schema.Array(Schema.Number) })),
  usage: Schema.optional(Schema.Struct({ prompt_tokens: Schema.optional(Schema.Number), total_tokens: Schema.optional(Schema.Number) }))
})
export type VendorEmbeddings = typeof VendorEmbeddings.Type

/** Gemini's `batchEmbedContents` answer: vectors in request order, no usage. */
export const GeminiEmbeddings = Schema.Struct({
  embeddings: Schema.Array(Schema.Struct({ values: Schema.Array(Schema.Number) }))
})
export type GeminiEmbeddings = typeof GeminiEmbeddings.Type
