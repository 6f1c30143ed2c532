/**
 * The OpenAI chat-completions wire format, both directions: our endpoint's request decoding and refusals, the reply
 * and stream we render, the request we send OpenAI-compatible vendors and the replies we read from them.
 */
import { Either } from "effect"
import OpenAI from "openai"
import { describe, expect, it } from "vitest"
import type { ChatEvent, ChatRequest, ChatResult, ReplyBill, ReplyMeta, Usage } from "../domain/exchange/canonical.ts"
import { foldEvents } from "../domain/exchange/canonical.ts"
import {
  decodeChatCompletionsRequest,
  makeChatCompletionStream,
  renderChatCompletion
} from "../domain/exchange/translate/openaiChatInbound.ts"
import {
  buildOpenaiChatRequest,
  makeOpenaiChatStreamParser,
  parseOpenaiChatResponse,
  usageOf
} from "../domain/exchange/translate/openaiChatUpstream.ts"
import type { OpenaiChatTraitOptions } from "../domain/exchange/traits.ts"
import { MAX_BODY_DEPTH, nestsDeeperThan } from "../domain/exchange/translate/parseIssues.ts"
import { UpstreamProtocolError, UpstreamStreamError } from "../domain/exchange/upstreamErrors.ts"
import type { ValidationFailed } from "../domain/errors.ts"

const user = { role: "user", content: "hi" }
const base = { messages: [user] }

const accept = (body: unknown) => {
  const decoded = decodeChatCompletionsRequest(body)
  if (Either.isLeft(decoded)) throw new Error(`refused: ${decoded.left.message}`)
  return decoded.right
}
const refuse = (body: unknown): ValidationFailed => {
  const decoded = decodeChatCompletionsRequest(body)
  if (Either.isRight(decoded)) throw new Error("accepted")
  return decoded.left
}
/** A schema failure: validation_error, with the params of every issue. */
const schemaFailure = (body: unknown) => {
  const error = refuse(body)
  expect(error.type).toBe("validation_error")
  return { params: (error.issues ?? []).map((issue) => issue.param), param: error.param, error }
}
/** A refusal after parsing: invalid_request_error, no issues, `param` naming the field. */
const refusal = (body: unknown) => {
  const error = refuse(body)
  expect(error.type).toBe("invalid_request_error")
  expect(error.issues).toBeUndefined()
  return error
}

const emptyChat: ChatRequest = { messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }], stop: [], tools: [] }

describe("decoding a chat-completions request", () => {
  it("takes a minimal request: model omitted means auto", () => {
    const decoded = accept(base)
    expect(decoded.stream).toBe(false)
    expect(decoded.endUser).toBeUndefined()
    expect(decoded.route).toEqual({})
    expect(decoded.chat).toEqual(emptyChat)
  })

  it("translates every field", () => {
    const decoded = accept({
      model: "openai/gpt-5.5",
      messages: [
        { role: "developer", content: "be brief", name: "ops" },
        {
          role: "system",
          content: [
            { type: "text", text: "long document", cache_control: { type: "ephemeral" } },
            { type: "text", text: "rules", cache_control: { type: "ephemeral", ttl: "1h" } }
          ]
        },
        { role: "user", content: [{ type: "text", text: "question" }, { type: "text", text: "" }], name: "alice" },
        {
          role: "assistant",
          content: null,
          reasoning: "I should look it up",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"q\":\"x\"}" } }]
        },
        { role: "tool", tool_call_id: "call_1", content: "found" },
        { role: "assistant", content: "", refusal: "I can't help with that", annotations: [] }
      ],
      stream: true,
      stream_options: { include_usage: false },
      temperature: 0.5,
      top_p: 0.9,
      max_completion_tokens: 8000,
      stop: "END",
      frequency_penalty: -1,
      presence_penalty: 2,
      seed: 7,
      logit_bias: { "50256": -100 },
      logprobs: true,
      top_logprobs: 3,
      user: "end-user-1",
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
      tools: [
        { type: "function", function: { name: "lookup", description: "search", parameters: { type: "object" }, strict: true }, cache_control: { type: "ephemeral" } },
        { type: "function", function: { name: "now" } }
      ],
      tool_choice: { type: "function", function: { name: "lookup" } },
      parallel_tool_calls: false,
      reasoning_effort: "high",
      models: ["openai/gpt-5.5", "deepseek/deepseek-v4-pro"],
      conversation_id: "conv-1",
      routing_bias: "cheaper",
      store: false,
      metadata: { team: "a" },
      service_tier: "auto",
      n: 1,
      modalities: ["text"]
    })
    expect(decoded.stream).toBe(true)
    expect(decoded.endUser).toBe("end-user-1")
    expect(decoded.route).toEqual({
      model: "openai/gpt-5.5",
      models: ["openai/gpt-5.5", "deepseek/deepseek-v4-pro"],
      routingBias: "cheaper",
      conversationId: "conv-1"
    })
    const expected: ChatRequest = {
      messages: [
        { role: "system", parts: [{ type: "text", text: "be brief" }] },
        {
          role: "system",
          parts: [
            { type: "text", text: "long document", cache: { ttl: "5m" } },
            { type: "text", text: "rules", cache: { ttl: "1h" } }
          ]
        },
        // The empty part is dropped: vendors refuse empty text blocks.
        { role: "user", parts: [{ type: "text", text: "question" }] },
        {
          role: "assistant",
          parts: [],
          toolCalls: [{ id: "call_1", name: "lookup", arguments: "{\"q\":\"x\"}" }],
          reasoning: "I should look it up"
        },
        { role: "tool", toolCallId: "call_1", parts: [{ type: "text", text: "found" }] },
        // An empty content is no content: the refusal stands for it.
        { role: "assistant", parts: [], toolCalls: [] }
      ],
      maxOutputTokens: 8000,
      temperature: 0.5,
      topP: 0.9,
      stop: ["END"],
      frequencyPenalty: -1,
      presencePenalty: 2,
      seed: 7,
      logitBias: { "50256": -100 },
      logprobs: true,
      topLogprobs: 3,
      tools: [
        { name: "lookup", description: "search", parameters: { type: "object" }, cache: { ttl: "5m" } },
        { name: "now", parameters: { type: "object", properties: {} } }
      ],
      toolChoice: { type: "tool", name: "lookup" },
      parallelToolCalls: false,
      responseFormat: { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true },
      // high = 80% of max_completion_tokens.
      reasoning: { effort: "high", budgetTokens: 6400, exclude: false }
    }
    expect(decoded.chat).toEqual(expected)
  })

  it("uses an assistant refusal as content when content is null", () => {
    const decoded = accept({ messages: [user, { role: "assistant", content: null, refusal: "No." }, user] })
    expect(decoded.chat.messages[1]).toEqual({ role: "assistant", parts: [{ type: "text", text: "No." }], toolCalls: [] })
  })

  it("counts null as absent on optional fields", () => {
    const decoded = accept({
      ...base,
      temperature: null,
      top_p: null,
      max_tokens: null,
      stop: null,
      seed: null,
      logprobs: null,
      n: null,
      reasoning_effort: null,
      stream: null,
      functions: null,
      audio: null,
      prediction: null,
      user: null
    })
    expect(decoded.chat).toEqual(emptyChat)
    expect(decoded.endUser).toBeUndefined()
  })

  it("accepts and drops harmless OpenAI fields", () => {
    const decoded = accept({
      ...base,
      store: true,
      metadata: { k: "v" },
      service_tier: "flex",
      stream_options: { include_usage: true, include_obfuscation: false, future_option: 1 },
      prompt_cache_key: "k",
      prompt_cache_retention: "24h",
      safety_identifier: "s"
    })
    expect(decoded.chat).toEqual(emptyChat)
  })

  it("drops tool_choice and parallel_tool_calls without tools", () => {
    expect(accept({ ...base, tool_choice: "required", parallel_tool_calls: true }).chat).toEqual(emptyChat)
    expect(accept({ ...base, tools: [], tool_choice: { type: "function", function: { name: "x" } } }).chat).toEqual(emptyChat)
  })

  it("maps tool_choice strings and response formats", () => {
    const tools = [{ type: "function", function: { name: "f" } }]
    expect(accept({ ...base, tools, tool_choice: "none" }).chat.toolChoice).toEqual({ type: "none" })
    expect(accept({ ...base, tools, tool_choice: "required" }).chat.toolChoice).toEqual({ type: "required" })
    expect(accept({ ...base, response_format: { type: "json_object" } }).chat.responseFormat).toEqual({ type: "json_object" })
    expect(accept({ ...base, response_format: { type: "text" } }).chat.responseFormat).toEqual({ type: "text" })
  })

  it("takes max_tokens alone, or both when equal", () => {
    expect(accept({ ...base, max_tokens: 100 }).chat.maxOutputTokens).toBe(100)
    expect(accept({ ...base, max_tokens: 100, max_completion_tokens: 100 }).chat.maxOutputTokens).toBe(100)
  })

  it("reconciles reasoning against the limit field the client used", () => {
    expect(accept({ ...base, reasoning: {} }).chat.reasoning).toEqual({ effort: "medium", budgetTokens: 2048, exclude: false })
    expect(accept({ ...base, reasoning: { enabled: false } }).chat.reasoning).toBeNull()
    expect(accept({ ...base, reasoning: { max_tokens: 2000, exclude: true }, max_tokens: 10000 }).chat.reasoning).toEqual({
      effort: "low",
      budgetTokens: 2000,
      exclude: true
    })
    const overTokens = refusal({ ...base, reasoning: { max_tokens: 5000 }, max_tokens: 4000 })
    expect(overTokens.param).toBe("reasoning.max_tokens")
    expect(overTokens.message).toContain("max_tokens=4000")
    const overCompletion = refusal({ ...base, reasoning: { max_tokens: 5000 }, max_completion_tokens: 4000 })
    expect(overCompletion.message).toContain("max_completion_tokens=4000")
    expect(refusal({ ...base, reasoning_effort: "low", reasoning: { effort: "high" } }).param).toBe("reasoning.effort")
    expect(refusal({ ...base, reasoning: { enabled: false, effort: "low" } }).param).toBe("reasoning.enabled")
    expect(refusal({ ...base, reasoning_effort: "low", reasoning: { max_tokens: 2000 } }).param).toBe("reasoning.max_tokens")
  })
})

describe("schema failures list every offending field (validation_error)", () => {
  it("reports every field at once", () => {
    const { params, param } = schemaFailure({
      model: "",
      messages: [{ role: "user", content: "hi", foo: 1 }],
      temperature: 3,
      top_p: 1.5,
      frequency_penalty: -3,
      presence_penalty: "high",
      top_logprobs: 21,
      logprobs: "yes",
      seed: 1.5,
      stop: ["a", "b", "c", "d", "e"],
      max_tokens: 0,
      max_completion_tokens: -1,
      logit_bias: { "50256": 101 },
      reasoning_effort: "minimal",
      reasoning: { max_tokens: 500, budget: 1 },
      models: [],
      conversation_id: "x".repeat(201),
      routing_bias: "fast",
      response_format: { type: "xml" },
      tool_choice: "any",
      stream: "yes",
      n: 0,
      bogus: true
    })
    expect(new Set(params)).toEqual(
      new Set([
        "model",
        "messages.0.foo",
        "temperature",
        "top_p",
        "frequency_penalty",
        "presence_penalty",
        "top_logprobs",
        "logprobs",
        "seed",
        "stop",
        "max_tokens",
        "max_completion_tokens",
        "logit_bias.50256",
        "reasoning_effort",
        "reasoning.max_tokens",
        "reasoning.budget",
        "models",
        "conversation_id",
        "routing_bias",
        "response_format.type",
        "tool_choice",
        "stream",
        "n",
        "bogus"
      ])
    )
    expect(params.length).toBe(new Set(params).size)
    expect(param).toBeUndefined()
  })

  it("requires a non-empty messages array", () => {
    expect(schemaFailure({}).param).toBe("messages")
    expect(schemaFailure({ messages: [] }).param).toBe("messages")
  })

  it("refuses a non-text content part naming its type", () => {
    const { params, param, error } = schemaFailure({
      messages: [user, { role: "assistant", content: "ok" }, { role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }]
    })
    expect(params).toEqual(["messages.2.content.0.type"])
    expect(param).toBe("messages.2.content.0.type")
    expect(error.message).toContain("image_url")
    for (const type of ["input_audio", "file", "refusal"]) {
      expect(schemaFailure({ messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type }] }] }).param).toBe(
        "messages.0.content.1.type"
      )
    }
  })

  it("caps content at 50 parts", () => {
    const parts = Array.from({ length: 51 }, () => ({ type: "text", text: "a" }))
    expect(schemaFailure({ messages: [{ role: "user", content: parts }] }).param).toBe("messages.0.content")
    expect(accept({ messages: [{ role: "user", content: parts.slice(1) }] }).chat.messages[0]?.parts.length).toBe(50)
  })

  it("refuses unknown fields on a message, naming them", () => {
    expect(schemaFailure({ messages: [{ role: "user", content: "hi", reasoning_content: "x" }] }).param).toBe("messages.0.reasoning_content")
    expect(schemaFailure({ messages: [{ role: "tool", tool_call_id: "c", content: "x", is_error: true }] }).param).toBe("messages.0.is_error")
  })

  it("checks roles and the fields each role needs", () => {
    expect(schemaFailure({ messages: [{ role: "function", name: "f", content: "x" }] }).param).toBe("messages.0.role")
    expect(schemaFailure({ messages: [user, { role: "tool", content: "x" }] }).param).toBe("messages.1.tool_call_id")
    expect(schemaFailure({ messages: [user, { role: "assistant" }] }).param).toBe("messages.1.content")
    expect(schemaFailure({ messages: [user, { role: "assistant", content: null, tool_calls: [] }] }).param).toBe("messages.1.content")
    expect(
      schemaFailure({ messages: [user, { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f" } }] }] }).param
    ).toBe("messages.1.tool_calls.0.function.arguments")
  })

  it("validates cache_control where it is allowed", () => {
    const part = (cache_control: unknown, text = "doc") => ({ messages: [{ role: "user", content: [{ type: "text", text, cache_control }] }] })
    expect(schemaFailure(part({ type: "ephemeral" }, "")).param).toBe("messages.0.content.0.cache_control")
    expect(schemaFailure(part({ type: "ephemeral" }, "  ")).param).toBe("messages.0.content.0.cache_control")
    expect(schemaFailure(part({ type: "ephemeral", ttl: "10m" })).param).toBe("messages.0.content.0.cache_control.ttl")
    expect(schemaFailure(part({ type: "persistent" })).param).toBe("messages.0.content.0.cache_control.type")
    expect(
      schemaFailure({ ...base, tools: [{ type: "function", function: { name: "f" }, cache_control: { type: "ephemeral", ttl: "2h" } }] }).param
    ).toBe("tools.0.cache_control.ttl")
    // A tool result's text part may carry it.
    expect(
      accept({ messages: [{ role: "tool", tool_call_id: "c", content: [{ type: "text", text: "r", cache_control: { type: "ephemeral", ttl: "1h" } }] }] })
        .chat.messages[0]
    ).toEqual({ role: "tool", toolCallId: "c", parts: [{ type: "text", text: "r", cache: { ttl: "1h" } }] })
  })

  it("checks tools", () => {
    expect(schemaFailure({ ...base, tools: [{ type: "custom", custom: { name: "x" } }] }).params).toEqual(["tools.0.type"])
    expect(schemaFailure({ ...base, tools: [{ type: "function", function: { name: "has space" } }] }).param).toBe("tools.0.function.name")
    expect(
      schemaFailure({ ...base, tools: [{ type: "function", function: { name: "f" } }, { type: "function", function: { name: "f" } }] }).param
    ).toBe("tools.1.function.name")
    expect(schemaFailure({ ...base, tools: [{ type: "function", function: { name: "f", parameters: "none" } }] }).param).toBe(
      "tools.0.function.parameters"
    )
    expect(schemaFailure({ ...base, tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [] } } }).params).toEqual([
      "tool_choice.type"
    ])
    expect(schemaFailure({ ...base, response_format: { type: "json_schema", json_schema: { name: "a" } } }).param).toBe(
      "response_format.json_schema.schema"
    )
  })
})

describe("refusals after parsing (invalid_request_error, param set)", () => {
  it.each([
    [{ n: 2 }, "n"],
    [{ functions: [{ name: "f" }] }, "functions"],
    [{ function_call: "auto" }, "function_call"],
    [{ audio: { voice: "alloy", format: "wav" } }, "audio"],
    [{ modalities: ["text", "audio"] }, "modalities"],
    [{ prediction: { type: "content", content: "x" } }, "prediction"],
    [{ web_search_options: {} }, "web_search_options"],
    [{ verbosity: "low" }, "verbosity"],
    [{ top_logprobs: 2 }, "top_logprobs"],
    [{ tools: [{ type: "function", function: { name: "f" } }], tool_choice: { type: "function", function: { name: "g" } } }, "tool_choice.function.name"]
  ])("%j is refused naming %s", (fields, param) => {
    expect(refusal({ ...base, ...fields }).param).toBe(param)
  })

  it("refuses max_tokens and max_completion_tokens that differ, naming both", () => {
    const error = refusal({ ...base, max_tokens: 100, max_completion_tokens: 200 })
    expect(error.param).toBe("max_tokens")
    expect(error.message).toContain("max_tokens=100")
    expect(error.message).toContain("max_completion_tokens=200")
  })
})

// ---------------------------------------------------------------------------------------------------------

const meta: ReplyMeta = { id: "req_123", model: "openai/gpt-5.5", created: 1_700_000_000 }
const bill: ReplyBill = { creditsUsed: 0.0123, creditsRemaining: 9.5, requestsRemaining: 59 }

describe("rendering a reply", () => {
  it("renders text, reasoning and tool calls with the usage SPEC describes", () => {
    const result: ChatResult = {
      text: "Let me check.",
      reasoning: "The user wants the weather.",
      reasoningSignature: null,
      toolCalls: [{ id: "call_1", name: "weather", arguments: "{\"city\":\"Paris\"}" }],
      usage: { freshInput: 100, cacheRead: 20, cacheWrite5m: 5, cacheWrite1h: 3, output: 50, reasoning: 30 },
      stopReason: "tool_calls",
      stopSequence: null
    }
    expect(renderChatCompletion(result, meta, bill)).toEqual({
      id: "req_123",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "openai/gpt-5.5",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Let me check.",
            refusal: null,
            reasoning: "The user wants the weather.",
            tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{\"city\":\"Paris\"}" } }]
          },
          finish_reason: "tool_calls",
          logprobs: null
        }
      ],
      usage: {
        prompt_tokens: 128,
        completion_tokens: 50,
        total_tokens: 178,
        prompt_tokens_details: { cached_tokens: 20, cache_creation_tokens: 8 },
        completion_tokens_details: { reasoning_tokens: 30 }
      },
      x_credits_used: 0.0123,
      x_credits_remaining: 9.5,
      x_ratelimit_requests_remaining: 59
    })
  })

  it("renders null content on a tool-calls-only turn, no reasoning when empty, zeros for unreported counts", () => {
    const result: ChatResult = {
      text: "",
      reasoning: "",
      reasoningSignature: null,
      toolCalls: [{ id: "c", name: "f", arguments: "{}" }],
      usage: { freshInput: 10 },
      stopReason: "tool_calls",
      stopSequence: null
    }
    const rendered = renderChatCompletion(result, meta, { ...bill, requestsRemaining: null })
    expect(rendered.choices[0]?.message).toEqual({
      role: "assistant",
      content: null,
      refusal: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }]
    })
    expect(rendered.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 0,
      total_tokens: 10,
      prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 }
    })
    expect(rendered.x_ratelimit_requests_remaining).toBeNull()
    const plain = renderChatCompletion({ ...result, text: "", toolCalls: [], stopReason: "length" }, meta, bill)
    expect(plain.choices[0]?.message).toEqual({ role: "assistant", content: "", refusal: null })
    expect(plain.choices[0]?.finish_reason).toBe("length")
  })
})

const replyEvents: ReadonlyArray<ChatEvent> = [
  { type: "start", upstreamId: "up-1" },
  { type: "reasoning_delta", text: "Think" },
  { type: "reasoning_delta", text: "ing." },
  { type: "reasoning_signature", signature: "sig" },
  { type: "text_delta", text: "Hello" },
  { type: "text_delta", text: " world" },
  { type: "tool_call_delta", index: 0, id: "call_a", name: "weather", argumentsDelta: "" },
  { type: "tool_call_delta", index: 0, argumentsDelta: "{\"city\":" },
  { type: "tool_call_delta", index: 0, argumentsDelta: "\"Paris\"}" },
  { type: "tool_call_delta", index: 1, id: "call_b", name: "time", argumentsDelta: "{}" },
  { type: "usage", usage: { freshInput: 90 } },
  { type: "stop", reason: "tool_calls" }
]
const finalUsage = { freshInput: 100, cacheRead: 20, cacheWrite5m: 5, output: 50, reasoning: 10 }

const render = (events: ReadonlyArray<ChatEvent>) => {
  const stream = makeChatCompletionStream(meta)
  return events.map((e) => stream.event(e)).join("") + stream.finish(finalUsage, bill)
}
const payloadsOf = (sse: string): Array<string> => {
  expect(sse.endsWith("\n\n")).toBe(true)
  return sse.split("\n\n").filter((frame) => frame !== "").map((frame) => {
    expect(frame.startsWith("data: ")).toBe(true)
    return frame.slice("data: ".length)
  })
}

describe("rendering a stream", () => {
  it("writes the role first, reasoning before content, one final chunk, then [DONE]", () => {
    const payloads = payloadsOf(render(replyEvents))
    expect(payloads.at(-1)).toBe("[DONE]")
    const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p))
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: "req_123", object: "chat.completion.chunk", created: 1_700_000_000, model: "openai/gpt-5.5" })
    }
    expect(chunks.map((c) => c.choices[0].delta)).toEqual([
      { role: "assistant", content: "" },
      { reasoning: "Think" },
      { reasoning: "ing." },
      { content: "Hello" },
      { content: " world" },
      { tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "weather", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: "{\"city\":" } }] },
      { tool_calls: [{ index: 0, function: { arguments: "\"Paris\"}" } }] },
      { tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "time", arguments: "{}" } }] },
      {}
    ])
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.usage).toBeNull()
      expect(chunk.choices[0].finish_reason).toBeNull()
      expect(chunk.x_credits_used).toBeUndefined()
    }
    expect(chunks.at(-1)).toEqual({
      id: "req_123",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "openai/gpt-5.5",
      choices: [{ index: 0, delta: {}, finish_reason: "tool_calls", logprobs: null }],
      usage: {
        prompt_tokens: 125,
        completion_tokens: 50,
        total_tokens: 175,
        prompt_tokens_details: { cached_tokens: 20, cache_creation_tokens: 5 },
        completion_tokens_details: { reasoning_tokens: 10 }
      },
      x_credits_used: 0.0123,
      x_credits_remaining: 9.5,
      x_ratelimit_requests_remaining: 59
    })
  })

  it("opens with the role chunk whatever comes first, and finishes as stop without a stop event", () => {
    const stream = makeChatCompletionStream(meta)
    const first = payloadsOf(stream.event({ type: "text_delta", text: "a" })).map((p) => JSON.parse(p).choices[0].delta)
    expect(first).toEqual([{ role: "assistant", content: "" }, { content: "a" }])
    expect(stream.event({ type: "usage", usage: { output: 1 } })).toBe("")
    const end = payloadsOf(stream.finish({}, bill))
    expect(end).toHaveLength(2)
    expect(JSON.parse(end[0]!).choices[0].finish_reason).toBe("stop")

    const empty = payloadsOf(makeChatCompletionStream(meta).finish({}, bill))
    expect(empty).toHaveLength(3)
    expect(JSON.parse(empty[0]!).choices[0].delta).toEqual({ role: "assistant", content: "" })
  })

  it("reports an interruption as an error frame and no [DONE]", () => {
    const stream = makeChatCompletionStream(meta)
    stream.event({ type: "text_delta", text: "par" })
    const text = stream.interrupted({ code: "stream_interrupted", message: "upstream dropped" })
    expect(text).toBe('data: {"error":{"message":"upstream dropped","type":"server_error","code":"stream_interrupted"}}\n\n')
  })

  it("is read by the official openai SDK, which throws on the error frame", async () => {
    const clientOf = (body: string, contentType: string) =>
      new OpenAI({
        apiKey: "ct_live_test",
        baseURL: "http://exchange.test/v1",
        maxRetries: 0,
        fetch: async () => new Response(body, { status: 200, headers: { "content-type": contentType } })
      })
    const streamed = await clientOf(render(replyEvents), "text/event-stream").chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: "hi" }],
      stream: true
    })
    const received: Array<OpenAI.ChatCompletionChunk> = []
    for await (const chunk of streamed) received.push(chunk)
    expect(received).toHaveLength(10)
    expect(received.at(-1)?.usage?.prompt_tokens_details?.cached_tokens).toBe(20)

    const broken = makeChatCompletionStream(meta)
    const brokenText = broken.event({ type: "text_delta", text: "par" }) + broken.interrupted({ code: "stream_interrupted", message: "gone" })
    const failing = await clientOf(brokenText, "text/event-stream").chat.completions.create({ model: "auto", messages: [], stream: true })
    const consume = async () => {
      for await (const _ of failing) void _
    }
    await expect(consume()).rejects.toBeInstanceOf(OpenAI.APIError)

    const whole = renderChatCompletion(foldEvents(replyEvents), meta, bill)
    const completion = await clientOf(JSON.stringify(whole), "application/json").chat.completions.create({ model: "auto", messages: [] })
    expect(completion.choices[0]?.message.tool_calls).toHaveLength(2)
  })
})

// ---------------------------------------------------------------------------------------------------------

const fullChat: ChatRequest = {
  messages: [
    { role: "system", parts: [{ type: "text", text: "doc", cache: { ttl: "1h" } }, { type: "text", text: "rules" }] },
    { role: "user", parts: [{ type: "text", text: "weather?" }] },
    { role: "assistant", parts: [], toolCalls: [{ id: "c1", name: "weather", arguments: "{}" }], reasoning: "need a tool" },
    { role: "tool", toolCallId: "c1", parts: [{ type: "text", text: "sunny" }], isError: false },
    { role: "assistant", parts: [{ type: "text", text: "Sunny." }], toolCalls: [] },
    { role: "user", parts: [{ type: "text", text: "thanks" }] }
  ],
  maxOutputTokens: 1000,
  temperature: 0.2,
  topP: 0.9,
  topK: 40,
  stop: ["END"],
  frequencyPenalty: 0.1,
  presencePenalty: 0.2,
  seed: 3,
  logitBias: { "1": 5 },
  logprobs: true,
  topLogprobs: 2,
  tools: [{ name: "weather", description: "forecast", parameters: { type: "object" }, cache: { ttl: "5m" } }],
  toolChoice: { type: "tool", name: "weather" },
  parallelToolCalls: true,
  responseFormat: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true },
  reasoning: { effort: "medium", budgetTokens: 500, exclude: false },
  userFingerprint: "fp_abc"
}

const sent = (chat: ChatRequest, vendor: string, stream: boolean, traits: OpenaiChatTraitOptions = {}) => {
  const request = buildOpenaiChatRequest(chat, { upstreamModel: "model-x", vendor, stream, ...traits })
  expect(request.path).toBe("/chat/completions")
  return JSON.parse(JSON.stringify(request.body))
}

describe("building an upstream request", () => {
  const common = {
    model: "model-x",
    temperature: 0.2,
    top_p: 0.9,
    stop: ["END"],
    frequency_penalty: 0.1,
    presence_penalty: 0.2,
    seed: 3,
    logit_bias: { "1": 5 },
    logprobs: true,
    top_logprobs: 2,
    tools: [{ type: "function", function: { name: "weather", description: "forecast", parameters: { type: "object" } } }],
    tool_choice: { type: "function", function: { name: "weather" } },
    parallel_tool_calls: true,
    response_format: { type: "json_schema", json_schema: { name: "out", schema: { type: "object" }, strict: true } },
    reasoning_effort: "medium",
    user: "fp_abc"
  }
  const messages = (assistantReasoning?: string) => [
    { role: "system", content: "doc\nrules" },
    { role: "user", content: "weather?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "weather", arguments: "{}" } }],
      ...(assistantReasoning !== undefined ? { reasoning_content: assistantReasoning } : {})
    },
    { role: "tool", tool_call_id: "c1", content: "sunny" },
    { role: "assistant", content: "Sunny." },
    { role: "user", content: "thanks" }
  ]

  it("openai: max_completion_tokens, stream options, no reasoning replay", () => {
    expect(sent(fullChat, "openai", true)).toEqual({
      ...common,
      messages: messages(),
      max_completion_tokens: 1000,
      stream: true,
      stream_options: { include_usage: true }
    })
  })

  it("deepseek: max_tokens and the turn's reasoning as reasoning_content", () => {
    expect(sent(fullChat, "deepseek", false)).toEqual({ ...common, messages: messages("need a tool"), max_tokens: 1000 })
  })

  it("mistral: max_tokens, no reasoning replay", () => {
    expect(sent(fullChat, "mistral", true)).toEqual({
      ...common,
      messages: messages(),
      max_tokens: 1000,
      stream: true,
      stream_options: { include_usage: true }
    })
  })

  it("omits what is unset", () => {
    expect(sent(emptyChat, "openai", false)).toEqual({ model: "model-x", messages: [{ role: "user", content: "hi" }] })
    expect(sent({ ...emptyChat, toolChoice: { type: "auto" }, parallelToolCalls: true }, "xai", false)).toEqual({
      model: "model-x",
      messages: [{ role: "user", content: "hi" }]
    })
    expect(sent({ ...emptyChat, tools: fullChat.tools, toolChoice: { type: "required" } }, "xai", false).tool_choice).toBe("required")
  })

  it("switches reasoning off with the lowest effort the model takes, or the vendor's thinking switch (SPEC: false switches it off)", () => {
    const off = { ...emptyChat, reasoning: null }
    const messages = [{ role: "user", content: "hi" }]
    // gpt-5.1 and later: none performs no reasoning.
    expect(sent(off, "openai", false, { reasoningOff: "none" })).toEqual({ model: "model-x", messages, reasoning_effort: "none" })
    // gpt-5, gpt-5-mini, gpt-5-nano: minimal is the lowest they take (they refuse none).
    expect(sent(off, "openai", false, { reasoningOff: "minimal" })).toEqual({ model: "model-x", messages, reasoning_effort: "minimal" })
    // DeepSeek, Z.ai, Moonshot: their OpenAI-compatible thinking switch.
    expect(sent(off, "deepseek", false, { reasoningOff: "disabled" })).toEqual({ model: "model-x", messages, thinking: { type: "disabled" } })
    // No known switch (a model the traits file does not list), or one that cannot stop (refused before this): nothing.
    expect(sent(off, "openai", false)).toEqual({ model: "model-x", messages })
    expect(sent(off, "openai", false, { reasoningOff: "refuse" })).toEqual({ model: "model-x", messages })
    // Reasoning asked for: the effort, whatever the switch.
    const on = { ...emptyChat, reasoning: { effort: "low" as const, budgetTokens: 1024, exclude: false } }
    expect(sent(on, "deepseek", false, { reasoningOff: "disabled" })).toEqual({ model: "model-x", messages, reasoning_effort: "low" })
    expect(sent(emptyChat, "openai", false, { reasoningOff: "minimal" })).toEqual({ model: "model-x", messages })
  })

  it("never sends top_k (the planner refuses it for OpenAI-shaped vendors)", () => {
    expect(JSON.stringify(sent({ ...emptyChat, topK: 40 }, "openai", false))).not.toContain("top_k")
  })
})

describe("usage buckets sum to the vendor's whole input", () => {
  const sum = (u: Usage) => (u.freshInput ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite5m ?? 0) + (u.cacheWrite1h ?? 0)
  it.each([
    ["OpenAI prompt_tokens with cached_tokens inside", { prompt_tokens: 1200, prompt_tokens_details: { cached_tokens: 1024 } }, 1200, 1024],
    ["OpenAI with no cache hit", { prompt_tokens: 300, prompt_tokens_details: { cached_tokens: 0 } }, 300, 0],
    ["OpenAI-shaped with no details", { prompt_tokens: 50 }, 50, undefined],
    ["an exchange upstream with cache writes inside", { prompt_tokens: 500, prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 300 } }, 500, 100],
    ["DeepSeek hit + miss", { prompt_tokens: 100, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 }, 100, 64],
    ["DeepSeek with cached_tokens null", { prompt_tokens: 100, prompt_tokens_details: { cached_tokens: null }, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 }, 100, 64],
    ["DeepSeek with cached_tokens 0 beside the hit count", { prompt_tokens: 100, prompt_tokens_details: { cached_tokens: 0 }, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 }, 100, 64],
    ["DeepSeek hit + miss without prompt_tokens", { prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 }, 100, 64]
  ] as const)("%s", (name, usage, total, cacheRead) => {
    const mapped = usageOf(usage, name.startsWith("DeepSeek") ? "deepseek" : "openai")
    expect(sum(mapped)).toBe(total)
    expect(mapped.cacheRead).toBe(cacheRead)
  })
})

describe("parsing vendor replies", () => {
  it("reads an OpenAI completion", () => {
    const events = parseOpenaiChatResponse({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "gpt-5.5",
      choices: [{ index: 0, message: { role: "assistant", content: "Hi!", refusal: null, annotations: [] }, logprobs: null, finish_reason: "stop" }],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 300,
        total_tokens: 1500,
        prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
      },
      service_tier: "default",
      system_fingerprint: null
    }, "openai")
    expect(events).toEqual(
      Either.right([
        { type: "start", upstreamId: "chatcmpl-1" },
        { type: "text_delta", text: "Hi!" },
        { type: "stop", reason: "stop" },
        { type: "usage", usage: { freshInput: 176, cacheRead: 1024, output: 300, reasoning: 256 } }
      ])
    )
  })

  it("reads a DeepSeek completion with reasoning_content, tool calls and cache-hit counts", () => {
    const events = parseOpenaiChatResponse({
      id: "ds-1",
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "",
            reasoning_content: "Need the weather.",
            tool_calls: [{ index: 0, id: "call_0_x", type: "function", function: { name: "weather", arguments: "{\"city\":\"Paris\"}" } }]
          },
          logprobs: null,
          finish_reason: "tool_calls"
        }
      ],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 40,
        total_tokens: 140,
        prompt_tokens_details: { cached_tokens: null },
        prompt_cache_hit_tokens: 64,
        prompt_cache_miss_tokens: 36,
        completion_tokens_details: { reasoning_tokens: 20 }
      }
    }, "deepseek")
    expect(events).toEqual(
      Either.right([
        { type: "start", upstreamId: "ds-1" },
        { type: "reasoning_delta", text: "Need the weather." },
        { type: "tool_call_delta", index: 0, id: "call_0_x", name: "weather", argumentsDelta: "{\"city\":\"Paris\"}" },
        { type: "stop", reason: "tool_calls" },
        { type: "usage", usage: { freshInput: 36, cacheRead: 64, output: 40, reasoning: 20 } }
      ])
    )
  })

  it("reads Mistral's typed content chunks and a missing cache count as unreported", () => {
    const events = parseOpenaiChatResponse({
      id: "m-1",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: [
              { type: "thinking", thinking: [{ type: "text", text: "hmm" }] },
              { type: "text", text: "Answer." }
            ],
            tool_calls: null
          },
          finish_reason: "model_length"
        }
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
    }, "mistralai")
    expect(events).toEqual(
      Either.right([
        { type: "start", upstreamId: "m-1" },
        { type: "reasoning_delta", text: "hmm" },
        { type: "text_delta", text: "Answer." },
        { type: "stop", reason: "length" },
        { type: "usage", usage: { freshInput: 10, output: 5 } }
      ])
    )
  })

  it("fails with a protocol error on an undecodable body or an error object", () => {
    const notAReply = parseOpenaiChatResponse({ choices: "none" }, "openai")
    expect(Either.isLeft(notAReply) && notAReply.left).toBeInstanceOf(UpstreamProtocolError)
    const noChoices = parseOpenaiChatResponse({ id: "x", choices: [] }, "openai")
    expect(Either.isLeft(noChoices)).toBe(true)
    const error = parseOpenaiChatResponse({ error: { message: "overloaded", type: "server_error", code: 503 } }, "openai")
    expect(error).toEqual(Either.left(new UpstreamProtocolError({ message: "server_error: 503: overloaded", status: 503 })))
  })

  it("reads an OpenAI stream: role chunk, content, tool calls, finish, then the usage chunk", () => {
    const parse = makeOpenaiChatStreamParser("openai")
    const chunk = (choices: unknown, usage: unknown = null) =>
      JSON.stringify({ id: "chatcmpl-9", object: "chat.completion.chunk", created: 1, model: "gpt-5.5", system_fingerprint: "fp", choices, usage })
    const payloads = [
      chunk([{ index: 0, delta: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: "Hel" }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: "lo" }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "{}" } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls" }]),
      chunk([], { prompt_tokens: 50, completion_tokens: 8, total_tokens: 58, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } }),
      "[DONE]"
    ]
    const events = payloads.flatMap((p) => Either.getOrThrow(parse(p)))
    expect(events).toEqual([
      { type: "start", upstreamId: "chatcmpl-9" },
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo" },
      { type: "tool_call_delta", index: 0, id: "call_1", name: "f", argumentsDelta: "" },
      { type: "tool_call_delta", index: 0, argumentsDelta: "{}" },
      { type: "stop", reason: "tool_calls" },
      { type: "usage", usage: { freshInput: 50, cacheRead: 0, output: 8, reasoning: 0 } }
    ])
  })

  it("reads a DeepSeek stream with reasoning_content and cache counts", () => {
    const parse = makeOpenaiChatStreamParser("deepseek")
    const chunk = (delta: unknown, finish: string | null = null, usage: unknown = null) =>
      JSON.stringify({ id: "ds-9", object: "chat.completion.chunk", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage })
    const events = [
      chunk({ role: "assistant", content: null, reasoning_content: "" }),
      chunk({ content: null, reasoning_content: "Think" }),
      chunk({ content: "Done", reasoning_content: null }),
      chunk({ content: "" }, "stop", {
        prompt_tokens: 30,
        completion_tokens: 12,
        total_tokens: 42,
        prompt_cache_hit_tokens: 16,
        prompt_cache_miss_tokens: 14,
        completion_tokens_details: { reasoning_tokens: 6 }
      }),
      "[DONE]"
    ].flatMap((p) => Either.getOrThrow(parse(p)))
    expect(events).toEqual([
      { type: "start", upstreamId: "ds-9" },
      { type: "reasoning_delta", text: "Think" },
      { type: "text_delta", text: "Done" },
      { type: "stop", reason: "stop" },
      { type: "usage", usage: { freshInput: 14, cacheRead: 16, output: 12, reasoning: 6 } }
    ])
  })

  it("reads OpenRouter-style reasoning and Moonshot's usage inside the choice", () => {
    const parse = makeOpenaiChatStreamParser("moonshotai")
    const events = [
      JSON.stringify({ id: "o", choices: [{ index: 0, delta: { reasoning: "r" } }] }),
      JSON.stringify({ id: "o", choices: [{ index: 0, delta: {}, finish_reason: "stop", usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }] })
    ].flatMap((p) => Either.getOrThrow(parse(p)))
    expect(events).toEqual([
      { type: "start", upstreamId: "o" },
      { type: "reasoning_delta", text: "r" },
      { type: "stop", reason: "stop" },
      { type: "usage", usage: { freshInput: 3, output: 1 } }
    ])
  })

  it("numbers tool calls by the vendor's index, and gives a reused index with a new id a fresh one", () => {
    const parse = makeOpenaiChatStreamParser("openai")
    const call = (index: number, id: string) =>
      JSON.stringify({ id: "x", choices: [{ index: 0, delta: { tool_calls: [{ index, id, type: "function", function: { name: id, arguments: "{}" } }] } }] })
    const events = [call(0, "a"), call(0, "b"), call(1, "c")].flatMap((p) => Either.getOrThrow(parse(p)))
    expect(events.filter((e) => e.type === "tool_call_delta").map((e) => e.type === "tool_call_delta" && [e.index, e.id])).toEqual([
      [0, "a"],
      [1, "b"],
      [2, "c"]
    ])
  })

  it("fails on an error chunk, a broken-off finish, and a payload that is not JSON", () => {
    const parse = makeOpenaiChatStreamParser("openai")
    expect(parse("")).toEqual(Either.right([]))
    expect(parse("[DONE]")).toEqual(Either.right([]))
    expect(parse('{"error":{"message":"rate limited","type":"rate_limit_error","code":"429"}}')).toEqual(
      Either.left(new UpstreamStreamError({ message: "rate_limit_error: 429: rate limited", status: 429 }))
    )
    const broke = makeOpenaiChatStreamParser("openai")(JSON.stringify({ id: "d", choices: [{ index: 0, delta: {}, finish_reason: "insufficient_system_resource" }] }))
    expect(Either.isLeft(broke) && broke.left).toBeInstanceOf(UpstreamStreamError)
    const garbage = parse("{not json")
    expect(Either.isLeft(garbage) && garbage.left).toBeInstanceOf(UpstreamProtocolError)
  })
})

describe("round trip: what we render is itself OpenAI-compatible", () => {
  it("our stream, fed to the upstream parser, gives the same events back", () => {
    const sse = render(replyEvents)
    const parse = makeOpenaiChatStreamParser("openai")
    const back = payloadsOf(sse).flatMap((p) => Either.getOrThrow(parse(p)))
    // What our stream carries: the id is ours, the signature has no place, usage is written once at the end.
    const expected = [
      { type: "start", upstreamId: "req_123" },
      ...replyEvents.filter((e) => e.type !== "start" && e.type !== "usage" && e.type !== "reasoning_signature"),
      { type: "usage", usage: finalUsage }
    ]
    expect(back).toEqual(expected)
  })

  it("our interruption frame is a stream error to the upstream parser", () => {
    const text = makeChatCompletionStream(meta).interrupted({ code: "stream_interrupted", message: "gone" })
    const parsed = makeOpenaiChatStreamParser("openai")(payloadsOf(text)[0]!)
    expect(Either.isLeft(parsed) && parsed.left).toBeInstanceOf(UpstreamStreamError)
  })

  it("our whole reply, fed to the upstream parser, folds to the same result", () => {
    const result = { ...foldEvents(replyEvents), reasoningSignature: null, usage: finalUsage }
    const back = Either.getOrThrow(parseOpenaiChatResponse(renderChatCompletion(result, meta, bill), "openai"))
    expect(foldEvents(back)).toEqual(result)
  })
})

describe("hostile bodies are refused as invalid, never crash the validator (found by fuzzing)", () => {
  const refusal = (body: unknown) => {
    const decoded = decodeChatCompletionsRequest(body)
    if (Either.isRight(decoded)) throw new Error("accepted")
    return decoded.left
  }

  it("refuses a body nesting deeper than MAX_BODY_DEPTH, at any depth", () => {
    let deep: unknown = 1
    for (let i = 0; i < 5000; i++) deep = [deep]
    expect(refusal({ model: "gpt-4.1", max_tokens: deep, messages: [{ role: "user", content: "hi" }] }).message).toMatch(/nests deeper than 64 levels/)
    let justDeepEnough: unknown = {}
    // 55 levels, under the six of the body around it: 61 in all.
    for (let i = 0; i < MAX_BODY_DEPTH - 10; i++) justDeepEnough = { a: justDeepEnough }
    const tool = { type: "function", function: { name: "f", parameters: { type: "object", properties: { x: justDeepEnough } } } }
    expect(Either.isRight(decodeChatCompletionsRequest({ model: "gpt-4.1", messages: [{ role: "user", content: "hi" }], tools: [tool] }))).toBe(true)
    expect(nestsDeeperThan(justDeepEnough, MAX_BODY_DEPTH)).toBe(false)
    expect(nestsDeeperThan(justDeepEnough, 55)).toBe(false)
    expect(nestsDeeperThan({ a: justDeepEnough }, 55)).toBe(true)
  })

  it("refuses an object whose own toString is not a function where a union reads its discriminator", () => {
    const error = refusal({ model: "gpt-4.1", messages: [{ role: { toString: "x" }, content: "hi" }] })
    expect(error._tag).toBe("ValidationFailed")
  })
})
