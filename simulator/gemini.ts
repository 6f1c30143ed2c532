/**
 * Gemini (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent[?alt=sse]`, `:countTokens`).
 * Request fields are read in camelCase with the snake_case spelling as a fallback, as the REST API accepts both.
 */
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
  numberOr,
  pieces,
  PromptTokens,
  Role,
  sampleFromSchema,
  stringList,
  truncate,
  type Finished,
  type Generated,
  type ToolMode
} from "./text.ts"
import type { Memory } from "./cache.ts"

const ERRORS: Record<ErrorKind, { status: number; state: string; message: string }> = {
  auth: {
    status: 401,
    state: "UNAUTHENTICATED",
    message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."
  },
  invalid: { status: 400, state: "INVALID_ARGUMENT", message: "Invalid JSON payload received." },
  not_found: { status: 404, state: "NOT_FOUND", message: "Requested entity was not found." },
  server: {
    status: 500,
    state: "INTERNAL",
    message: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
  },
  rate: { status: 429, state: "RESOURCE_EXHAUSTED", message: "Resource has been exhausted (e.g. check quota)." }
}

export const geminiVendor: Vendor = {
  authorized: (headers, query) =>
    header(headers, "x-goog-api-key").length > 0 ||
    (query.length > 0 && (new URLSearchParams(query).get("key") ?? "").length > 0) ||
    bearer(headers).length > 0,
  error: (kind, message, retryAfterSeconds) => {
    const e = ERRORS[kind]
    return json(
      e.status,
      { error: { code: e.status, message: message ?? e.message, status: e.state } },
      kind === "rate" ? { "retry-after": String(retryAfterSeconds ?? 1) } : {}
    )
  }
}

const invalid = (message: string): JsonReply => geminiVendor.error("invalid", message)

const get = (o: Record<string, unknown>, camel: string, snake: string): unknown => o[camel] ?? o[snake]
const record = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {})
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

interface Built {
  readonly prompt: PromptTokens
  readonly declarations: Record<string, unknown>[]
  readonly lastUser: string
  readonly lastIsUserText: boolean
}

const pushParts = (p: PromptTokens, parts: unknown): { text: string; functionResponse: boolean } => {
  let text = ""
  let functionResponse = false
  for (const part of list(parts)) {
    if (!isRecord(part)) continue
    if (typeof part["text"] === "string") {
      p.text(part["text"])
      if (part["thought"] !== true) text += (text ? " " : "") + part["text"]
      continue
    }
    const call = get(part, "functionCall", "function_call")
    const response = get(part, "functionResponse", "function_response")
    if (isRecord(call)) {
      p.json(call["name"] ?? "")
      p.json(call["args"] ?? {})
    } else if (isRecord(response)) {
      functionResponse = true
      p.json(response["name"] ?? "")
      p.json(response["response"] ?? {})
    } else {
      p.flat(JSON.stringify(part).length)
    }
  }
  return { text, functionResponse }
}

const build = (body: Record<string, unknown>): Built => {
  const p = new PromptTokens()
  const declarations: Record<string, unknown>[] = []
  for (const tool of list(body["tools"])) {
    if (!isRecord(tool)) continue
    const decls = get(tool, "functionDeclarations", "function_declarations")
    if (Array.isArray(decls)) {
      for (const d of decls) {
        if (!isRecord(d)) continue
        declarations.push(d)
        p.frame(Role.toolDef)
        p.json(d)
      }
    } else {
      p.frame(Role.toolDef)
      p.json(tool)
    }
  }
  const system = get(body, "systemInstruction", "system_instruction")
  if (typeof system === "string") {
    p.frame(Role.system)
    p.text(system)
  } else if (isRecord(system)) {
    p.frame(Role.system)
    pushParts(p, system["parts"])
  }
  let lastUser = ""
  let lastIsUserText = false
  for (const content of list(body["contents"])) {
    if (!isRecord(content)) continue
    const role = content["role"] ?? "user"
    p.frame(role)
    const seen = pushParts(p, content["parts"])
    lastIsUserText = role === "user" && !seen.functionResponse
    if (role === "user") lastUser = seen.text
  }
  p.frame(Role.assistant)
  return { prompt: p, declarations, lastUser, lastIsUserText }
}

export type GeminiMethod = "generateContent" | "streamGenerateContent" | "countTokens"

export const prepareGemini = (body: unknown, model: string, method: GeminiMethod, sse: boolean, memory: Memory): Prepared | Reply => {
  if (!isRecord(body)) return invalid("Invalid JSON payload received. Expected an object.")
  if (method === "countTokens") {
    const nested = get(body, "generateContentRequest", "generate_content_request")
    const source = isRecord(nested) ? nested : body
    if (!Array.isArray(source["contents"])) return invalid("* CountTokensRequest.contents: contents is not specified")
    const total = build(source).prompt.count
    const run = () => json(200, { totalTokens: total, promptTokensDetails: [{ modality: "TEXT", tokenCount: total }] })
    return { model, stream: false, generation: false, run }
  }
  const contents = body["contents"]
  if (!Array.isArray(contents) || contents.length === 0) return invalid("* GenerateContentRequest.contents: contents is not specified")
  const streaming = method === "streamGenerateContent"
  return { model, stream: streaming, generation: true, run: () => run(body, model, streaming, sse, memory) }
}

const run = (body: Record<string, unknown>, model: string, streaming: boolean, sse: boolean, memory: Memory): Reply => {
  const built = build(body)
  const prompt = built.prompt.count
  const seed = (built.prompt.seed() ^ hashString(model)) >>> 0
  const cached = memory.implicit.lookupAndStore(model, built.prompt)
  const config = record(get(body, "generationConfig", "generation_config"))
  const maxOut = numberOr(get(config, "maxOutputTokens", "max_output_tokens"))
  const thinkingConfig = record(get(config, "thinkingConfig", "thinking_config"))
  const budget = numberOr(get(thinkingConfig, "thinkingBudget", "thinking_budget"))
  const includeThoughts = get(thinkingConfig, "includeThoughts", "include_thoughts") === true
  const level = get(thinkingConfig, "thinkingLevel", "thinking_level")
  const thinks = includeThoughts || (budget !== undefined && (budget > 0 || budget === -1)) || typeof level === "string"

  let thought: Generated | undefined
  if (thinks) {
    thought = generate(`Thinking about how to answer: ${firstWords(built.lastUser)}`, (seed ^ 0x165667b1) >>> 0, 40, 80)
    if (budget !== undefined && budget > 0) thought = truncate(thought, budget)
  }
  let thoughts = thought ? thought.ids.length : 0

  const callingConfig = record(get(record(get(body, "toolConfig", "tool_config")), "functionCallingConfig", "function_calling_config"))
  const modeName = callingConfig["mode"]
  const mode: ToolMode = modeName === "ANY" ? "any" : modeName === "NONE" ? "none" : "auto"
  const allowed = stringList(get(callingConfig, "allowedFunctionNames", "allowed_function_names"))
  const names = built.declarations
    .map((d) => d["name"])
    .filter((n): n is string => typeof n === "string" && (allowed.length === 0 || allowed.includes(n)))
  const toolName = chooseTool(names, mode, undefined, built.lastUser, built.lastIsUserText)

  let finishReason: "STOP" | "MAX_TOKENS" = "STOP"
  let text: Finished | undefined
  let call: { name: string; args: unknown } | undefined
  let candidates = 0
  if (maxOut !== undefined && thoughts >= maxOut) {
    thoughts = maxOut
    if (thought) thought = truncate(thought, maxOut)
    finishReason = "MAX_TOKENS"
  } else if (toolName !== undefined) {
    const decl = built.declarations.find((d) => d["name"] === toolName)
    const schema = decl ? (get(decl, "parametersJsonSchema", "parameters_json_schema") ?? decl["parameters"]) : undefined
    call = { name: toolName, args: sampleFromSchema(schema ?? { type: "object" }) }
    candidates = countTokens(toolName) + countTokens(JSON.stringify(call.args))
  } else {
    const reply = generate(`Simulated reply from ${model} to: ${firstWords(built.lastUser)}`, seed, 20, 41)
    const stops = stringList(get(config, "stopSequences", "stop_sequences"))
    text = finish(reply, maxOut === undefined ? undefined : maxOut - thoughts, stops)
    if (text.reason === "length") finishReason = "MAX_TOKENS"
    candidates = text.ids.length
  }

  const usage = (candidateTokens: number, thoughtTokens: number) => {
    const u: Record<string, unknown> = { promptTokenCount: prompt }
    if (candidateTokens > 0) u["candidatesTokenCount"] = candidateTokens
    u["totalTokenCount"] = prompt + candidateTokens + thoughtTokens
    if (cached > 0) u["cachedContentTokenCount"] = cached
    u["promptTokensDetails"] = [{ modality: "TEXT", tokenCount: prompt }]
    if (cached > 0) u["cacheTokensDetails"] = [{ modality: "TEXT", tokenCount: cached }]
    if (thoughtTokens > 0) u["thoughtsTokenCount"] = thoughtTokens
    return u
  }
  const responseId = hexId(22)
  const response = (parts: unknown[], usageMetadata: unknown, reason?: string) => {
    const candidate: Record<string, unknown> = { content: parts.length > 0 ? { parts, role: "model" } : { role: "model" } }
    if (reason) candidate["finishReason"] = reason
    candidate["index"] = 0
    return { candidates: [candidate], usageMetadata, modelVersion: model, responseId }
  }
  const showThoughts = includeThoughts && thought !== undefined && thought.text.length > 0

  if (!streaming) {
    const parts: unknown[] = []
    if (showThoughts) parts.push({ text: thought!.text, thought: true })
    if (text && text.text.length > 0) parts.push({ text: text.text })
    if (call) parts.push({ functionCall: call })
    return json(200, response(parts, usage(candidates, thoughts), finishReason))
  }

  const responses: unknown[] = []
  if (showThoughts) {
    for (const piece of pieces(thought!, 6)) responses.push(response([{ text: piece.text, thought: true }], usage(0, piece.total)))
  }
  if (call) {
    responses.push(response([{ functionCall: call }], usage(candidates, thoughts), finishReason))
  } else {
    const textPieces = text ? pieces(text, 6) : []
    textPieces.forEach((piece, i) => {
      const last = i === textPieces.length - 1
      responses.push(response([{ text: piece.text }], usage(piece.total, thoughts), last ? finishReason : undefined))
    })
    if (textPieces.length === 0) responses.push(response([], usage(0, thoughts), finishReason))
  }
  if (sse) return stream(responses.map((r) => `data: ${JSON.stringify(r)}\r\n\r\n`))
  const chunks = responses.map((r, i) => (i === 0 ? "[" : ",\r\n") + JSON.stringify(r))
  chunks.push("]")
  return stream(chunks, {}, "application/json; charset=UTF-8")
}
