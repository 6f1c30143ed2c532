/**
 * The Responses format's translation, pure: a request's items into canonical turns (an assistant turn gathers its
 * reasoning, message and calls; tool outputs follow), its tools (namespaces flattened, freeform tools as one-string
 * functions, built-in ones dropped by name), its reasoning controls, its refusals; the renderers' output items; and the
 * sealer (AES-GCM bound to the account: altered, foreign-key or other-account seals do not open).
 */
import { Either } from "effect"
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import type { ChatResult, ReplyMeta } from "../domain/exchange/canonical.ts"
import { decodeResponsesRequest, parseResponsesRequest, type ReasoningSealer } from "../domain/exchange/translate/responsesInbound.ts"
import { renderResponse } from "../domain/exchange/translate/responsesRender.ts"
import { makeResponsesStream } from "../domain/exchange/translate/responsesStream.ts"
import { makeSealer } from "../services/exchange/ReasoningSeal.ts"

const KEY = randomBytes(32)
const sealer: ReasoningSealer = makeSealer(KEY, "1")

const decode = (body: Record<string, unknown>, history = []) => {
  const parsed = parseResponsesRequest({ model: "openai/gpt-5", ...body })
  if (Either.isLeft(parsed)) throw new Error(`refused: ${parsed.left.message}`)
  return decodeResponsesRequest(parsed.right, history, sealer)
}
const accept = (body: Record<string, unknown>) => {
  const decoded = decode(body)
  if (Either.isLeft(decoded)) throw new Error(`refused: ${decoded.left.message}`)
  return decoded.right
}
const refusal = (body: Record<string, unknown>) => {
  const parsed = parseResponsesRequest({ model: "openai/gpt-5", ...body })
  if (Either.isLeft(parsed)) return parsed.left
  const decoded = decodeResponsesRequest(parsed.right, [], sealer)
  if (Either.isRight(decoded)) throw new Error("accepted")
  return decoded.left
}

describe("items into canonical turns", () => {
  it("gathers an assistant turn's reasoning, message and calls, then the tool outputs, in order", () => {
    const sealed = sealer.seal({ vendor: "anthropic", thinking: "I should call it", signature: "sig-1" })
    const { chat, dropped } = accept({
      instructions: "Be brief.",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] },
        { role: "user", content: "weather?" },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "thinking" }], content: null, encrypted_content: sealed },
        { type: "function_call", call_id: "c1", name: "get_weather", arguments: "{\"city\":\"Paris\"}", status: "completed" },
        { type: "function_call", call_id: "c2", name: "lookup", namespace: "docs", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "Sunny" },
        { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "found" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "It is sunny.", annotations: [] }] },
        { role: "user", content: "thanks" }
      ]
    })
    expect(dropped).toEqual([])
    expect(chat.messages).toEqual([
      { role: "system", parts: [{ type: "text", text: "Be brief." }] },
      { role: "system", parts: [{ type: "text", text: "rules" }] },
      { role: "user", parts: [{ type: "text", text: "weather?" }] },
      {
        role: "assistant",
        parts: [],
        toolCalls: [{ id: "c1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" }, { id: "c2", name: "docs__lookup", arguments: "{}" }],
        reasoningBlocks: [{ type: "thinking", thinking: "I should call it", signature: "sig-1" }]
      },
      { role: "tool", toolCallId: "c1", parts: [{ type: "text", text: "Sunny" }] },
      { role: "tool", toolCallId: "c2", parts: [{ type: "text", text: "found" }] },
      { role: "assistant", parts: [{ type: "text", text: "It is sunny." }], toolCalls: [] },
      { role: "user", parts: [{ type: "text", text: "thanks" }] }
    ])
  })

  it("prepends a stored conversation before the new input", () => {
    const decoded = decodeResponsesRequest(
      Either.getOrThrow(parseResponsesRequest({ input: "second" })),
      [{ inputItems: [{ role: "user", content: "first" }], outputItems: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "one" }] }] }],
      sealer
    )
    expect(Either.getOrThrow(decoded).chat.messages.map((m) => [m.role, m.parts.map((p) => p.text).join("")])).toEqual([
      ["user", "first"],
      ["assistant", "one"],
      ["user", "second"]
    ])
  })

  it("drops a seal that does not open, whole, and names it; unsealed summaries are reasoning text", () => {
    const genuine = sealer.seal({ vendor: "anthropic", thinking: "t", signature: "s" })
    const altered = `${genuine.slice(0, -2)}${genuine.endsWith("A") ? "B" : "A"}A`
    const foreignAccount = makeSealer(KEY, "2").seal({ vendor: "anthropic", thinking: "t", signature: "s" })
    const foreignKey = makeSealer(randomBytes(32), "1").seal({ vendor: "anthropic", thinking: "t", signature: "s" })
    for (const encrypted of [altered, foreignAccount, foreignKey, "xyz"]) {
      const { chat, dropped } = accept({ input: [{ role: "user", content: "a" }, { type: "reasoning", summary: [{ type: "summary_text", text: "hm" }], encrypted_content: encrypted }, { role: "assistant", content: "b" }] })
      expect(dropped).toEqual(["input[].encrypted_content"])
      expect(chat.messages[1]).toEqual({ role: "assistant", parts: [{ type: "text", text: "b" }], toolCalls: [] })
    }
    const summary = accept({ input: [{ type: "reasoning", summary: [{ type: "summary_text", text: "hm" }] }, { role: "assistant", content: "b" }] })
    expect(summary.chat.messages[0]).toMatchObject({ role: "assistant", reasoning: "hm" })
    expect(sealer.open(genuine)).toEqual({ vendor: "anthropic", thinking: "t", signature: "s" })
  })
})

describe("tools, controls and refusals", () => {
  it("flattens namespaces, serves freeform tools as functions, drops built-in tools and unmatched extras by name", () => {
    const { chat, dropped, options } = accept({
      input: "x",
      tools: [
        { type: "function", name: "f", parameters: null, strict: false },
        { type: "namespace", name: "ns", description: "d", tools: [{ type: "function", name: "g", defer_loading: true }] },
        { type: "custom", name: "apply_patch", format: { type: "grammar", syntax: "lark", definition: "start: /.+/" } },
        { type: "web_search", external_web_access: false },
        { type: "tool_search", execution: "client", description: "d", parameters: {} }
      ],
      tool_choice: { type: "custom", name: "apply_patch" },
      text: { verbosity: "low" },
      truncation: "auto",
      include: ["reasoning.encrypted_content", "message.output_text.logprobs"]
    })
    expect(chat.tools.map((t) => t.name)).toEqual(["f", "ns__g", "apply_patch"])
    expect(chat.tools[0]!.parameters).toEqual({ type: "object", properties: {} })
    expect(chat.tools[2]!.parameters).toMatchObject({ properties: { input: { type: "string", description: expect.stringContaining("start: /.+/") } }, required: ["input"] })
    expect(chat.toolChoice).toEqual({ type: "tool", name: "apply_patch" })
    expect(dropped).toEqual(["tools[].defer_loading", "tools[web_search]", "tools[tool_search]", "text.verbosity", "truncation", "include[message.output_text.logprobs]"])
    expect(options.includeEncrypted).toBe(true)
    expect(options.toolOrigins.get("ns__g")).toEqual({ name: "g", namespace: "ns", custom: false })
  })

  it("maps reasoning efforts onto the canonical three, none to off, and takes the end user from safety_identifier first", () => {
    expect(accept({ input: "x", reasoning: { effort: "minimal" } }).chat.reasoning).toMatchObject({ effort: "low", exclude: false })
    expect(accept({ input: "x", reasoning: { effort: "xhigh" }, max_output_tokens: 10_000 }).chat.reasoning).toEqual({ effort: "high", budgetTokens: 8000, exclude: false })
    expect(accept({ input: "x", reasoning: { effort: "none" } }).chat.reasoning).toBeNull()
    expect(accept({ input: "x", reasoning: { summary: "auto" } }).chat.reasoning).toBeUndefined()
    expect(accept({ input: "x", user: "u", safety_identifier: "s" }).endUser).toBe("s")
    expect(accept({ input: "x", text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } } }).chat.responseFormat)
      .toEqual({ type: "json_schema", name: "out", schema: { type: "object" }, strict: true })
  })

  it("refuses what it cannot honour, naming the field", () => {
    expect(refusal({ input: "x", background: true })).toMatchObject({ param: "background" })
    expect(refusal({ input: "x", conversation: "conv_1" })).toMatchObject({ param: "conversation" })
    expect(refusal({ input: "x", prompt: { id: "p" } })).toMatchObject({ param: "prompt" })
    expect(refusal({ input: "x", tools: [{ type: "function", name: "f" }], tool_choice: { type: "function", name: "g" } })).toMatchObject({ param: "tool_choice.name" })
    expect(refusal({ input: "x", tools: [{ type: "namespace", name: "n".repeat(40), description: "", tools: [{ type: "function", name: "g".repeat(30) }] }] })).toMatchObject({ param: "tools.0.tools.0.name" })
    expect(refusal({ input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] })).toMatchObject({ param: "input.0.content.0.type" })
    expect(refusal({ input: "x", unknown_field: 1 })).toMatchObject({ param: "unknown_field" })
  })
})

describe("rendering", () => {
  const meta: ReplyMeta = { id: "gen_0123456789abcdef01234567", model: "anthropic/claude-sonnet-4.5", created: 1_700_000_000 }
  const bill = { creditsUsed: 0.01, creditsRemaining: 9.99, requestsRemaining: null }
  const result: ChatResult = {
    text: "",
    reasoning: "think",
    reasoningSignature: "sig",
    toolCalls: [{ id: "call_1", name: "ns__g", arguments: "{}" }, { id: "call_2", name: "apply_patch", arguments: "{\"input\":\"*** Begin Patch\"}" }],
    usage: { freshInput: 10, cacheRead: 5, output: 7, reasoning: 3 },
    stopReason: "tool_calls",
    stopSequence: null
  }
  const options = accept({
    input: "x",
    reasoning: { summary: "auto" },
    include: ["reasoning.encrypted_content"],
    tools: [{ type: "namespace", name: "ns", description: "", tools: [{ type: "function", name: "g" }] }, { type: "custom", name: "apply_patch" }]
  }).options

  it("a whole reply: reasoning (summary, sealed signature), calls as declared, usage with cache and reasoning", () => {
    const response = renderResponse(result, meta, bill, options, sealer)
    expect(response.id).toBe("resp_0123456789abcdef01234567")
    expect(response.output).toEqual([
      { type: "reasoning", id: "rs_0123456789abcdef01234567", summary: [{ type: "summary_text", text: "think" }], encrypted_content: expect.stringMatching(/^cx1\./) },
      { type: "function_call", id: "fc_0123456789abcdef01234567_0", call_id: "call_1", name: "g", namespace: "ns", arguments: "{}", status: "completed" },
      { type: "custom_tool_call", id: "ctc_0123456789abcdef01234567_1", call_id: "call_2", name: "apply_patch", input: "*** Begin Patch", status: "completed" }
    ])
    expect(sealer.open((response.output[0] as { encrypted_content: string }).encrypted_content)).toEqual({ vendor: "anthropic", thinking: "think", signature: "sig" })
    expect(response.usage).toEqual({ input_tokens: 15, input_tokens_details: { cached_tokens: 5 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 22 })
    expect(renderResponse({ ...result, toolCalls: [], text: "cut", stopReason: "length" }, meta, bill, options, sealer))
      .toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output_text: "cut" })
  })

  it("the stream's final response equals the whole reply of the same events", () => {
    const stream = makeResponsesStream(meta, options, sealer)
    const frames = [
      stream.event({ type: "start" }),
      stream.event({ type: "reasoning_delta", text: "th" }),
      stream.event({ type: "reasoning_delta", text: "ink" }),
      stream.event({ type: "reasoning_signature", signature: "sig" }),
      stream.event({ type: "tool_call_delta", index: 0, id: "call_1", name: "ns__g", argumentsDelta: "{" }),
      stream.event({ type: "tool_call_delta", index: 0, argumentsDelta: "}" }),
      stream.event({ type: "tool_call_delta", index: 1, id: "call_2", name: "apply_patch", argumentsDelta: "{\"input\":\"*** Begin Patch\"}" }),
      stream.event({ type: "stop", reason: "tool_calls" }),
      stream.finish(result.usage, bill)
    ].join("")
    const events = frames.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events.filter((e) => e.type === "response.function_call_arguments.delta").map((e) => e.delta)).toEqual(["{", "}"])
    expect(events.find((e) => e.type === "response.custom_tool_call_input.done")).toMatchObject({ input: "*** Begin Patch" })
    const whole = renderResponse(result, meta, bill, options, sealer)
    const final = stream.final()!
    const withoutSeal = (items: ReadonlyArray<unknown>) => JSON.parse(JSON.stringify(items).replace(/"cx1\.[^"]+"/g, '"sealed"'))
    expect(withoutSeal(final.output)).toEqual(withoutSeal(whole.output))
    expect({ ...final, output: [] }).toEqual({ ...whole, output: [] })
  })
})
