/** Anthropic messages (`POST /v1/messages`, `POST /v1/messages/count_tokens`). */
import {
  bearer,
  header,
  isRecord,
  json,
  stream,
  type ErrorKind,
  type JsonReply,
  type Prepared,
  type Reply,
  type Vendor
} from "./http.ts"
import {
  chooseTool,
  countTokens,
  finish,
  firstWords,
  generate,
  hashString,
  hexId,
  pieces,
  PromptTokens,
  Role,
  sampleFromSchema,
  issueSignature,
  verifyThinking,
  splitString,
  stringList,
  truncate,
  type Generated,
  type ToolMode
} from "./text.ts"
import type { Breakpoint, Memory } from "./cache.ts"

const ERRORS: Record<ErrorKind, { status: number; type: string; message: string }> = {
  auth: { status: 401, type: "authentication_error", message: "invalid x-api-key" },
  invalid: { status: 400, type: "invalid_request_error", message: "Invalid request." },
  not_found: { status: 404, type: "not_found_error", message: "Not found" },
  server: { status: 500, type: "api_error", message: "Internal server error" },
  rate: {
    status: 429,
    type: "rate_limit_error",
    message: "This request would exceed the rate limit for your organization. Please try again later."
  }
}

export const anthropicVendor: Vendor = {
  authorized: (headers) => header(headers, "x-api-key").length > 0 || bearer(headers).length > 0,
  error: (kind, message, retryAfterSeconds) => {
    const e = ERRORS[kind]
    const requestId = `req_011C${hexId(20)}`
    return json(
      e.status,
      { type: "error", error: { type: e.type, message: message ?? e.message }, request_id: requestId },
      kind === "rate" ? { "request-id": requestId, "retry-after": String(retryAfterSeconds ?? 1) } : { "request-id": requestId }
    )
  }
}

const invalid = (message: string): JsonReply => anthropicVendor.error("invalid", message)

const withoutCacheControl = (_key: string, value: unknown) => (_key === "cache_control" ? undefined : value)

const pushBlock = (p: PromptTokens, block: Record<string, unknown>): void => {
  switch (block["type"]) {
    case "text":
      return p.text(typeof block["text"] === "string" ? block["text"] : "")
    case "thinking":
      return p.text(typeof block["thinking"] === "string" ? block["thinking"] : "")
    case "tool_use":
    case "server_tool_use":
      p.json(block["name"] ?? "")
      return p.json(block["input"] ?? {})
    case "tool_result": {
      const content = block["content"]
      if (typeof content === "string") return p.text(content)
      if (Array.isArray(content)) {
        for (const part of content) {
          if (isRecord(part) && typeof part["text"] === "string") p.text(part["text"])
          else p.flat(0)
        }
      }
      return
    }
    case "document": {
      const source = block["source"]
      if (isRecord(source) && source["type"] === "text" && typeof source["data"] === "string") return p.text(source["data"])
      return p.flat(JSON.stringify(block).length)
    }
    default:
      return p.flat(JSON.stringify(block).length)
  }
}

interface Built {
  readonly prompt: PromptTokens
  readonly breakpoints: Breakpoint[]
  readonly lastUser: string
  readonly lastIsUserText: boolean
}

/** The prompt in Anthropic's cache order (tools, system, messages), with the marked breakpoints. */
const build = (body: Record<string, unknown>, messages: readonly unknown[]): Built => {
  const p = new PromptTokens()
  const breakpoints: Breakpoint[] = []
  const markBlock = (block: Record<string, unknown>) => {
    const mark = p.mark()
    const cc = block["cache_control"]
    if (isRecord(cc) && cc["type"] === "ephemeral") breakpoints.push({ mark, ttl: cc["ttl"] === "1h" ? "1h" : "5m" })
  }
  const tools = body["tools"]
  if (Array.isArray(tools)) {
    for (const tool of tools) {
      if (!isRecord(tool)) continue
      p.frame(Role.toolDef)
      p.text(JSON.stringify(tool, withoutCacheControl))
      markBlock(tool)
    }
  }
  const system = body["system"]
  if (typeof system === "string" && system.length > 0) {
    p.frame(Role.system)
    p.text(system)
    p.mark()
  } else if (Array.isArray(system) && system.length > 0) {
    p.frame(Role.system)
    for (const block of system) {
      if (!isRecord(block)) continue
      pushBlock(p, block)
      markBlock(block)
    }
  }
  let lastUser = ""
  let lastIsUserText = false
  for (const m of messages) {
    if (!isRecord(m)) continue
    p.frame(m["role"])
    const content = m["content"]
    let text = ""
    let toolResult = false
    if (typeof content === "string") {
      p.text(content)
      p.mark()
      text = content
    } else if (Array.isArray(content)) {
      for (const block of content) {
        if (!isRecord(block)) continue
        pushBlock(p, block)
        markBlock(block)
        if (block["type"] === "text" && typeof block["text"] === "string") text += (text ? " " : "") + block["text"]
        if (block["type"] === "tool_result") toolResult = true
      }
    }
    // A system turn between messages (Claude Code's per-turn reminders) leaves the last user turn where it was.
    if (m["role"] === "system") continue
    lastIsUserText = m["role"] === "user" && !toolResult
    if (m["role"] === "user") lastUser = text
  }
  p.frame(Role.assistant)
  return { prompt: p, breakpoints, lastUser, lastIsUserText }
}

const validate = (body: unknown, needsMaxTokens: boolean): { model: string; messages: unknown[] } | JsonReply => {
  if (!isRecord(body)) return invalid("Request body must be a JSON object")
  const model = body["model"]
  if (typeof model !== "string" || model.length === 0) return invalid("model: Field required")
  const messages = body["messages"]
  if (!Array.isArray(messages)) return invalid("messages: Field required")
  const maxTokens = body["max_tokens"]
  if (needsMaxTokens) {
    if (maxTokens === undefined || maxTokens === null) return invalid("max_tokens: Field required")
    if (typeof maxTokens !== "number" || maxTokens < 1) return invalid("max_tokens: Input should be greater than or equal to 1")
    const thinking = body["thinking"]
    if (isRecord(thinking) && thinking["type"] === "enabled") {
      const budget = thinking["budget_tokens"]
      if (typeof budget !== "number") return invalid("thinking.enabled.budget_tokens: Field required")
      if (budget >= maxTokens) {
        return invalid(
          "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
        )
      }
    }
  }
  const replay = checkReplayedThinking(body, messages)
  if (replay !== undefined) return invalid(replay)
  return { model, messages }
}

/**
 * Anthropic's rules for reasoning replayed across turns: a thinking block must carry a signature Anthropic issued for
 * that text, and with thinking on, the final assistant turn that calls tools must start with its thinking block.
 */
const checkReplayedThinking = (body: Record<string, unknown>, messages: readonly unknown[]): string | undefined => {
  let lastAssistant = -1
  for (const [i, m] of messages.entries()) {
    if (!isRecord(m) || !Array.isArray(m["content"])) {
      if (isRecord(m) && m["role"] === "assistant") lastAssistant = i
      continue
    }
    if (m["role"] === "assistant") lastAssistant = i
    for (const [j, block] of m["content"].entries()) {
      if (!isRecord(block) || block["type"] !== "thinking") continue
      const thinking = typeof block["thinking"] === "string" ? block["thinking"] : ""
      const signature = typeof block["signature"] === "string" ? block["signature"] : ""
      if (!verifyThinking(thinking, signature)) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`
    }
  }
  const thinking = body["thinking"]
  const thinks = isRecord(thinking) && (thinking["type"] === "enabled" || thinking["type"] === "adaptive")
  const last = lastAssistant >= 0 ? messages[lastAssistant] : undefined
  if (!thinks || !isRecord(last) || !Array.isArray(last["content"])) return undefined
  const content = last["content"].filter(isRecord)
  if (!content.some((block) => block["type"] === "tool_use")) return undefined
  const first = content[0]?.["type"]
  if (first === "thinking" || first === "redacted_thinking") return undefined
  return `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`
}

export const prepareCountTokens = (body: unknown): Prepared | Reply => {
  const ok = validate(body, false)
  if ("kind" in ok) return ok
  const run = () => json(200, { input_tokens: build(body as Record<string, unknown>, ok.messages).prompt.count })
  return { model: ok.model, stream: false, generation: false, run }
}

export const prepareMessages = (body: unknown, memory: Memory): Prepared | Reply => {
  const ok = validate(body, true)
  if ("kind" in ok) return ok
  const b = body as Record<string, unknown>
  return { model: ok.model, stream: b["stream"] === true, generation: true, run: () => run(b, ok.model, ok.messages, memory) }
}

type Block =
  | { readonly type: "thinking"; readonly gen: Generated; readonly signature: string; readonly omitted: boolean }
  | { readonly type: "text"; readonly gen: Generated }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown; readonly json: string }

const run = (body: Record<string, unknown>, model: string, messages: readonly unknown[], memory: Memory): Reply => {
  const built = build(body, messages)
  const total = built.prompt.count
  const seed = (built.prompt.seed() ^ hashString(model)) >>> 0
  const cache = memory.explicit.resolve(model, built.prompt, built.breakpoints)
  const inputTokens = total - Math.max(cache.read, cache.covered)
  const maxTokens = Math.floor(body["max_tokens"] as number)

  const blocks: Block[] = []
  let outputTokens = 0
  const thinking = body["thinking"]
  const thinks = isRecord(thinking) && (thinking["type"] === "enabled" || thinking["type"] === "adaptive")
  if (thinks) {
    let gen = generate(`Let me think about how to answer: ${firstWords(built.lastUser)}`, (seed ^ 0x27d4eb2f) >>> 0, 40, 80)
    const budget = thinking["budget_tokens"]
    if (typeof budget === "number") gen = truncate(gen, budget)
    if (gen.ids.length > maxTokens) gen = truncate(gen, maxTokens)
    // `display: "omitted"`: the thinking is done and billed, its text withheld; the signature still covers it.
    const omitted = thinking["display"] === "omitted"
    blocks.push({ type: "thinking", gen, signature: issueSignature(gen.text, omitted), omitted })
    outputTokens += gen.ids.length
  }

  const tools = Array.isArray(body["tools"]) ? body["tools"].filter(isRecord) : []
  const names = tools.map((t) => t["name"]).filter((n): n is string => typeof n === "string")
  const choice = body["tool_choice"]
  const choiceType = isRecord(choice) ? choice["type"] : undefined
  const mode: ToolMode = choiceType === "none" ? "none" : choiceType === "any" || choiceType === "tool" ? "any" : "auto"
  const forced = choiceType === "tool" && isRecord(choice) && typeof choice["name"] === "string" ? choice["name"] : undefined
  const toolName = chooseTool(names, mode, forced, built.lastUser, built.lastIsUserText)

  let stopReason: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use"
  let stopSequence: string | null = null
  if (outputTokens >= maxTokens) {
    stopReason = "max_tokens"
  } else if (toolName !== undefined) {
    const tool = tools.find((t) => t["name"] === toolName)
    const input = sampleFromSchema(tool?.["input_schema"] ?? { type: "object" })
    const inputJson = JSON.stringify(input)
    blocks.push({ type: "tool_use", id: `toolu_01${hexId(22)}`, name: toolName, input, json: inputJson })
    outputTokens += countTokens(toolName) + countTokens(inputJson)
    stopReason = "tool_use"
  } else {
    const reply = generate(`Simulated reply from ${model} to: ${firstWords(built.lastUser)}`, seed, 20, 41)
    const fin = finish(reply, maxTokens - outputTokens, stringList(body["stop_sequences"]))
    blocks.push({ type: "text", gen: fin })
    outputTokens += fin.ids.length
    stopReason = fin.reason === "length" ? "max_tokens" : fin.reason === "stop" ? "stop_sequence" : "end_turn"
    stopSequence = fin.stop
  }

  const usage = {
    input_tokens: inputTokens,
    cache_creation_input_tokens: cache.write5m + cache.write1h,
    cache_read_input_tokens: cache.read,
    cache_creation: { ephemeral_5m_input_tokens: cache.write5m, ephemeral_1h_input_tokens: cache.write1h },
    output_tokens: outputTokens,
    service_tier: "standard"
  }
  const id = `msg_01${hexId(22)}`
  const headers = { "request-id": `req_011C${hexId(20)}` }

  if (body["stream"] !== true) {
    const content = blocks.map((b) =>
      b.type === "thinking" ? { type: "thinking", thinking: b.omitted ? "" : b.gen.text, signature: b.signature }
      : b.type === "text" ? { type: "text", text: b.gen.text }
      : { type: "tool_use", id: b.id, name: b.name, input: b.input }
    )
    return json(
      200,
      { id, type: "message", role: "assistant", model, content, stop_reason: stopReason, stop_sequence: stopSequence, usage },
      headers
    )
  }

  const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
  const chunks: string[] = [
    event("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 }
      }
    })
  ]
  blocks.forEach((b, index) => {
    const delta = (d: unknown) => chunks.push(event("content_block_delta", { type: "content_block_delta", index, delta: d }))
    const start =
      b.type === "thinking" ? { type: "thinking", thinking: "", signature: "" }
      : b.type === "text" ? { type: "text", text: "" }
      : { type: "tool_use", id: b.id, name: b.name, input: {} }
    chunks.push(event("content_block_start", { type: "content_block_start", index, content_block: start }))
    if (index === 0) chunks.push(`event: ping\ndata: {"type": "ping"}\n\n`)
    if (b.type === "thinking") {
      if (!b.omitted) for (const piece of pieces(b.gen)) delta({ type: "thinking_delta", thinking: piece.text })
      delta({ type: "signature_delta", signature: b.signature })
    } else if (b.type === "text") {
      for (const piece of pieces(b.gen)) delta({ type: "text_delta", text: piece.text })
    } else {
      delta({ type: "input_json_delta", partial_json: "" })
      for (const part of splitString(b.json)) delta({ type: "input_json_delta", partial_json: part })
    }
    chunks.push(event("content_block_stop", { type: "content_block_stop", index }))
  })
  chunks.push(
    event("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: stopSequence },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: outputTokens
      }
    }),
    event("message_stop", { type: "message_stop" })
  )
  return stream(chunks, headers)
}
