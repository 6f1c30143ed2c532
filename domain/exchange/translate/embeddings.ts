/**
 * Embeddings through the exchange, the pure part (DESIGN.md section 10, "Agents' dialects"): our request into the
 * exchange's own form, the vendors' calls (OpenAI-compatible `/v1/embeddings`, Gemini's `batchEmbedContents`) cut
 * to the vendor's batch size, their answers back in request order, and our answer.
 *
 * Decided:
 * - `model` names a model or `models` lists up to 8; `auto` (or none) is refused: an embedding is only comparable with
 *   others of the same model, so the exchange never picks one for the client.
 * - Token-array inputs go only to vendors that take token ids (OpenAI-compatible); Gemini takes text.
 * - Gemini's shortened vectors (`outputDimensionality`) come back unnormalised; they are normalised here, so a
 *   `dimensions` answer is unit length whoever served it, as OpenAI's text-embedding-3 answers are.
 * - `encoding_format: "base64"` is the vectors' little-endian float32 bytes, what the openai SDK decodes; upstream
 *   always answers floats.
 */
import { Either, Schema } from "effect"
import { ValidationFailed } from "../../errors.ts"
import { UpstreamProtocolError } from "../upstreamErrors.ts"
import type { ReplyBill } from "../canonical.ts"
import {
  MAX_EMBEDDING_INPUTS,
  type EmbeddingsReply,
  EmbeddingsRequest,
  GeminiEmbeddings,
  VendorEmbeddings
} from "../wire/openaiEmbeddings.ts"
import { modelPath } from "./geminiUpstream.ts"
import { renderBill } from "./openaiChatStream.ts"
import { decodeBody } from "./parseIssues.ts"

/** One input: a text, or the token ids of one (OpenAI's token-array form). */
export type EmbeddingText = { readonly text: string } | { readonly tokens: ReadonlyArray<number> }

export interface DecodedEmbeddings {
  readonly inputs: ReadonlyArray<EmbeddingText>
  readonly dimensions: number | undefined
  readonly encoding: "float" | "base64"
  readonly route: { readonly model?: string | undefined; readonly models?: ReadonlyArray<string> | undefined }
  readonly endUser: string | undefined
}

const parseEmbeddingsRequest = decodeBody(EmbeddingsRequest)

const isTokenId = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0
const isTokens = (value: unknown): value is ReadonlyArray<number> => Array.isArray(value) && value.length > 0 && value.every(isTokenId)

/** The inputs in their one form, or the refusal naming the element that breaks it. */
const inputsOf = (input: unknown): Either.Either<ReadonlyArray<EmbeddingText>, ValidationFailed> => {
  const refuse = (param: string, message: string) => Either.left(new ValidationFailed({ message, param }))
  if (typeof input === "string") return input === "" ? refuse("input", "`input` is empty.") : Either.right([{ text: input }])
  if (!Array.isArray(input)) {
    return refuse("input", "`input` must be a string, an array of strings, an array of token ids or an array of token-id arrays.")
  }
  if (input.length === 0) return refuse("input", "`input` is an empty array.")
  if (input.every(isTokenId)) return Either.right([{ tokens: input }])
  if (input.length > MAX_EMBEDDING_INPUTS) return refuse("input", `\`input\` holds ${input.length} inputs; at most ${MAX_EMBEDDING_INPUTS}.`)
  const texts = typeof input[0] === "string"
  for (const [i, item] of input.entries()) {
    if (texts ? typeof item !== "string" || item === "" : !isTokens(item)) {
      return refuse(`input.${i}`, texts ? "Each input must be a non-empty string, as the first is." : "Each input must be a non-empty array of token ids, as the first is.")
    }
  }
  return Either.right(input.map((item: string | ReadonlyArray<number>) => (typeof item === "string" ? { text: item } : { tokens: item })))
}

export const decodeEmbeddingsRequest = (body: unknown): Either.Either<DecodedEmbeddings, ValidationFailed> =>
  Either.flatMap(parseEmbeddingsRequest(body), (request) => {
    const named = request.model !== undefined && request.model !== "auto"
    if (!named && request.models === undefined) {
      return Either.left(
        new ValidationFailed({
          message: "Embeddings need a named model (or a `models` list): vectors compare only within one model, so `auto` is not served.",
          param: "model"
        })
      )
    }
    return Either.map(inputsOf(request.input), (inputs) => ({
      inputs,
      dimensions: request.dimensions,
      encoding: request.encoding_format ?? "float",
      route: { ...(named ? { model: request.model } : {}), ...(request.models !== undefined ? { models: request.models } : {}) },
      endUser: request.user === undefined || request.user === "" ? undefined : request.user
    }))
  })

/** The inputs cut into calls of at most `size` (the vendor's batch size), in order. */
export const batchesOf = <A>(items: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> => {
  const batches: Array<ReadonlyArray<A>> = []
  for (let at = 0; at < items.length; at += size) batches.push(items.slice(at, at + size))
  return batches
}

// ---------------------------------------------------------------------------------------------------------
// Upstream

/** An OpenAI-compatible vendor's request body: floats always (the answer is encoded here). */
export const openaiEmbeddingsBody = (inputs: ReadonlyArray<EmbeddingText>, upstreamModel: string, dimensions: number | undefined) => ({
  model: upstreamModel,
  input: inputs.every((input) => "text" in input)
    ? inputs.map((input) => (input as { readonly text: string }).text)
    : inputs.map((input) => ("tokens" in input ? input.tokens : [])),
  encoding_format: "float" as const,
  ...(dimensions !== undefined ? { dimensions } : {})
})

/** Gemini's `batchEmbedContents` request (texts only). */
export const geminiEmbeddingsBody = (inputs: ReadonlyArray<{ readonly text: string }>, upstreamModel: string, dimensions: number | undefined) => ({
  requests: inputs.map((input) => ({
    model: `models/${upstreamModel}`,
    content: { parts: [{ text: input.text }] },
    ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {})
  }))
})

/** The calls as the adapters send them: the path below the provider's base URL and the body. */
export const openaiEmbeddingsRequest = (inputs: ReadonlyArray<EmbeddingText>, upstreamModel: string, dimensions: number | undefined) => ({
  path: "/embeddings",
  body: openaiEmbeddingsBody(inputs, upstreamModel, dimensions)
})

export const geminiEmbeddingsRequest = (inputs: ReadonlyArray<{ readonly text: string }>, upstreamModel: string, dimensions: number | undefined) => ({
  path: `${modelPath(upstreamModel)}:batchEmbedContents`,
  body: geminiEmbeddingsBody(inputs, upstreamModel, dimensions)
})

/** One call's vectors in input order, and the vendor's token count when it gives one. */
export interface EmbeddedBatch {
  readonly vectors: ReadonlyArray<ReadonlyArray<number>>
  readonly promptTokens: number | undefined
}

/** An OpenAI-compatible answer: `data` put back in input order (vendors may answer out of order). */
export const readVendorEmbeddings = (answer: VendorEmbeddings, expected: number): Either.Either<EmbeddedBatch, string> => {
  const vectors: Array<ReadonlyArray<number> | undefined> = new Array(expected).fill(undefined)
  for (const item of answer.data) {
    if (!Number.isInteger(item.index) || item.index < 0 || item.index >= expected || vectors[item.index] !== undefined) {
      return Either.left(`the vendor answered an embedding at index ${item.index} for ${expected} inputs`)
    }
    vectors[item.index] = item.embedding
  }
  if (vectors.some((vector) => vector === undefined)) return Either.left(`the vendor answered ${answer.data.length} embeddings for ${expected} inputs`)
  return Either.right({ vectors: vectors as ReadonlyArray<ReadonlyArray<number>>, promptTokens: answer.usage?.prompt_tokens ?? answer.usage?.total_tokens })
}

/** Unit length (a zero vector stays as it is). */
export const normalised = (vector: ReadonlyArray<number>): ReadonlyArray<number> => {
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0))
  return norm === 0 ? vector : vector.map((v) => v / norm)
}

/** Gemini's answer: in request order, no usage (the exchange counts); shortened vectors normalised. */
export const readGeminiEmbeddings = (answer: GeminiEmbeddings, expected: number, shortened: boolean): Either.Either<EmbeddedBatch, string> =>
  answer.embeddings.length !== expected
    ? Either.left(`the vendor answered ${answer.embeddings.length} embeddings for ${expected} inputs`)
    : Either.right({ vectors: answer.embeddings.map((e) => (shortened ? normalised(e.values) : e.values)), promptTokens: undefined })

const protocol = (message: string) => new UpstreamProtocolError({ message })

/** An OpenAI-compatible vendor's whole answer, as the adapter reads it. */
export const parseVendorEmbeddings = (json: unknown, expected: number): Either.Either<EmbeddedBatch, UpstreamProtocolError> =>
  Either.flatMap(
    Either.mapLeft(Schema.decodeUnknownEither(VendorEmbeddings)(json), () => protocol("Unexpected embeddings reply")),
    (answer) => Either.mapLeft(readVendorEmbeddings(answer, expected), protocol)
  )

/** Gemini's whole answer, as the adapter reads it. */
export const parseGeminiEmbeddings = (json: unknown, expected: number, shortened: boolean): Either.Either<EmbeddedBatch, UpstreamProtocolError> =>
  Either.flatMap(
    Either.mapLeft(Schema.decodeUnknownEither(GeminiEmbeddings)(json), () => protocol("Unexpected Gemini batchEmbedContents reply")),
    (answer) => Either.mapLeft(readGeminiEmbeddings(answer, expected, shortened), protocol)
  )

// ---------------------------------------------------------------------------------------------------------
// Our answer

/** Little-endian float32 bytes in base64, as OpenAI sends `encoding_format: "base64"`. */
export const base64Floats = (vector: ReadonlyArray<number>): string => {
  const bytes = Buffer.alloc(vector.length * 4)
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4))
  return bytes.toString("base64")
}

export const renderEmbeddings = (
  vectors: ReadonlyArray<ReadonlyArray<number>>,
  model: string,
  promptTokens: number,
  encoding: "float" | "base64",
  bill: ReplyBill
): EmbeddingsReply => ({
  object: "list",
  data: vectors.map((vector, index) => ({ object: "embedding", index, embedding: encoding === "base64" ? base64Floats(vector) : vector })),
  model,
  usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  ...renderBill(bill)
})
