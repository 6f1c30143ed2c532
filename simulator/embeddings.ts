/**
 * Embeddings in each vendor's format: OpenAI's `POST /v1/embeddings` (also served for the OpenAI-compatible vendors,
 * Mistral's `mistral-embed` among them) and Gemini's `:embedContent` / `:batchEmbedContents`.
 *
 * Vectors are deterministic: o200k tokens of the input are feature-hashed (each token adds +-1 on a few dimensions
 * picked by hashing the token with the model id), and a little noise seeded by a SHA-256 of model + tokens is mixed
 * in, so the same input gets the same vector, different inputs different ones, and texts sharing words point closer
 * together than unrelated ones (local RAG trials rank sensibly). The full-size vector is unit length; a shorter one
 * is its prefix: renormalised for OpenAI's `dimensions` (as text-embedding-3 does), left as is for Gemini's
 * `outputDimensionality` (Gemini documents that only its 3072-dimension output is normalised).
 */
import { createHash } from "node:crypto"
import { isRecord, json, type JsonReply, type Prepared, type Reply } from "./http.ts"
import { geminiVendor } from "./gemini.ts"
import { tokens } from "./text.ts"

// ---------------------------------------------------------------------------------------------------------------
// Vectors

/** Full size of a model's vectors. */
export const defaultDimensions = (model: string): number => {
  const id = model.toLowerCase()
  if (id.startsWith("text-embedding-3-large")) return 3072
  if (id.startsWith("text-embedding-3-small") || id.startsWith("text-embedding-ada-002")) return 1536
  if (id.startsWith("gemini-embedding")) return 3072
  if (id === "text-embedding-004" || id === "text-embedding-005" || id === "embedding-001" || id.startsWith("text-multilingual-embedding")) return 768
  if (id.startsWith("mistral-embed")) return 1024
  return 1024
}

/** OpenAI honours `dimensions` on text-embedding-3 and later only. */
const acceptsDimensions = (model: string): boolean => /^text-embedding-(?:[3-9]|\d\d)/i.test(model)

const FEATURES_PER_TOKEN = 4
const NOISE_WEIGHT = 0.25

/** A 32-bit integer mix (murmur3's finaliser). */
const mix = (x: number): number => {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b)
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35)
  return (x ^ (x >>> 16)) >>> 0
}

/** sfc32, seeded with four 32-bit words: uniform in [0, 1). */
const sfc32 = (a: number, b: number, c: number, d: number) => () => {
  a >>>= 0
  b >>>= 0
  c >>>= 0
  d >>>= 0
  const t = (((a + b) | 0) + d) | 0
  d = (d + 1) | 0
  a = b ^ (b >>> 9)
  b = (c + (c << 3)) | 0
  c = (c << 21) | (c >>> 11)
  c = (c + t) | 0
  return (t >>> 0) / 4294967296
}

/**
 * The unit-length vector of a token sequence for a model (`salt` separates Gemini task types), `size` long.
 */
export const embedTokens = (model: string, ids: readonly number[], size: number, salt = ""): Float64Array => {
  const digest = createHash("sha256").update(`${model}\u0000${salt}\u0000${ids.join(",")}`).digest()
  const next = sfc32(digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12))
  for (let i = 0; i < 12; i++) next()
  const noise = new Float64Array(size)
  let noiseNorm = 0
  for (let i = 0; i < size; i++) {
    const v = next() * 2 - 1
    noise[i] = v
    noiseNorm += v * v
  }
  const features = new Float64Array(size)
  const modelSeed = createHash("sha256").update(`${model}\u0000${salt}`).digest().readUInt32LE(0)
  for (const id of ids) {
    for (let j = 0; j < FEATURES_PER_TOKEN; j++) {
      const h = mix((Math.imul(id, FEATURES_PER_TOKEN) + j) ^ modelSeed)
      const at = h % size
      features[at] = features[at]! + (h & 0x80000000 ? -1 : 1)
    }
  }
  let featureNorm = 0
  for (let i = 0; i < size; i++) featureNorm += features[i]! * features[i]!
  const out = new Float64Array(size)
  const f = featureNorm > 0 ? (1 - NOISE_WEIGHT) / Math.sqrt(featureNorm) : 0
  const n = (featureNorm > 0 ? NOISE_WEIGHT : 1) / Math.sqrt(noiseNorm || 1)
  let norm = 0
  for (let i = 0; i < size; i++) {
    const v = features[i]! * f + noise[i]! * n
    out[i] = v
    norm += v * v
  }
  const scale = 1 / Math.sqrt(norm || 1)
  for (let i = 0; i < size; i++) out[i] = out[i]! * scale
  return out
}

/** The first `length` values, renormalised or not, rounded to float32 (what the vendors send). */
export const shorten = (vector: Float64Array, length: number, renormalise: boolean): number[] => {
  const n = Math.min(length, vector.length)
  let scale = 1
  if (renormalise && n < vector.length) {
    let norm = 0
    for (let i = 0; i < n; i++) norm += vector[i]! * vector[i]!
    scale = 1 / Math.sqrt(norm || 1)
  }
  const out = new Array<number>(n)
  for (let i = 0; i < n; i++) out[i] = Math.fround(vector[i]! * scale)
  return out
}

/** Little-endian float32 base64, as OpenAI's `encoding_format: "base64"`. */
export const toBase64 = (values: readonly number[]): string => {
  const buf = Buffer.alloc(values.length * 4)
  for (let i = 0; i < values.length; i++) buf.writeFloatLE(values[i]!, i * 4)
  return buf.toString("base64")
}

// ---------------------------------------------------------------------------------------------------------------
// OpenAI (`POST /v1/embeddings`)

export const OPENAI_MAX_INPUTS = 2048
export const OPENAI_MAX_INPUT_TOKENS = 8192
export const OPENAI_MAX_REQUEST_TOKENS = 300_000

const openaiError = (message: string, param: string | null = null, code: string | null = null, type = "invalid_request_error"): JsonReply =>
  json(400, { error: { message, type, param, code } })

/** What OpenAI answers to an input that fails its schema (empty string, empty array, over 2048 items, wrong type). */
const INPUT_INVALID = "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."

const isTokenArray = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((t) => typeof t === "number" && Number.isInteger(t) && t >= 0)

/** The inputs as token sequences, or undefined when `input` does not fit OpenAI's schema. */
const openaiInputs = (input: unknown): (readonly number[])[] | undefined => {
  if (typeof input === "string") return input.length > 0 ? [tokens(input)] : undefined
  if (!Array.isArray(input) || input.length === 0) return undefined
  // one token array is one input, however long (the 8192-token limit applies to it)
  if (isTokenArray(input)) return [input]
  if (input.length > OPENAI_MAX_INPUTS) return undefined
  if (input.every((item) => typeof item === "string")) {
    return input.every((s) => s.length > 0) ? input.map((s) => tokens(s)) : undefined
  }
  if (input.every(isTokenArray)) return input
  return undefined
}

export const prepareOpenAIEmbeddings = (body: unknown): Prepared | Reply => {
  if (!isRecord(body)) return openaiError("We could not parse the JSON body of your request. The body must be a JSON object.")
  const model = body["model"]
  if (typeof model !== "string" || model.length === 0) return openaiError("you must provide a model parameter")
  if (body["input"] === undefined || body["input"] === null) {
    return openaiError("Missing required parameter: 'input'.", "input", "missing_required_parameter")
  }
  const inputs = openaiInputs(body["input"])
  if (!inputs) return openaiError(INPUT_INVALID)
  const format = body["encoding_format"] ?? "float"
  if (format !== "float" && format !== "base64") {
    return openaiError(`Invalid value: '${String(format)}'. Supported values are: 'float' and 'base64'.`, "encoding_format", "invalid_value")
  }
  const full = defaultDimensions(model)
  let size = full
  const dimensions = body["dimensions"]
  if (dimensions !== undefined && dimensions !== null) {
    if (!acceptsDimensions(model)) return openaiError("This model does not support specifying dimensions.")
    if (typeof dimensions !== "number" || !Number.isInteger(dimensions)) {
      return openaiError(`Invalid type for 'dimensions': expected an integer, but got ${typeof dimensions} instead.`, "dimensions", "invalid_type")
    }
    if (dimensions < 1) {
      return openaiError(`Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got ${dimensions} instead.`, "dimensions", "integer_below_min_value")
    }
    if (dimensions > full) {
      return openaiError(`Invalid 'dimensions': integer above maximum value. Expected a value <= ${full}, but got ${dimensions} instead.`, "dimensions", "integer_above_max_value")
    }
    size = dimensions
  }
  let total = 0
  for (let i = 0; i < inputs.length; i++) {
    const n = inputs[i]!.length
    if (n > OPENAI_MAX_INPUT_TOKENS) {
      return openaiError(`Invalid 'input[${i}]': maximum input length is ${OPENAI_MAX_INPUT_TOKENS} tokens.`, `input[${i}]`, "invalid_value")
    }
    total += n
  }
  if (total > OPENAI_MAX_REQUEST_TOKENS) {
    return openaiError(`Requested ${total} tokens, max ${OPENAI_MAX_REQUEST_TOKENS} tokens per request`, null, "max_tokens_per_request", "max_tokens_per_request")
  }
  const run = (): Reply => {
    const data = inputs.map((ids, index) => {
      const values = shorten(embedTokens(model, ids, full), size, true)
      return { object: "embedding", index, embedding: format === "base64" ? toBase64(values) : values }
    })
    return json(200, { object: "list", data, model, usage: { prompt_tokens: total, total_tokens: total } })
  }
  return { model, stream: false, generation: true, run }
}

// ---------------------------------------------------------------------------------------------------------------
// Gemini (`/v1beta/models/{model}:embedContent`, `:batchEmbedContents`)

export type GeminiEmbedMethod = "embedContent" | "batchEmbedContents"

export const GEMINI_MAX_BATCH = 100
/** gemini-embedding-001's input limit; longer inputs are cut to it silently (the API's autoTruncate default). */
export const GEMINI_MAX_INPUT_TOKENS = 2048

const geminiInvalid = (message: string): JsonReply => geminiVendor.error("invalid", message)

interface GeminiItem {
  readonly ids: readonly number[]
  readonly size: number
  readonly salt: string
}

/** One EmbedContentRequest, or the error it earns (`where` names it in Gemini's field-path style). */
const geminiItem = (request: unknown, model: string, where: string): GeminiItem | JsonReply => {
  if (!isRecord(request)) return geminiInvalid(`Invalid JSON payload received. ${where} must be an object.`)
  const named = request["model"]
  if (named !== undefined && named !== null) {
    if (typeof named !== "string" || !named.startsWith("models/")) return geminiInvalid(`* ${where}.model: unexpected model name format\n`)
    if (named.slice("models/".length) !== model) {
      return geminiInvalid(`* ${where}.model: the model in the request (${named}) differs from the model in the URL (models/${model})\n`)
    }
  }
  const content = request["content"]
  if (!isRecord(content)) return geminiInvalid(`* ${where}.content: content is not specified\n`)
  const rawParts = content["parts"]
  const parts = Array.isArray(rawParts) ? rawParts : isRecord(rawParts) ? [rawParts] : []
  if (parts.length === 0) return geminiInvalid(`* ${where}.content.parts: contents.parts must not be empty.\n`)
  const texts: string[] = []
  for (const part of parts) {
    if (!isRecord(part)) return geminiInvalid(`Invalid JSON payload received. ${where}.content.parts must hold objects.`)
    texts.push(typeof part["text"] === "string" ? part["text"] : JSON.stringify(part))
  }
  const text = texts.join("\n")
  if (text.trim().length === 0) return geminiInvalid("Request contains an invalid argument.")
  const full = defaultDimensions(model)
  let size = full
  const dims = request["outputDimensionality"] ?? request["output_dimensionality"]
  if (dims !== undefined && dims !== null) {
    if (typeof dims !== "number" || !Number.isInteger(dims) || dims < 1 || dims > full) {
      return geminiInvalid(`* ${where}.output_dimensionality: outputDimensionality must be between 1 and ${full}.\n`)
    }
    size = dims
  }
  const task = request["taskType"] ?? request["task_type"]
  const title = request["title"]
  const salt = `${typeof task === "string" ? task : ""}\u0000${typeof title === "string" ? title : ""}`
  return { ids: tokens(text).slice(0, GEMINI_MAX_INPUT_TOKENS), size, salt }
}

/** Gemini's embed answers carry no usage: a caller that bills them counts the tokens itself. */
export const prepareGeminiEmbeddings = (body: unknown, model: string, method: GeminiEmbedMethod): Prepared | Reply => {
  if (!isRecord(body)) return geminiInvalid("Invalid JSON payload received. Expected an object.")
  const items: GeminiItem[] = []
  if (method === "embedContent") {
    const item = geminiItem(body, model, "EmbedContentRequest")
    if ("kind" in item) return item
    items.push(item)
  } else {
    const requests = body["requests"]
    if (!Array.isArray(requests) || requests.length === 0) {
      return geminiInvalid("* BatchEmbedContentsRequest.requests: requests is not specified\n")
    }
    if (requests.length > GEMINI_MAX_BATCH) {
      return geminiInvalid(`* BatchEmbedContentsRequest.requests: at most ${GEMINI_MAX_BATCH} requests can be in one batch\n`)
    }
    for (let i = 0; i < requests.length; i++) {
      const item = geminiItem(requests[i], model, `BatchEmbedContentsRequest.requests[${i}]`)
      if ("kind" in item) return item
      items.push(item)
    }
  }
  const full = defaultDimensions(model)
  const run = (): Reply => {
    const embeddings = items.map((item) => ({ values: shorten(embedTokens(model, item.ids, full, item.salt), item.size, false) }))
    return json(200, method === "embedContent" ? { embedding: embeddings[0] } : { embeddings })
  }
  return { model, stream: false, generation: true, run }
}
