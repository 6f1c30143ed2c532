/**
 * The Anthropic messages wire format in both directions (pure): our /v1/messages decoding and its refusals, reply and
 * stream rendering (checked with @anthropic-ai/sdk's own stream reader), the upstream request builder, the upstream
 * reply and stream parsers, and a round trip of our rendered stream through the upstream parser.
 */
import Anthropic, { APIError } from "@anthropic-ai/sdk"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { ValidationFailed } from "../domain/errors.ts"
import {
  type ChatEvent,
  type ChatRequest,
  type ChatResult,
  foldEvents,
  type ReplyBill,
  type ReplyMeta,
  type Usage
} from "../domain/exchange/canonical.ts"
import { decodeMessagesRequest, makeMessagesStream, renderMessage } from "../domain/exchange/translate/anthropicInbound.ts"
import {
  buildAnthropicCountTokensRequest,
  buildAnthropicRequest,
  makeAnthropicStreamParser,
  parseAnthropicCountTokens,
  parseAnthropicResponse,
  usageOfAnthropic
} from "../domain/exchange/translate/anthropicUpstream.ts"
import { UpstreamProtocolError, UpstreamStreamError } from "../domain/exchange/upstreamErrors.ts"

const user = (content: unknown) => ({ role: "user", content })
const base = { max_tokens: 4096, messages: [user("Hello")] }

const decoded = (body: unknown) => {
  const result = decodeMessagesRequest(body)
  if (Either.isLeft(result)) throw new Error(`expected a decode, got ${result.left.message}`)
  return result.right
}

const refused = (body: unknown): ValidationFailed => {
  const result = decodeMessagesRequest(body)
  if (Either.isRight(result)) throw new Error(`expected a refusal of ${JSON.stringify(body)}`)
  expect(result.left).toBeInstanceOf(ValidationFailed)
  return result.left
}

/** A schema failure: validation_error, issues listed, `param` the one field at fault. */
const expectSchemaRefusal = (body: unknown, param: string, message?: RegExp) => {
  const error = refused(body)
  expect(error.type).toBe("validation_error")
  expect(error.param).toBe(param)
  expect(error.issues?.map((issue) => issue.param)).toEqual([param])
  if (message !== undefined) expect(error.issues?.[0]?.message).toMatch(message)
}

/** A refusal after parsing: invalid_request_error, no issues, `param` the field. */
const expectPolicyRefusal = (body: unknown, param: string, message?: RegExp) => {
  const error = refused(body)
  expect(error.type).toBe("invalid_request_error")
  expect(error.issues).toBeUndefined()
  expect(error.param).toBe(param)
  if (message !== undefined) expect(error.message).toMatch(message)
}

describe("decodeMessagesRequest: mapping", () => {
  it("maps a minimal request: model omitted = auto, no stream, no end user", () => {
    const { chat, route, stream, endUser } = decoded(base)
    expect(chat).toEqual({
      messages: [{ role: "user", parts: [{ type: "text", text: "Hello" }] }],
      maxOutputTokens: 4096,
      stop: [],
      tools: [],
      anthropic: { betas: [], inlineSystem: false }
    })
    expect(route).toEqual({})
    expect(stream).toBe(false)
    expect(endUser).toBeUndefined()
  })

  it("maps every field of a full request", () => {
    const weather = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
    const { chat, route, stream, endUser } = decoded({
      model: "anthropic/claude-sonnet-4-5",
      models: ["openai/gpt-5", "gemini-2.5-pro"],
      conversation_id: "conv-1",
      max_tokens: 8000,
      stream: true,
      service_tier: "auto",
      system: [
        { type: "text", text: "You are terse." },
        { type: "text", text: "Long preamble", cache_control: { type: "ephemeral", ttl: "1h" } }
      ],
      messages: [
        user([{ type: "text", text: "Weather in Paris?", cache_control: { type: "ephemeral" } }]),
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking.", citations: null },
            { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris" } },
            { type: "tool_use", id: "toolu_2", name: "weather", input: {} }
          ]
        },
        user([
          { type: "tool_result", tool_use_id: "toolu_1", content: "18C" },
          {
            type: "tool_result",
            tool_use_id: "toolu_2",
            is_error: true,
            content: [{ type: "text", text: "no city", cache_control: { type: "ephemeral", ttl: "5m" } }]
          },
          { type: "text", text: "Thanks" }
        ])
      ],
      tools: [{ name: "weather", description: "Current weather", input_schema: weather, cache_control: { type: "ephemeral" } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 2000 },
      stop_sequences: ["###"],
      metadata: { user_id: "user-42" },
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40
    })
    expect(stream).toBe(true)
    expect(endUser).toBe("user-42")
    expect(route).toEqual({ model: "anthropic/claude-sonnet-4-5", models: ["openai/gpt-5", "gemini-2.5-pro"], conversationId: "conv-1" })
    expect(chat).toEqual({
      messages: [
        {
          role: "system",
          parts: [{ type: "text", text: "You are terse." }, { type: "text", text: "Long preamble", cache: { ttl: "1h" } }]
        },
        { role: "user", parts: [{ type: "text", text: "Weather in Paris?", cache: { ttl: "5m" } }] },
        {
          role: "assistant",
          parts: [{ type: "text", text: "Checking." }],
          toolCalls: [
            { id: "toolu_1", name: "weather", arguments: "{\"city\":\"Paris\"}" },
            { id: "toolu_2", name: "weather", arguments: "{}" }
          ]
        },
        { role: "tool", toolCallId: "toolu_1", parts: [{ type: "text", text: "18C" }] },
        { role: "tool", toolCallId: "toolu_2", isError: true, parts: [{ type: "text", text: "no city", cache: { ttl: "5m" } }] },
        { role: "user", parts: [{ type: "text", text: "Thanks" }] }
      ],
      maxOutputTokens: 8000,
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      stop: ["###"],
      tools: [{ name: "weather", description: "Current weather", parameters: weather, cache: { ttl: "5m" } }],
      toolChoice: { type: "required" },
      parallelToolCalls: false,
      // 2000 of 8000 is 25%: the closest bucket is low (20%).
      reasoning: { effort: "low", budgetTokens: 2000, exclude: false },
      anthropic: { betas: [], inlineSystem: false }
    })
  })

  it("keeps a user turn's block order: text before a result stays before it", () => {
    const { chat } = decoded({
      ...base,
      messages: [user([{ type: "text", text: "a" }, { type: "tool_result", tool_use_id: "t" }, { type: "text", text: "b" }])]
    })
    expect(chat.messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "a" }] },
      { role: "tool", toolCallId: "t", parts: [] },
      { role: "user", parts: [{ type: "text", text: "b" }] }
    ])
  })

  it("maps a string system prompt and string assistant content; skips an empty system", () => {
    expect(decoded({ ...base, system: "Be brief", messages: [user("q"), { role: "assistant", content: "a" }] }).chat.messages).toEqual([
      { role: "system", parts: [{ type: "text", text: "Be brief" }] },
      { role: "user", parts: [{ type: "text", text: "q" }] },
      { role: "assistant", parts: [{ type: "text", text: "a" }], toolCalls: [] }
    ])
    expect(decoded({ ...base, system: "" }).chat.messages).toHaveLength(1)
    expect(decoded({ ...base, system: [] }).chat.messages).toHaveLength(1)
  })

  it("maps each tool_choice and disable_parallel_tool_use", () => {
    const tools = [{ name: "f", input_schema: { type: "object" } }]
    const choose = (tool_choice: unknown) => decoded({ ...base, tools, tool_choice }).chat
    expect(choose({ type: "auto" })).toMatchObject({ toolChoice: { type: "auto" }, parallelToolCalls: undefined })
    expect(choose({ type: "auto", disable_parallel_tool_use: false })).toMatchObject({ parallelToolCalls: true })
    expect(choose({ type: "none" }).toolChoice).toEqual({ type: "none" })
    expect(choose({ type: "tool", name: "f", disable_parallel_tool_use: true })).toMatchObject({
      toolChoice: { type: "tool", name: "f" },
      parallelToolCalls: false
    })
  })

  it("drops tool_choice (and its parallel flag) without a non-empty tools list", () => {
    for (const tools of [undefined, []]) {
      const { chat } = decoded({ ...base, ...(tools === undefined ? {} : { tools }), tool_choice: { type: "tool", name: "nope", disable_parallel_tool_use: true } })
      expect(chat.toolChoice).toBeUndefined()
      expect(chat.parallelToolCalls).toBeUndefined()
    }
  })

  it("maps thinking: disabled = null, adaptive = medium, display omitted = exclude", () => {
    expect(decoded({ ...base, thinking: { type: "disabled" } }).chat.reasoning).toBeNull()
    expect(decoded(base).chat.reasoning).toBeUndefined()
    expect(decoded({ ...base, thinking: { type: "adaptive" } }).chat.reasoning).toEqual({ effort: "medium", budgetTokens: 2048, exclude: false, adaptive: true })
    // output_config.effort sets adaptive thinking's depth; Anthropic's levels above high are high in the canonical three.
    expect(decoded({ ...base, thinking: { type: "adaptive" }, output_config: { effort: "low" } }).chat.reasoning).toMatchObject({ effort: "low", budgetTokens: 1024 })
    expect(decoded({ ...base, thinking: { type: "adaptive" }, output_config: { effort: "max" } }).chat.reasoning).toMatchObject({ effort: "high" })
    expect(decoded({ ...base, thinking: { type: "enabled", budget_tokens: 3000, display: "omitted" } }).chat.reasoning).toEqual({
      effort: "high",
      budgetTokens: 3000,
      exclude: true
    })
    expect(decoded({ ...base, thinking: { type: "adaptive", display: "summarized" } }).chat.reasoning?.exclude).toBe(false)
  })

  it("accepts and drops harmless fields, naming them; null for a refused field means none", () => {
    const { chat, dropped } = decoded({ ...base, service_tier: "standard_only", speed: "fast", diagnostics: { previous_message_id: "m" }, container: null })
    expect(chat).toEqual(decoded(base).chat)
    expect(dropped).toEqual(["service_tier", "speed", "diagnostics"])
    expect(decoded({ ...base, tool_choice: { type: "auto" } }).dropped).toEqual(["tool_choice"])
    expect(decoded(base).dropped).toEqual([])
  })

  it("treats a null or empty metadata.user_id as no end user; tool_use caller is dropped", () => {
    expect(decoded({ ...base, metadata: { user_id: null } }).endUser).toBeUndefined()
    expect(decoded({ ...base, metadata: { user_id: "" } }).endUser).toBeUndefined()
    const { chat } = decoded({
      ...base,
      messages: [user("q"), { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {}, caller: { type: "direct" } }] }]
    })
    expect(chat.messages[1]).toEqual({ role: "assistant", parts: [], toolCalls: [{ id: "t", name: "f", arguments: "{}" }] })
  })
})

describe("decodeMessagesRequest: schema refusals (validation_error)", () => {
  const blocks = (n: number) => Array.from({ length: n }, () => ({ type: "text", text: "x" }))

  it.each([
    ["missing max_tokens", { messages: [user("x")] }, "max_tokens"],
    ["max_tokens 0", { ...base, max_tokens: 0 }, "max_tokens"],
    ["max_tokens not an integer", { ...base, max_tokens: 1.5 }, "max_tokens"],
    ["missing messages", { max_tokens: 10 }, "messages"],
    ["empty messages", { ...base, messages: [] }, "messages"],
    ["an extra field on a system turn", { ...base, messages: [user("x"), { role: "system", content: "y", name: "ops" }] }, "messages.1.name"],
    ["an extra field on a message", { ...base, messages: [{ role: "user", content: "x", name: "bob" }] }, "messages.0.name"],
    ["an unknown top-level field", { ...base, frequency_penalty: 1 }, "frequency_penalty"],
    ["an extra field on a text block", { ...base, messages: [user([{ type: "text", text: "x", lang: "en" }])] }, "messages.0.content.0.lang"],
    ["an empty content array", { ...base, messages: [user([])] }, "messages.0.content"],
    ["201 blocks", { ...base, messages: [user(blocks(201))] }, "messages.0.content"],
    ["21 system blocks", { ...base, system: blocks(21) }, "system"],
    [
      "51 blocks in a tool_result",
      { ...base, messages: [user([{ type: "tool_result", tool_use_id: "t", content: blocks(51) }])] },
      "messages.0.content.0.content"
    ],
    ["9 models", { ...base, models: Array.from({ length: 9 }, (_, i) => `m${i}`) }, "models"],
    ["0 models", { ...base, models: [] }, "models"],
    ["an empty model", { ...base, model: "" }, "model"],
    ["an unknown routing_bias", { ...base, routing_bias: "fastest" }, "routing_bias"],
    ["temperature above 1", { ...base, temperature: 1.5 }, "temperature"],
    ["top_p below 0", { ...base, top_p: -0.1 }, "top_p"],
    ["top_k 0", { ...base, top_k: 0 }, "top_k"],
    ["an extra metadata field", { ...base, metadata: { user_id: "u", tier: "gold" } }, "metadata.tier"],
    ["an unknown thinking type", { ...base, thinking: { type: "between_tools" } }, "thinking.type"],
    ["an unknown tool_choice type", { ...base, tool_choice: { type: "required" } }, "tool_choice.type"],
    ["a tool without input_schema", { ...base, tools: [{ name: "f" }] }, "tools.0.input_schema"],
    ["a non-object input_schema", { ...base, tools: [{ name: "f", input_schema: { type: "string" } }] }, "tools.0.input_schema.type"],
    ["a tool_use input that is not an object", { ...base, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: "x" }] }] }, "messages.0.content.0.input"],
    ["an unknown cache_control type", { ...base, messages: [user([{ type: "text", text: "x", cache_control: { type: "persistent" } }])] }, "messages.0.content.0.cache_control.type"],
    ["an unknown cache ttl", { ...base, system: [{ type: "text", text: "x", cache_control: { type: "ephemeral", ttl: "24h" } }] }, "system.0.cache_control.ttl"],
    ["an extra cache_control field", { ...base, tools: [{ name: "f", input_schema: { type: "object" }, cache_control: { type: "ephemeral", scope: "org" } }] }, "tools.0.cache_control.scope"]
  ])("refuses %s", (_name, body, param) => expectSchemaRefusal(body, param))

  it.each([
    ["image", "user", /"image" is not supported/],
    ["document", "user", /"document" is not supported/],
    ["server_tool_use", "assistant", /"server_tool_use" is not supported/],
    ["thinking", "user", /belongs in an assistant turn/],
    ["redacted_thinking", "user", /belongs in an assistant turn/],
    ["tool_use", "user", /belongs in an assistant turn/],
    ["tool_result", "assistant", /belongs in a user turn/]
  ])("refuses a %s block in a %s turn, naming its type", (type, role, message) => {
    expectSchemaRefusal({ ...base, messages: [user("x"), { role, content: [{ type: "text", text: "ok" }, { type, data: "..." }] }] }, "messages.1.content.1.type", message)
  })

  it("refuses a non-text block inside a tool_result and a non-text system block", () => {
    expectSchemaRefusal(
      { ...base, messages: [user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "image", source: {} }] }])] },
      "messages.0.content.0.content.0.type"
    )
    expectSchemaRefusal({ ...base, system: [{ type: "image", source: {} }] }, "system.0.type")
  })

  it("refuses a server tool by its type", () => {
    expectSchemaRefusal({ ...base, tools: [{ type: "web_search_20250305", name: "web_search" }] }, "tools.0.type", /not supported/)
  })

  it("lists every offending field at once, with no single param", () => {
    const error = refused({ messages: [{ role: "robot", content: "x" }], temperature: 3, foo: 1 })
    expect(error.type).toBe("validation_error")
    expect(error.param).toBeUndefined()
    expect(error.issues?.map((issue) => issue.param).sort()).toEqual(["foo", "max_tokens", "messages.0.role", "temperature"])
  })

  it("refuses a body that is not an object", () => {
    const error = refused("hello")
    expect(error.type).toBe("validation_error")
    expect(error.issues).toHaveLength(1)
  })
})

describe("decodeMessagesRequest: refusals after parsing (invalid_request_error)", () => {
  it.each([
    ["container", "cntr_1"],
    ["mcp_servers", [{ type: "url", url: "https://x", name: "x" }]],
    ["inference_geo", "us"],
    ["betas", ["context-1m-2025-08-07"]]
  ])("refuses %s by name", (field, value) => expectPolicyRefusal({ ...base, [field]: value }, field, new RegExp(`^${field} is not supported`)))

  it("refuses thinking budgets below the floor or not below max_tokens", () => {
    expectPolicyRefusal({ ...base, thinking: { type: "enabled", budget_tokens: 1000 } }, "thinking.budget_tokens", /floor of 1024/)
    expectPolicyRefusal({ ...base, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 2000 } }, "thinking.budget_tokens", /max_tokens=2000/)
    expectPolicyRefusal({ ...base, max_tokens: 1024, thinking: { type: "adaptive" } }, "thinking.type", /max_tokens=1024/)
  })

  it("refuses a tool choice naming no offered tool", () => {
    expectPolicyRefusal({ ...base, tools: [{ name: "f", input_schema: { type: "object" } }], tool_choice: { type: "tool", name: "g" } }, "tool_choice.name")
  })

  it("refuses cache_control on an empty text block, wherever it stands", () => {
    const mark = { type: "ephemeral" }
    expectPolicyRefusal({ ...base, messages: [user([{ type: "text", text: "", cache_control: mark }])] }, "messages.0.content.0.cache_control", /empty/)
    expectPolicyRefusal({ ...base, system: [{ type: "text", text: "", cache_control: mark }] }, "system.0.cache_control")
    expectPolicyRefusal(
      { ...base, messages: [user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "", cache_control: mark }] }])] },
      "messages.0.content.0.content.0.cache_control"
    )
  })

  it("refuses a system turn that opens messages (the top-level system field is for that)", () => {
    expectPolicyRefusal({ ...base, messages: [{ role: "system", content: "x" }, user("y")] }, "messages.0.role", /top-level system/)
  })

  it("refuses output_format beside output_config.format", () => {
    const format = { type: "json_schema", schema: { type: "object" } }
    expectPolicyRefusal({ ...base, output_format: format, output_config: { format } }, "output_format")
  })
})

// ---------------------------------------------------------------------------------------------------------

const meta: ReplyMeta = { id: "req_123", model: "anthropic/claude-sonnet-4-5", created: 1_700_000_000 }
const bill: ReplyBill = { creditsUsed: 0.0125, creditsRemaining: 9.5, requestsRemaining: 57 }

const result = (overrides: Partial<ChatResult>): ChatResult => ({
  text: "",
  reasoning: "",
  reasoningSignature: null,
  toolCalls: [],
  usage: {},
  stopReason: "stop",
  stopSequence: null,
  ...overrides
})

describe("renderMessage", () => {
  it("renders thinking, text and tool_use blocks with every usage bucket and the bill", () => {
    const body = renderMessage(
      result({
        text: "Calling.",
        reasoning: "Need the weather.",
        reasoningSignature: "sig==",
        toolCalls: [
          { id: "toolu_1", name: "weather", arguments: "{\"city\":\"Paris\"}" },
          { id: "toolu_2", name: "weather", arguments: "{not json" }
        ],
        usage: { freshInput: 100, cacheRead: 50, cacheWrite5m: 30, cacheWrite1h: 20, output: 80, reasoning: 40 },
        stopReason: "tool_calls"
      }),
      meta,
      bill
    )
    expect(body).toStrictEqual({
      id: "req_123",
      type: "message",
      role: "assistant",
      model: "anthropic/claude-sonnet-4-5",
      content: [
        { type: "thinking", thinking: "Need the weather.", signature: "sig==" },
        { type: "text", text: "Calling." },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris" } },
        { type: "tool_use", id: "toolu_2", name: "weather", input: {} }
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 100,
        output_tokens: 80,
        cache_read_input_tokens: 50,
        cache_creation_input_tokens: 50,
        cache_creation: { ephemeral_5m_input_tokens: 30, ephemeral_1h_input_tokens: 20 }
      },
      x_credits_used: 0.0125,
      x_credits_remaining: 9.5,
      x_ratelimit_requests_remaining: 57
    })
  })

  it("renders an empty reply as one empty text block, unreported counts as 0, a missing signature as empty", () => {
    expect(renderMessage(result({}), meta, { ...bill, requestsRemaining: null })).toStrictEqual({
      id: "req_123",
      type: "message",
      role: "assistant",
      model: "anthropic/claude-sonnet-4-5",
      content: [{ type: "text", text: "" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }
      },
      x_credits_used: 0.0125,
      x_credits_remaining: 9.5,
      x_ratelimit_requests_remaining: null
    })
    expect(renderMessage(result({ reasoning: "hm", text: "ok" }), meta, bill).content).toEqual([
      { type: "thinking", thinking: "hm", signature: "" },
      { type: "text", text: "ok" }
    ])
    expect(renderMessage(result({ toolCalls: [{ id: "t", name: "f", arguments: "" }] }), meta, bill).content).toEqual([
      { type: "tool_use", id: "t", name: "f", input: {} }
    ])
  })

  it.each([
    ["stop", null, "end_turn", null],
    ["stop", "###", "stop_sequence", "###"],
    ["length", null, "max_tokens", null],
    ["tool_calls", null, "tool_use", null],
    ["content_filter", null, "refusal", null]
  ] as const)("maps stop reason %s (sequence %s) to %s", (stopReason, stopSequence, expected, sequence) => {
    const body = renderMessage(result({ text: "x", stopReason, stopSequence }), meta, bill)
    expect(body.stop_reason).toBe(expected)
    expect(body.stop_sequence).toBe(sequence)
  })
})

// ---------------------------------------------------------------------------------------------------------

interface Frame {
  readonly event: string
  readonly data: any
}

/** Splits SSE text into its named events, checking the framing on the way. */
const framesOf = (text: string): Array<Frame> => {
  expect(text.endsWith("\n\n")).toBe(true)
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((chunk) => {
      const match = /^event: ([a-z_]+)\ndata: (.*)$/.exec(chunk)
      if (match === null) throw new Error(`bad frame: ${chunk}`)
      const data = JSON.parse(match[2]!)
      expect(data.type).toBe(match[1])
      return { event: match[1]!, data }
    })
}

const fullUsage = { freshInput: 472, cacheRead: 50, cacheWrite5m: 100, cacheWrite1h: 200, output: 89 }

/** A reply as an Anthropic upstream's parser yields it: thinking, text, two tool calls. */
const replyEvents: ReadonlyArray<ChatEvent> = [
  { type: "start", upstreamId: "msg_up" },
  { type: "usage", usage: { freshInput: 472, cacheRead: 50, cacheWrite5m: 100, cacheWrite1h: 200, output: 1 } },
  { type: "reasoning_delta", text: "Let me " },
  { type: "reasoning_delta", text: "think." },
  { type: "reasoning_signature", signature: "EqQBCgIYAh==" },
  { type: "text_delta", text: "I'll check " },
  { type: "text_delta", text: "both." },
  { type: "tool_call_delta", index: 0, id: "toolu_a", name: "weather", argumentsDelta: "" },
  { type: "tool_call_delta", index: 0, argumentsDelta: "{\"city\":" },
  { type: "tool_call_delta", index: 0, argumentsDelta: "\"Paris\"}" },
  { type: "tool_call_delta", index: 1, id: "toolu_b", name: "time", argumentsDelta: "" },
  { type: "tool_call_delta", index: 1, argumentsDelta: "{}" },
  { type: "usage", usage: { output: 89 } },
  { type: "stop", reason: "tool_calls", stopSequence: null }
]

const renderAll = (events: ReadonlyArray<ChatEvent>, finalUsage = fullUsage) => {
  const stream = makeMessagesStream(meta)
  return events.map((event) => stream.event(event)).join("") + stream.finish(finalUsage, bill)
}

const renderedUsage = {
  input_tokens: 472,
  output_tokens: 89,
  cache_read_input_tokens: 50,
  cache_creation_input_tokens: 300,
  cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 }
}

describe("makeMessagesStream", () => {
  it("writes Anthropic's event order with block indices, signature placement and the final message_delta", () => {
    const frames = framesOf(renderAll(replyEvents))
    expect(frames.map((f) => f.data.type === "content_block_delta" ? `${f.event}:${f.data.index}:${f.data.delta.type}` : f.data.index === undefined ? f.event : `${f.event}:${f.data.index}`)).toEqual([
      "message_start",
      "content_block_start:0",
      "content_block_delta:0:thinking_delta",
      "content_block_delta:0:thinking_delta",
      "content_block_delta:0:signature_delta",
      "content_block_stop:0",
      "content_block_start:1",
      "content_block_delta:1:text_delta",
      "content_block_delta:1:text_delta",
      "content_block_stop:1",
      "content_block_start:2",
      "content_block_delta:2:input_json_delta",
      "content_block_delta:2:input_json_delta",
      "content_block_stop:2",
      "content_block_start:3",
      "content_block_delta:3:input_json_delta",
      "content_block_stop:3",
      "message_delta",
      "message_stop"
    ])
    expect(frames[0]!.data).toStrictEqual({
      type: "message_start",
      message: {
        id: "req_123",
        type: "message",
        role: "assistant",
        model: "anthropic/claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...renderedUsage, output_tokens: 1 }
      }
    })
    expect(frames[1]!.data.content_block).toStrictEqual({ type: "thinking", thinking: "", signature: "" })
    expect(frames[4]!.data.delta).toStrictEqual({ type: "signature_delta", signature: "EqQBCgIYAh==" })
    expect(frames[6]!.data.content_block).toStrictEqual({ type: "text", text: "" })
    expect(frames[10]!.data.content_block).toStrictEqual({ type: "tool_use", id: "toolu_a", name: "weather", input: {} })
    expect(frames[11]!.data.delta).toStrictEqual({ type: "input_json_delta", partial_json: "{\"city\":" })
    expect(frames[14]!.data.content_block).toStrictEqual({ type: "tool_use", id: "toolu_b", name: "time", input: {} })
    expect(frames[17]!.data).toStrictEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: renderedUsage,
      x_credits_used: 0.0125,
      x_credits_remaining: 9.5,
      x_ratelimit_requests_remaining: 57
    })
    expect(frames[18]!.data).toStrictEqual({ type: "message_stop" })
  })

  it("holds message_start for a leading usage report, else writes zeros; holds stop until finish", () => {
    const stream = makeMessagesStream(meta)
    expect(stream.event({ type: "start" })).toBe("")
    expect(stream.event({ type: "stop", reason: "stop", stopSequence: "END" })).toBe("")
    const first = framesOf(stream.event({ type: "text_delta", text: "Hi" }))
    expect(first.map((f) => f.event)).toEqual(["message_start", "content_block_start", "content_block_delta"])
    expect(first[0]!.data.message.usage).toStrictEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }
    })
    const last = framesOf(stream.finish({ freshInput: 5, output: 2 }, bill))
    expect(last.map((f) => f.event)).toEqual(["content_block_stop", "message_delta", "message_stop"])
    expect(last[1]!.data.delta).toStrictEqual({ stop_reason: "stop_sequence", stop_sequence: "END" })
    expect(last[1]!.data.usage).toMatchObject({ input_tokens: 5, output_tokens: 2 })
    expect(stream.event({ type: "text_delta", text: "late" })).toBe("")
  })

  it("gives a reply with no content one empty text block, and ends as end_turn without a stop event", () => {
    const frames = framesOf(renderAll([{ type: "start" }], { freshInput: 3, output: 0 } as typeof fullUsage))
    expect(frames.map((f) => f.event)).toEqual(["message_start", "content_block_start", "content_block_stop", "message_delta", "message_stop"])
    expect(frames[0]!.data.message.usage.input_tokens).toBe(3)
    expect(frames[1]!.data).toStrictEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
    expect(frames[3]!.data.delta).toStrictEqual({ stop_reason: "end_turn", stop_sequence: null })
  })

  it("carries a signature whose text was withheld in an empty thinking block, before the text", () => {
    const frames = framesOf(renderAll([{ type: "start" }, { type: "reasoning_signature", signature: "s" }, { type: "text_delta", text: "x" }]))
    expect(frames.map((f) => f.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop"
    ])
    expect(frames[1]!.data.content_block).toStrictEqual({ type: "thinking", thinking: "", signature: "" })
    expect(frames[2]!.data.delta).toStrictEqual({ type: "signature_delta", signature: "s" })
    expect(frames[4]!.data.content_block).toStrictEqual({ type: "text", text: "" })
  })

  it("writes an interruption as an error event and closes nothing", () => {
    const stream = makeMessagesStream(meta)
    stream.event({ type: "start" })
    stream.event({ type: "text_delta", text: "partial" })
    expect(stream.interrupted({ code: "stream_interrupted", message: "The upstream dropped the connection." })).toBe(
      "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"server_error\",\"message\":\"The upstream dropped the connection.\",\"code\":\"stream_interrupted\"}}\n\n"
    )
    expect(stream.finish(fullUsage, bill)).toBe("")
  })
})

/** An SDK client whose every request is answered with `sse` as a text/event-stream body. */
const sdkReading = (sse: string) =>
  new Anthropic({
    apiKey: "test",
    maxRetries: 0,
    fetch: async () => new Response(sse, { status: 200, headers: { "content-type": "text/event-stream" } })
  })

describe("our stream as @anthropic-ai/sdk reads it", () => {
  it("accumulates into the Message the non-streaming reply would be", async () => {
    const message = await sdkReading(renderAll(replyEvents))
      .messages.stream({ model: "x", max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
      .finalMessage()
    const { x_credits_used: _u, x_credits_remaining: _r, x_ratelimit_requests_remaining: _q, ...whole } = renderMessage(
      foldEvents([...replyEvents, { type: "usage", usage: fullUsage }]),
      meta,
      bill
    )
    expect(message).toMatchObject(whole)
  })

  it("throws an APIError on our error event", async () => {
    const stream = makeMessagesStream(meta)
    const sse = stream.event({ type: "start" }) + stream.event({ type: "text_delta", text: "x" }) +
      stream.interrupted({ code: "stream_interrupted", message: "gone" })
    const events = await sdkReading(sse).messages.create({ model: "x", max_tokens: 100, messages: [{ role: "user", content: "hi" }], stream: true })
    const seen: Array<string> = []
    const failure = await (async () => {
      try {
        for await (const event of events) seen.push(event.type)
      } catch (error) {
        return error
      }
    })()
    expect(seen).toEqual(["message_start", "content_block_start", "content_block_delta"])
    expect(failure).toBeInstanceOf(APIError)
    expect((failure as APIError).type).toBe("server_error")
    expect((failure as APIError).message).toContain("gone")
  })
})

// ---------------------------------------------------------------------------------------------------------

const chatRequest = (overrides: Partial<ChatRequest>): ChatRequest => ({ messages: [], stop: [], tools: [], ...overrides })
const target = { upstreamModel: "claude-sonnet-4-5-20250929", stream: false, defaultMaxTokens: 4096 }

describe("buildAnthropicRequest", () => {
  it("builds the whole body: native cache markers, hoisted system, grouped tool results, dropped parameters", () => {
    const { path, body } = buildAnthropicRequest(
      chatRequest({
        messages: [
          { role: "system", parts: [{ type: "text", text: "Sys", cache: { ttl: "1h" } }] },
          { role: "user", parts: [{ type: "text", text: "Q", cache: { ttl: "5m" } }, { type: "text", text: "" }] },
          {
            role: "assistant",
            parts: [{ type: "text", text: "" }],
            reasoning: "earlier thoughts",
            toolCalls: [
              { id: "t1", name: "f", arguments: "{\"a\":1}" },
              { id: "t2", name: "f", arguments: "oops" }
            ]
          },
          { role: "tool", toolCallId: "t1", parts: [{ type: "text", text: "one", cache: { ttl: "1h" } }] },
          { role: "tool", toolCallId: "t2", parts: [], isError: true },
          { role: "user", parts: [{ type: "text", text: "go on" }] },
          { role: "assistant", parts: [{ type: "text", text: "Done" }], toolCalls: [] },
          { role: "system", parts: [{ type: "text", text: "Late system" }] },
          { role: "tool", toolCallId: "t3", parts: [{ type: "text", text: "three" }] }
        ],
        maxOutputTokens: 1000,
        temperature: 1,
        topP: 0.99,
        topK: 5,
        stop: ["END"],
        frequencyPenalty: 0.5,
        presencePenalty: 0.5,
        seed: 7,
        logitBias: { "42": 1 },
        logprobs: true,
        topLogprobs: 3,
        responseFormat: { type: "json_object" },
        tools: [{ name: "f", description: "F", parameters: { type: "object" }, cache: { ttl: "1h" } }, { name: "g", parameters: {} }],
        toolChoice: { type: "required" },
        parallelToolCalls: false,
        reasoning: { effort: "medium", budgetTokens: 512, exclude: true },
        userFingerprint: "fp_abc"
      }),
      { ...target, stream: true }
    )
    expect(path).toBe("/v1/messages")
    expect(body).toStrictEqual({
      model: "claude-sonnet-4-5-20250929",
      system: [
        { type: "text", text: "Sys", cache_control: { type: "ephemeral", ttl: "1h" } },
        { type: "text", text: "Late system" }
      ],
      messages: [
        { role: "user", content: [{ type: "text", text: "Q", cache_control: { type: "ephemeral" } }] },
        {
          role: "assistant",
          content: [
            { type: "tool_use", id: "t1", name: "f", input: { a: 1 } },
            { type: "tool_use", id: "t2", name: "f", input: {} }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "one", cache_control: { type: "ephemeral", ttl: "1h" } }] },
            { type: "tool_result", tool_use_id: "t2", is_error: true },
            { type: "text", text: "go on" }
          ]
        },
        { role: "assistant", content: [{ type: "text", text: "Done" }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t3", content: [{ type: "text", text: "three" }] }] }
      ],
      tools: [
        { name: "f", description: "F", input_schema: { type: "object" }, cache_control: { type: "ephemeral", ttl: "1h" } },
        { name: "g", input_schema: { type: "object" } }
      ],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 512 },
      max_tokens: 1000,
      stream: true,
      temperature: 1,
      top_p: 0.99,
      top_k: 5,
      stop_sequences: ["END"],
      metadata: { user_id: "fp_abc" }
    })
  })

  it("defaults max_tokens, omits what is unset, and maps reasoning null to disabled", () => {
    const minimal = chatRequest({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] })
    expect(buildAnthropicRequest(minimal, target).body).toStrictEqual({
      model: "claude-sonnet-4-5-20250929",
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      max_tokens: 4096
    })
    expect(buildAnthropicRequest({ ...minimal, reasoning: null }, target).body.thinking).toStrictEqual({ type: "disabled" })
  })

  it.each([
    [{ type: "auto" }, undefined, { type: "auto" }],
    [{ type: "none" }, false, { type: "none" }],
    [{ type: "tool", name: "f" }, true, { type: "tool", name: "f" }],
    [undefined, false, { type: "auto", disable_parallel_tool_use: true }],
    [undefined, undefined, undefined]
  ] as const)("maps tool choice %j with parallelToolCalls %s", (toolChoice, parallelToolCalls, expected) => {
    const chat = chatRequest({ tools: [{ name: "f", parameters: { type: "object" } }], toolChoice, parallelToolCalls })
    expect(buildAnthropicRequest(chat, target).body.tool_choice).toStrictEqual(expected)
  })

  it("sends no tool_choice without tools", () => {
    const body = buildAnthropicRequest(chatRequest({ toolChoice: { type: "required" }, parallelToolCalls: false }), target).body
    expect(body.tools).toBeUndefined()
    expect(body.tool_choice).toBeUndefined()
  })

  it("builds the count_tokens body from the prompt side only", () => {
    const chat = chatRequest({
      messages: [
        { role: "system", parts: [{ type: "text", text: "S" }] },
        { role: "user", parts: [{ type: "text", text: "hi" }] }
      ],
      maxOutputTokens: 10,
      temperature: 0.2,
      stop: ["x"],
      userFingerprint: "fp",
      tools: [{ name: "f", parameters: { type: "object" } }],
      toolChoice: { type: "auto" },
      reasoning: { effort: "low", budgetTokens: 1024, exclude: false }
    })
    expect(buildAnthropicCountTokensRequest(chat, target)).toStrictEqual({
      path: "/v1/messages/count_tokens",
      body: {
        model: "claude-sonnet-4-5-20250929",
        system: [{ type: "text", text: "S" }],
        messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
        tools: [{ name: "f", input_schema: { type: "object" } }],
        tool_choice: { type: "auto" },
        thinking: { type: "enabled", budget_tokens: 1024 }
      }
    })
  })

  it("round-trips an inbound Anthropic conversation to the same upstream shape", () => {
    const messages = [
      { role: "user", content: [{ type: "text", text: "Q", cache_control: { type: "ephemeral", ttl: "1h" } }] },
      { role: "assistant", content: [{ type: "text", text: "A" }, { type: "tool_use", id: "t", name: "f", input: { x: [1, 2] } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "R" }] }, { type: "text", text: "more" }] }
    ]
    const { chat } = decoded({ max_tokens: 50, messages })
    expect(buildAnthropicRequest(chat, target).body.messages).toStrictEqual(messages)
  })
})

// ---------------------------------------------------------------------------------------------------------

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) throw new Error(`expected a success, got ${String(either.left)}`)
  return either.right
}

describe("parseAnthropicResponse", () => {
  const message = {
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    container: null,
    stop_details: null,
    content: [
      { type: "thinking", thinking: "Plan.", signature: "sig1" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Here.", citations: null },
      { type: "tool_use", id: "toolu_1", name: "f", input: { q: 1 }, caller: { type: "direct" } },
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
      { type: "tool_use", id: "toolu_2", name: "g", input: {} }
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 20,
      output_tokens: 30,
      cache_read_input_tokens: 7,
      cache_creation_input_tokens: 9,
      cache_creation: { ephemeral_5m_input_tokens: 4, ephemeral_1h_input_tokens: 5 },
      service_tier: "standard",
      inference_geo: null,
      server_tool_use: null,
      output_tokens_details: null,
      speed: null
    }
  }

  it("yields the reply's events in order, tool indices counted among tool calls only", () => {
    expect(right(parseAnthropicResponse(message))).toStrictEqual([
      { type: "start", upstreamId: "msg_01" },
      { type: "reasoning_delta", text: "Plan." },
      { type: "reasoning_signature", signature: "sig1" },
      { type: "text_delta", text: "Here." },
      { type: "tool_call_delta", index: 0, id: "toolu_1", name: "f", argumentsDelta: "{\"q\":1}" },
      { type: "tool_call_delta", index: 1, id: "toolu_2", name: "g", argumentsDelta: "{}" },
      {
        type: "usage",
        usage: { freshInput: 20, cacheRead: 7, cacheWrite5m: 4, cacheWrite1h: 5, output: 30, reasoning: undefined }
      },
      { type: "stop", reason: "tool_calls", stopSequence: null }
    ])
  })

  it("counts an aggregate-only cache write as 5m; reads thinking_tokens as reasoning", () => {
    const events = right(
      parseAnthropicResponse({
        ...message,
        usage: { input_tokens: 3, output_tokens: 8, cache_creation_input_tokens: 11, output_tokens_details: { thinking_tokens: 5 } }
      })
    )
    expect(foldEvents(events).usage).toEqual({ freshInput: 3, cacheWrite5m: 11, output: 8, reasoning: 5 })
  })

  it.each([
    ["end_turn", null, "stop", null],
    ["stop_sequence", "###", "stop", "###"],
    ["max_tokens", null, "length", null],
    ["model_context_window_exceeded", null, "length", null],
    ["tool_use", null, "tool_calls", null],
    ["refusal", null, "content_filter", null],
    ["pause_turn", null, "stop", null],
    ["something_new", null, "stop", null]
  ])("maps stop_reason %s", (stop_reason, stop_sequence, reason, stopSequence) => {
    const events = right(parseAnthropicResponse({ id: "m", content: [{ type: "text", text: "x" }], stop_reason, stop_sequence }))
    expect(events.at(-1)).toStrictEqual({ type: "stop", reason, stopSequence })
  })

  it("fails with a protocol error on an error body or an unreadable one", () => {
    const error = parseAnthropicResponse({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
    expect(Either.isLeft(error) && error.left).toEqual(new UpstreamProtocolError({ message: "overloaded_error: Overloaded", status: 529 }))
    const broken = parseAnthropicResponse({ id: "m", content: [{ type: "text" }] })
    expect(Either.isLeft(broken) && broken.left).toBeInstanceOf(UpstreamProtocolError)
  })

  it("parses count_tokens replies", () => {
    expect(parseAnthropicCountTokens({ input_tokens: 1234 })).toEqual(Either.right(1234))
    const bad = parseAnthropicCountTokens({ tokens: 1 })
    expect(Either.isLeft(bad) && bad.left).toBeInstanceOf(UpstreamProtocolError)
    const error = parseAnthropicCountTokens({ type: "error", error: { type: "not_found_error", message: "model: x" } })
    expect(Either.isLeft(error) && error.left.status).toBe(404)
  })
})

/** A stream as Anthropic sends it, `[event name, payload]`. */
const upstreamStream: ReadonlyArray<readonly [string, unknown]> = [
  [
    "message_start",
    {
      type: "message_start",
      message: {
        id: "msg_s",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 472,
          cache_creation_input_tokens: 300,
          cache_read_input_tokens: 50,
          cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
          output_tokens: 1,
          service_tier: "standard"
        }
      }
    }
  ],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }],
  ["ping", { type: "ping" }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Hmm." } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "", citations: null } }],
  ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Sure" } }],
  ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation: {} } }],
  ["content_block_stop", { type: "content_block_stop", index: 1 }],
  ["content_block_start", { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_9", name: "f", input: {} } }],
  ["content_block_delta", { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "" } }],
  ["content_block_delta", { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{\"a\":" } }],
  ["content_block_delta", { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "2}" } }],
  ["content_block_stop", { type: "content_block_stop", index: 2 }],
  [
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null, stop_details: null },
      usage: { input_tokens: 472, cache_creation_input_tokens: 300, cache_read_input_tokens: 50, output_tokens: 89 }
    }
  ],
  ["message_stop", { type: "message_stop" }]
]

const parseAll = (frames: ReadonlyArray<readonly [string | undefined, string]>) => {
  const parse = makeAnthropicStreamParser()
  return frames.flatMap(([event, data]) => right(parse(event, data)))
}

describe("makeAnthropicStreamParser", () => {
  it("turns Anthropic's event sequence into canonical events", () => {
    const events = parseAll(upstreamStream.map(([event, data]) => [event, JSON.stringify(data)]))
    expect(events).toStrictEqual([
      { type: "start", upstreamId: "msg_s" },
      { type: "usage", usage: { freshInput: 472, cacheRead: 50, cacheWrite5m: 100, cacheWrite1h: 200, output: 1, reasoning: undefined } },
      { type: "reasoning_delta", text: "Hmm." },
      { type: "reasoning_signature", signature: "sig" },
      { type: "text_delta", text: "Sure" },
      { type: "tool_call_delta", index: 0, id: "toolu_9", name: "f", argumentsDelta: "" },
      { type: "tool_call_delta", index: 0, argumentsDelta: "{\"a\":" },
      { type: "tool_call_delta", index: 0, argumentsDelta: "2}" },
      // message_delta carries no split: its aggregate is read against the split already seen (1h kept, rest 5m).
      { type: "usage", usage: { freshInput: 472, cacheRead: 50, cacheWrite5m: 100, cacheWrite1h: undefined, output: 89, reasoning: undefined } },
      { type: "stop", reason: "tool_calls", stopSequence: null }
    ])
    expect(foldEvents(events)).toStrictEqual({
      text: "Sure",
      reasoning: "Hmm.",
      reasoningSignature: "sig",
      toolCalls: [{ id: "toolu_9", name: "f", arguments: "{\"a\":2}" }],
      usage: { freshInput: 472, cacheRead: 50, cacheWrite5m: 100, cacheWrite1h: 200, output: 89, reasoning: undefined },
      stopReason: "tool_calls",
      stopSequence: null
    })
  })

  it("merges usage across message_start and message_delta, the aggregate counted as 5m when no split came", () => {
    const events = parseAll([
      ["message_start", JSON.stringify({ type: "message_start", message: { id: "m", content: [], usage: { input_tokens: 10, cache_creation_input_tokens: 40, output_tokens: 1 } } })],
      ["message_delta", JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 25 } })]
    ])
    expect(foldEvents(events).usage).toEqual({ freshInput: 10, cacheWrite5m: 40, output: 25 })
  })

  it("counts tool indices among tool_use blocks only, whatever their content index", () => {
    const events = parseAll([
      ["content_block_start", JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })],
      ["content_block_start", JSON.stringify({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "a", name: "f", input: {} } })],
      ["content_block_start", JSON.stringify({ type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "b", name: "g", input: {} } })],
      ["content_block_delta", JSON.stringify({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{}" } })]
    ])
    expect(events).toStrictEqual([
      { type: "tool_call_delta", index: 0, id: "a", name: "f", argumentsDelta: "" },
      { type: "tool_call_delta", index: 1, id: "b", name: "g", argumentsDelta: "" },
      { type: "tool_call_delta", index: 0, argumentsDelta: "{}" }
    ])
  })

  it("skips pings (even without data) and unknown event types; keeps a stop sequence", () => {
    expect(parseAll([["ping", ""], ["ping", "{\"type\":\"ping\"}"], ["future_event", "{\"type\":\"future_event\",\"x\":1}"]])).toEqual([])
    expect(parseAll([[undefined, JSON.stringify({ type: "message_delta", delta: { stop_reason: "stop_sequence", stop_sequence: "##" }, usage: null })]])).toStrictEqual([
      { type: "stop", reason: "stop", stopSequence: "##" }
    ])
  })

  it("fails with UpstreamStreamError on an error event, UpstreamProtocolError on garbage", () => {
    const parse = makeAnthropicStreamParser()
    expect(parse("error", JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }))).toEqual(
      Either.left(new UpstreamStreamError({ message: "overloaded_error: Overloaded", status: 529 }))
    )
    const notJson = parse("content_block_delta", "{oops")
    expect(Either.isLeft(notJson) && notJson.left).toBeInstanceOf(UpstreamProtocolError)
    const misshapen = parse("content_block_delta", JSON.stringify({ type: "content_block_delta", delta: { type: "text_delta", text: "x" } }))
    expect(Either.isLeft(misshapen) && misshapen.left).toBeInstanceOf(UpstreamProtocolError)
    const orphan = parse("content_block_delta", JSON.stringify({ type: "content_block_delta", index: 5, delta: { type: "input_json_delta", partial_json: "{" } }))
    expect(Either.isLeft(orphan) && orphan.left).toBeInstanceOf(UpstreamProtocolError)
  })
})

describe("round trip: our rendered stream through the upstream parser", () => {
  it("yields the events it was rendered from", () => {
    const frames = framesOf(renderAll(replyEvents))
    const parsed = parseAll(frames.map((f) => [f.event, JSON.stringify(f.data)]))
    const withoutUsage = (events: ReadonlyArray<ChatEvent>) => events.filter((e) => e.type !== "usage")
    expect(withoutUsage(parsed)).toStrictEqual(
      withoutUsage(replyEvents).map((e) => (e.type === "start" ? { type: "start", upstreamId: meta.id } : e))
    )
    const original = foldEvents([...replyEvents, { type: "usage", usage: fullUsage }])
    expect(foldEvents(parsed)).toEqual({ ...original, usage: { ...fullUsage, reasoning: undefined } })
  })

  it("splits a first tool delta carrying arguments into start + delta, folding to the same call", () => {
    const events: ReadonlyArray<ChatEvent> = [
      { type: "start" },
      { type: "tool_call_delta", index: 0, id: "t", name: "f", argumentsDelta: "{\"a\":1}" },
      { type: "stop", reason: "tool_calls" }
    ]
    const parsed = parseAll(framesOf(renderAll(events)).map((f) => [f.event, JSON.stringify(f.data)]))
    expect(parsed.filter((e) => e.type === "tool_call_delta")).toStrictEqual([
      { type: "tool_call_delta", index: 0, id: "t", name: "f", argumentsDelta: "" },
      { type: "tool_call_delta", index: 0, argumentsDelta: "{\"a\":1}" }
    ])
    expect(foldEvents(parsed).toolCalls).toEqual(foldEvents(events).toolCalls)
  })

  it("yields the error event back as an UpstreamStreamError", () => {
    const parse = makeAnthropicStreamParser()
    const [frame] = framesOf(makeMessagesStream(meta).interrupted({ code: "stream_interrupted", message: "cut" }))
    const result = parse(frame!.event, JSON.stringify(frame!.data))
    expect(Either.isLeft(result) && result.left).toBeInstanceOf(UpstreamStreamError)
  })
})

// ---------------------------------------------------------------------------------------------------------

describe("signatures: the vendor's when an Anthropic model served the request, else empty (SPEC)", () => {
  const thinking = result({ text: "Answer", reasoning: "Thought.", reasoningSignature: "sig==" })
  it("passes an Anthropic model's signature in the whole reply", () => {
    expect(renderMessage(thinking, meta, bill).content[0]).toStrictEqual({ type: "thinking", thinking: "Thought.", signature: "sig==" })
  })

  it.each(["google/gemini-2.5-flash", "minimax/minimax-m2", "deepseek/deepseek-v4-pro"])("leaves it empty when %s answered", (model) => {
    expect(renderMessage(thinking, { ...meta, model }, bill).content[0]).toStrictEqual({ type: "thinking", thinking: "Thought.", signature: "" })
    const stream = makeMessagesStream({ ...meta, model })
    const sse = replyEvents.map((event) => stream.event(event)).join("") + stream.finish(fullUsage, bill)
    const frames = framesOf(sse)
    expect(frames.some((f) => f.data.delta?.type === "signature_delta")).toBe(false)
    expect(frames.find((f) => f.data.content_block?.type === "thinking")?.data.content_block).toStrictEqual({ type: "thinking", thinking: "", signature: "" })
  })
})

describe("buildAnthropicRequest: thinking by the model's traits", () => {
  const asking = (effort: "low" | "medium" | "high", exclude = false) =>
    chatRequest({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }], reasoning: { effort, budgetTokens: 2048, exclude } })

  it("sends budget thinking by default and for budget models", () => {
    for (const options of [{}, { thinkingStyle: "budget" as const }]) {
      const body = buildAnthropicRequest(asking("high"), { ...target, ...options }).body
      expect(body.thinking).toStrictEqual({ type: "enabled", budget_tokens: 2048 })
      expect(body.output_config).toBeUndefined()
    }
  })

  it("sends adaptive thinking with the effort (newer Claude models refuse budget_tokens), summarized unless withheld", () => {
    const adaptive = { ...target, thinkingStyle: "adaptive" as const }
    const body = buildAnthropicRequest(asking("low"), adaptive).body
    expect(body.thinking).toStrictEqual({ type: "adaptive", display: "summarized" })
    expect(body.output_config).toStrictEqual({ effort: "low" })
    expect(JSON.stringify(body)).not.toContain("budget_tokens")
    expect(buildAnthropicRequest(asking("high", true), adaptive).body).toMatchObject({
      thinking: { type: "adaptive", display: "omitted" },
      output_config: { effort: "high" }
    })
    // count_tokens takes the thinking shape but no output_config.
    expect(buildAnthropicCountTokensRequest(asking("medium"), adaptive).body).toStrictEqual({
      model: "claude-sonnet-4-5-20250929",
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      thinking: { type: "adaptive", display: "summarized" }
    })
  })

  it("switches thinking off with {type:disabled}, or by sending nothing where the model only thinks when asked", () => {
    const off = chatRequest({ messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }], reasoning: null })
    expect(buildAnthropicRequest(off, { ...target, thinkingStyle: "adaptive", reasoningOff: "disabled" }).body.thinking).toStrictEqual({ type: "disabled" })
    const omitted = buildAnthropicRequest(off, { ...target, thinkingStyle: "adaptive", reasoningOff: "omit" }).body
    expect(omitted.thinking).toBeUndefined()
    expect(omitted.output_config).toBeUndefined()
  })

  it("sends a json_schema response format as structured output, beside the effort", () => {
    const chat = { ...asking("medium"), responseFormat: { type: "json_schema" as const, name: "out", schema: { type: "object" } } }
    expect(buildAnthropicRequest(chat, { ...target, thinkingStyle: "adaptive" }).body.output_config).toStrictEqual({
      effort: "medium",
      format: { type: "json_schema", schema: { type: "object" } }
    })
    expect(buildAnthropicRequest({ ...chat, reasoning: undefined }, target).body.output_config).toStrictEqual({
      format: { type: "json_schema", schema: { type: "object" } }
    })
  })
})

describe("usage buckets sum to the vendor's whole input", () => {
  const sum = (u: Usage) => (u.freshInput ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite5m ?? 0) + (u.cacheWrite1h ?? 0)
  it.each([
    ["input only", { input_tokens: 20 }, 20],
    ["aggregate write only (counted as 5m)", { input_tokens: 3, cache_creation_input_tokens: 11, cache_read_input_tokens: 0 }, 14],
    [
      "aggregate with the 5m/1h split",
      { input_tokens: 5, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 }, cache_read_input_tokens: 50 },
      355
    ],
    ["split only", { input_tokens: 5, cache_creation: { ephemeral_5m_input_tokens: 7, ephemeral_1h_input_tokens: 9 }, cache_read_input_tokens: 1 }, 22],
    [
      "a split that disagrees with the aggregate (the aggregate is the vendor's total)",
      { input_tokens: 5, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 200 }, cache_read_input_tokens: 0 },
      305
    ],
    ["reads only", { input_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 4000 }, 4002]
  ] as const)("%s", (_name, usage, total) => {
    expect(sum(usageOfAnthropic(usage))).toBe(total)
  })

  it("keeps the sum across message_start (split) and a cumulative message_delta (aggregate only)", () => {
    const parse = makeAnthropicStreamParser()
    const events = [
      parse("message_start", JSON.stringify({
        type: "message_start",
        message: {
          id: "m",
          type: "message",
          role: "assistant",
          model: "claude",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 5, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 }, cache_read_input_tokens: 50, output_tokens: 1 }
        }
      })),
      parse("message_delta", JSON.stringify({
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { input_tokens: 5, cache_creation_input_tokens: 300, cache_read_input_tokens: 50, output_tokens: 9 }
      }))
    ].flatMap((e) => right(e))
    expect(sum(foldEvents(events).usage)).toBe(355)
    expect(foldEvents(events).usage).toMatchObject({ cacheWrite5m: 100, cacheWrite1h: 200 })
  })
})
