/**
 * The vendor simulator's embeddings (simulator/embeddings.ts), driven by the official SDKs: OpenAI's
 * `embeddings.create` (float and base64) and `@google/genai`'s `models.embedContent` (which calls
 * `:batchEmbedContents`). Usage is checked against the o200k tokenizer imported independently of the simulator.
 */
import { ApiError, GoogleGenAI } from "@google/genai"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import OpenAI, { APIError } from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { startSimulator } from "../simulator/server.ts"

const n = (text: string) => encode(text).length

let url = ""
let close: () => Promise<void> = async () => {}
let openai: OpenAI
let gemini: GoogleGenAI

const control = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}/__control/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: (await response.json()) as unknown }
}
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })

const caught = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

const norm = (v: readonly number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))
const cosine = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / (norm(a) * norm(b))

beforeAll(async () => {
  const sim = await startSimulator({ port: 0 })
  url = sim.url
  close = sim.close
  openai = new OpenAI({ apiKey: "sk-sim-openai-secret", baseURL: `${url}/v1`, maxRetries: 0 })
  gemini = new GoogleGenAI({ apiKey: "sim-gemini-secret", httpOptions: { baseUrl: url } })
})
afterAll(() => close())
beforeEach(async () => {
  await control("DELETE", "faults")
})

describe("OpenAI embeddings", () => {
  const texts = ["The quick brown fox jumps over the lazy dog", "A quick brown fox jumped over a lazy dog", "Quarterly revenue grew by ten percent"]

  it("answers OpenAI's exact shape, with usage from o200k tokens", async () => {
    const response = await fetch(`${url}/v1/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer k" },
      body: JSON.stringify({ model: "text-embedding-3-small", input: texts, encoding_format: "float", user: "u-1" })
    })
    expect(response.status).toBe(200)
    const body = (await response.json()) as Record<string, unknown> & { data: Array<Record<string, unknown>> }
    expect(Object.keys(body).sort()).toEqual(["data", "model", "object", "usage"])
    expect(body.object).toBe("list")
    expect(body.model).toBe("text-embedding-3-small")
    const total = texts.reduce((s, t) => s + n(t), 0)
    expect(body.usage).toEqual({ prompt_tokens: total, total_tokens: total })
    expect(body.data).toHaveLength(3)
    body.data.forEach((item, i) => {
      expect(Object.keys(item).sort()).toEqual(["embedding", "index", "object"])
      expect(item.object).toBe("embedding")
      expect(item.index).toBe(i)
      const v = item.embedding as number[]
      expect(v).toHaveLength(1536)
      expect(v.every((x) => Math.fround(x) === x)).toBe(true) // float32 values, as the vendor sends
      expect(norm(v)).toBeCloseTo(1, 5)
    })
  })

  it("is deterministic: same text, same vector; different texts, different vectors; shared words closer", async () => {
    const a = await openai.embeddings.create({ model: "text-embedding-3-small", input: texts, encoding_format: "float" })
    const b = await openai.embeddings.create({ model: "text-embedding-3-small", input: texts[0]!, encoding_format: "float" })
    const [fox, fox2, revenue] = a.data.map((d) => d.embedding)
    expect(b.data[0]!.embedding).toEqual(fox)
    expect(fox).not.toEqual(fox2)
    expect(cosine(fox!, fox2!)).toBeGreaterThan(cosine(fox!, revenue!) + 0.2)
    const other = await openai.embeddings.create({ model: "text-embedding-3-large", input: texts[0]!, encoding_format: "float" })
    expect(other.data[0]!.embedding).toHaveLength(3072)
  })

  it("base64 (the SDK's default) decodes into the same floats as a float answer", async () => {
    const float = await openai.embeddings.create({ model: "text-embedding-3-small", input: texts, encoding_format: "float" })
    const decoded = await openai.embeddings.create({ model: "text-embedding-3-small", input: texts }) // sends base64, decodes it
    const raw = await openai.embeddings.create({ model: "text-embedding-3-small", input: texts[0]!, encoding_format: "base64" })
    expect(decoded.data.map((d) => d.embedding)).toEqual(float.data.map((d) => d.embedding))
    expect(typeof raw.data[0]!.embedding).toBe("string")
    const buf = Buffer.from(raw.data[0]!.embedding as unknown as string, "base64")
    expect(buf.length).toBe(1536 * 4)
    expect(buf.readFloatLE(0)).toBe(float.data[0]!.embedding[0])
    expect(decoded.usage).toEqual(float.usage)
  })

  it("takes token arrays, counting their length, and embeds them as the text they encode", async () => {
    const ids = encode(texts[0]!)
    const one = await openai.embeddings.create({ model: "text-embedding-3-small", input: ids, encoding_format: "float" })
    expect(one.data).toHaveLength(1)
    expect(one.usage.prompt_tokens).toBe(ids.length)
    const text = await openai.embeddings.create({ model: "text-embedding-3-small", input: texts[0]!, encoding_format: "float" })
    expect(one.data[0]!.embedding).toEqual(text.data[0]!.embedding)
    const many = await openai.embeddings.create({ model: "text-embedding-3-small", input: [[1, 2, 3], [4, 5]], encoding_format: "float" })
    expect(many.data.map((d) => d.index)).toEqual([0, 1])
    expect(many.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 })
  })

  it("honours dimensions on text-embedding-3 (truncated and renormalised) and refuses it elsewhere", async () => {
    const full = await openai.embeddings.create({ model: "text-embedding-3-large", input: texts[0]!, encoding_format: "float" })
    const short = await openai.embeddings.create({ model: "text-embedding-3-large", input: texts[0]!, dimensions: 256, encoding_format: "float" })
    const v = short.data[0]!.embedding
    expect(v).toHaveLength(256)
    expect(norm(v)).toBeCloseTo(1, 5)
    const prefix = full.data[0]!.embedding.slice(0, 256)
    expect(cosine(v, prefix)).toBeCloseTo(1, 6)

    const ada = (await caught(openai.embeddings.create({ model: "text-embedding-ada-002", input: "hi", dimensions: 256 }))) as APIError
    expect(ada).toBeInstanceOf(APIError)
    expect(ada.status).toBe(400)
    expect(ada.error).toEqual({ message: "This model does not support specifying dimensions.", type: "invalid_request_error", param: null, code: null })
    const tooBig = (await caught(openai.embeddings.create({ model: "text-embedding-3-small", input: "hi", dimensions: 2000 }))) as APIError
    expect(tooBig.status).toBe(400)
    expect(tooBig.param).toBe("dimensions")
  })

  it("uses per-model default sizes, served on /v1/embeddings for the OpenAI-compatible vendors too", async () => {
    for (const [model, size] of [["text-embedding-ada-002", 1536], ["mistral-embed", 1024], ["some-other-embed", 1024]] as const) {
      const r = await openai.embeddings.create({ model, input: "hello", encoding_format: "float" })
      expect(r.data[0]!.embedding).toHaveLength(size)
      expect(r.model).toBe(model)
    }
    const bare = await post("/embeddings", { model: "mistral-embed", input: "hello" }, { authorization: "Bearer k" })
    expect(bare.status).toBe(200)
  })

  it("answers OpenAI's limits with OpenAI's errors", async () => {
    const expectInvalid = async (input: unknown, message: string, param: string | null = null, code: string | null = null) => {
      const r = await post("/v1/embeddings", { model: "text-embedding-3-small", input }, { authorization: "Bearer k" })
      expect(r.status).toBe(400)
      expect(await r.json()).toEqual({ error: { message, type: "invalid_request_error", param, code } })
    }
    const schema = "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
    await expectInvalid(Array.from({ length: 2049 }, (_, i) => `text ${i}`), schema)
    await expectInvalid("", schema)
    await expectInvalid(["a", ""], schema)
    await expectInvalid([], schema)
    await expectInvalid("word ".repeat(8200), "Invalid 'input[0]': maximum input length is 8192 tokens.", "input[0]", "invalid_value")

    const sdk = (await caught(openai.embeddings.create({ model: "text-embedding-3-small", input: Array.from({ length: 2049 }, () => "x") }))) as APIError
    expect(sdk).toBeInstanceOf(APIError)
    expect(sdk.status).toBe(400)
    expect(sdk.type).toBe("invalid_request_error")

    const ok = await openai.embeddings.create({ model: "text-embedding-3-small", input: Array.from({ length: 2048 }, (_, i) => `t${i}`), dimensions: 8 })
    expect(ok.data).toHaveLength(2048)

    const perRequest = await post("/v1/embeddings", { model: "text-embedding-3-small", input: Array.from({ length: 40 }, () => "word ".repeat(8000)) }, { authorization: "Bearer k" })
    expect(perRequest.status).toBe(400)
    expect(await perRequest.json()).toEqual({
      error: { message: `Requested ${40 * n("word ".repeat(8000))} tokens, max 300000 tokens per request`, type: "max_tokens_per_request", param: null, code: "max_tokens_per_request" }
    })
    expect((await post("/v1/embeddings", { model: "text-embedding-3-small", input: "hi" })).status).toBe(401)
  })

  it("faults apply to embedding models, and requests are logged", async () => {
    await control("DELETE", "requests")
    await control("POST", "faults", { model: "text-embedding-3-small", fault: "error500" })
    const e500 = (await caught(openai.embeddings.create({ model: "text-embedding-3-small", input: "hi" }))) as APIError
    expect(e500).toBeInstanceOf(APIError)
    expect(e500.status).toBe(500)
    expect(e500.type).toBe("server_error")
    const ok = await openai.embeddings.create({ model: "text-embedding-3-small", input: "hi" })
    expect(ok.data).toHaveLength(1)
    await control("POST", "faults", { model: "mistral-embed", fault: "rate_limited", retryAfterSeconds: 4 })
    const e429 = (await caught(openai.embeddings.create({ model: "mistral-embed", input: "hi" }))) as APIError
    expect(e429.status).toBe(429)
    expect(e429.headers?.get("retry-after")).toBe("4")
    const log = (await control("GET", "requests")).body as Array<{ path: string; body: Record<string, unknown> }>
    expect(log.map((e) => e.path)).toEqual(["/v1/embeddings", "/v1/embeddings", "/v1/embeddings"])
    expect(log[0]!.body).toMatchObject({ model: "text-embedding-3-small", input: "hi", encoding_format: "base64" })
  })
})

describe("Gemini embeddings", () => {
  const model = "gemini-embedding-001"

  it("embeds through @google/genai (batchEmbedContents), 3072 values, no usage, deterministic", async () => {
    await control("DELETE", "requests")
    const a = await gemini.models.embedContent({ model, contents: ["The quick brown fox", "A quick brown fox", "Quarterly revenue"] })
    const b = await gemini.models.embedContent({ model, contents: "The quick brown fox" })
    expect(a.embeddings).toHaveLength(3)
    const [fox, fox2, revenue] = a.embeddings!.map((e) => e.values!)
    expect(fox).toHaveLength(3072)
    expect(norm(fox!)).toBeCloseTo(1, 5)
    expect(b.embeddings![0]!.values).toEqual(fox)
    expect(fox).not.toEqual(fox2)
    expect(cosine(fox!, fox2!)).toBeGreaterThan(cosine(fox!, revenue!) + 0.2)
    expect(a.metadata).toBeUndefined()
    const log = (await control("GET", "requests")).body as Array<{ path: string; body: { requests: unknown[] } }>
    expect(log[0]!.path).toBe(`/v1beta/models/${model}:batchEmbedContents`)
    expect(log[0]!.body.requests[0]).toMatchObject({ model: `models/${model}`, content: { parts: [{ text: "The quick brown fox" }] } })
  })

  it("honours outputDimensionality: the prefix of the full vector, not renormalised (as Gemini)", async () => {
    const full = await gemini.models.embedContent({ model, contents: "hello world" })
    const short = await gemini.models.embedContent({ model, contents: "hello world", config: { outputDimensionality: 768, taskType: "RETRIEVAL_QUERY" } })
    const plain = await gemini.models.embedContent({ model, contents: "hello world", config: { outputDimensionality: 768 } })
    expect(short.embeddings![0]!.values).toHaveLength(768)
    expect(plain.embeddings![0]!.values).toEqual(full.embeddings![0]!.values!.slice(0, 768))
    expect(norm(plain.embeddings![0]!.values!)).toBeLessThan(1)
    expect(short.embeddings![0]!.values).not.toEqual(plain.embeddings![0]!.values) // the task type changes the vector
  })

  it("serves :embedContent in Gemini's shape, with either auth", async () => {
    const body = { model: `models/${model}`, content: { parts: [{ text: "hello world" }] }, outputDimensionality: 16 }
    const one = await post(`/v1beta/models/${model}:embedContent?key=k`, body)
    expect(one.status).toBe(200)
    const json = (await one.json()) as { embedding: { values: number[] } }
    expect(Object.keys(json)).toEqual(["embedding"])
    expect(json.embedding.values).toHaveLength(16)
    const viaHeader = await post(`/v1beta/models/${model}:embedContent`, body, { "x-goog-api-key": "k" })
    expect(await viaHeader.json()).toEqual(json)
    const batch = await post(`/v1beta/models/${model}:batchEmbedContents?key=k`, { requests: [body] })
    expect(await batch.json()).toEqual({ embeddings: [json.embedding] })
    const noAuth = await post(`/v1beta/models/${model}:embedContent`, body)
    expect(noAuth.status).toBe(401)
    expect(await noAuth.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } })
  })

  it("answers Gemini's batch limit (100) and bad requests with INVALID_ARGUMENT", async () => {
    const contents = Array.from({ length: 101 }, (_, i) => `text ${i}`)
    const error = await caught(gemini.models.embedContent({ model, contents }))
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(400)
    expect((error as ApiError).message).toContain("at most 100 requests can be in one batch")
    const raw = await post(`/v1beta/models/${model}:batchEmbedContents?key=k`, {
      requests: contents.map((text) => ({ model: `models/${model}`, content: { parts: [{ text }] } }))
    })
    expect(raw.status).toBe(400)
    expect(await raw.json()).toEqual({
      error: { code: 400, message: "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n", status: "INVALID_ARGUMENT" }
    })
    const hundred = await gemini.models.embedContent({ model, contents: contents.slice(0, 100), config: { outputDimensionality: 8 } })
    expect(hundred.embeddings).toHaveLength(100)

    const empty = await post(`/v1beta/models/${model}:batchEmbedContents?key=k`, { requests: [] })
    expect(await empty.json()).toMatchObject({ error: { code: 400, status: "INVALID_ARGUMENT" } })
    const tooWide = await post(`/v1beta/models/${model}:embedContent?key=k`, { content: { parts: [{ text: "x" }] }, outputDimensionality: 4000 })
    expect(tooWide.status).toBe(400)
    const otherModel = await post(`/v1beta/models/${model}:batchEmbedContents?key=k`, {
      requests: [{ model: "models/text-embedding-004", content: { parts: [{ text: "x" }] } }]
    })
    expect(otherModel.status).toBe(400)
  })

  it("faults apply to Gemini embedding models", async () => {
    await control("POST", "faults", { model, fault: "error500" })
    const e500 = await caught(gemini.models.embedContent({ model, contents: "hi" }))
    expect(e500).toBeInstanceOf(ApiError)
    expect((e500 as ApiError).status).toBe(500)
    const ok = await gemini.models.embedContent({ model, contents: "hi" })
    expect(ok.embeddings).toHaveLength(1)
  })
})
