/**
 * OpenAI chat completions (`POST /v1/chat/completions`), also spoken by xAI, DeepSeek, Mistral, Alibaba, Moonshot,
 * Zhipu, MiniMax and Cohere. The upstream model id picks the vendor whose usage shape the answer carries (USAGE_SHAPES:
 * xAI counts reasoning beside `completion_tokens`, DeepSeek adds `prompt_cache_hit_tokens` / `_miss_tokens`, Moonshot
 * puts `cached_tokens` at the top of usage and a stream's usage inside the finishing choice ...). Models with `reasoner`
 * in the id return `reasoning_content`; o-series, gpt-5+ and Grok reasoning models count hidden reasoning tokens.
 */
import {
  bearer,
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
  hiddenReasoning,
  nowSeconds,
  numberOr,
  pieces,
  PromptTokens,
  Role,
  sampleFromSchema,
  splitString,
  stringList,
  tokens,
  truncate,
  type Finished,
  type Generated,
  type ToolMode
} from "./text.ts"
import type { Memory } from "./cache.ts"

const ERRORS: Record<ErrorKind, { status: number; type: string; code: string | null; message: string }> = {
  auth: {
    status: 401,
    type: "invalid_request_error",
    code: "invalid_api_key",
    message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
  },
  invalid: { status: 400, type: "invalid_request_error", code: null, message: "Invalid request." },
  not_found: { status: 404, type: "invalid_request_error", code: "unknown_url", message: "Unknown request URL." },
  server: {
    status: 500,
    type: "server_error",
    code: null,
    message: "The server had an error while processing your request. Sorry about that!"
  },
  rate: {
    status: 429,
    type: "requests",
    code: "rate_limit_exceeded",
    message: "Rate limit reached for requests. Please try again later."
  }
}

export const openaiVendor: Vendor = {
  authorized: (headers) => bearer(headers).length > 0,
  error: (kind, message, retryAfterSeconds) => {
    const e = ERRORS[kind]
    return json(
      e.status,
      { error: { message: message ?? e.message, type: e.type, param: null, code: e.code } },
      kind === "rate" ? { "retry-after": String(retryAfterSeconds ?? 1) } : {}
    )
  }
}

const invalid = (message: string): JsonReply => openaiVendor.error("invalid", message)

const pushContent = (p: PromptTokens, content: unknown): void => {
  if (typeof content === "string") return p.text(content)
  if (!Array.isArray(content)) return
  for (const part of content) {
    if (!isRecord(part)) continue
    if (typeof part["text"] === "string") p.text(part["text"])
    else if (typeof part["refusal"] === "string") p.text(part["refusal"])
    else p.flat(JSON.stringify(part).length)
  }
}

const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  let out = ""
  for (const part of content) if (isRecord(part) && typeof part["text"] === "string") out += (out ? " " : "") + part["text"]
  return out
}

export const prepareOpenAI = (body: unknown, memory: Memory): Prepared | Reply => {
  if (!isRecord(body)) return invalid("We could not parse the JSON body of your request. The body must be a JSON object.")
  const model = body["model"]
  if (typeof model !== "string" || model.length === 0) return invalid("you must provide a model parameter")
  const messages = body["messages"]
  if (!Array.isArray(messages) || messages.length === 0) return invalid("Missing required parameter: 'messages'.")
  for (const name of ["max_tokens", "max_completion_tokens"]) {
    const v = body[name]
    if (v !== undefined && v !== null && (typeof v !== "number" || v < 1)) {
      return invalid(`Invalid '${name}': integer below minimum value. Expected a value >= 1.`)
    }
  }
  // DeepSeek in thinking mode needs each earlier tool-calling assistant turn back with its reasoning_content.
  const thinking = body["thinking"]
  const thinkingMode = /deepseek/i.test(model) && (/reasoner/i.test(model) || (isRecord(thinking) && thinking["type"] === "enabled"))
  if (thinkingMode) {
    const missing = messages.findIndex(
      (m) => isRecord(m) && m["role"] === "assistant" && Array.isArray(m["tool_calls"]) && m["tool_calls"].length > 0 && typeof m["reasoning_content"] !== "string"
    )
    if (missing >= 0) return invalid(`Missing \`reasoning_content\` field in the assistant message at message index ${missing}.`)
  }
  return { model, stream: body["stream"] === true, generation: true, run: () => run(body, model, messages, memory) }
}

const FINGERPRINT = "fp_sim0001"

/**
 * The vendor whose usage shape a model answers with. The simulator sees only the upstream model id (a card's sdkId),
 * so the id picks it; anything unmatched answers as OpenAI. Each vendor's shape and its source are in
 * docs/decisions.md "Usage per OpenAI-compatible vendor".
 */
type UsageShape = "openai" | "xai" | "deepseek" | "mistral" | "moonshot" | "zhipu" | "alibaba" | "minimax" | "cohere"

const USAGE_SHAPES: ReadonlyArray<readonly [RegExp, UsageShape]> = [
  [/^grok-/i, "xai"],
  [/deepseek/i, "deepseek"],
  [/^(?:mistral|magistral|codestral|devstral|ministral|pixtral|open-mistral)/i, "mistral"],
  [/^(?:kimi|moonshot)-/i, "moonshot"],
  [/^glm-/i, "zhipu"],
  [/^qwen/i, "alibaba"],
  [/^minimax/i, "minimax"],
  [/^command-/i, "cohere"]
]

const usageShapeOf = (model: string): UsageShape => USAGE_SHAPES.find(([pattern]) => pattern.test(model))?.[1] ?? "openai"

interface Counts {
  readonly prompt: number
  readonly cached: number
  readonly reasoning: number
  readonly visible: number
  /** The reply showed its reasoning (`reasoning_content`): DeepSeek then reports its count. */
  readonly shownReasoning: boolean
}

/** The usage object as the vendor writes it. */
const usageIn = (shape: UsageShape, c: Counts): Record<string, unknown> => {
  const completion = c.reasoning + c.visible
  const base = { prompt_tokens: c.prompt, completion_tokens: completion, total_tokens: c.prompt + completion }
  switch (shape) {
    case "openai":
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: c.cached, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: c.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
      }
    case "xai":
      // Reasoning is counted beside completion_tokens: prompt + completion + reasoning = total.
      return {
        prompt_tokens: c.prompt,
        completion_tokens: c.visible,
        total_tokens: c.prompt + c.visible + c.reasoning,
        prompt_tokens_details: { text_tokens: c.prompt, audio_tokens: 0, image_tokens: 0, cached_tokens: c.cached },
        completion_tokens_details: { reasoning_tokens: c.reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
        num_sources_used: 0
      }
    case "deepseek":
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: c.cached },
        prompt_cache_hit_tokens: c.cached,
        prompt_cache_miss_tokens: c.prompt - c.cached,
        ...(c.shownReasoning || c.reasoning > 0 ? { completion_tokens_details: { reasoning_tokens: c.reasoning } } : {})
      }
    case "moonshot":
      return { ...base, cached_tokens: c.cached }
    case "mistral":
    case "zhipu":
      // Reasoning inside completion_tokens, with no count of its own.
      return { ...base, prompt_tokens_details: { cached_tokens: c.cached } }
    case "alibaba":
    case "minimax":
      return {
        ...base,
        prompt_tokens_details: { cached_tokens: c.cached },
        ...(c.reasoning > 0 ? { completion_tokens_details: { reasoning_tokens: c.reasoning } } : {})
      }
    case "cohere":
      return base
  }
}

const run = (body: Record<string, unknown>, model: string, messages: readonly unknown[], memory: Memory): Reply => {
  const p = new PromptTokens()
  const tools = Array.isArray(body["tools"]) ? body["tools"].filter(isRecord) : []
  for (const tool of tools) {
    p.frame(Role.toolDef)
    p.json(tool)
  }
  let lastUser = ""
  let lastRole: unknown = undefined
  for (const m of messages) {
    if (!isRecord(m)) continue
    p.frame(m["role"])
    pushContent(p, m["content"])
    const calls = m["tool_calls"]
    if (Array.isArray(calls)) {
      for (const call of calls) {
        const fn = isRecord(call) && isRecord(call["function"]) ? call["function"] : {}
        p.json(fn["name"] ?? "")
        p.json(fn["arguments"] ?? "")
      }
    }
    // A system turn between messages (per-turn instructions) leaves the last user turn where it was.
    if (m["role"] === "system") continue
    lastRole = m["role"]
    if (lastRole === "user") lastUser = textOf(m["content"])
  }
  p.frame(Role.assistant)
  const promptTokens = p.count
  const seed = (p.seed() ^ hashString(model)) >>> 0
  const cached = memory.implicit.lookupAndStore(model, p)

  // tools
  const fnOf = (t: Record<string, unknown>) => (isRecord(t["function"]) ? t["function"] : {})
  const names = tools.map((t) => fnOf(t)["name"]).filter((n): n is string => typeof n === "string")
  const choice = body["tool_choice"]
  const mode: ToolMode = choice === "none" ? "none" : choice === "required" ? "any" : isRecord(choice) ? "any" : "auto"
  const forcedFn = isRecord(choice) && isRecord(choice["function"]) ? choice["function"]["name"] : undefined
  const toolName = chooseTool(names, mode, typeof forcedFn === "string" ? forcedFn : undefined, lastUser, lastRole === "user")

  // reasoning
  const deepseek = /deepseek/i.test(model)
  const thinking = body["thinking"]
  const reasoner = /reasoner/i.test(model) || (deepseek && isRecord(thinking) && thinking["type"] === "enabled")
  const reasoning = body["reasoning"]
  const effort =
    typeof body["reasoning_effort"] === "string" ? body["reasoning_effort"]
    : isRecord(reasoning) && typeof reasoning["effort"] === "string" ? reasoning["effort"]
    : undefined
  // OpenAI's o-series and gpt-5+, and xAI's reasoning Groks (grok-4 and later, grok-3-mini), reason unasked.
  const hiddenModel = /^(o\d|gpt-(?:[5-9]|\d\d))/i.test(model) || /^grok-(?:[4-9]|3-mini)(?!.*non-reasoning)/i.test(model)
  let reasoningText: Generated | undefined = reasoner
    ? generate(`Reasoning about the request: ${firstWords(lastUser)}`, (seed ^ 0x5bd1e995) >>> 0, 30, 40)
    : undefined
  let reasoningTokens = reasoningText ? reasoningText.ids.length : hiddenModel || effort !== undefined ? hiddenReasoning(effort ?? "medium", seed) : 0

  // the reply
  const limit = numberOr(body["max_completion_tokens"]) ?? numberOr(body["max_tokens"])
  let content: Finished | undefined
  let call: { id: string; name: string; args: string } | undefined
  let finishReason: "stop" | "length" | "tool_calls"
  let visible: number
  if (limit !== undefined && reasoningTokens >= limit) {
    reasoningTokens = limit
    if (reasoningText) reasoningText = truncate(reasoningText, limit)
    content = { text: "", ids: [], reason: "length", stop: null }
    finishReason = "length"
    visible = 0
  } else if (toolName !== undefined) {
    const tool = tools.find((t) => fnOf(t)["name"] === toolName)
    const args = JSON.stringify(sampleFromSchema(tool ? (fnOf(tool)["parameters"] ?? { type: "object" }) : { type: "object" }))
    call = { id: `call_${hexId(24)}`, name: toolName, args }
    finishReason = "tool_calls"
    visible = countTokens(toolName) + countTokens(args)
  } else {
    let reply = generate(`Simulated reply from ${model} to: ${firstWords(lastUser)}`, seed, 20, 41)
    const format = body["response_format"]
    if (isRecord(format) && format["type"] === "json_schema" && isRecord(format["json_schema"])) {
      const text = JSON.stringify(sampleFromSchema(format["json_schema"]["schema"] ?? { type: "object" }))
      reply = { text, ids: tokens(text) }
    } else if (isRecord(format) && format["type"] === "json_object") {
      const text = JSON.stringify({ reply: reply.text })
      reply = { text, ids: tokens(text) }
    }
    content = finish(reply, limit === undefined ? undefined : limit - reasoningTokens, stringList(body["stop"]))
    finishReason = content.reason === "length" ? "length" : "stop"
    visible = content.ids.length
  }
  const shape = usageShapeOf(model)
  const usage = usageIn(shape, { prompt: promptTokens, cached, reasoning: reasoningTokens, visible, shownReasoning: reasoningText !== undefined })

  const id = `chatcmpl-${hexId(29)}`
  const created = nowSeconds()
  const headers = { "x-request-id": `req_${hexId(32)}` }
  const toolCalls = call ? [{ id: call.id, type: "function", function: { name: call.name, arguments: call.args } }] : undefined

  if (body["stream"] !== true) {
    const message: Record<string, unknown> = { role: "assistant", content: call ? null : (content?.text ?? "") }
    if (reasoningText) message["reasoning_content"] = reasoningText.text
    if (toolCalls) message["tool_calls"] = toolCalls
    message["refusal"] = null
    message["annotations"] = []
    return json(
      200,
      {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        usage,
        service_tier: "default",
        system_fingerprint: FINGERPRINT
      },
      headers
    )
  }

  const options = body["stream_options"]
  // Moonshot writes a stream's usage inside the finishing choice, asked or not; the others in a last chunk of its
  // own when stream_options.include_usage asks for it.
  const usageInChoice = shape === "moonshot"
  const includeUsage = !usageInChoice && isRecord(options) && options["include_usage"] === true
  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"service_tier":"default","system_fingerprint":"${FINGERPRINT}","choices":[`
  const tail = includeUsage ? `],"usage":null}\n\n` : `]}\n\n`
  const chunk = (delta: unknown, reason: string | null = null) =>
    `${head}{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${reason === null ? "null" : `"${reason}"`}${
      reason !== null && usageInChoice ? `,"usage":${JSON.stringify(usage)}` : ""
    }}${tail}`
  const chunks: string[] = []
  if (call) {
    chunks.push(
      chunk({
        role: "assistant",
        content: null,
        tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
        refusal: null
      })
    )
    for (const part of splitString(call.args)) chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }))
  } else if (reasoningText) {
    chunks.push(chunk({ role: "assistant", content: null, reasoning_content: "" }))
    for (const piece of pieces(reasoningText)) chunks.push(chunk({ content: null, reasoning_content: piece.text }))
    for (const piece of pieces(content!)) chunks.push(chunk({ content: piece.text, reasoning_content: null }))
  } else {
    chunks.push(chunk({ role: "assistant", content: "", refusal: null }))
    for (const piece of pieces(content!)) chunks.push(chunk({ content: piece.text }))
  }
  chunks.push(chunk({}, finishReason))
  if (includeUsage) {
    chunks.push(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, service_tier: "default", system_fingerprint: FINGERPRINT, choices: [], usage })}\n\n`
    )
  }
  chunks.push("data: [DONE]\n\n")
  return stream(chunks, headers)
}
