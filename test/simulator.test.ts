/**
 * The vendor simulator (simulator/, DESIGN.md section 10), driven in-process by the official SDKs: every answer is
 * parsed by the vendor's own client. Expected token counts are computed here from the documented framing rule
 * (3 framing tokens per message / system prompt / tool definition + o200k tokens of the text, + 3 priming the
 * reply), with the tokenizer imported independently of the simulator.
 */
import Anthropic from "@anthropic-ai/sdk"
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, Type } from "@google/genai"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { startSimulator } from "../simulator/server.ts"

const n = (text: string) => encode(text).length
const FRAME = 3

let url = ""
let close: () => Promise<void> = async () => {}
let openai: OpenAI
let anthropic: Anthropic
let gemini: GoogleGenAI

const control = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}/__control/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: (await response.json()) as unknown }
}
const fault = (body: Record<string, unknown>) => control("POST", "faults", body)

const caught = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

beforeAll(async () => {
  const sim = await startSimulator({ port: 0 })
  url = sim.url
  close = sim.close
  openai = new OpenAI({ apiKey: "sk-sim-openai-secret", baseURL: `${url}/v1`, maxRetries: 0 })
  anthropic = new Anthropic({ apiKey: "sk-ant-sim-secret", baseURL: url, maxRetries: 0 })
  gemini = new GoogleGenAI({ apiKey: "sim-gemini-secret", httpOptions: { baseUrl: url } })
})
afterAll(() => close())
beforeEach(async () => {
  await control("DELETE", "faults")
})

const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Weather for a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer" }, metric: { type: "boolean" } },
      required: ["city"]
    }
  }
}

describe("OpenAI chat completions", () => {
  const ask = "Hello there, how are you today?"

  it("answers deterministically with exact usage", async () => {
    const params = { model: "gpt-4o", messages: [{ role: "user" as const, content: ask }] }
    const a = await openai.chat.completions.create(params)
    const b = await openai.chat.completions.create(params)
    const text = a.choices[0]!.message.content!
    expect(a.object).toBe("chat.completion")
    expect(a.id).toMatch(/^chatcmpl-/)
    expect(text.startsWith(`Simulated reply from gpt-4o to: ${ask}`)).toBe(true)
    expect(b.choices[0]!.message.content).toBe(text)
    expect(a.choices[0]!.finish_reason).toBe("stop")
    expect(n(text)).toBeGreaterThanOrEqual(20)
    expect(n(text)).toBeLessThanOrEqual(61)
    expect(a.usage).toEqual({
      prompt_tokens: FRAME + n(ask) + FRAME,
      completion_tokens: n(text),
      total_tokens: FRAME + n(ask) + FRAME + n(text),
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
    })
  })

  it("streams chunks with a role chunk, a finish chunk and a final usage chunk", async () => {
    const params = { model: "gpt-4o", messages: [{ role: "user" as const, content: ask }] }
    const whole = await openai.chat.completions.create(params)
    const stream = await openai.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } })
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "", refusal: null })
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")
    expect(text).toBe(whole.choices[0]!.message.content)
    expect(chunks.length).toBeGreaterThan(5)
    const finish = chunks[chunks.length - 2]!
    expect(finish.choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" })
    const last = chunks[chunks.length - 1]!
    expect(last.choices).toEqual([])
    expect(last.usage).toEqual(whole.usage)
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true)
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
  })

  it("omits the usage chunk without include_usage", async () => {
    const stream = await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: ask }], stream: true })
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true)
  })

  it("truncates at max_tokens / max_completion_tokens and cuts at a stop string", async () => {
    const messages = [{ role: "user" as const, content: ask }]
    const full = (await openai.chat.completions.create({ model: "gpt-4o", messages })).choices[0]!.message.content!
    for (const limit of [{ max_tokens: 5 }, { max_completion_tokens: 5 }]) {
      const r = await openai.chat.completions.create({ model: "gpt-4o", messages, ...limit })
      const text = r.choices[0]!.message.content!
      expect(r.choices[0]!.finish_reason).toBe("length")
      expect(r.usage!.completion_tokens).toBe(5)
      expect(text).toBe(new TextDecoder().decode(new TextEncoder().encode(full)).slice(0, text.length))
      expect(n(text)).toBe(5)
    }
    const stopped = await openai.chat.completions.create({ model: "gpt-4o", messages, stop: ["reply", "zzz"] })
    expect(stopped.choices[0]!.message.content).toBe("Simulated ")
    expect(stopped.choices[0]!.finish_reason).toBe("stop")
    expect(stopped.usage!.completion_tokens).toBe(n("Simulated "))
  })

  it("calls a tool when asked for, in OpenAI's shape", async () => {
    const required = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "What is the weather?" }],
      tools: [weatherTool],
      tool_choice: "required"
    })
    const choice = required.choices[0]!
    expect(choice.finish_reason).toBe("tool_calls")
    expect(choice.message.content).toBeNull()
    const call = choice.message.tool_calls![0]!
    expect(call.type).toBe("function")
    expect(call.id).toMatch(/^call_[0-9a-f]{24}$/)
    if (call.type !== "function") throw new Error("function call expected")
    expect(call.function.name).toBe("get_weather")
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "sim", days: 1, metric: true })
    expect(required.usage!.completion_tokens).toBe(n("get_weather") + n(call.function.arguments))

    const mentioned = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "Please use a tool for Paris" }],
      tools: [weatherTool]
    })
    expect(mentioned.choices[0]!.finish_reason).toBe("tool_calls")
    const plain = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "Just chat with me" }],
      tools: [weatherTool]
    })
    expect(plain.choices[0]!.finish_reason).toBe("stop")
    const none = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "use the tool" }],
      tools: [weatherTool],
      tool_choice: "none"
    })
    expect(none.choices[0]!.finish_reason).toBe("stop")
  })

  it("streams a tool call as tool_calls deltas", async () => {
    const stream = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [weatherTool],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      stream: true,
      stream_options: { include_usage: true }
    })
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = []
    for await (const chunk of stream) chunks.push(chunk)
    const first = chunks[0]!.choices[0]!.delta
    expect(first.role).toBe("assistant")
    expect(first.tool_calls![0]).toMatchObject({ index: 0, type: "function", function: { name: "get_weather", arguments: "" } })
    expect(first.tool_calls![0]!.id).toMatch(/^call_[0-9a-f]{24}$/)
    const args = chunks.map((c) => c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "").join("")
    expect(JSON.parse(args)).toEqual({ city: "sim", days: 1, metric: true })
    expect(chunks.filter((c) => (c.choices[0]?.delta.tool_calls?.length ?? 0) > 0).length).toBeGreaterThan(2)
    expect(chunks[chunks.length - 2]!.choices[0]!.finish_reason).toBe("tool_calls")
    expect(chunks[chunks.length - 1]!.usage!.completion_tokens).toBe(n("get_weather") + n(args))
  })

  it("counts hidden reasoning tokens for o-series / gpt-5 models", async () => {
    const messages = [{ role: "user" as const, content: "Think hard" }]
    const byDefault = await openai.chat.completions.create({ model: "o3", messages })
    const reasoning = byDefault.usage!.completion_tokens_details!.reasoning_tokens!
    expect(reasoning).toBeGreaterThanOrEqual(192)
    expect(reasoning).toBeLessThan(320)
    expect(byDefault.usage!.completion_tokens).toBe(reasoning + n(byDefault.choices[0]!.message.content!))
    const low = await openai.chat.completions.create({ model: "gpt-5-mini", messages, reasoning_effort: "low" })
    const lowReasoning = low.usage!.completion_tokens_details!.reasoning_tokens!
    expect(lowReasoning).toBeGreaterThanOrEqual(64)
    expect(lowReasoning).toBeLessThan(128)
    const starved = await openai.chat.completions.create({ model: "o3", messages, max_completion_tokens: 50 })
    expect(starved.choices[0]!.finish_reason).toBe("length")
    expect(starved.choices[0]!.message.content).toBe("")
    expect(starved.usage!.completion_tokens_details!.reasoning_tokens).toBe(50)
    const plain = await openai.chat.completions.create({ model: "gpt-4o", messages })
    expect(plain.usage!.completion_tokens_details!.reasoning_tokens).toBe(0)
  })

  it("refuses, like DeepSeek in thinking mode, an earlier tool-calling assistant turn without its reasoning_content", async () => {
    const turn = (withReasoning: boolean) => [
      { role: "user", content: "Use the tool" },
      {
        role: "assistant",
        content: null,
        ...(withReasoning ? { reasoning_content: "thinking it over" } : {}),
        tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }]
      },
      { role: "tool", tool_call_id: "c1", content: "done" }
    ]
    const refused = await openai.chat.completions.create({ model: "deepseek-reasoner", messages: turn(false) as never }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect((refused as Error).message).toContain("Missing `reasoning_content` field in the assistant message at message index 1")
    const served = await openai.chat.completions.create({ model: "deepseek-reasoner", messages: turn(true) as never })
    expect(served.choices[0]!.message.content).toEqual(expect.any(String))
    // Outside thinking mode the turn needs no reasoning.
    const chat = await openai.chat.completions.create({ model: "deepseek-chat", messages: turn(false) as never })
    expect(chat.choices[0]!.finish_reason).toBeDefined()
  })

  it("returns DeepSeek reasoning_content and DeepSeek cache fields", async () => {
    const messages = [{ role: "user" as const, content: "Why is the sky blue?" }]
    const r = await openai.chat.completions.create({ model: "deepseek-reasoner", messages })
    const message = r.choices[0]!.message as typeof r.choices[0]["message"] & { reasoning_content: string }
    expect(message.reasoning_content.startsWith("Reasoning about the request: Why is the sky blue?")).toBe(true)
    const usage = r.usage as OpenAI.CompletionUsage & { prompt_cache_hit_tokens: number; prompt_cache_miss_tokens: number }
    expect(usage.completion_tokens_details!.reasoning_tokens).toBe(n(message.reasoning_content))
    expect(usage.completion_tokens).toBe(n(message.reasoning_content) + n(message.content!))
    expect(usage.prompt_cache_hit_tokens).toBe(0)
    expect(usage.prompt_cache_miss_tokens).toBe(usage.prompt_tokens)

    const stream = await openai.chat.completions.create({ model: "deepseek-reasoner", messages, stream: true })
    const kinds: string[] = []
    let reasoningText = ""
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string | null } | undefined
      if (delta?.reasoning_content) {
        kinds.push("reasoning")
        reasoningText += delta.reasoning_content
      }
      if (delta?.content) kinds.push("content")
    }
    expect(reasoningText).toBe(message.reasoning_content)
    expect(kinds.indexOf("content")).toBe(kinds.lastIndexOf("reasoning") + 1)

    const chat = await openai.chat.completions.create({ model: "deepseek-chat", messages })
    expect((chat.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBeUndefined()
    expect(chat.usage).toHaveProperty("prompt_cache_miss_tokens", chat.usage!.prompt_tokens)
  })

  it("reports implicit cached_tokens for a repeated prefix of >= 1024 tokens, per model", async () => {
    const long = Array.from({ length: 700 }, (_, i) => `item ${i}`).join(", ")
    const ask = (model: string, question: string) =>
      openai.chat.completions.create({ model, messages: [{ role: "system", content: long }, { role: "user", content: question }] })
    const first = await ask("gpt-4.1-mini", "first question here")
    expect(first.usage!.prompt_tokens_details!.cached_tokens).toBe(0)
    const second = await ask("gpt-4.1-mini", "second question here")
    const shared = FRAME + n(long) + FRAME
    expect(shared).toBeGreaterThan(1024)
    expect(second.usage!.prompt_tokens).toBe(shared + n("second question here") + FRAME)
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBe(Math.floor(shared / 128) * 128)
    const other = await ask("gpt-4.1-nano", "second question here")
    expect(other.usage!.prompt_tokens_details!.cached_tokens).toBe(0)
    const short = await openai.chat.completions.create({ model: "gpt-4.1-mini", messages: [{ role: "user", content: "tiny" }] })
    await openai.chat.completions.create({ model: "gpt-4.1-mini", messages: [{ role: "user", content: "tiny" }] })
    expect(short.usage!.prompt_tokens_details!.cached_tokens).toBe(0)
  })
})

describe("Anthropic messages", () => {
  const ask = "Hello Claude, tell me something"
  const model = "claude-sonnet-4-6"

  it("answers with a Message and disjoint usage", async () => {
    const m = await anthropic.messages.create({ model, max_tokens: 1024, messages: [{ role: "user", content: ask }] })
    expect(m.type).toBe("message")
    expect(m.id).toMatch(/^msg_01/)
    expect(m.content).toHaveLength(1)
    const block = m.content[0]!
    if (block.type !== "text") throw new Error("text block expected")
    expect(block.text.startsWith(`Simulated reply from ${model} to: ${ask}`)).toBe(true)
    expect(m.stop_reason).toBe("end_turn")
    expect(m.stop_sequence).toBeNull()
    expect(m.usage).toEqual({
      input_tokens: FRAME + n(ask) + FRAME,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: n(block.text),
      service_tier: "standard"
    })
  })

  it("streams named events in Anthropic's order (ping included) and the SDK rebuilds the message", async () => {
    const params = { model, max_tokens: 1024, messages: [{ role: "user" as const, content: ask }] }
    const whole = await anthropic.messages.create(params)
    const response = await fetch(`${url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ ...params, stream: true })
    })
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const raw = await response.text()
    const names = [...raw.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]!)
    expect(names.filter((name, i) => name !== names[i - 1])).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop"
    ])
    const start = JSON.parse(/event: message_start\ndata: (.*)\n/.exec(raw)![1]!) as { message: Anthropic.Message }
    expect(start.message.content).toEqual([])
    expect(start.message.usage).toMatchObject({ input_tokens: whole.usage.input_tokens, output_tokens: 1, cache_read_input_tokens: 0 })
    const delta = JSON.parse(/event: message_delta\ndata: (.*)\n/.exec(raw)![1]!) as Anthropic.RawMessageDeltaEvent
    expect(delta.delta).toEqual({ stop_reason: "end_turn", stop_sequence: null })
    expect(delta.usage).toEqual({
      input_tokens: whole.usage.input_tokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: whole.usage.output_tokens
    })

    const final = await anthropic.messages.stream(params).finalMessage()
    expect(final.content).toEqual(whole.content)
    expect(final.usage).toEqual(whole.usage)
    expect(final.stop_reason).toBe("end_turn")
  })

  it("stops at max_tokens and at stop_sequences", async () => {
    const messages = [{ role: "user" as const, content: ask }]
    const cut = await anthropic.messages.create({ model, max_tokens: 4, messages })
    expect(cut.stop_reason).toBe("max_tokens")
    expect(cut.usage.output_tokens).toBe(4)
    const stopped = await anthropic.messages.create({ model, max_tokens: 100, messages, stop_sequences: ["from"] })
    expect(stopped.stop_reason).toBe("stop_sequence")
    expect(stopped.stop_sequence).toBe("from")
    expect(stopped.content[0]).toMatchObject({ type: "text", text: "Simulated reply " })
  })

  it("thinks first, with a signature, streamed and not", async () => {
    const params = {
      model,
      max_tokens: 4000,
      thinking: { type: "enabled" as const, budget_tokens: 2000 },
      messages: [{ role: "user" as const, content: "Solve this puzzle" }]
    }
    const m = await anthropic.messages.create(params)
    expect(m.content.map((b) => b.type)).toEqual(["thinking", "text"])
    const thinking = m.content[0] as Anthropic.ThinkingBlock
    const text = m.content[1] as Anthropic.TextBlock
    expect(thinking.thinking.startsWith("Let me think about how to answer: Solve this puzzle")).toBe(true)
    expect(thinking.signature).toMatch(/^[A-Za-z0-9+/]{43}=$/)
    expect(m.usage.output_tokens).toBe(n(thinking.thinking) + n(text.text))

    const events: string[] = []
    const stream = anthropic.messages.stream(params)
    stream.on("streamEvent", (event) => {
      events.push(event.type === "content_block_delta" ? event.delta.type : event.type)
    })
    const final = await stream.finalMessage()
    expect(final.content).toEqual(m.content)
    const compact = events.filter((e, i) => e !== events[i - 1])
    expect(compact).toEqual([
      "message_start",
      "content_block_start",
      "thinking_delta",
      "signature_delta",
      "content_block_stop",
      "content_block_start",
      "text_delta",
      "content_block_stop",
      "message_delta",
      "message_stop"
    ])

    const adaptive = await anthropic.messages.create({ ...params, thinking: { type: "adaptive" } })
    expect(adaptive.content.map((b) => b.type)).toEqual(["thinking", "text"])
    const invalid = await caught(anthropic.messages.create({ ...params, max_tokens: 1500 }))
    expect(invalid).toBeInstanceOf(Anthropic.APIError)
    expect((invalid as InstanceType<typeof Anthropic.APIError>).status).toBe(400)
  })

  it("calls tools with a tool_use block, streamed as input_json_delta", async () => {
    const tools = [
      {
        name: "get_weather",
        description: "Weather",
        input_schema: { type: "object" as const, properties: { city: { type: "string" }, days: { type: "number" } } }
      }
    ]
    const forced = await anthropic.messages.create({
      model,
      max_tokens: 500,
      tools,
      tool_choice: { type: "tool", name: "get_weather" },
      messages: [{ role: "user", content: "Weather in Paris?" }]
    })
    expect(forced.stop_reason).toBe("tool_use")
    const use = forced.content[0] as Anthropic.ToolUseBlock
    expect(use.type).toBe("tool_use")
    expect(use.id).toMatch(/^toolu_01/)
    expect(use.name).toBe("get_weather")
    expect(use.input).toEqual({ city: "sim", days: 1 })
    expect(forced.usage.output_tokens).toBe(n("get_weather") + n(JSON.stringify(use.input)))

    const streamed = await anthropic.messages
      .stream({ model, max_tokens: 500, tools, messages: [{ role: "user", content: "call get_weather for Paris" }] })
      .finalMessage()
    expect(streamed.stop_reason).toBe("tool_use")
    expect(streamed.content[0]).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "sim", days: 1 } })

    const afterResult = await anthropic.messages.create({
      model,
      max_tokens: 500,
      tools,
      messages: [
        { role: "user", content: "use the tool" },
        { role: "assistant", content: [{ type: "tool_use", id: use.id, name: "get_weather", input: use.input }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] }
      ]
    })
    expect(afterResult.stop_reason).toBe("end_turn")
  })

  it("writes a marked prefix to the cache by ttl, then reads it", async () => {
    const cacheModel = "claude-opus-4-7"
    const system = Array.from({ length: 300 }, (_, i) => `rule ${i}`).join("; ")
    const documentText = Array.from({ length: 200 }, (_, i) => `fact ${i}`).join("; ")
    const request = (question: string) =>
      anthropic.messages.create({
        model: cacheModel,
        max_tokens: 200,
        system: [{ type: "text", text: system, cache_control: { type: "ephemeral", ttl: "1h" } }],
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: documentText, cache_control: { type: "ephemeral" } },
              { type: "text", text: question }
            ]
          }
        ]
      })
    const sysPart = FRAME + n(system)
    const docPart = FRAME + n(documentText)
    const first = await request("question one")
    expect(first.usage).toMatchObject({
      input_tokens: n("question one") + FRAME,
      cache_creation_input_tokens: sysPart + docPart,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: docPart, ephemeral_1h_input_tokens: sysPart }
    })
    const second = await request("question two")
    expect(second.usage).toMatchObject({
      input_tokens: n("question two") + FRAME,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: sysPart + docPart,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }
    })
    const counted = await anthropic.messages.countTokens({
      model: cacheModel,
      system: [{ type: "text", text: system, cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [{ role: "user", content: [{ type: "text", text: documentText }, { type: "text", text: "question two" }] }]
    })
    expect(counted.input_tokens).toBe(sysPart + docPart + n("question two") + FRAME)
  })

  it("reads the earlier prefix when a conversation moves its breakpoint forward", async () => {
    const cacheModel = "claude-haiku-4-5-20251001"
    const documentText = Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n")
    const first = await anthropic.messages.create({
      model: cacheModel,
      max_tokens: 100,
      messages: [{ role: "user", content: [{ type: "text", text: documentText, cache_control: { type: "ephemeral" } }] }]
    })
    expect(first.usage).toMatchObject({ input_tokens: FRAME, cache_creation_input_tokens: FRAME + n(documentText), cache_read_input_tokens: 0 })
    const second = await anthropic.messages.create({
      model: cacheModel,
      max_tokens: 100,
      messages: [
        { role: "user", content: [{ type: "text", text: documentText }] },
        { role: "assistant", content: "Sure." },
        { role: "user", content: [{ type: "text", text: "Next question", cache_control: { type: "ephemeral" } }] }
      ]
    })
    expect(second.usage).toMatchObject({
      input_tokens: FRAME,
      cache_read_input_tokens: FRAME + n(documentText),
      cache_creation_input_tokens: FRAME + n("Sure.") + FRAME + n("Next question"),
      cache_creation: { ephemeral_5m_input_tokens: FRAME + n("Sure.") + FRAME + n("Next question"), ephemeral_1h_input_tokens: 0 }
    })
  })

  it("counts tokens", async () => {
    const counted = await anthropic.messages.countTokens({ model, system: "Be brief.", messages: [{ role: "user", content: ask }] })
    expect(counted).toEqual({ input_tokens: FRAME + n("Be brief.") + FRAME + n(ask) + FRAME })
  })
})

describe("Gemini", () => {
  const model = "gemini-2.5-flash"
  const ask = "Hello Gemini, how is it going"

  it("generates content with usageMetadata", async () => {
    const r = await gemini.models.generateContent({ model, contents: ask })
    const text = r.text!
    expect(text.startsWith(`Simulated reply from ${model} to: ${ask}`)).toBe(true)
    expect(r.candidates![0]!.finishReason).toBe("STOP")
    expect(r.modelVersion).toBe(model)
    expect(r.usageMetadata).toEqual({
      promptTokenCount: FRAME + n(ask) + FRAME,
      candidatesTokenCount: n(text),
      totalTokenCount: FRAME + n(ask) + FRAME + n(text),
      promptTokensDetails: [{ modality: "TEXT", tokenCount: FRAME + n(ask) + FRAME }]
    })
  })

  it("streams SSE chunks with a running usage total", async () => {
    const whole = await gemini.models.generateContent({ model, contents: ask })
    const chunks = []
    for await (const chunk of await gemini.models.generateContentStream({ model, contents: ask })) chunks.push(chunk)
    expect(chunks.length).toBeGreaterThan(3)
    expect(chunks.map((c) => c.text ?? "").join("")).toBe(whole.text)
    const running = chunks.map((c) => c.usageMetadata!.candidatesTokenCount!)
    expect([...running].sort((a, b) => a - b)).toEqual(running)
    expect(chunks[chunks.length - 1]!.usageMetadata).toEqual(whole.usageMetadata)
    expect(chunks[chunks.length - 1]!.candidates![0]!.finishReason).toBe("STOP")
    expect(chunks.slice(0, -1).every((c) => c.candidates![0]!.finishReason === undefined)).toBe(true)
  })

  it("reports thoughts separately and returns thought parts when asked", async () => {
    const r = await gemini.models.generateContent({
      model,
      contents: ask,
      config: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } }
    })
    const parts = r.candidates![0]!.content!.parts!
    expect(parts[0]!.thought).toBe(true)
    expect(parts[1]!.thought).toBeUndefined()
    const u = r.usageMetadata!
    expect(u.thoughtsTokenCount).toBe(n(parts[0]!.text!))
    expect(u.candidatesTokenCount).toBe(n(parts[1]!.text!))
    expect(u.totalTokenCount).toBe(u.promptTokenCount! + u.candidatesTokenCount! + u.thoughtsTokenCount!)
    expect(r.text).toBe(parts[1]!.text)

    const hidden = await gemini.models.generateContent({ model, contents: ask, config: { thinkingConfig: { thinkingBudget: 10 } } })
    expect(hidden.usageMetadata!.thoughtsTokenCount).toBe(10)
    expect(hidden.candidates![0]!.content!.parts!.every((p) => p.thought !== true)).toBe(true)
    const none = await gemini.models.generateContent({ model, contents: ask, config: { thinkingConfig: { thinkingBudget: 0 } } })
    expect(none.usageMetadata!.thoughtsTokenCount).toBeUndefined()
  })

  it("honours maxOutputTokens and stopSequences", async () => {
    const cut = await gemini.models.generateContent({ model, contents: ask, config: { maxOutputTokens: 5 } })
    expect(cut.candidates![0]!.finishReason).toBe("MAX_TOKENS")
    expect(cut.usageMetadata!.candidatesTokenCount).toBe(5)
    const stopped = await gemini.models.generateContent({ model, contents: ask, config: { stopSequences: ["reply"] } })
    expect(stopped.text).toBe("Simulated ")
    expect(stopped.candidates![0]!.finishReason).toBe("STOP")
  })

  it("returns functionCall parts, streamed and not", async () => {
    const config = {
      tools: [
        {
          functionDeclarations: [
            {
              name: "get_weather",
              parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING }, days: { type: Type.INTEGER } } }
            }
          ]
        }
      ],
      toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } }
    }
    const r = await gemini.models.generateContent({ model, contents: "Weather in Paris?", config })
    expect(r.functionCalls).toEqual([{ name: "get_weather", args: { city: "sim", days: 1 } }])
    expect(r.usageMetadata!.candidatesTokenCount).toBe(n("get_weather") + n(JSON.stringify({ city: "sim", days: 1 })))
    const chunks = []
    for await (const chunk of await gemini.models.generateContentStream({ model, contents: "Weather in Paris?", config })) chunks.push(chunk)
    expect(chunks.flatMap((c) => c.functionCalls ?? [])).toEqual([{ name: "get_weather", args: { city: "sim", days: 1 } }])
    const auto = await gemini.models.generateContent({ model, contents: "Just talk", config: { tools: config.tools } })
    expect(auto.functionCalls).toBeUndefined()
  })

  it("counts tokens and reports implicit cachedContentTokenCount", async () => {
    const counted = await gemini.models.countTokens({ model, contents: ask })
    expect(counted.totalTokens).toBe(FRAME + n(ask) + FRAME)
    const long = Array.from({ length: 700 }, (_, i) => `entry ${i}`).join(", ")
    const ask2 = (question: string) =>
      gemini.models.generateContent({ model: "gemini-2.5-pro", contents: question, config: { systemInstruction: long } })
    const first = await ask2("first question")
    expect(first.usageMetadata!.cachedContentTokenCount).toBeUndefined()
    const second = await ask2("second question")
    const shared = FRAME + n(long) + FRAME
    expect(second.usageMetadata!.promptTokenCount).toBe(shared + n("second question") + FRAME)
    expect(second.usageMetadata!.cachedContentTokenCount).toBe(Math.floor(shared / 128) * 128)
  })
})

describe("errors and faults", () => {
  it("answers missing auth with 401 and malformed bodies with 400, in each vendor's shape", async () => {
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })
    const o = await post("/v1/chat/completions", "{}")
    expect(o.status).toBe(401)
    expect(((await o.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key")
    const a = await post("/v1/messages", "{}")
    expect(a.status).toBe(401)
    expect(await a.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } })
    const g = await post(`/v1beta/models/gemini-2.5-flash:generateContent`, "{}")
    expect(g.status).toBe(401)
    expect(await g.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } })

    const bad = await post("/v1/chat/completions", "{not json", { authorization: "Bearer k" })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: { type: "invalid_request_error" } })
    const badA = await post("/v1/messages", JSON.stringify({ model: "claude-x", messages: [] }), { "x-api-key": "k" })
    expect(badA.status).toBe(400)
    expect(await badA.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: Field required" } })
    const badG = await post(`/v1beta/models/gemini-2.5-flash:generateContent?key=k`, "[1,2")
    expect(badG.status).toBe(400)
    expect(await badG.json()).toMatchObject({ error: { code: 400, status: "INVALID_ARGUMENT" } })
  })

  it("error500 and rate_limited, vendor-shaped, for the faulted model only", async () => {
    expect((await fault({ model: "gpt-4o-mini", fault: "error500" })).status).toBe(200)
    const e500 = await caught(openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }))
    expect(e500).toBeInstanceOf(APIError)
    expect((e500 as APIError).status).toBe(500)
    expect((e500 as APIError).type).toBe("server_error")
    const ok = await openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })
    expect(ok.choices[0]!.finish_reason).toBe("stop")

    await fault({ model: "gpt-4o-mini", fault: "rate_limited", retryAfterSeconds: 7 })
    const other = await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })
    expect(other.object).toBe("chat.completion")
    const e429 = (await caught(openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }))) as APIError
    expect(e429.status).toBe(429)
    expect(e429.headers?.get("retry-after")).toBe("7")
    expect(e429.code).toBe("rate_limit_exceeded")

    await fault({ model: "claude-sonnet-4-6", fault: "error500" })
    const a500 = (await caught(
      anthropic.messages.create({ model: "claude-sonnet-4-6", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
    )) as InstanceType<typeof Anthropic.APIError>
    expect(a500.status).toBe(500)
    expect(a500.error).toMatchObject({ type: "error", error: { type: "api_error" } })
    await fault({ model: "claude-sonnet-4-6", fault: "rate_limited", retryAfterSeconds: 3 })
    const a429 = (await caught(
      anthropic.messages.create({ model: "claude-sonnet-4-6", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
    )) as InstanceType<typeof Anthropic.APIError>
    expect(a429.status).toBe(429)
    expect(a429.headers?.get("retry-after")).toBe("3")

    await fault({ model: "gemini-2.5-flash", fault: "error500" })
    const g500 = await caught(gemini.models.generateContent({ model: "gemini-2.5-flash", contents: "hi" }))
    expect(g500).toBeInstanceOf(ApiError)
    expect((g500 as ApiError).status).toBe(500)
    await fault({ model: "gemini-2.5-flash", fault: "rate_limited" })
    const g429 = await caught(gemini.models.generateContent({ model: "gemini-2.5-flash", contents: "hi" }))
    expect((g429 as ApiError).status).toBe(429)
  })

  it("applies '*' faults to any model, `count` times", async () => {
    await fault({ model: "*", fault: "error500", count: 2 })
    const listed = await control("GET", "faults")
    expect(listed.body).toMatchObject({ faults: [{ model: "*", fault: "error500", count: 2 }] })
    for (const model of ["mistral-large-2411", "grok-4"]) {
      const error = (await caught(openai.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] }))) as APIError
      expect(error.status).toBe(500)
    }
    const ok = await openai.chat.completions.create({ model: "grok-4", messages: [{ role: "user", content: "hi" }] })
    expect(ok.object).toBe("chat.completion")
    await fault({ model: "*", fault: "error500" })
    expect(await control("DELETE", "faults")).toEqual({ status: 200, body: { cleared: 1 } })
    const clean = await openai.chat.completions.create({ model: "grok-4", messages: [{ role: "user", content: "hi" }] })
    expect(clean.object).toBe("chat.completion")
    expect((await fault({ model: "x", fault: "explode" })).status).toBe(400)
  })

  it("timeout: never answers, so the client gives up", async () => {
    await fault({ model: "gpt-4o", fault: "timeout" })
    const client = new OpenAI({ apiKey: "k", baseURL: `${url}/v1`, maxRetries: 0, timeout: 300 })
    const started = Date.now()
    const error = await caught(client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }))
    expect(error).toBeInstanceOf(APIConnectionTimeoutError)
    expect(Date.now() - started).toBeGreaterThanOrEqual(280)
    const ok = await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })
    expect(ok.object).toBe("chat.completion")
  })

  it("drop: the stream is cut after afterChunks chunks; a non-streaming request gets no answer", async () => {
    await fault({ model: "gpt-4o", fault: "drop", afterChunks: 2 })
    const stream = await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }], stream: true })
    const received: unknown[] = []
    const error = await caught(
      (async () => {
        for await (const chunk of stream) received.push(chunk)
      })()
    )
    expect(error).toBeInstanceOf(Error)
    expect(received).toHaveLength(2)

    await fault({ model: "gpt-4o", fault: "drop" })
    const dropped = await caught(openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }))
    expect(dropped).toBeInstanceOf(APIConnectionError)

    await fault({ model: "claude-sonnet-4-6", fault: "drop", afterChunks: 3 })
    const events: string[] = []
    const anthropicStream = await anthropic.messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 100,
      messages: [{ role: "user", content: "hi" }],
      stream: true
    })
    const anthropicError = await caught(
      (async () => {
        for await (const event of anthropicStream) events.push(event.type)
      })()
    )
    expect(anthropicError).toBeInstanceOf(Error)
    expect(events).toEqual(["message_start", "content_block_start"])
  })

  it("slow_first_byte delays the answer by delayMs", async () => {
    const messages = [{ role: "user" as const, content: "hi" }]
    await fault({ model: "gpt-4o", fault: "slow_first_byte", delayMs: 400 })
    const started = Date.now()
    const slow = await openai.chat.completions.create({ model: "gpt-4o", messages })
    const slowMs = Date.now() - started
    expect(slow.choices[0]!.finish_reason).toBe("stop")
    expect(slowMs).toBeGreaterThanOrEqual(390)
    const again = Date.now()
    await openai.chat.completions.create({ model: "gpt-4o", messages })
    expect(Date.now() - again).toBeLessThan(300)
  })

  it("stall: the stream stops after afterChunks chunks and the connection stays open until the client leaves or it is cut", async () => {
    await fault({ model: "gpt-4o", fault: "stall", afterChunks: 2 })
    const controller = new AbortController()
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] }),
      signal: controller.signal
    })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let text = ""
    while ((text.match(/\n\n/g) ?? []).length < 2) text += decoder.decode((await reader.read()).value, { stream: true })
    expect(text.split("\n\n").filter((event) => event !== "")).toHaveLength(2)
    // Nothing more arrives, and the connection is not closed either.
    const next = await Promise.race([reader.read().then(() => "more"), new Promise((resolve) => setTimeout(() => resolve("quiet"), 300))])
    expect(next).toBe("quiet")
    // DELETE /__control/held cuts it, as `drop` would have.
    expect(await control("DELETE", "held")).toEqual({ status: 200, body: { cleared: 1 } })
    expect(await caught(reader.read())).toBeInstanceOf(Error)
    controller.abort()

    await fault({ model: "gpt-4o", fault: "stall" })
    const client = new OpenAI({ apiKey: "k", baseURL: `${url}/v1`, maxRetries: 0, timeout: 300 })
    const held = await caught(client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }))
    expect(held).toBeInstanceOf(APIConnectionTimeoutError)
  })

  it("slow_stream writes the stream's chunks delayMs apart, and the same events as an unpaced stream", async () => {
    const messages = [{ role: "user" as const, content: "pace me" }]
    const chunksOf = async () => {
      const stream = await openai.chat.completions.create({ model: "gpt-4o", messages, stream: true, stream_options: { include_usage: true } })
      const arrivals: Array<{ at: number; chunk: OpenAI.Chat.Completions.ChatCompletionChunk }> = []
      for await (const chunk of stream) arrivals.push({ at: Date.now(), chunk })
      return arrivals
    }
    const plain = await chunksOf()
    await fault({ model: "gpt-4o", fault: "slow_stream", delayMs: 40 })
    const paced = await chunksOf()
    const contentOf = (arrivals: typeof plain) => arrivals.map((a) => a.chunk.choices[0]?.delta.content ?? "").join("")
    expect(contentOf(paced)).toBe(contentOf(plain))
    expect(paced.at(-1)!.chunk.usage).toEqual(plain.at(-1)!.chunk.usage)
    expect(paced).toHaveLength(plain.length)
    // n chunks plus [DONE]: n gaps of delayMs between the first and the last write.
    expect(paced.at(-1)!.at - paced[0]!.at).toBeGreaterThanOrEqual(40 * (paced.length - 1) - 5)

    await fault({ model: "gpt-4o", fault: "slow_stream", delayMs: 300 })
    const started = Date.now()
    const whole = await openai.chat.completions.create({ model: "gpt-4o", messages })
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    expect(whole.choices[0]!.message.content).toBe(contentOf(plain))
  })

  it("malformed: afterChunks whole events, then one whose JSON stops midway, then the end; a whole answer is half its JSON", async () => {
    /** Two answers to one request differ only in their id and time. */
    const stable = (text: string) => text.replace(/"id":"[^"]*"/g, "").replace(/"created":\d+/g, "")
    const request = { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "break me" }] }
    const post = (body: unknown) =>
      fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: JSON.stringify(body) })
    const plain = await (await post(request)).text()
    await fault({ model: "gpt-4o", fault: "malformed", afterChunks: 2 })
    const broken = await (await post(request)).text()
    const events = broken.split("\n\n").filter((event) => event !== "")
    expect(events).toHaveLength(3)
    expect(stable(plain).startsWith(stable(`${events[0]}\n\n${events[1]}\n\n`))).toBe(true)
    expect(() => JSON.parse(events[2]!.replace(/^data: /, ""))).toThrow()

    const whole = await (await post({ ...request, stream: false })).text()
    await fault({ model: "gpt-4o", fault: "malformed" })
    const answer = await post({ ...request, stream: false })
    expect(answer.status).toBe(200)
    const half = await answer.text()
    expect(stable(whole).startsWith(stable(half))).toBe(true)
    expect(half.length).toBe(Math.floor(whole.length / 2))
    expect(() => JSON.parse(half)).toThrow()
  })

  it("trickle: the answer arrives one byte a read, delayMs apart, the same bytes as unpaced", async () => {
    const request = { model: "gpt-4o", stream: true, max_tokens: 3, messages: [{ role: "user", content: "drip" }] }
    const read = async () => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer k", "content-type": "application/json" },
        body: JSON.stringify(request)
      })
      const reads: Array<Uint8Array> = []
      for await (const chunk of response.body!) reads.push(chunk)
      return reads
    }
    const plain = Buffer.concat(await read()).toString("utf8")
    await fault({ model: "gpt-4o", fault: "trickle", delayMs: 2 })
    const started = Date.now()
    const reads = await read()
    const trickled = Buffer.concat(reads).toString("utf8")
    const stable = (text: string) => text.replace(/"id":"[^"]*"/g, "").replace(/"created":\d+/g, "")
    expect(stable(trickled)).toBe(stable(plain))
    // Each byte is its own write, 2 ms apart: the client reads most of them apart.
    expect(reads.length).toBeGreaterThan(trickled.length / 4)
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * (Buffer.byteLength(trickled) - 1))
  })
})

describe("control API", () => {
  it("logs requests with redacted secrets, most recent last, and clears them", async () => {
    expect((await control("GET", "health")).status).toBe(200)
    await control("DELETE", "requests")
    await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "logged" }], max_tokens: 7 })
    await fetch(`${url}/v1beta/models/gemini-2.5-flash:countTokens?key=abcdefghijk`, {
      method: "POST",
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "x" }] }] })
    })
    const { status, body } = await control("GET", "requests")
    expect(status).toBe(200)
    const log = body as Array<{ at: string; path: string; headers: Record<string, string>; body: Record<string, unknown> }>
    expect(log).toHaveLength(2)
    expect(log[0]!.path).toBe("/v1/chat/completions")
    expect(log[0]!.headers["authorization"]).toBe("Bearer sk-sim…")
    expect(log[0]!.body).toEqual({ model: "gpt-4o", messages: [{ role: "user", content: "logged" }], max_tokens: 7 })
    expect(Number.isNaN(Date.parse(log[0]!.at))).toBe(false)
    expect(log[1]!.path).toBe("/v1beta/models/gemini-2.5-flash:countTokens?key=abcdef…")
    expect(await control("DELETE", "requests")).toEqual({ status: 200, body: { cleared: 2 } })
    expect((await control("GET", "requests")).body).toEqual([])
  })
})
