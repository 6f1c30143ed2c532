/**
 * Fuzzing POST /v1/embeddings (test/exchange-fuzz.test.ts): valid seeds of every form the endpoint takes (a string,
 * strings up to a few hundred, a token array, token arrays on the OpenAI models, `dimensions` where the card allows
 * it, `encoding_format` float and base64, `user`, a `models` fallback list), and their mutations: unknown fields,
 * wrong types, empty strings and arrays, 2049 inputs, negative and float token ids, mixed arrays, dimensions 0 / too
 * large / on ada-002, token ids to Gemini, `auto` or no model, a chat model, huge strings, deep nesting.
 *
 * A body with a refusing mutation must be refused (4xx, never served); with one mutation alone, at the param it
 * names. Every refusal is in the envelope and a validation_failed names its `param`; a 200 is the list of one
 * embedding per input under a generation id with X-Compute-Used. The outcomes join the ledger's check.
 *
 * Every body is a pure function of (seed, index): `generateEmbeddingsBody(seed, index)` replays one.
 */
import { envelopeTextProblem } from "./errorEnvelope.ts"
import { clone, mulberry32, type Obj, RawJson, Rng, serialize, type Value } from "./fuzzCore.ts"
import type { Outcome } from "./fuzzExercise.ts"

export const EMBEDDINGS_PATH = "/v1/embeddings"
const SMALL = "openai/text-embedding-3-small"
const ADA = "openai/text-embedding-ada-002"
const GEMINI = "google/gemini-embedding-001"
const CHAT = "openai/gpt-4.1"

const words = ["vector", "embedding", "ledger", "exchange", "credit", "token", "über", "日本語", "emoji 🎈", "line\nbreak"]
const sentence = (rng: Rng) => Array.from({ length: rng.between(1, 12) }, () => rng.pick(words)).join(" ")
const texts = (rng: Rng, n: number) => Array.from({ length: n }, () => sentence(rng))
const tokens = (rng: Rng, n: number) => Array.from({ length: n }, () => rng.int(100_000))

/** The valid seeds: each is served as it is. */
const makeSeeds = (): ReadonlyArray<Obj> => {
  const rng = new Rng(mulberry32(0xe4be_dd17))
  return [
    { model: SMALL, input: "hello world" },
    { model: SMALL, input: texts(rng, 3), encoding_format: "float" },
    // The few-hundred-input seeds ask for short vectors: the run stays a few seconds.
    { model: SMALL, input: texts(rng, 300), dimensions: 64, encoding_format: "base64" },
    { model: SMALL, input: tokens(rng, 40) },
    { model: SMALL, input: [tokens(rng, 5), tokens(rng, 12), tokens(rng, 1)], user: "user-1" },
    { model: ADA, input: [tokens(rng, 8), tokens(rng, 3)] },
    { model: ADA, input: texts(rng, 20), user: "" },
    // ada-002 takes no `dimensions` but its own size, which is not sent upstream (its vendor refuses the field).
    { model: ADA, input: sentence(rng), dimensions: 1536 },
    { model: SMALL, input: sentence(rng), dimensions: 256 },
    { model: SMALL, input: texts(rng, 7), dimensions: 1536, encoding_format: "base64" },
    { model: GEMINI, input: sentence(rng) },
    { model: GEMINI, input: texts(rng, 250), dimensions: 32, encoding_format: "float" },
    { model: GEMINI, input: texts(rng, 4), dimensions: 768, encoding_format: "base64" },
    { models: [SMALL, GEMINI], input: texts(rng, 5) },
    { models: [GEMINI, ADA], input: sentence(rng), user: "end-user-42" },
    { model: "auto", models: [ADA], input: tokens(rng, 10) },
    { model: SMALL, models: [SMALL, ADA], input: [tokens(rng, 4)] }
  ]
}
export const EMBEDDINGS_SEEDS: ReadonlyArray<Obj> = makeSeeds()

/** A mutation: what it did, and whether the body must now be refused at a param matching `param`. */
interface Mutated {
  readonly name: string
  readonly refuses: boolean
  readonly param?: RegExp
}
type Mutation = (rng: Rng, body: Obj) => Mutated

const INPUT = /^input(\.\d+)?$/
const setModel = (body: Obj, model: string | undefined) => {
  delete body["models"]
  if (model === undefined) delete body["model"]
  else body["model"] = model
}
const wrongValues: ReadonlyArray<Value> = [null, true, 0, -1, 1.5, "", "x", [], {}, [null], { a: 1 }, new RawJson("1e400"), new RawJson("-0")]
const deep = (depth: number, leaf: Value): Value => {
  let value = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const MUTATIONS: ReadonlyArray<readonly [number, Mutation]> = [
  [3, (rng, body) => {
    const key = rng.pick(["temperature", "inputs", "Model", "__proto__", "dimension", "encoding", "x".repeat(300)])
    Object.defineProperty(body, key, { value: rng.pick(wrongValues), enumerable: true, writable: true, configurable: true })
    return { name: `unknown field ${key.slice(0, 20)}`, refuses: true }
  }],
  [4, (rng, body) => {
    const field = rng.pick(["model", "input", "dimensions", "encoding_format", "user", "models"])
    const wrong: Record<string, ReadonlyArray<Value>> = {
      model: [null, 7, true, [SMALL], { id: SMALL }, ""],
      input: [null, 7, true, {}, { text: "x" }],
      dimensions: [null, "256", true, [256], 1.5, -3, new RawJson("1e400")],
      encoding_format: [null, 1, "int8", "BASE64", "", ["float"]],
      user: [null, 1, true, ["u"], { id: "u" }],
      models: [null, "x", [], [1], [""], Array.from({ length: 9 }, () => SMALL), { 0: SMALL }]
    }
    const value = rng.pick(wrong[field]!)
    if (field === "model" || field === "models") delete body[field === "model" ? "models" : "model"]
    body[field] = value
    return { name: `wrong type ${field}: ${serialize(value).slice(0, 30)}`, refuses: true, param: field === "model" || field === "models" ? /^models?(\.\d+)?$/ : new RegExp(`^${field}$`) }
  }],
  [3, (rng, body) => {
    const empty = rng.pick<[string, Value, RegExp]>([
      ["empty string", "", INPUT],
      ["empty array", [], INPUT],
      ["empty string in array", ["a", "", "b"], /^input\.1$/],
      ["empty token array", [[1, 2], []], /^input\.1$/]
    ])
    setModel(body, SMALL)
    body["input"] = empty[1]
    return { name: empty[0], refuses: true, param: empty[2] }
  }],
  [2, (_rng, body) => {
    body["input"] = Array.from({ length: 2049 }, (_, i) => `t${i}`)
    return { name: "2049 inputs", refuses: true, param: INPUT }
  }],
  [3, (rng, body) => {
    const bad = rng.pick<[string, Value]>([
      ["negative token id", [1, -5, 3]],
      ["float token id", [1, 2.5, 3]],
      ["negative id in token arrays", [[1, 2], [3, -1]]],
      ["float id in token arrays", [[1.5]]],
      ["mixed strings and ids", ["a", 1]],
      ["mixed ids and strings", [1, "a"]],
      ["mixed token array and string", [[1, 2], "a"]],
      ["mixed string and token array", ["a", [1, 2]]],
      ["null in texts", ["a", null]],
      ["huge token id", [new RawJson("1e400")]]
    ])
    setModel(body, SMALL)
    body["input"] = bad[1]
    return { name: bad[0], refuses: true, param: INPUT }
  }],
  [3, (rng, body) => {
    const bad = rng.pick<[string, string, Value, RegExp | undefined]>([
      ["dimensions 0", SMALL, 0, /^dimensions$/],
      ["dimensions -1", SMALL, -1, /^dimensions$/],
      ["dimensions too large", SMALL, 1537, /^dimensions$/],
      ["dimensions too large on Gemini", GEMINI, 100_000, /^dimensions$/],
      ["dimensions on ada-002", ADA, 256, /^(dimensions|model)$/]
    ])
    setModel(body, bad[1])
    body["input"] ??= "x"
    if (typeof body["input"] !== "string") body["input"] = "x"
    body["dimensions"] = bad[2]
    return { name: bad[0], refuses: true, ...(bad[3] === undefined ? {} : { param: bad[3] }) }
  }],
  [2, (rng, body) => {
    setModel(body, GEMINI)
    body["input"] = rng.chance(0.5) ? tokens(rng, 5) : [tokens(rng, 3), tokens(rng, 2)]
    return { name: "token ids to Gemini", refuses: true, param: INPUT }
  }],
  [3, (rng, body) => {
    const model = rng.pick<[string, string | undefined]>([["auto model", "auto"], ["no model", undefined], ["chat model", CHAT], ["unknown model", "openai/no-such-embedding"], ["chat model fallback list", "models"]])
    if (model[1] === "models") {
      delete body["model"]
      body["models"] = [CHAT, "anthropic/claude-sonnet-4"]
    } else setModel(body, model[1])
    return { name: model[0], refuses: true, param: /^models?(\.\d+)?$/ }
  }],
  [2, (rng, body) => {
    // Past every card's per-input limit, in short words: one run of a single character costs the tokenizer seconds.
    const huge = rng.chance(0.5) ? "lorem ipsum ".repeat(9000) : "\u{1f600} ".repeat(9000)
    setModel(body, rng.pick([SMALL, ADA, GEMINI]))
    delete body["dimensions"]
    body["input"] = rng.chance(0.5) ? huge : ["short", huge]
    return { name: "huge string", refuses: true, param: INPUT }
  }],
  [2, (rng, body) => {
    const depth = rng.pick([3, 50, 400])
    const where = rng.pick(["input", "user", "unknown"])
    if (where === "unknown") body["nested"] = deep(depth, 1)
    else body[where] = deep(depth, where === "input" ? "x" : 1)
    // Past 64 levels the body is refused whole, before its fields are read: its param is "".
    const param = depth > 64 ? /^$/ : where === "unknown" ? undefined : where === "input" ? INPUT : /^user$/
    return { name: `deep nesting in ${where} (${depth})`, refuses: true, ...(param === undefined ? {} : { param }) }
  }],
  // Not refusing: what a valid body may also say (never overwriting a refused value).
  [2, (rng, body) => {
    const format = rng.pick(["float", "base64"])
    if (body["encoding_format"] === undefined || body["encoding_format"] === "float" || body["encoding_format"] === "base64") body["encoding_format"] = format
    return { name: `encoding_format ${format}`, refuses: false }
  }],
  [1, (_rng, body) => {
    // ada-002 at its own size: served as without `dimensions`.
    if (body["model"] === ADA && body["models"] === undefined && body["dimensions"] === undefined) body["dimensions"] = 1536
    return { name: "dimensions on ada-002 at its size", refuses: false }
  }],
  [1, (rng, body) => {
    if (body["user"] === undefined || typeof body["user"] === "string") body["user"] = rng.pick(["", "u", "user with spaces", "ü".repeat(200)])
    return { name: "user", refuses: false }
  }]
]
const TOTAL = MUTATIONS.reduce((sum, [weight]) => sum + weight, 0)

export interface EmbeddingsBody {
  readonly index: number
  readonly seedRequest: number
  readonly mutations: ReadonlyArray<string>
  readonly refuses: boolean
  /** The param a lone refusing mutation names. */
  readonly param: RegExp | undefined
  readonly body: Obj
  readonly bytes: Uint8Array
}

const bodyOf = (index: number, seedRequest: number, mutated: ReadonlyArray<Mutated>, body: Obj): EmbeddingsBody => ({
  index,
  seedRequest,
  mutations: mutated.map((m) => m.name),
  refuses: mutated.some((m) => m.refuses),
  param: mutated.length === 1 ? mutated[0]!.param : undefined,
  body,
  bytes: new TextEncoder().encode(serialize(body))
})

export const embeddingsSeedBody = (i: number): EmbeddingsBody => bodyOf(-1, i, [], clone(EMBEDDINGS_SEEDS[i]!) as Obj)

export const generateEmbeddingsBody = (seed: number, index: number): EmbeddingsBody => {
  const rng = new Rng(mulberry32((seed ^ 0x3c6e_f372 ^ Math.imul(index + 1, 0x9e37_79b9)) >>> 0))
  const seedRequest = rng.int(EMBEDDINGS_SEEDS.length)
  const body = clone(EMBEDDINGS_SEEDS[seedRequest]!) as Obj
  const count = rng.chance(0.6) ? 1 : rng.between(2, 3)
  const mutated = Array.from({ length: count }, () => rng.weighted(MUTATIONS, TOTAL)[1](rng, body))
  return bodyOf(index, seedRequest, mutated, body)
}

/** How a failing body is shown, to replay it. */
export const describeEmbeddingsBody = (body: EmbeddingsBody, seed: number): string => {
  const text = Buffer.from(body.bytes).toString("utf8")
  return `${body.index < 0 ? `embeddings seed ${body.seedRequest} as it is` : `FUZZ_SEED=${seed} generateEmbeddingsBody(${seed}, ${body.index}) (seed ${body.seedRequest})`} ` +
    `mutations ${JSON.stringify(body.mutations)} body ${JSON.stringify(text.length > 600 ? `${text.slice(0, 600)}... (${body.bytes.length} bytes)` : text)}`
}

const inputCount = (input: unknown): number =>
  typeof input === "string" || (Array.isArray(input) && input.every((v) => typeof v === "number")) ? 1 : Array.isArray(input) ? input.length : -1

/** Sends one body and judges the answer; the outcome feeds the ledger's check. */
export const exerciseEmbeddings = async (baseUrl: string, secret: string, body: EmbeddingsBody): Promise<{ outcome?: Outcome; problem?: string }> => {
  let status: number
  let headers: Headers
  let text: string
  try {
    const response = await fetch(`${baseUrl}${EMBEDDINGS_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      body: body.bytes,
      signal: AbortSignal.timeout(30_000)
    })
    status = response.status
    headers = response.headers
    text = await response.text()
  } catch (error) {
    return { problem: `no complete answer: ${String(error)}` }
  }
  const answer = `status ${status}, body ${JSON.stringify(text.slice(0, 800))}`
  if (status >= 400) {
    const problem = envelopeTextProblem(status, text)
    if (problem !== undefined) return { problem: `${status >= 500 ? "5xx answer; " : ""}${problem}: ${answer}` }
    const error = (JSON.parse(text) as { error: { code: string; message: string; param?: string; issues?: Array<{ param?: unknown }> } }).error
    // Several fields refused at once: each named in `issues`.
    const params = error.param !== undefined ? [error.param] : (error.issues ?? []).map((issue) => issue.param)
    const vendorRefusal = error.code === "validation_failed" && / refused the request: /.test(error.message)
    const outcome: Outcome = { index: body.index, status, code: error.code, vendorRefusal, param: error.param, requestId: undefined, stream: false, computeUsed: undefined }
    if (status >= 500) return { outcome, problem: `5xx answer: ${answer}` }
    if (error.code === "validation_failed" && !vendorRefusal && (params.length === 0 || params.some((p) => typeof p !== "string"))) {
      return { outcome, problem: `a validation_failed naming no param: ${answer}` }
    }
    if (!body.refuses) return { outcome, problem: `a valid body was refused: ${answer}` }
    if (body.param !== undefined && !(status === 422 && error.code === "validation_failed" && params.some((p) => typeof p === "string" && body.param!.test(p)))) {
      return { outcome, problem: `expected 422 validation_failed at a param matching ${body.param}: ${answer}` }
    }
    return { outcome }
  }
  if (status !== 200) return { problem: `a status other than 200 or 4xx: ${answer}` }
  if (body.refuses) return { problem: `a body that must be refused was served: ${answer}` }
  const requestId = headers.get("x-request-id") ?? ""
  if (!/^gen_[0-9a-f]{24}$/.test(requestId)) return { problem: `a 200 without a generation id: ${answer}` }
  const used = headers.get("x-compute-used") ?? ""
  if (!/^\d+$/.test(used)) return { problem: `a 200 without X-Compute-Used: ${answer}` }
  let reply: { object?: unknown; data?: Array<{ index?: unknown; embedding?: unknown }>; usage?: { prompt_tokens?: unknown } }
  try {
    reply = JSON.parse(text) as typeof reply
  } catch {
    return { problem: `a 200 that is not JSON: ${answer}` }
  }
  const base64 = body.body["encoding_format"] === "base64"
  const expected = inputCount(body.body["input"])
  if (reply.object !== "list" || !Array.isArray(reply.data) || reply.data.length !== expected) return { problem: `not a list of ${expected} embeddings: ${answer}` }
  if (reply.data.some((item, i) => item.index !== i || (base64 ? typeof item.embedding !== "string" : !Array.isArray(item.embedding)))) {
    return { problem: `embeddings out of order or not ${base64 ? "base64" : "floats"}: ${answer}` }
  }
  if (typeof reply.usage?.prompt_tokens !== "number" || reply.usage.prompt_tokens <= 0) return { problem: `no usage: ${answer}` }
  return { outcome: { index: body.index, status, code: undefined, vendorRefusal: false, requestId, stream: false, computeUsed: BigInt(used) } }
}

/** Every seed sent as it is: each must be served. The failures described, to replay. */
export const sendEmbeddingsSeeds = async (baseUrl: string, secret: string, seed: number) => {
  const outcomes: Array<Outcome> = []
  const failures: Array<string> = []
  await Promise.all(EMBEDDINGS_SEEDS.map(async (_, i) => {
    const body = embeddingsSeedBody(i)
    const { outcome, problem } = await exerciseEmbeddings(baseUrl, secret, body)
    if (outcome !== undefined) outcomes.push(outcome)
    const wrong = problem ?? (outcome?.status === 200 ? undefined : `a seed request was not served: ${outcome?.status} ${outcome?.code}`)
    if (wrong !== undefined) failures.push(`${wrong}\n${describeEmbeddingsBody(body, seed)}`)
  }))
  return { outcomes, failures }
}

/** The run: `indexes`' bodies, `concurrency` in flight; each failure described, in index order. */
export const runEmbeddings = async (baseUrl: string, secret: string, seed: number, indexes: ReadonlyArray<number>, concurrency: number) => {
  const started = Date.now()
  const outcomes: Array<Outcome> = []
  const failures: Array<{ index: number; text: string }> = []
  let next = 0
  const worker = async () => {
    for (;;) {
      const index = indexes[next++]
      if (index === undefined) return
      const body = generateEmbeddingsBody(seed, index)
      // The generator is a pure function of (seed, index): every 97th body regenerated byte for byte.
      if (index % 97 === 0 && Buffer.compare(Buffer.from(body.bytes), Buffer.from(generateEmbeddingsBody(seed, index).bytes)) !== 0) {
        failures.push({ index, text: `the generator is not a pure function of (seed, index)\n${describeEmbeddingsBody(body, seed)}` })
      }
      const { outcome, problem } = await exerciseEmbeddings(baseUrl, secret, body)
      if (problem !== undefined) failures.push({ index, text: `${problem}\n${describeEmbeddingsBody(body, seed)}` })
      if (outcome !== undefined) outcomes.push(outcome)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  failures.sort((a, b) => a.index - b.index)
  return { outcomes, failures, ms: Date.now() - started }
}
