/**
 * Embeddings' pure translation: our request decoded and refused (naming the field; `auto` refused), inputs cut to a
 * vendor's batch size, the vendors' bodies and answers (out-of-order OpenAI data put back in order, Gemini's shortened
 * vectors normalised), and our answer, whose base64 form the official `openai` SDK's own decoding reads back as the
 * same float32 values.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  base64Floats,
  batchesOf,
  decodeEmbeddingsRequest,
  geminiEmbeddingsBody,
  normalised,
  openaiEmbeddingsBody,
  readGeminiEmbeddings,
  readVendorEmbeddings,
  renderEmbeddings
} from "../domain/exchange/translate/embeddings.ts"

const accept = (body: unknown) => Either.getOrThrow(decodeEmbeddingsRequest(body))
const refuse = (body: unknown) => {
  const decoded = decodeEmbeddingsRequest(body)
  if (Either.isRight(decoded)) throw new Error("accepted")
  return decoded.left
}

describe("decoding /v1/embeddings", () => {
  it("takes each input form OpenAI takes", () => {
    expect(accept({ model: "openai/text-embedding-3-small", input: "a" }).inputs).toEqual([{ text: "a" }])
    expect(accept({ model: "m", input: ["a", "b"] }).inputs).toEqual([{ text: "a" }, { text: "b" }])
    expect(accept({ model: "m", input: [1, 2, 3] }).inputs).toEqual([{ tokens: [1, 2, 3] }])
    expect(accept({ model: "m", input: [[1], [2, 3]] }).inputs).toEqual([{ tokens: [1] }, { tokens: [2, 3] }])
    expect(accept({ model: "m", input: "a", dimensions: 256, encoding_format: "base64", user: "u" })).toMatchObject({
      dimensions: 256, encoding: "base64", endUser: "u", route: { model: "m" }
    })
    expect(accept({ models: ["a", "b"], input: "x" }).route).toEqual({ models: ["a", "b"] })
  })

  it("refuses what OpenAI refuses and what the exchange will not do, naming the field", () => {
    expect(refuse({ input: "a" })).toMatchObject({ param: "model" })
    expect(refuse({ model: "auto", input: "a" })).toMatchObject({ param: "model" })
    expect(refuse({ model: "m", input: "" })).toMatchObject({ param: "input" })
    expect(refuse({ model: "m", input: [] })).toMatchObject({ param: "input" })
    expect(refuse({ model: "m", input: 7 })).toMatchObject({ param: "input" })
    expect(refuse({ model: "m", input: ["a", ""] })).toMatchObject({ param: "input.1" })
    expect(refuse({ model: "m", input: ["a", [1]] })).toMatchObject({ param: "input.1" })
    expect(refuse({ model: "m", input: [[1], [-1]] })).toMatchObject({ param: "input.1" })
    expect(refuse({ model: "m", input: Array.from({ length: 2049 }, () => "a") })).toMatchObject({ param: "input" })
    expect(refuse({ model: "m", input: "a", dimensions: 0 }).issues?.[0]).toMatchObject({ param: "dimensions" })
    expect(refuse({ model: "m", input: "a", encoding_format: "int8" }).issues?.[0]).toMatchObject({ param: "encoding_format" })
    expect(refuse({ model: "m", input: "a", extra: 1 }).issues?.[0]).toMatchObject({ param: "extra" })
  })
})

describe("the vendors' calls", () => {
  it("cuts inputs to the batch size, in order", () => {
    expect(batchesOf([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]])
    expect(batchesOf([1, 2], 100)).toEqual([[1, 2]])
  })

  it("writes OpenAI's and Gemini's bodies", () => {
    expect(openaiEmbeddingsBody([{ text: "a" }, { text: "b" }], "text-embedding-3-small", 256)).toEqual({
      model: "text-embedding-3-small", input: ["a", "b"], encoding_format: "float", dimensions: 256
    })
    expect(openaiEmbeddingsBody([{ tokens: [1, 2] }], "m", undefined)).toEqual({ model: "m", input: [[1, 2]], encoding_format: "float" })
    expect(geminiEmbeddingsBody([{ text: "a" }], "gemini-embedding-001", 768)).toEqual({
      requests: [{ model: "models/gemini-embedding-001", content: { parts: [{ text: "a" }] }, outputDimensionality: 768 }]
    })
  })

  it("reads answers back in input order, refusing one that does not match the inputs", () => {
    const answer = { data: [{ index: 1, embedding: [0, 1] }, { index: 0, embedding: [1, 0] }], usage: { prompt_tokens: 7, total_tokens: 7 } }
    expect(Either.getOrThrow(readVendorEmbeddings(answer, 2))).toEqual({ vectors: [[1, 0], [0, 1]], promptTokens: 7 })
    expect(Either.isLeft(readVendorEmbeddings(answer, 3))).toBe(true)
    expect(Either.isLeft(readVendorEmbeddings({ data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [1] }] }, 2))).toBe(true)
    const gemini = Either.getOrThrow(readGeminiEmbeddings({ embeddings: [{ values: [3, 4] }] }, 1, true))
    expect(gemini).toEqual({ vectors: [[0.6, 0.8]], promptTokens: undefined })
    expect(Either.getOrThrow(readGeminiEmbeddings({ embeddings: [{ values: [3, 4] }] }, 1, false)).vectors).toEqual([[3, 4]])
    expect(normalised([0, 0])).toEqual([0, 0])
  })
})

describe("our answer", () => {
  it("is OpenAI's list, floats or base64 float32 the SDK decodes to the same values", () => {
    const vector = [0.5, -0.25, 0.125]
    const bill = { creditsUsed: 0.001, creditsRemaining: 1, requestsRemaining: null }
    const reply = renderEmbeddings([vector], "openai/text-embedding-3-small", 3, "float", bill)
    expect(reply).toMatchObject({ object: "list", data: [{ object: "embedding", index: 0, embedding: vector }], usage: { prompt_tokens: 3, total_tokens: 3 } })
    const encoded = base64Floats(vector)
    // The openai SDK's decoding: the bytes as a Float32Array.
    const bytes = Buffer.from(encoded, "base64")
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4))).toEqual(vector)
    expect(renderEmbeddings([vector], "m", 3, "base64", bill).data[0]!.embedding).toBe(encoded)
  })
})
