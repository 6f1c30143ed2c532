/**
 * Tools end to end across formats (issue 11 item 4) and the end-user fingerprint (item 3), with the official SDKs
 * against our server and the simulator as every vendor: a chat-format client served by Anthropic and Gemini models,
 * a messages-format client served by an OpenAI model; definitions, tool_choice, tool calls in whole replies and stream
 * deltas, tool results in the next turn, each checked on both sides (what the client got, what the vendor received).
 */
import Anthropic from "@anthropic-ai/sdk"
import { createHmac } from "node:crypto"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ExchangeFixture, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"

const FINGERPRINT_KEY = "tools-test-fingerprint-key"

let fx: ExchangeFixture
let openai: OpenAI
let anthropic: Anthropic

beforeAll(async () => {
  fx = await startExchangeFixture({ USER_FINGERPRINT_KEY: FINGERPRINT_KEY })
  const key = await fx.issueKey({ label: "tools tests" })
  await fx.grant(100n * ONE_CREDIT)
  const clients = sdkClients(fx.baseUrl, key.secret)
  openai = clients.openai
  anthropic = clients.anthropic
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

/** The last body the simulator received for an upstream model id. */
const upstreamBody = async (pathPart: string, model?: string) => {
  const log = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<{ path: string; body: any }>
  return log.filter((entry) => entry.path.includes(pathPart) && (model === undefined || entry.body?.model === model || entry.path.includes(model))).at(-1)?.body
}

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  }
}

describe("a chat-format client served by an Anthropic model", () => {
  it("sends the tool as Anthropic's, gets the call back as tool_calls, and sends the result as a tool_result block", async () => {
    const first = await openai.chat.completions.create({
      model: "anthropic/claude-sonnet-4.5",
      messages: [{ role: "user", content: "Use the get_weather tool for Paris" }],
      tools: [weatherTool],
      tool_choice: "auto",
      max_tokens: 64
    })
    const sent = await upstreamBody("/v1/messages", "claude-sonnet-4-5")
    expect(sent.tools).toEqual([{ name: "get_weather", description: "The weather in a city", input_schema: weatherTool.function.parameters }])
    expect(sent.tool_choice).toEqual({ type: "auto" })
    const choice = first.choices[0]!
    expect(choice.finish_reason).toBe("tool_calls")
    const call = choice.message.tool_calls![0]!
    expect(call.type).toBe("function")
    if (call.type !== "function") throw new Error("not a function call")
    expect(call.function.name).toBe("get_weather")
    expect(JSON.parse(call.function.arguments)).toEqual(expect.any(Object))

    const second = await openai.chat.completions.create({
      model: "anthropic/claude-sonnet-4.5",
      messages: [
        { role: "user", content: "Use the get_weather tool for Paris" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: "18 C and sunny" }
      ],
      tools: [weatherTool],
      max_tokens: 64
    })
    expect(second.choices[0]!.finish_reason).toBe("stop")
    expect(second.choices[0]!.message.content).toEqual(expect.any(String))
    const replayed = await upstreamBody("/v1/messages", "claude-sonnet-4-5")
    expect(replayed.messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "tool_use", id: call.id, name: "get_weather", input: JSON.parse(call.function.arguments) }]
    })
    expect(replayed.messages[2].role).toBe("user")
    expect(replayed.messages[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: call.id })
    expect(JSON.stringify(replayed.messages[2].content[0])).toContain("18 C and sunny")
  })

  it("streams the call as delta.tool_calls that assemble into the same call", async () => {
    const stream = await openai.chat.completions.create({
      model: "anthropic/claude-sonnet-4.5",
      messages: [{ role: "user", content: "Use the get_weather tool for Rome" }],
      tools: [weatherTool],
      max_tokens: 64,
      stream: true
    })
    let name = ""
    let args = ""
    let id: string | undefined
    let finish: string | null | undefined
    for await (const chunk of stream) {
      const choice = chunk.choices[0]
      for (const delta of choice?.delta.tool_calls ?? []) {
        id ??= delta.id
        name += delta.function?.name ?? ""
        args += delta.function?.arguments ?? ""
      }
      if (choice?.finish_reason) finish = choice.finish_reason
    }
    expect(id).toMatch(/\S/)
    expect(name).toBe("get_weather")
    expect(JSON.parse(args)).toEqual(expect.any(Object))
    expect(finish).toBe("tool_calls")
  })
})

describe("a chat-format client served by a Gemini model", () => {
  it("sends functionDeclarations and gets the functionCall back as tool_calls", async () => {
    const answer = await openai.chat.completions.create({
      model: "google/gemini-2.5-flash",
      messages: [{ role: "user", content: "Use the get_weather tool for Oslo" }],
      tools: [weatherTool],
      max_tokens: 64
    })
    const sent = await upstreamBody("gemini-2.5-flash")
    expect(sent.tools[0].functionDeclarations[0]).toMatchObject({ name: "get_weather", description: "The weather in a city" })
    const call = answer.choices[0]!.message.tool_calls![0]!
    expect(call.type === "function" && call.function.name).toBe("get_weather")
    expect(answer.choices[0]!.finish_reason).toBe("tool_calls")
  })
})

describe("a messages-format client served by an OpenAI model", () => {
  it("sends the tool as OpenAI's function, gets a tool_use block back, and sends the tool_result as a tool message", async () => {
    const tool = { name: "get_weather", description: "The weather in a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } } } }
    const first = await anthropic.messages.create({
      model: "openai/gpt-4.1",
      max_tokens: 64,
      tools: [tool],
      tool_choice: { type: "any" },
      messages: [{ role: "user", content: "What is the weather in Lima?" }]
    })
    const sent = await upstreamBody("/chat/completions", "gpt-4.1")
    expect(sent.tools).toEqual([{ type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: tool.input_schema } }])
    expect(sent.tool_choice).toBe("required")
    expect(first.stop_reason).toBe("tool_use")
    const use = first.content.find((block) => block.type === "tool_use")
    if (use?.type !== "tool_use") throw new Error(`no tool_use block: ${JSON.stringify(first.content)}`)
    expect(use.name).toBe("get_weather")

    const second = await anthropic.messages.create({
      model: "openai/gpt-4.1",
      max_tokens: 64,
      tools: [tool],
      messages: [
        { role: "user", content: "What is the weather in Lima?" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "22 C, cloudy" }] }
      ]
    })
    expect(second.stop_reason).toBe("end_turn")
    const replayed = await upstreamBody("/chat/completions", "gpt-4.1")
    const assistant = replayed.messages.find((m: any) => m.role === "assistant")
    expect(assistant.tool_calls[0]).toMatchObject({ id: use.id, type: "function", function: { name: "get_weather" } })
    expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toEqual(use.input)
    expect(replayed.messages.find((m: any) => m.role === "tool")).toEqual({ role: "tool", tool_call_id: use.id, content: "22 C, cloudy" })
  })
})

describe("the end user's identity", () => {
  const fingerprint = (user: string) => createHmac("sha256", FINGERPRINT_KEY).update(user).digest("hex").slice(0, 32)

  it("reaches OpenAI-shaped vendors as `user` and Anthropic as `metadata.user_id`, an HMAC of what the client sent", async () => {
    await openai.chat.completions.create({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "hi" }], max_tokens: 8, user: "alice@example.com" })
    const sent = await upstreamBody("/chat/completions", "gpt-4.1")
    expect(sent.user).toBe(fingerprint("alice@example.com"))
    expect(JSON.stringify(sent)).not.toContain("alice")
    await anthropic.messages.create({ model: "anthropic/claude-sonnet-4.5", max_tokens: 8, metadata: { user_id: "bob-42" }, messages: [{ role: "user", content: "hi" }] })
    const toAnthropic = await upstreamBody("/v1/messages", "claude-sonnet-4-5")
    expect(toAnthropic.metadata).toEqual({ user_id: fingerprint("bob-42") })
  })

  it("is dropped when no USER_FINGERPRINT_KEY is configured", async () => {
    const plain = await startExchangeFixture()
    try {
      const key = await plain.issueKey({ label: "no fingerprint" })
      await plain.grant(ONE_CREDIT)
      const client = new OpenAI({ apiKey: key.secret, baseURL: `${plain.baseUrl}/v1`, maxRetries: 0 })
      await client.chat.completions.create({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "hi" }], max_tokens: 8, user: "carol" })
      const log = (await (await fetch(`${plain.simulatorUrl}/__control/requests`)).json()) as Array<{ body: any }>
      const sent = log.filter((entry) => entry.body?.model === "gpt-4.1").at(-1)!.body
      expect(sent.user).toBeUndefined()
      expect(JSON.stringify(sent)).not.toContain("carol")
    } finally {
      await plain.close()
    }
  }, 120_000)
})
