/**
 * `GET /v1/generations/{id}/response` on the real stack (the console's request log opens it beside a bill): the stored
 * response of a `/v1/responses` request, found by its request id, with the request's input items; the same Response
 * that `GET /v1/responses/{id}` answers, read with the account's session or its key. 404 in the error envelope when
 * the request kept none: `store: false`, deleted, another account's, or a chat completions request.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"
import { walletUsers } from "./support/orgTeam.ts"

let fx: ExchangeFixture
let key: { id: string; secret: string }
let openai: OpenAI

const api = () => makeClient(fx.baseUrl)
const asSession = (path: string) => api().call("GET", path, undefined, { cookie: fx.cookie, ip: fx.ip })
const asKey = (path: string, secret = key.secret) => api().call("GET", path, undefined, { headers: { authorization: `Bearer ${secret}` } })
const ok = (answer: Pick<Answer, "status" | "body">) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}
const expectNotFound = (answer: Pick<Answer, "status" | "body">) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(404)
  expect(answer.body.error).toMatchObject({ type: "not_found", code: "not_found" })
  expect(answer.body.error.message).toMatch(/store=false/)
}

/** A `/v1/responses` request through the official SDK: the response and its request id. */
const create = async (body: OpenAI.Responses.ResponseCreateParamsNonStreaming, client = openai) => {
  const { data, response } = await client.responses.create(body).withResponse()
  const requestId = response.headers.get("x-request-id")!
  expect(requestId).toMatch(/^gen_[0-9a-f]+$/)
  return { data, requestId }
}

beforeAll(async () => {
  fx = await startExchangeFixture()
  key = await fx.issueKey()
  await fx.grant(100n * ONE_CREDIT)
  openai = sdkClients(fx.baseUrl, key.secret).openai
}, 120_000)
afterAll(async () => fx?.close())

describe("GET /v1/generations/{id}/response", () => {
  it("answers the stored response and its input items, with the session and with the key, as /v1/responses reads them", async () => {
    const { data, requestId } = await create({ model: "openai/gpt-5", input: "Say hello" })
    const stored = ok(await asSession(`/v1/generations/${requestId}/response`))
    expect(ok(await asKey(`/v1/generations/${requestId}/response`))).toEqual(stored)

    // The Response is the one GET /v1/responses/{id} answers, and the one the SDK received.
    const retrieved = ok(await asKey(`/v1/responses/${data.id}`))
    expect(stored.response).toEqual(retrieved)
    expect(stored.response).toMatchObject({ id: data.id, status: "completed", model: "openai/gpt-5", output_text: data.output_text })
    expect(stored.response.output).toEqual(JSON.parse(JSON.stringify(data.output)))

    // The input items as input_items lists them, in request order.
    expect(stored.inputItems).toEqual(ok(await asKey(`/v1/responses/${data.id}/input_items?order=asc`)).data)
    expect(stored.inputItems).toEqual([
      expect.objectContaining({ type: "message", role: "user", content: [{ type: "input_text", text: "Say hello" }] })
    ])
    // The bill at the same id says it came through /v1/responses.
    expect(ok(await asSession(`/v1/generations/${requestId}`)).format).toBe("responses")
  }, 60_000)

  it("keeps every kind of input item: instructions, roles, a function call with its output", async () => {
    const { data, requestId } = await create({
      model: "openai/gpt-5",
      instructions: "Answer in one line.",
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }],
      input: [
        { role: "developer", content: "Use the tool's answer." },
        { role: "user", content: "Weather in Paris?" },
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) },
        { type: "function_call_output", call_id: "call_1", output: "18C, clear" }
      ]
    })
    const stored = ok(await asSession(`/v1/generations/${requestId}/response`))
    expect(stored.response).toEqual(ok(await asKey(`/v1/responses/${data.id}`)))
    expect(stored.response.instructions).toBe("Answer in one line.")
    expect(stored.inputItems).toEqual([
      expect.objectContaining({ type: "message", role: "developer", content: [{ type: "input_text", text: "Use the tool's answer." }] }),
      expect.objectContaining({ type: "message", role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }] }),
      expect.objectContaining({ type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }),
      expect.objectContaining({ type: "function_call_output", call_id: "call_1", output: "18C, clear" })
    ])
    for (const item of stored.inputItems) expect(typeof item.id).toBe("string")
  }, 60_000)

  it("is 404 for a request sent with store: false, and for a deleted response, while their bills stay", async () => {
    const unstored = await create({ model: "openai/gpt-5", input: "Say hello", store: false })
    expectNotFound(await asSession(`/v1/generations/${unstored.requestId}/response`))
    expectNotFound(await asKey(`/v1/generations/${unstored.requestId}/response`))
    expect(ok(await asSession(`/v1/generations/${unstored.requestId}`)).format).toBe("responses")

    const deleted = await create({ model: "openai/gpt-5", input: "Say hello" })
    ok(await asSession(`/v1/generations/${deleted.requestId}/response`))
    await openai.responses.delete(deleted.data.id)
    expectNotFound(await asSession(`/v1/generations/${deleted.requestId}/response`))
    ok(await asSession(`/v1/generations/${deleted.requestId}`))
  }, 60_000)

  it("is 404 for a chat completions request, an unknown id and a response id; 401 with no credential", async () => {
    const chat = await openai.chat.completions.create({ model: "openai/gpt-5", messages: [{ role: "user", content: "Say hello" }] }).withResponse()
    const chatId = chat.response.headers.get("x-request-id")!
    ok(await asSession(`/v1/generations/${chatId}`))
    expectNotFound(await asSession(`/v1/generations/${chatId}/response`))
    expectNotFound(await asSession(`/v1/generations/gen_${"0".repeat(24)}/response`))
    const { data } = await create({ model: "openai/gpt-5", input: "Say hello" })
    expectNotFound(await asSession(`/v1/generations/${data.id}/response`))
    const anonymous = await api().call("GET", `/v1/generations/${chatId}/response`)
    expect(anonymous.status).toBe(401)
  }, 60_000)

  it("never answers another account's stored response, by session or by key", async () => {
    const { requestId } = await create({ model: "openai/gpt-5", input: "Say hello" })
    const other = await walletUsers(fx.baseUrl, "203.0.113")(10n * ONE_CREDIT)
    const otherKey = (await other.call("POST", "/v1/keys", { label: "other" })).body.secret as string
    expectNotFound(await other.call("GET", `/v1/generations/${requestId}/response`))
    expectNotFound(await asKey(`/v1/generations/${requestId}/response`, otherKey))
    // Its own is readable to it, and not to the first account.
    const own = await create({ model: "openai/gpt-5", input: "Say hello" }, sdkClients(fx.baseUrl, otherKey).openai)
    ok(await asKey(`/v1/generations/${own.requestId}/response`, otherKey))
    expectNotFound(await asSession(`/v1/generations/${own.requestId}/response`))
  }, 60_000)
})
