/**
 * Messages as Anthropic's own clients send them (DESIGN.md section 10, "Agents' dialects"), pure: Claude Code's
 * captured request bodies (test/fixtures/claude-code, texts redacted) decode; on an Anthropic upstream every field it
 * sent reaches the vendor as it was sent; on another vendor each is translated or dropped and named.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { type CapturedRequest, capturedRequest } from "./support/claudeCode.ts"
import type { ChatRequest } from "../domain/exchange/canonical.ts"
import { droppedParameters } from "../domain/exchange/droppedParameters.ts"
import type { RoutableModel } from "../domain/exchange/routing.ts"
import { betasOf, decodeMessagesRequest } from "../domain/exchange/translate/anthropicInbound.ts"
import { anthropicBetaHeader, buildAnthropicRequest } from "../domain/exchange/translate/anthropicUpstream.ts"
import { buildOpenaiChatRequest } from "../domain/exchange/translate/openaiChatUpstream.ts"

type Captured = CapturedRequest
const captured = capturedRequest

const firstTurn = captured("turn1")
const toolTurn = captured("turn2")

const decode = (request: Captured) => {
  const result = decodeMessagesRequest(request.body, betasOf(request.headers["anthropic-beta"]))
  if (Either.isLeft(result)) throw new Error(`refused: ${result.left.message} (${result.left.param})`)
  return result.right
}

/** A served model as droppedParameters reads it: its upstream format and vendor, and whether it can reason. */
const served = (format: string, vendor: string, reasons = true): RoutableModel =>
  ({
    key: `${vendor}/m`,
    vendor,
    provider: { name: vendor, format },
    card: { reasoning: reasons },
    listing: { price: { reasoningOutput: reasons ? {} : null } }
  }) as unknown as RoutableModel

const anthropicBody = (chat: ChatRequest, thinkingStyle: "adaptive" | "budget" = "adaptive") =>
  buildAnthropicRequest(chat, { upstreamModel: "claude-opus-5-5", stream: true, defaultMaxTokens: 4096, thinkingStyle }).body

describe("Claude Code's requests decode", () => {
  it("takes its first turn: betas, adaptive thinking with omitted display, effort, context management, per-turn system", () => {
    const { chat, stream, endUser, dropped } = decode(firstTurn)
    expect(stream).toBe(true)
    expect(endUser).toBe(firstTurn.body.metadata.user_id)
    expect(dropped).toEqual([])
    expect(chat.anthropic).toEqual({
      betas: firstTurn.headers["anthropic-beta"]!.split(","),
      inlineSystem: true,
      contextManagement: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      effort: "medium",
      thinkingDisplay: "omitted"
    })
    // Adaptive thinking at the client's effort, its text withheld (display "omitted").
    expect(chat.reasoning).toEqual({ effort: "medium", budgetTokens: 64000, exclude: true, adaptive: true })
    expect(chat.tools.find((tool) => tool.name === "DeferredToolPlaceholder")?.anthropicFields).toEqual({ defer_loading: true })
    expect(chat.messages.map((m) => m.role)).toEqual(["system", "user", "system"])
  })

  it("takes its tool turn: the signed thinking block replayed before tool_use, a tool_result with cache_control", () => {
    const { chat } = decode(toolTurn)
    const assistant = chat.messages.find((m) => m.role === "assistant")
    const sent = toolTurn.body.messages[2].content
    expect(assistant).toMatchObject({
      reasoningBlocks: [{ type: "thinking", thinking: sent[0].thinking, signature: sent[0].signature }],
      reasoning: sent[0].thinking,
      toolCalls: [{ id: sent[1].id, name: sent[1].name, arguments: JSON.stringify(sent[1].input) }]
    })
    expect(chat.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: sent[1].id, isError: true, cache: { ttl: "5m" } })
  })
})

describe("on an Anthropic upstream, what Claude Code sent reaches the vendor as it was sent", () => {
  it("forwards the betas as the anthropic-beta header", () => {
    expect(anthropicBetaHeader(decode(firstTurn).chat)).toEqual({ "anthropic-beta": firstTurn.headers["anthropic-beta"] })
    expect(anthropicBetaHeader(decode({ ...firstTurn, headers: {} }).chat)).toEqual({})
  })

  it("forwards context_management, thinking, output_config, tools, system and messages untouched", () => {
    for (const request of [firstTurn, toolTurn]) {
      const sent = request.body
      const body = anthropicBody(decode(request).chat)
      expect(body.context_management).toEqual(sent.context_management)
      expect(body.thinking).toEqual(sent.thinking)
      expect(body.output_config).toEqual(sent.output_config)
      expect(body.max_tokens).toBe(sent.max_tokens)
      expect(body.tools).toEqual(sent.tools)
      expect(body.system).toEqual(sent.system)
      // Messages as sent, a string content (a turn's or a tool result's) written as its one text block.
      const asBlocks = (content: unknown): unknown =>
        typeof content === "string"
          ? [{ type: "text", text: content }]
          : (content as Array<any>).map((b) => (b.type === "tool_result" ? { ...b, content: asBlocks(b.content) } : b))
      expect(body.messages).toEqual(sent.messages.map((m: any) => ({ ...m, content: asBlocks(m.content) })))
    }
  })

  it("leaves out a thinking block no one signed (another vendor's reasoning) and names it dropped", () => {
    const { chat } = decode({
      ...toolTurn,
      body: {
        ...toolTurn.body,
        messages: toolTurn.body.messages.map((m: any) =>
          m.role === "assistant" ? { ...m, content: m.content.map((b: any) => (b.type === "thinking" ? { ...b, signature: "" } : b)) } : m)
      }
    })
    const assistant = anthropicBody(chat).messages.find((m) => m.role === "assistant")!
    expect(assistant.content.map((b) => b.type)).toEqual(["tool_use"])
    expect(droppedParameters(chat, served("anthropic-messages", "anthropic"))).toEqual(["messages[].thinking"])
    expect(droppedParameters(decode(toolTurn).chat, served("anthropic-messages", "anthropic"))).toEqual([])
  })

  it("passes the top-level cache_control and a budget model's display through", () => {
    const { chat } = decode({
      path: "/v1/messages",
      headers: {},
      body: {
        max_tokens: 8000,
        cache_control: { type: "ephemeral", ttl: "1h" },
        thinking: { type: "enabled", budget_tokens: 2000, display: "summarized" },
        messages: [{ role: "user", content: "hi" }]
      }
    })
    const body = anthropicBody(chat, "budget")
    expect(body.cache_control).toEqual({ type: "ephemeral", ttl: "1h" })
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2000, display: "summarized" })
  })
})

describe("on another vendor, each field is translated or dropped and named", () => {
  const openaiBody = (chat: ChatRequest, vendor: string) =>
    buildOpenaiChatRequest(chat, { upstreamModel: "m", vendor, stream: true }).body

  it("names what only Anthropic takes", () => {
    const { chat } = decode(toolTurn)
    expect(droppedParameters(chat, served("openai-chat", "openai"))).toEqual([
      "anthropic-beta",
      "context_management",
      "messages[].output_config",
      "tools[].defer_loading",
      "messages[].thinking"
    ])
    // DeepSeek takes the replayed reasoning back as its own: nothing of the thinking block is lost there.
    expect(droppedParameters(chat, served("openai-chat", "deepseek"))).toEqual([
      "anthropic-beta",
      "context_management",
      "messages[].output_config",
      "tools[].defer_loading"
    ])
    expect(droppedParameters(chat, served("gemini", "google"))).toContain("messages[].thinking")
  })

  it("translates adaptive thinking's effort and keeps per-turn system messages in place", () => {
    const { chat } = decode(toolTurn)
    const body = openaiBody(chat, "openai")
    expect(body.reasoning_effort).toBe("medium")
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user", "system", "assistant", "tool"])
    expect(JSON.stringify(body)).not.toContain("defer_loading")
    expect(JSON.stringify(body)).not.toContain("context_management")
  })

  it("gives DeepSeek the replayed thinking as reasoning_content, and an empty one when the client had none to replay", () => {
    const { chat } = decode(toolTurn)
    const assistant = openaiBody(chat, "deepseek").messages.find((m) => m.role === "assistant")
    expect(assistant).toMatchObject({ reasoning_content: toolTurn.body.messages[2].content[0].thinking })
    const withoutThinking = decode({
      ...toolTurn,
      body: {
        ...toolTurn.body,
        messages: toolTurn.body.messages.map((m: any) => (m.role === "assistant" ? { ...m, content: m.content.filter((b: any) => b.type !== "thinking") } : m))
      }
    }).chat
    expect(openaiBody(withoutThinking, "deepseek").messages.find((m) => m.role === "assistant")).toMatchObject({ reasoning_content: "" })
  })

  it("serves adaptive thinking on a model that cannot reason without it, naming thinking dropped", () => {
    const { chat } = decode(firstTurn)
    expect(chat.reasoning?.adaptive).toBe(true)
    expect(droppedParameters(chat, served("openai-chat", "mistralai", false))[0]).toBe("thinking")
    expect(droppedParameters(chat, served("openai-chat", "mistralai", true))).not.toContain("thinking")
  })

  it("names output_config.effort without thinking, which tunes only Anthropic's answer", () => {
    const { chat } = decode({ path: "/v1/messages", headers: {}, body: { max_tokens: 100, output_config: { effort: "low" }, messages: [{ role: "user", content: "hi" }] } })
    expect(chat.reasoning).toBeUndefined()
    expect(droppedParameters(chat, served("openai-chat", "openai"))).toEqual(["output_config.effort"])
    expect(anthropicBody(chat).output_config).toEqual({ effort: "low" })
  })
})

describe("fields no vendor knows are still refused by name", () => {
  it.each([
    ["a top-level field", { foo: 1 }, "foo"],
    ["an extra field on a tool", { tools: [{ name: "f", input_schema: { type: "object" }, deferred: true }] }, "tools.0.deferred"],
    ["an unknown effort", { output_config: { effort: "extreme" } }, "output_config.effort"],
    ["an extra field on a thinking block", {
      messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s", extra: 1 }] }]
    }, "messages.1.content.0.extra"]
  ])("%s", (_name, fields, param) => {
    const result = decodeMessagesRequest({ max_tokens: 100, messages: [{ role: "user", content: "hi" }], ...fields })
    expect(Either.isLeft(result) && result.left.param).toBe(param)
  })
})
