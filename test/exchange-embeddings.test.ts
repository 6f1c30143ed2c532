/**
 * `POST /v1/embeddings` over the real stack (DESIGN.md section 10, "Agents' dialects"): the official openai SDK's
 * `embeddings.create` against the exchange, the simulator standing in for OpenAI and Gemini. Routed, held, billed at
 * the model's input price (an input-only bill, stored with format `embeddings`), cut into the vendor's batches and
 * answered in input order; refusals hold and charge nothing. LangChain's OpenAIEmbeddings works against it too.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, expectedChargeWei, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"

let fx: ExchangeFixture
let key: { id: string; secret: string }

beforeAll(async () => {
  fx = await startExchangeFixture()
  key = await fx.issueKey({ label: "embeddings" })
  await fx.grant(100n * ONE_CREDIT)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

const api = () => makeClient(fx.baseUrl)
const openai = () => sdkClients(fx.baseUrl, key.secret).openai
const balance = async () => BigInt((await api().call("GET", "/v1/account", undefined, { cookie: fx.cookie, ip: fx.ip })).body.balanceWei as string)
const generation = async (id: string) => {
  const answer = await api().call("GET", `/v1/generations/${id}`, undefined, { headers: { authorization: `Bearer ${key.secret}` } })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}
const received = async (): Promise<Array<{ path: string; body: any }>> => (await fetch(`${fx.simulatorUrl}/__control/requests`)).json() as Promise<any>
const clearReceived = () => fetch(`${fx.simulatorUrl}/__control/requests`, { method: "DELETE" })
const liveHolds = async () => {
  const [live] = await fx.query(
    "SELECT count(*)::text AS n FROM holds h JOIN accounts a ON a.id = h.account_id WHERE a.owner_cf_id = $1 AND h.released_at IS NULL AND h.settled_at IS NULL",
    [fx.cfId]
  )
  return Number(live.n)
}
const post = (body: unknown) =>
  fetch(`${fx.baseUrl}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key.secret}` },
    body: JSON.stringify(body)
  })

describe("POST /v1/embeddings with the openai SDK", () => {
  it("float: 1536-dimension vectors in input order, usage, the routing headers, an input-only bill charged exactly", async () => {
    const before = await balance()
    const inputs = ["the first sentence", "a second, somewhat longer sentence about embeddings", "third"]
    const { data, response } = await openai().embeddings.create({ model: "openai/text-embedding-3-small", input: inputs, encoding_format: "float" }).withResponse()
    expect(data.data).toHaveLength(3)
    expect(data.data.map((d) => d.index)).toEqual([0, 1, 2])
    for (const item of data.data) expect(item.embedding).toHaveLength(1536)
    // Deterministic per text: the same text alone answers the same vector.
    const alone = await openai().embeddings.create({ model: "openai/text-embedding-3-small", input: inputs[1]!, encoding_format: "float" })
    expect(alone.data[0]!.embedding).toEqual(data.data[1]!.embedding)
    expect(data.model).toBe("openai/text-embedding-3-small")
    expect(data.usage.prompt_tokens).toBeGreaterThan(0)
    expect(response.headers.get("x-model-used")).toBe("openai/text-embedding-3-small")
    expect(response.headers.get("x-provider")).toBe("openai")
    const id = response.headers.get("x-request-id")!
    const charge = expectedChargeWei([[data.usage.prompt_tokens, "0.02"]])
    expect(response.headers.get("x-compute-used")).toBe(charge.toString())
    const bill = await generation(id)
    expect(bill.format).toBe("embeddings")
    expect(bill.stream).toBe(false)
    expect(bill.bill.chargeWei).toBe(charge.toString())
    expect(bill.bill.legs.map((leg: any) => leg.kind)).toEqual(["input"])
    expect(bill.bill.legs[0].tokens).toBe(data.usage.prompt_tokens)
    const aloneCharge = expectedChargeWei([[alone.usage.prompt_tokens, "0.02"]])
    expect(await balance()).toBe(before - charge - aloneCharge)
    expect(await liveHolds()).toBe(0)
  })

  it("base64 (the SDK's default) decodes to the same vectors", async () => {
    const text = "base64 and float agree"
    const floats = await openai().embeddings.create({ model: "openai/text-embedding-3-small", input: text, encoding_format: "float" })
    const decoded = await openai().embeddings.create({ model: "openai/text-embedding-3-small", input: text })
    expect(decoded.data[0]!.embedding).toHaveLength(1536)
    decoded.data[0]!.embedding.forEach((value, i) => expect(value).toBeCloseTo(floats.data[0]!.embedding[i]!, 6))
  })

  it("Gemini: billed on the exchange's count (Gemini reports none)", async () => {
    const before = await balance()
    const inputs = ["gemini one", "gemini two"]
    const { data, response } = await openai().embeddings.create({ model: "google/gemini-embedding-001", input: inputs, encoding_format: "float" }).withResponse()
    expect(data.data).toHaveLength(2)
    expect(data.data[0]!.embedding).toHaveLength(3072)
    const counted = inputs.reduce((sum, text) => sum + countTokens(text), 0)
    expect(data.usage.prompt_tokens).toBe(counted)
    const charge = expectedChargeWei([[counted, "0.15"]])
    const bill = await generation(response.headers.get("x-request-id")!)
    expect(bill.bill.chargeWei).toBe(charge.toString())
    expect(bill.format).toBe("embeddings")
    expect(await balance()).toBe(before - charge)
  })

  it("more inputs than the model's batch: two upstream calls, one answer in input order", async () => {
    await clearReceived()
    const inputs = Array.from({ length: 150 }, (_, i) => `input number ${i}`)
    const batched = await openai().embeddings.create({ model: "google/gemini-embedding-001", input: inputs, encoding_format: "float", dimensions: 8 })
    expect(batched.data).toHaveLength(150)
    const calls = (await received()).filter((r) => r.path.includes(":batchEmbedContents"))
    expect(calls.map((c) => c.body.requests.length)).toEqual([100, 50])
    // Each vector is the one its text gets alone: the batches were put back in order.
    for (const i of [0, 99, 100, 149]) {
      const alone = await openai().embeddings.create({ model: "google/gemini-embedding-001", input: inputs[i]!, encoding_format: "float", dimensions: 8 })
      batched.data[i]!.embedding.forEach((value, j) => expect(value).toBeCloseTo(alone.data[0]!.embedding[j]!, 6))
    }
  })

  it("dimensions at its own size on a model that takes none is served, the field not sent upstream (its vendor refuses it)", async () => {
    // Found by the fuzz (test/support/fuzzEmbeddings.ts): ada-002 with dimensions 1536 was held, then refused by the vendor.
    await clearReceived()
    const response = await post({ model: "openai/text-embedding-ada-002", input: "its own size", dimensions: 1536, encoding_format: "float" })
    const answer = (await response.json()) as any
    expect(response.status, JSON.stringify(answer)).toBe(200)
    expect(answer.data[0].embedding).toHaveLength(1536)
    const calls = (await received()).filter((r) => r.path.endsWith("/embeddings"))
    expect(calls).toHaveLength(1)
    expect(calls[0]!.body.dimensions).toBeUndefined()
    expect(await liveHolds()).toBe(0)
  })
})

describe("refusals: nothing held, nothing charged", () => {
  const refused = async (body: unknown, param: string, message?: RegExp) => {
    const before = await balance()
    const response = await post(body)
    const answer = (await response.json()) as any
    expect(response.status, JSON.stringify(answer)).toBe(422)
    expect(answer.error.param).toBe(param)
    if (message !== undefined) expect(answer.error.message).toMatch(message)
    expect(await balance()).toBe(before)
    expect(await liveHolds()).toBe(0)
  }

  it("auto (or no model)", () => refused({ model: "auto", input: "x" }, "model"))
  it("a chat model, naming why", () => refused({ model: "openai/gpt-4.1", input: "x" }, "model", /not an embedding model/))
  it("dimensions on a model that takes none, naming its size", () =>
    refused({ model: "openai/text-embedding-ada-002", input: "x", dimensions: 256 }, "dimensions", /1536/))
  it("token ids to Gemini", () => refused({ model: "google/gemini-embedding-001", input: [1, 2, 3] }, "input"))
  it("an empty input", () => refused({ model: "openai/text-embedding-3-small", input: "" }, "input"))
  it("an unknown field", async () => {
    const response = await post({ model: "openai/text-embedding-3-small", input: "x", temperature: 1 })
    expect(response.status).toBe(422)
  })
  it("a model outside the key's allowedModels is 403 model_restricted", async () => {
    const restricted = await fx.issueKey({ label: "chat only", allowedModels: ["openai/gpt-4.1"] })
    const response = await fetch(`${fx.baseUrl}/v1/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${restricted.secret}` },
      body: JSON.stringify({ model: "openai/text-embedding-3-small", input: "x" })
    })
    const answer = (await response.json()) as any
    expect(response.status, JSON.stringify(answer)).toBe(403)
    expect(answer.error).toMatchObject({ code: "model_restricted", param: "model" })
    expect(await liveHolds()).toBe(0)
  })
  it("a chat model in models[] is skipped; only chat models is the refusal", async () => {
    const skipped = await openai().embeddings.create({
      model: "openai/gpt-4.1",
      input: "skip the chat model",
      encoding_format: "float",
      // @ts-expect-error the exchange's extension
      models: ["openai/text-embedding-3-small"]
    })
    expect(skipped.model).toBe("openai/text-embedding-3-small")
    await refused({ models: ["openai/gpt-4.1", "openai/gpt-5"], input: "x" }, "models.0", /not an embedding model/)
  })
  it("an input over the model's per-input limit", () =>
    refused({ model: "google/gemini-embedding-001", input: ["short", "word ".repeat(3000)] }, "input.1", /2048/))
})

describe("LangChain's OpenAIEmbeddings", () => {
  it("embedDocuments and embedQuery against the exchange, billed per request", async () => {
    const { OpenAIEmbeddings } = await import("@langchain/openai")
    const before = await balance()
    const embeddings = new OpenAIEmbeddings({
      model: "openai/text-embedding-3-small",
      apiKey: key.secret,
      configuration: { baseURL: `${fx.baseUrl}/v1` },
      maxRetries: 0
    })
    const documents = ["langchain one", "langchain two", "langchain three"]
    const vectors = await embeddings.embedDocuments(documents)
    expect(vectors).toHaveLength(3)
    for (const vector of vectors) expect(vector).toHaveLength(1536)
    const query = await embeddings.embedQuery("langchain two")
    query.forEach((value, i) => expect(value).toBeCloseTo(vectors[1]![i]!, 6))
    // Both requests were billed at the input price: what the simulator counts (o200k) for each.
    const charged = before - (await balance())
    expect(charged).toBeGreaterThan(0n)
    expect(await liveHolds()).toBe(0)
  })
})

// Last: the failed keys of the first model rest afterwards.
describe("fallback", () => {
  it("a 500 on every key of the first model: the second serves, billed at its price", async () => {
    await fx.fault({ model: "text-embedding-3-small", fault: "error500", count: 2 })
    const before = await balance()
    const { data, response } = await openai().embeddings.create({
      model: "openai/text-embedding-3-small",
      input: "fall back",
      encoding_format: "float",
      // @ts-expect-error the exchange's extension
      models: ["google/gemini-embedding-001"]
    }).withResponse()
    expect(response.headers.get("x-model-used")).toBe("google/gemini-embedding-001")
    expect(response.headers.get("x-fallback-used")).toBe("true")
    expect(data.data[0]!.embedding).toHaveLength(3072)
    const bill = await generation(response.headers.get("x-request-id")!)
    expect(bill.attempts.map((a: any) => a.outcome)).toEqual(["status", "status", "no_capacity", "served"])
    const charge = expectedChargeWei([[countTokens("fall back"), "0.15"]])
    expect(bill.bill.chargeWei).toBe(charge.toString())
    expect(await balance()).toBe(before - charge)
  })
})
