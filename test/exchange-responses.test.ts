/**
 * `POST /v1/responses` (DESIGN.md section 10, "Agents' dialects") with the official `openai` SDK over real sockets,
 * the simulated vendors upstream: a whole and a streamed response, each billed exactly from the fixture cards' rates
 * and traceable to its bill; stored responses retrieved, listed, continued and deleted (another account's and a
 * deleted one are 404, `store: false` keeps only the bill); a tool loop; Anthropic reasoning sealed into
 * `encrypted_content` and replayed statelessly (the simulator checks Anthropic's signature, so a finished loop proves
 * the signed block went back untouched); refusals in the envelope; built-in tools dropped by name; namespace and
 * freeform tools; a stream cut after its first byte; `input_tokens`.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient, signInByWallet } from "./support/accounts.ts"
import { type ExchangeFixture, expectedChargeWei, MAINTAINER_TOKEN, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { waitFor } from "./support/polling.ts"

let fx: ExchangeFixture
let key: { id: string; secret: string }
let openai: OpenAI

const api = () => makeClient(fx.baseUrl)
const bearer = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } })
const generation = async (id: string) => {
  const answer = await api().call("GET", `/v1/generations/${id}`, undefined, bearer(key.secret))
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}
const received = async (): Promise<Array<{ path: string; body: any }>> =>
  (await fetch(`${fx.simulatorUrl}/__control/requests`)).json() as Promise<any>
const lastUpstream = async () => (await received()).at(-1)!

/** The fixture cards' rates per million (test/fixtures/exchange/cards). */
const RATES = {
  "openai/gpt-5": { input: "1.25", cacheRead: "0.125", output: "10" },
  "anthropic/claude-sonnet-4.5": { input: "3", cacheRead: "0.3", output: "15" }
} as const

/** SPEC "Billing" 3 over the bill's own counts, and the response's usage as the same counts. */
const expectBilled = async (requestId: string, model: keyof typeof RATES, usage: OpenAI.Responses.ResponseUsage) => {
  const bill = await generation(requestId)
  expect(bill).toMatchObject({ format: "responses", modelUsed: model, status: "completed" })
  const counts = bill.usage as { freshInput: number; cacheRead: number | null; output: number; reasoning: number | null }
  expect(usage.input_tokens).toBe(counts.freshInput + (counts.cacheRead ?? 0))
  expect(usage.input_tokens_details.cached_tokens).toBe(counts.cacheRead ?? 0)
  expect(usage.output_tokens).toBe(counts.output)
  expect(usage.output_tokens_details.reasoning_tokens).toBe(counts.reasoning ?? 0)
  expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens)
  const rate = RATES[model]
  const charge = expectedChargeWei([[counts.freshInput, rate.input], [counts.cacheRead ?? 0, rate.cacheRead], [counts.output, rate.output]])
  expect(bill.bill.chargeWei).toBe(charge.toString())
  expect(charge).toBeGreaterThan(0n)
  return bill
}

beforeAll(async () => {
  fx = await startExchangeFixture()
  key = await fx.issueKey()
  await fx.grant(100n * ONE_CREDIT)
  openai = sdkClients(fx.baseUrl, key.secret).openai
}, 120_000)
afterAll(async () => fx?.close())

describe("a response, whole and streamed", () => {
  it("answers in OpenAI's shape, billed exactly and traceable to its bill", async () => {
    const { data, response } = await openai.responses
      .create({ model: "openai/gpt-5", instructions: "Be brief.", input: "Say hello", metadata: { run: "1" } })
      .withResponse()
    const requestId = response.headers.get("x-request-id")!
    expect(requestId).toMatch(/^gen_[0-9a-f]{24}$/)
    expect(data.id).toBe(`resp_${requestId.slice(4)}`)
    expect(response.headers.get("x-model-used")).toBe("openai/gpt-5")
    expect(data).toMatchObject({ object: "response", status: "completed", model: "openai/gpt-5", instructions: "Be brief.", metadata: { run: "1" }, store: true })
    const message = data.output.find((item) => item.type === "message")!
    expect(message).toMatchObject({ role: "assistant", status: "completed" })
    expect(data.output_text).toMatch(/^Simulated reply from gpt-5 to: Say hello/)
    // The instructions reached the vendor as the system turn before the input.
    const upstream = await lastUpstream()
    expect(upstream.body.messages.slice(0, 2)).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }])
    await expectBilled(requestId, "openai/gpt-5", data.usage!)
    expect(response.headers.get("x-compute-used")).toBe((await generation(requestId)).bill.chargeWei)
  })

  it("streams the event sequence the SDK reads, each numbered, ending with the usage and the bill", async () => {
    const stream = await openai.responses.create({ model: "anthropic/claude-sonnet-4.5", input: "Say hello", stream: true, reasoning: { effort: "low", summary: "auto" } })
    const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
    for await (const event of stream) events.push(event)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    const types = events.map((e) => e.type)
    expect(types.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"])
    expect(types.at(-1)).toBe("response.completed")
    // Reasoning first (its summary asked for), then the message: each item added, filled, done.
    const order = types.filter((t) => t !== "response.reasoning_summary_text.delta" && t !== "response.output_text.delta")
    expect(order).toEqual([
      "response.created", "response.in_progress",
      "response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done", "response.output_item.done",
      "response.output_item.added", "response.content_part.added", "response.output_text.done", "response.content_part.done",
      "response.output_item.done", "response.completed"
    ])
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    const text = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("")
    expect(completed.response.output_text).toBe(text)
    const summary = events.flatMap((e) => (e.type === "response.reasoning_summary_text.delta" ? [e.delta] : [])).join("")
    expect(completed.response.output[0]).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: summary }] })
    const requestId = `gen_${completed.response.id.slice(5)}`
    const bill = await expectBilled(requestId, "anthropic/claude-sonnet-4.5", completed.response.usage!)
    expect((completed.response as unknown as { x_credits_used: number }).x_credits_used).toBeCloseTo(Number(bill.bill.chargeWei) / 1e18, 12)
    // Stored by default: the same response reads back.
    const stored = await openai.responses.retrieve(completed.response.id)
    expect(stored.output).toEqual(completed.response.output)
  })

  it("a stream cut after its first byte ends in response.failed with stream_interrupted, billed as a cut stream", async () => {
    await fx.fault({ model: "gpt-5", fault: "drop", afterChunks: 3 })
    const stream = await openai.responses.create({ model: "openai/gpt-5", input: "Tell me a long story", stream: true })
    const events: Array<OpenAI.Responses.ResponseStreamEvent> = []
    for await (const event of stream) events.push(event)
    const failed = events.at(-1) as OpenAI.Responses.ResponseFailedEvent
    expect(failed.type).toBe("response.failed")
    expect(failed.response).toMatchObject({ status: "failed", error: { code: "stream_interrupted" } })
    const bill = await waitFor("the cut stream's bill", async () => {
      const answer = await api().call("GET", `/v1/generations/gen_${failed.response.id.slice(5)}`, undefined, bearer(key.secret))
      return answer.status === 200 ? answer.body : undefined
    })
    expect(bill.status).toBe("interrupted")
    // Nothing is stored of a failed response.
    await expect(openai.responses.retrieve(failed.response.id)).rejects.toMatchObject({ status: 404 })
  })
})

describe("stored responses", () => {
  it("are retrieved, listed, continued and deleted; a deleted one cannot be continued", async () => {
    const first = await openai.responses.create({ model: "openai/gpt-5", input: [{ role: "user", content: "Remember the word kiwi" }] })
    const retrieved = await openai.responses.retrieve(first.id)
    expect(retrieved).toMatchObject({ id: first.id, status: "completed", output: first.output, usage: first.usage })
    const items = await openai.responses.inputItems.list(first.id)
    expect(items.data).toEqual([
      { id: `msg_in_${first.id.slice(5)}_0`, type: "message", role: "user", status: "completed", content: [{ type: "input_text", text: "Remember the word kiwi" }] }
    ])

    const second = await openai.responses.create({ model: "openai/gpt-5", input: "Which word?", previous_response_id: first.id })
    expect(second.previous_response_id).toBe(first.id)
    // The vendor got the whole conversation: the first input, its answer, then the new input.
    expect((await lastUpstream()).body.messages).toEqual([
      { role: "user", content: "Remember the word kiwi" },
      { role: "assistant", content: first.output_text },
      { role: "user", content: "Which word?" }
    ])
    // input_items lists this request's own input only.
    expect((await openai.responses.inputItems.list(second.id)).data.map((item: any) => item.content[0].text)).toEqual(["Which word?"])

    await expect(openai.responses.delete(first.id)).resolves.toEqual({ id: first.id, object: "response", deleted: true })
    await expect(openai.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404, code: "not_found" })
    await expect(openai.responses.create({ model: "openai/gpt-5", input: "Again?", previous_response_id: first.id }))
      .rejects.toMatchObject({ status: 404, code: "not_found" })
    const again = await api().call("DELETE", `/v1/responses/${first.id}`, undefined, bearer(key.secret))
    expect(again.status).toBe(404)
  })

  it("pages input items as OpenAI does", async () => {
    const input = ["one", "two", "three"].map((text) => ({ role: "user" as const, content: text }))
    const created = await openai.responses.create({ model: "openai/gpt-5", input })
    const page = await openai.responses.inputItems.list(created.id, { limit: 2 })
    expect(page.data.map((item: any) => item.content[0].text)).toEqual(["three", "two"])
    expect(page.has_more).toBe(true)
    const rest = await openai.responses.inputItems.list(created.id, { limit: 2, after: page.data[1]!.id })
    expect(rest.data.map((item: any) => item.content[0].text)).toEqual(["one"])
    const ascending = await openai.responses.inputItems.list(created.id, { order: "asc" })
    expect(ascending.data.map((item: any) => item.content[0].text)).toEqual(["one", "two", "three"])
  })

  it("keeps any text JSON carries, a NUL and a lone surrogate included", async () => {
    const text = "a\u0000b \ud800 c"
    const created = await openai.responses.create({ model: "openai/gpt-5", input: text, metadata: { note: "x\u0000y" } })
    const items = await openai.responses.inputItems.list(created.id)
    expect((items.data[0] as any).content[0].text).toBe(text)
    expect((await openai.responses.retrieve(created.id)).metadata).toEqual({ note: "x\u0000y" })
    const next = await openai.responses.create({ model: "openai/gpt-5", input: "and?", previous_response_id: created.id })
    expect(next.status).toBe("completed")
  })

  it("store: false keeps the bill and nothing else", async () => {
    const { data, response } = await openai.responses.create({ model: "openai/gpt-5", input: "Forget me", store: false }).withResponse()
    expect(data).toMatchObject({ store: false })
    await expect(openai.responses.retrieve(data.id)).rejects.toMatchObject({ status: 404 })
    await expect(openai.responses.create({ model: "openai/gpt-5", input: "Next", previous_response_id: data.id })).rejects.toMatchObject({ status: 404 })
    await generation(response.headers.get("x-request-id")!)
    const rows = await fx.query("SELECT count(*)::int AS n FROM stored_responses WHERE id = $1", [data.id])
    expect(rows[0].n).toBe(0)
  })

  it("another account's response is not found, to read, list, delete or continue", async () => {
    const mine = await openai.responses.create({ model: "openai/gpt-5", input: "Mine" })
    const other = await otherAccountClient()
    await expect(other.responses.retrieve(mine.id)).rejects.toMatchObject({ status: 404 })
    await expect(other.responses.inputItems.list(mine.id)).rejects.toMatchObject({ status: 404 })
    await expect(other.responses.delete(mine.id)).rejects.toMatchObject({ status: 404 })
    await expect(other.responses.create({ model: "openai/gpt-5", input: "Yours?", previous_response_id: mine.id })).rejects.toMatchObject({ status: 404 })
    await expect(openai.responses.retrieve(mine.id)).resolves.toMatchObject({ id: mine.id })
  })
})

/** A second account with its own key and credit. */
const otherAccountClient = async () => {
  const client = api()
  const ip = "203.0.113.91"
  const signedIn = await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), ip)
  const issued = await client.call("POST", "/v1/keys", {}, { cookie: signedIn.cookie, ip })
  await client.call("POST", `/v1/admin/accounts/${signedIn.me.cf_id}/credits`, { amountWei: (10n * ONE_CREDIT).toString() }, bearer(MAINTAINER_TOKEN))
  return sdkClients(fx.baseUrl, issued.body.secret as string).openai
}

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: false
}

describe("tools and reasoning", () => {
  it("runs a tool loop through previous_response_id", async () => {
    const first = await openai.responses.create({ model: "openai/gpt-5", input: "Use the get_weather tool for Paris", tools: [weatherTool] })
    const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" })
    expect(JSON.parse(call.arguments)).toHaveProperty("city")
    const second = await openai.responses.create({
      model: "openai/gpt-5",
      previous_response_id: first.id,
      tools: [weatherTool],
      input: [{ type: "function_call_output", call_id: call.call_id, output: "Sunny, 21 C" }]
    })
    expect(second.output_text).toMatch(/^Simulated reply from gpt-5/)
    const messages = (await lastUpstream()).body.messages
    expect(messages.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ id: call.call_id, function: { name: "get_weather", arguments: call.arguments } }] })
    expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: call.call_id, content: "Sunny, 21 C" })
  })

  it("continues a DeepSeek tool call whose reasoning the client was never shown", async () => {
    const tools = [weatherTool]
    const first = await openai.responses.create({ model: "deepseek/deepseek-reasoner", input: "Use the get_weather tool for Oslo", tools })
    const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall
    const second = await openai.responses.create({
      model: "deepseek/deepseek-reasoner",
      previous_response_id: first.id,
      tools,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "Snow" }]
    })
    expect(second.status).toBe("completed")
    // DeepSeek refuses a replayed tool-calling turn without reasoning_content: it gets an empty one.
    const turn = (await lastUpstream()).body.messages.find((m: any) => m.role === "assistant")
    expect(turn).toMatchObject({ reasoning_content: "", tool_calls: [{ id: call.call_id }] })
  })

  it("seals Anthropic's signed reasoning and takes it back statelessly; a forged or foreign seal is dropped by name", async () => {
    const ask = { model: "anthropic/claude-sonnet-4.5", store: false, include: ["reasoning.encrypted_content" as const], reasoning: { effort: "low" as const, summary: "auto" as const }, tools: [weatherTool] }
    const userTurn = { role: "user" as const, content: "Use the get_weather tool for Paris" }
    const first = await openai.responses.create({ ...ask, input: [userTurn] })
    const reasoning = first.output.find((item) => item.type === "reasoning") as OpenAI.Responses.ResponseReasoningItem
    expect(reasoning.encrypted_content).toMatch(/^cx1\./)
    // Nothing of the vendor's signature shows in the clear.
    const signature = (await lastUpstream()).body
    expect(JSON.stringify(first.output)).not.toContain("signature")
    expect(signature).toBeDefined()
    const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall
    const replay = [userTurn, ...first.output, { type: "function_call_output" as const, call_id: call.call_id, output: "Sunny" }]
    const { data: second, response } = await openai.responses.create({ ...ask, input: replay as OpenAI.Responses.ResponseInput }).withResponse()
    expect(second.status).toBe("completed")
    expect(response.headers.get("x-dropped-parameters")).toBeNull()
    // The tool-calling turn went back to Anthropic opening with the signed thinking block, as Anthropic requires.
    const assistant = (await lastUpstream()).body.messages.find((m: any) => m.role === "assistant")
    expect(assistant.content[0]).toMatchObject({ type: "thinking", thinking: reasoning.summary[0]!.text })
    expect(assistant.content[0].signature).toEqual(expect.any(String))

    // A forged seal opens for nobody; one sealed for another account does not open here.
    const plain = [userTurn, { ...reasoning, encrypted_content: `${reasoning.encrypted_content!.slice(0, -4)}AAAA` }, { role: "assistant" as const, content: "Noted." }, { role: "user" as const, content: "Thanks" }]
    const forged = await openai.responses.create({ ...ask, tools: [], input: plain as OpenAI.Responses.ResponseInput }).withResponse()
    expect(forged.response.headers.get("x-dropped-parameters")).toBe("input[].encrypted_content")
    expect(JSON.stringify((await lastUpstream()).body.messages)).not.toContain("thinking")
    const foreign = await (await otherAccountClient()).responses.create({ ...ask, tools: [], input: [userTurn, reasoning, { role: "user", content: "Thanks" }] as OpenAI.Responses.ResponseInput }).withResponse()
    expect(foreign.response.headers.get("x-dropped-parameters")).toBe("input[].encrypted_content")
  })

  it("names a replayed summary Anthropic cannot take as the Responses client sent it", async () => {
    const input = [
      { role: "user", content: "Hi" },
      { type: "reasoning", summary: [{ type: "summary_text", text: "thinking it over" }] },
      { role: "assistant", content: "Hello." },
      { role: "user", content: "Bye" }
    ] as OpenAI.Responses.ResponseInput
    const { response } = await openai.responses.create({ model: "anthropic/claude-sonnet-4.5", input, store: false }).withResponse()
    expect(response.headers.get("x-dropped-parameters")).toBe("input[].reasoning")
  })

  it("drops built-in tools by name, flattens namespaces and serves freeform tools as functions", async () => {
    const { data, response } = await openai.responses.create({
      model: "openai/gpt-5",
      input: "Use the lookup tool please",
      tools: [
        { type: "web_search" },
        { type: "namespace", name: "docs", description: "Documentation", tools: [{ type: "function", name: "lookup", description: "Look a word up", parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] } }] },
        { type: "custom", name: "apply_patch", description: "Apply a patch" }
      ] as Array<OpenAI.Responses.Tool>,
      tool_choice: { type: "function", name: "docs__lookup" }
    }).withResponse()
    expect(response.headers.get("x-dropped-parameters")).toBe("tools[web_search]")
    const sent = (await lastUpstream()).body.tools.map((tool: any) => tool.function.name)
    expect(sent).toEqual(["docs__lookup", "apply_patch"])
    expect(data.output.find((item) => item.type === "function_call")).toMatchObject({ name: "lookup", namespace: "docs" })

    const patch = await openai.responses.create({
      model: "openai/gpt-5",
      input: "Use the apply_patch tool",
      tools: [{ type: "custom", name: "apply_patch", description: "Apply a patch" }],
      tool_choice: { type: "custom", name: "apply_patch" }
    })
    const custom = patch.output.find((item) => item.type === "custom_tool_call") as OpenAI.Responses.ResponseCustomToolCall
    expect(custom).toMatchObject({ type: "custom_tool_call", name: "apply_patch" })
    expect(typeof custom.input).toBe("string")
  })
})

describe("refusals and counting", () => {
  it("refuses in the envelope with the error table's status, naming the field", async () => {
    const refused = async (body: Record<string, unknown>) => {
      const error = await openai.responses.create(body as any).then(() => undefined, (e: unknown) => e as InstanceType<typeof OpenAI.APIError>)
      expect(error, JSON.stringify(body)).toBeInstanceOf(OpenAI.APIError)
      return error!
    }
    expect(await refused({ model: "openai/gpt-5", input: "x", background: true })).toMatchObject({ status: 422, param: "background" })
    expect(await refused({ model: "openai/gpt-5", input: "x", bogus: 1 })).toMatchObject({ status: 422, type: "validation_error", param: "bogus" })
    expect(await refused({ model: "openai/gpt-5", input: [{ role: "user", content: [{ type: "input_image", image_url: "https://x/y.png" }] }] }))
      .toMatchObject({ status: 422, param: "input.0.content.0.type" })
    expect(await refused({ model: "openai/gpt-5", input: "x", tools: [weatherTool], tool_choice: { type: "function", name: "nope" } }))
      .toMatchObject({ status: 422, param: "tool_choice.name" })
    expect(await refused({ model: "openai/not-a-model", input: "x" })).toMatchObject({ status: 422, param: "model" })
    // SPEC's structured-output rule: a named model without the mode is refused naming this format's field ...
    expect(await refused({ model: "anthropic/claude-sonnet-4.5", input: "x", text: { format: { type: "json_object" } } }))
      .toMatchObject({ status: 422, param: "text.format" })
    const unauthenticated = new OpenAI({ apiKey: "sk-wrong", baseURL: `${fx.baseUrl}/v1`, maxRetries: 0 })
    await expect(unauthenticated.responses.create({ model: "openai/gpt-5", input: "x" })).rejects.toMatchObject({ status: 401 })
  })

  it("text.format is structured output where the model has it; a models[] entry without it is skipped", async () => {
    const schema = { type: "json_schema" as const, name: "colour", schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false }, strict: true }
    const structured = await openai.responses.create({ model: "openai/gpt-5", input: "A colour", text: { format: schema } })
    expect((await lastUpstream()).body.response_format).toEqual({ type: "json_schema", json_schema: { name: "colour", schema: schema.schema, strict: true } })
    expect(JSON.parse(structured.output_text)).toHaveProperty("name")
    expect(structured.text?.format).toEqual(schema)
    const { data, response } = await openai.responses
      .create({ models: ["anthropic/claude-sonnet-4.5", "openai/gpt-5"], input: "A colour as JSON", text: { format: { type: "json_object" } } } as any)
      .withResponse()
    expect(response.headers.get("x-model-used")).toBe("openai/gpt-5")
    expect(() => JSON.parse(data.output_text)).not.toThrow()
  })

  it("input_tokens counts what a send reserves for, as count_tokens does, for free", async () => {
    const before = await fx.query("SELECT count(*)::int AS n FROM generations")
    const text = "How many tokens are in this sentence, counted by the vendor?"
    const counted = await api().call("POST", "/v1/responses/input_tokens", { model: "anthropic/claude-sonnet-4.5", instructions: "Be brief.", input: text }, bearer(key.secret))
    expect(counted.status, JSON.stringify(counted.body)).toBe(200)
    expect(counted.body).toEqual({ object: "response.input_tokens", input_tokens: expect.any(Number) })
    const messages = await api().call("POST", "/v1/messages/count_tokens", { model: "anthropic/claude-sonnet-4.5", system: "Be brief.", messages: [{ role: "user", content: text }] }, bearer(key.secret))
    expect(counted.body.input_tokens).toBe(messages.body.input_tokens)
    const longer = await api().call("POST", "/v1/responses/input_tokens", { model: "anthropic/claude-sonnet-4.5", instructions: "Be brief.", input: `${text} ${text}` }, bearer(key.secret))
    expect(longer.body.input_tokens).toBeGreaterThan(counted.body.input_tokens)
    expect((await fx.query("SELECT count(*)::int AS n FROM generations"))[0].n).toBe(before[0].n)
  })
})
