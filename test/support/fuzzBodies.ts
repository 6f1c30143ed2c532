/**
 * Seeded, generated request bodies for fuzzing the two inference endpoints (issue 11 item 8): valid seed requests of
 * each inbound format, each mutated 1-3 times (a field deleted, retyped, an unknown field added, arrays emptied or
 * grown past their limits, roles and models changed, content swapped for parts of random types, deep nesting,
 * unicode and control characters), and now and then a body that is not JSON or not a JSON object.
 *
 * Every body is a pure function of (seed, format, index): `generateFuzzBody(format, seed, index)` replays any one of
 * a run on its own.
 */

export type FuzzFormat = "chat" | "messages"

/** A fuzzing knob from the environment (FUZZ_SEED, FUZZ_COUNT, ...): an integer >= `min`, else `fallback` when unset. */
export const envInt = (name: string, fallback: number, min: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`)
  return value
}

// ---------------------------------------------------------------------------------------------------------
// PRNG

/** mulberry32: a small, fast, well-mixed 32-bit generator. */
export const mulberry32 = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** One 32-bit seed per (run seed, format, index), so every body can be regenerated alone. */
const mixSeed = (seed: number, format: FuzzFormat, index: number): number => {
  let h = (seed ^ (format === "chat" ? 0x1b873593 : 0xcc9e2d51)) >>> 0
  for (const part of [index, index >>> 16, 0x27d4eb2f]) {
    h = Math.imul(h ^ part, 0x85ebca6b) >>> 0
    h = (h ^ (h >>> 13)) >>> 0
    h = Math.imul(h, 0xc2b2ae35) >>> 0
    h = (h ^ (h >>> 16)) >>> 0
  }
  return h
}

export class Rng {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n)
  }
  between(min: number, max: number): number {
    return min + this.int(max - min + 1)
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  pick<A>(items: ReadonlyArray<A>): A {
    return items[this.int(items.length)]!
  }
  /** One of `items`, each as likely as its weight (its first element); `total` is the weights' sum. */
  weighted<A extends readonly [number, ...Array<unknown>]>(items: ReadonlyArray<A>, total: number): A {
    let roll = this.int(total)
    for (const item of items) {
      roll -= item[0]
      if (roll < 0) return item
    }
    return items[0]!
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON values, with the few things JSON.stringify cannot write

/** Written verbatim into the body (1e400, -0, 1.0, a number with 400 digits ...). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An object written with these entries in this order, duplicate keys included. */
export class RawEntries {
  constructor(readonly entries: ReadonlyArray<readonly [string, Value]>) {}
}

export type Value = null | boolean | number | string | RawJson | RawEntries | Array<Value> | { [key: string]: Value }
export type Obj = { [key: string]: Value }

export const isObj = (v: Value): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof RawJson) && !(v instanceof RawEntries)

/** Sets an own, enumerable property, `__proto__` included (plain assignment would change the prototype). */
export const setKey = (obj: Obj, key: string, value: Value) => {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
}

export const serialize = (value: Value): string => {
  if (value instanceof RawJson) return value.text
  if (value instanceof RawEntries) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${serialize(v)}`).join(",")}}`
  if (Array.isArray(value)) return `[${value.map(serialize).join(",")}]`
  if (isObj(value)) return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${serialize(value[k]!)}`).join(",")}}`
  return JSON.stringify(value)
}

export const clone = (value: Value): Value => {
  if (value instanceof RawJson || value instanceof RawEntries) return value
  if (Array.isArray(value)) return value.map(clone)
  if (isObj(value)) {
    const out: Obj = {}
    for (const key of Object.keys(value)) setKey(out, key, clone(value[key]!))
    return out
  }
  return value
}

/** Frozen all the way down: a mutation that reached a shared table instead of its own copy would throw. */
export const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

// ---------------------------------------------------------------------------------------------------------
// Valid seed requests

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["city"] }
  }
}

export const CHAT_SEEDS: ReadonlyArray<Obj> = deepFreeze([
  { model: "openai/gpt-4.1", max_tokens: 16, messages: [{ role: "user", content: "Hello there, say something" }] },
  { model: "gpt-4.1", max_completion_tokens: 24, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }] },
  {
    model: "google/gemini-2.5-flash",
    max_tokens: 20,
    messages: [
      { role: "developer", content: "Answer in English." },
      { role: "user", content: "What is an exchange?" },
      { role: "assistant", content: "A market." },
      { role: "user", content: [{ type: "text", text: "Say more" }, { type: "text", text: "please" }] }
    ]
  },
  {
    model: "openai/gpt-4.1",
    max_tokens: 32,
    tools: [weatherTool],
    tool_choice: "auto",
    parallel_tool_calls: true,
    messages: [
      { role: "user", content: "What is the weather in Paris? Use a tool." },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "18 degrees" }
    ]
  },
  {
    model: "gpt-4.1",
    max_tokens: 32,
    tools: [weatherTool],
    tool_choice: { type: "function", function: { name: "get_weather" } },
    messages: [{ role: "user", content: "Weather in Rome" }]
  },
  { model: "deepseek/deepseek-reasoner", stream: true, max_tokens: 24, messages: [{ role: "user", content: "Stream a short reply" }] },
  {
    model: "openai/gpt-4.1",
    stream: true,
    stream_options: { include_usage: true },
    max_completion_tokens: 16,
    messages: [{ role: "system", content: "Stream." }, { role: "user", content: "Go" }]
  },
  { model: "openai/gpt-5", reasoning_effort: "low", max_completion_tokens: 1300, messages: [{ role: "user", content: "Think briefly" }] },
  { model: "deepseek-reasoner", reasoning: { effort: "low" }, max_tokens: 1100, messages: [{ role: "user", content: "Reason" }] },
  {
    model: "anthropic/claude-sonnet-4.5",
    reasoning: { max_tokens: 1024, exclude: true },
    max_tokens: 1100,
    messages: [{ role: "user", content: "Think, but do not show it" }]
  },
  {
    model: "claude-sonnet-4.5",
    max_tokens: 16,
    messages: [
      { role: "system", content: [{ type: "text", text: "You are a careful assistant.", cache_control: { type: "ephemeral" } }] },
      { role: "user", content: [{ type: "text", text: "Cached question", cache_control: { type: "ephemeral", ttl: "1h" } }] }
    ]
  },
  {
    model: "gpt-4.1",
    models: ["google/gemini-2.5-flash", "deepseek-reasoner"],
    max_tokens: 16,
    messages: [{ role: "user", content: "Fall back if you must" }]
  },
  { model: "auto", max_tokens: 8, messages: [{ role: "user", content: "Anything" }] },
  { max_tokens: 8, routing_bias: "cheaper", messages: [{ role: "user", content: "Cheap" }] },
  {
    model: "openai/gpt-4.1",
    max_tokens: 32,
    response_format: {
      type: "json_schema",
      json_schema: { name: "answer", schema: { type: "object", properties: { text: { type: "string" } } }, strict: true }
    },
    messages: [{ role: "user", content: "Answer in JSON" }]
  },
  { model: "gpt-4.1", max_tokens: 16, response_format: { type: "json_object" }, messages: [{ role: "user", content: "JSON please" }] },
  {
    model: "google/gemini-2.5-flash",
    max_tokens: 24,
    stop: ["\n\n", "END"],
    temperature: 0.3,
    top_p: 0.9,
    frequency_penalty: 0.1,
    presence_penalty: -0.1,
    seed: 7,
    user: "end-user-1",
    metadata: { purpose: "fuzz" },
    messages: [{ role: "user", content: "Stop early" }]
  },
  {
    model: "openai/gpt-4.1",
    max_tokens: 16,
    logprobs: true,
    top_logprobs: 2,
    logit_bias: { "1234": -5 },
    n: 1,
    store: false,
    conversation_id: "conv-fuzz-1",
    messages: [{ role: "user", content: "With logprobs" }]
  },
  {
    model: "anthropic/claude-sonnet-4.5",
    stream: true,
    max_tokens: 16,
    temperature: 1,
    messages: [{ role: "user", content: [{ type: "text", text: "Stream from Claude", cache_control: { type: "ephemeral" } }] }]
  }
])

const anthropicTool = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
}

export const MESSAGES_SEEDS: ReadonlyArray<Obj> = deepFreeze([
  { model: "anthropic/claude-sonnet-4.5", max_tokens: 32, messages: [{ role: "user", content: "Hello there" }] },
  { model: "claude-sonnet-4.5", max_tokens: 24, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] },
  {
    model: "openai/gpt-4.1",
    max_tokens: 24,
    system: [{ type: "text", text: "You are terse." }, { type: "text", text: "Answer in English." }],
    messages: [
      { role: "user", content: "What is an exchange?" },
      { role: "assistant", content: [{ type: "text", text: "A market." }] },
      { role: "user", content: [{ type: "text", text: "Say more" }] }
    ]
  },
  {
    model: "anthropic/claude-sonnet-4.5",
    max_tokens: 48,
    tools: [anthropicTool],
    tool_choice: { type: "auto", disable_parallel_tool_use: true },
    messages: [
      { role: "user", content: "Weather in Paris? Use a tool." },
      { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18 degrees" }], is_error: false },
          { type: "text", text: "Thanks" }
        ]
      }
    ]
  },
  { model: "google/gemini-2.5-flash", max_tokens: 32, tools: [anthropicTool], tool_choice: { type: "tool", name: "get_weather" }, messages: [{ role: "user", content: "Rome" }] },
  { model: "claude-sonnet-4.5", stream: true, max_tokens: 24, messages: [{ role: "user", content: "Stream a short reply" }] },
  { model: "deepseek/deepseek-reasoner", stream: true, max_tokens: 24, messages: [{ role: "user", content: "Stream from DeepSeek" }] },
  {
    model: "anthropic/claude-sonnet-4.5",
    max_tokens: 1100,
    thinking: { type: "enabled", budget_tokens: 1024 },
    messages: [{ role: "user", content: "Think and answer" }]
  },
  { model: "openai/gpt-5", max_tokens: 1300, thinking: { type: "adaptive", display: "omitted" }, messages: [{ role: "user", content: "Think adaptively" }] },
  {
    model: "claude-sonnet-4.5",
    max_tokens: 16,
    system: [{ type: "text", text: "You are a careful assistant.", cache_control: { type: "ephemeral" } }],
    tools: [{ ...anthropicTool, cache_control: { type: "ephemeral", ttl: "1h" } }],
    messages: [{ role: "user", content: [{ type: "text", text: "Cached question", cache_control: { type: "ephemeral", ttl: "5m" } }] }]
  },
  {
    model: "anthropic/claude-sonnet-4.5",
    models: ["openai/gpt-4.1", "google/gemini-2.5-flash"],
    max_tokens: 16,
    messages: [{ role: "user", content: "Fall back if you must" }]
  },
  { model: "auto", max_tokens: 8, messages: [{ role: "user", content: "Anything" }] },
  { max_tokens: 8, routing_bias: "better", messages: [{ role: "user", content: "Better" }] },
  {
    model: "google/gemini-2.5-flash",
    max_tokens: 24,
    stop_sequences: ["\n\n", "END"],
    temperature: 0.4,
    top_p: 0.9,
    top_k: 20,
    metadata: { user_id: "end-user-1" },
    messages: [{ role: "user", content: "Stop early" }]
  },
  {
    model: "claude-sonnet-4.5",
    max_tokens: 16,
    temperature: 1,
    top_p: 0.99,
    metadata: { user_id: null },
    service_tier: "auto",
    conversation_id: "conv-fuzz-2",
    messages: [{ role: "user", content: "Claude at its only temperature" }]
  },
  { model: "deepseek-reasoner", max_tokens: 1100, thinking: { type: "disabled" }, messages: [{ role: "user", content: "No thinking" }] }
])

// ---------------------------------------------------------------------------------------------------------
// Ingredients of mutations

export const WEIRD_STRINGS: ReadonlyArray<string> = [
  "",
  " ",
  "NaN",
  "Infinity",
  "-Infinity",
  "undefined",
  "null",
  "true",
  "0",
  "-1",
  "1e309",
  "0x10",
  "{}",
  "[]",
  "\u0000",
  "\u0000\u0001\u0002\u001f\u007f",
  "\r\n\t\b\f",
  "\ud800",
  "\udfff",
  "\ud83d",
  "a\ud800b",
  "\ufeff",
  "\u202eevil",
  "\u200b\u200c\u200d",
  "e\u0301\u0301\u0301\u0301",
  "\uffff\ufffe",
  "😀👩‍👩‍👧‍👦🏳️‍🌈",
  "𝕳𝖊𝖑𝖑𝖔",
  "日本語のテキスト",
  "مرحبا",
  "<script>alert(1)</script>",
  "'; DROP TABLE holds; --",
  "%s%n%x",
  "../../etc/passwd",
  "data: [DONE]\n\n",
  "event: message_stop\ndata: {}\n\n",
  "__proto__",
  "constructor"
]

export const UNKNOWN_KEYS: ReadonlyArray<string> = [
  "x_extra",
  "foo",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "",
  " ",
  "model ",
  "Model",
  "MESSAGES",
  "max-tokens",
  "extra_body",
  "😀",
  "\u0000",
  "type",
  "role",
  "content",
  "cache_control",
  "name",
  "id",
  "index",
  "stream",
  "signature"
]

const MODEL_IDS: ReadonlyArray<Value> = deepFreeze([
  "openai/gpt-4.1",
  "gpt-4.1",
  "GPT-4.1",
  "OpenAI/GPT-4.1",
  "openai/gpt-5",
  "openai/gpt-tiny",
  "gpt-tiny",
  "anthropic/claude-sonnet-4.5",
  "claude-sonnet-4.5",
  "claude-sonnet-4-5",
  "google/gemini-2.5-flash",
  "gemini-2.5-flash",
  "deepseek/deepseek-reasoner",
  "deepseek-reasoner",
  "auto",
  "AUTO",
  "openai/auto",
  "auto/auto",
  "anthropic/gpt-4.1",
  "google/claude-sonnet-4.5",
  "openai/no-such-model",
  "nobody/model",
  "xai/grok-4",
  "mistral/mistral-large",
  "gpt-4.1 ",
  " gpt-4.1",
  "openai//gpt-4.1",
  "openai/gpt-4.1/extra",
  "/",
  "/gpt-4.1",
  "openai/",
  "",
  " ",
  "\u0000",
  "gpt\u00004.1",
  "gpt-4.1\n",
  "😀/😀",
  "a".repeat(300),
  "openai/" + "x".repeat(1000),
  null,
  0,
  1,
  true,
  [],
  ["gpt-4.1"],
  {},
  { id: "gpt-4.1" }
])

const hugeDigits = (rng: Rng) => (rng.chance(0.5) ? "-" : "") + "9".repeat(rng.between(20, 400))

export const weirdNumber = (rng: Rng): Value =>
  rng.pick<() => Value>([
    () => 0,
    () => -0,
    () => -1,
    () => 1,
    () => 2,
    () => 0.5,
    () => 1.5,
    () => -0.000001,
    () => 4096,
    () => 1023,
    () => 1024,
    () => 1025,
    () => 200_001,
    () => 2 ** 31,
    () => 2 ** 32 + 1,
    () => Number.MAX_SAFE_INTEGER,
    () => Number.MAX_SAFE_INTEGER + 2,
    () => 1e21,
    () => 1e308,
    () => -1e308,
    () => Number.MIN_VALUE,
    () => new RawJson("1e400"),
    () => new RawJson("-1e400"),
    () => new RawJson("1.0"),
    () => new RawJson("1E2"),
    () => new RawJson("-0.0"),
    () => new RawJson(hugeDigits(rng)),
    () => new RawJson("0." + "0".repeat(350) + "1")
  ])()

export const longString = (rng: Rng): string => {
  const unit = rng.pick(["a", "word ", "日本", "😀", "\u0000", "\\", "\"", "\ud800", "e\u0301", "<>"])
  return unit.repeat(Math.ceil(rng.between(200, 6000) / unit.length))
}

export const weirdString = (rng: Rng): string =>
  rng.chance(0.15) ? longString(rng) : rng.chance(0.5) ? rng.pick(WEIRD_STRINGS) : `text ${rng.pick(WEIRD_STRINGS)} more`

/** `depth` levels of arrays or objects; written as raw text, so the generator's own walks never recurse into it. */
export const nested = (rng: Rng, depth: number): Value => {
  const leaf = rng.pick(["null", "1", "\"x\"", "true", "{}", "[]"])
  return rng.chance(0.5)
    ? new RawJson("[".repeat(depth) + leaf + "]".repeat(depth))
    : new RawJson("{\"a\":".repeat(depth) + leaf + "}".repeat(depth))
}

export const randomValue = (rng: Rng, depth = 0): Value => {
  switch (rng.int(depth > 1 ? 8 : 11)) {
    case 0:
      return null
    case 1:
      return rng.chance(0.5)
    case 2:
    case 3:
      return weirdNumber(rng)
    case 4:
    case 5:
      return weirdString(rng)
    case 6:
      return rng.pick<Value>([[], {}, [null], [""], { "": "" }, [[]], [{}]])
    case 7:
      return nested(rng, rng.pick([2, 10, 100, 1000, 3000, 5000]))
    case 8:
      return Array.from({ length: rng.between(1, 4) }, () => randomValue(rng, depth + 1))
    case 9: {
      const out: Obj = {}
      for (let i = rng.between(1, 3); i > 0; i--) setKey(out, rng.pick(UNKNOWN_KEYS), randomValue(rng, depth + 1))
      return out
    }
    default:
      return randomPart(rng)
  }
}

/** A content part / block of a random type, valid-looking or not. */
const randomPart = (rng: Rng): Value => {
  const text = rng.chance(0.7) ? "part text" : weirdString(rng)
  return rng.pick<() => Value>([
    () => ({ type: "text", text }),
    () => ({ type: "text", text, cache_control: { type: "ephemeral" } }),
    () => ({ type: "text", text: "", cache_control: { type: "ephemeral" } }),
    () => ({ type: "text", text, cache_control: { type: "ephemeral", ttl: rng.pick(["5m", "1h", "2h", "", "5M"]) } }),
    () => ({ type: "text", text, cache_control: { type: rng.pick(["persistent", "", "EPHEMERAL"]) } }),
    () => ({ type: "text" }),
    () => ({ type: "text", text: randomValue(rng, 2) }),
    () => ({ type: "image_url", image_url: { url: "https://example.com/cat.png" } }),
    () => ({ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }),
    () => ({ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }),
    () => ({ type: "file", file: { file_id: "file-1" } }),
    () => ({ type: "document", source: { type: "text", media_type: "text/plain", data: "doc" } }),
    () => ({ type: "refusal", refusal: "no" }),
    () => ({ type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Oslo" } }),
    () => ({ type: "tool_use", id: "toolu_9", name: "get_weather", input: randomValue(rng, 2) }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", content: "sunny" }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", content: [{ type: "text", text: "sunny", cache_control: { type: "ephemeral" } }] }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", content: [{ type: "image", source: {} }] }),
    () => ({ type: "thinking", thinking: "hmm", signature: "sig" }),
    () => ({ type: "redacted_thinking", data: "xx" }),
    () => ({ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }),
    () => ({ type: rng.pick(["", "TEXT", "unknown", "__proto__", "text "]), text }),
    () => ({ text }),
    () => null,
    () => text,
    () => 42,
    () => [{ type: "text", text }]
  ])()
}

const randomMessage = (rng: Rng, format: FuzzFormat): Value => {
  const role = rng.pick(format === "chat" ? ["user", "assistant", "system", "developer", "tool"] : ["user", "assistant"])
  const content: Value = rng.chance(0.5) ? "another turn" : [randomPart(rng)]
  const message: Obj = { role, content }
  if (role === "tool") message["tool_call_id"] = "call_1"
  return message
}

/** Known optional fields with plausible, borderline or wrong values: they reach the refusals after parsing. */
const KNOWN_FIELDS: Record<FuzzFormat, ReadonlyArray<readonly [string, (rng: Rng) => Value]>> = {
  chat: [
    ["stream", (rng) => rng.pick<Value>([true, true, false, null, "true", 1])],
    ["max_tokens", (rng) => rng.pick<Value>([1, 8, 16, 100, 1024, 4096, 0, -5, 1.5, 10_000_000, 1e9, null, "16"])],
    ["max_completion_tokens", (rng) => rng.pick<Value>([1, 8, 16, 1100, 2048, 0, 1e12, null])],
    ["temperature", (rng) => rng.pick<Value>([0, 0.7, 1, 2, 2.5, -1, null, "0.5"])],
    ["top_p", (rng) => rng.pick<Value>([0, 0.5, 0.99, 1, 1.5, null])],
    ["stop", (rng) => rng.pick<Value>(["END", ["a", "b"], ["a", "b", "c", "d", "e"], [], [""], "", null, [1]])],
    ["n", (rng) => rng.pick<Value>([1, 2, 0, null, 1.5])],
    ["functions", (rng) => rng.pick<Value>([[], [{ name: "f" }], null])],
    ["function_call", (rng) => rng.pick<Value>(["auto", "none", null])],
    ["audio", (rng) => rng.pick<Value>([{ voice: "alloy", format: "wav" }, null])],
    ["modalities", (rng) => rng.pick<Value>([["text"], ["text", "audio"], ["image"], null])],
    ["prediction", () => ({ type: "content", content: "x" })],
    ["web_search_options", () => ({})],
    ["verbosity", (rng) => rng.pick<Value>(["low", null])],
    ["reasoning_effort", (rng) => rng.pick<Value>(["low", "medium", "high", "minimal", "xhigh", "", null])],
    [
      "reasoning",
      (rng) =>
        rng.pick<Value>([
          {},
          { effort: "high" },
          { effort: "low", max_tokens: 2000 },
          { max_tokens: 1024 },
          { max_tokens: 1023 },
          { max_tokens: 200_001 },
          { enabled: false },
          { enabled: false, effort: "low" },
          { enabled: true },
          { exclude: true },
          { effort: "medium", extra: 1 },
          null
        ])
    ],
    [
      "response_format",
      (rng) =>
        rng.pick<Value>([
          { type: "text" },
          { type: "json_object" },
          { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
          { type: "json_schema", json_schema: { name: "bad name!", schema: {} } },
          { type: "json_schema" },
          { type: "yaml" },
          null
        ])
    ],
    ["tools", (rng) => rng.pick<Value>([[weatherTool], [], [weatherTool, weatherTool], [{ type: "function", function: { name: "x y" } }], [{ type: "code_interpreter" }], null])],
    [
      "tool_choice",
      (rng) =>
        rng.pick<Value>(["auto", "none", "required", "any", { type: "function", function: { name: "nope" } }, { type: "function", function: { name: "get_weather" } }, null])
    ],
    ["parallel_tool_calls", (rng) => rng.pick<Value>([true, false, null, "yes"])],
    ["frequency_penalty", (rng) => rng.pick<Value>([0, 2, -2, 3, null])],
    ["presence_penalty", (rng) => rng.pick<Value>([0, 1.5, -2.5, null])],
    ["seed", (rng) => rng.pick<Value>([0, 42, -1, 1.5, 2 ** 63, null])],
    ["logit_bias", (rng) => rng.pick<Value>([{ "50256": -100 }, { abc: 1 }, { "1": 101 }, {}, null])],
    ["logprobs", (rng) => rng.pick<Value>([true, false, null])],
    ["top_logprobs", (rng) => rng.pick<Value>([0, 5, 20, 21, null])],
    ["user", (rng) => rng.pick<Value>(["u-1", "", weirdString(rng), null])],
    ["models", (rng) => rng.pick<Value>([["gpt-4.1"], ["auto"], [], Array.from({ length: 9 }, () => "gpt-4.1"), ["nobody/x", "gpt-4.1"], ["google/gemini-2.5-flash", "openai/gpt-tiny"], [""]])],
    ["conversation_id", (rng) => rng.pick<Value>(["conv-1", "", "c".repeat(201), weirdString(rng)])],
    ["routing_bias", (rng) => rng.pick<Value>(["cheaper", "balanced", "better", "worse", null])],
    ["stream_options", (rng) => rng.pick<Value>([{ include_usage: false }, { unknown_option: true }, null, "yes"])],
    ["metadata", (rng) => rng.pick<Value>([{ a: "b" }, { a: 1 }, null])],
    ["service_tier", (rng) => rng.pick<Value>(["auto", "flex", null, 1])],
    ["store", (rng) => rng.pick<Value>([true, false, null])]
  ],
  messages: [
    ["stream", (rng) => rng.pick<Value>([true, true, false, null, "true"])],
    ["max_tokens", (rng) => rng.pick<Value>([1, 8, 16, 100, 1024, 1100, 0, -5, 1.5, 10_000_000, 1e9, null, "16"])],
    ["system", (rng) => rng.pick<Value>(["sys", "", [], [{ type: "text", text: "s" }], Array.from({ length: 21 }, () => ({ type: "text", text: "s" })), [{ type: "image" }], null])],
    [
      "thinking",
      (rng) =>
        rng.pick<Value>([
          { type: "enabled", budget_tokens: 1024 },
          { type: "enabled", budget_tokens: 1023 },
          { type: "enabled", budget_tokens: 100_000 },
          { type: "enabled" },
          { type: "disabled" },
          { type: "adaptive" },
          { type: "adaptive", display: "omitted" },
          { type: "between_tools" },
          { type: "enabled", budget_tokens: 1024, display: "full" },
          null
        ])
    ],
    ["temperature", (rng) => rng.pick<Value>([0, 0.5, 1, 1.5, -0.1, null])],
    ["top_p", (rng) => rng.pick<Value>([0, 0.5, 0.99, 1, 2, null])],
    ["top_k", (rng) => rng.pick<Value>([1, 40, 0, -1, 1.5, null])],
    ["stop_sequences", (rng) => rng.pick<Value>([["END"], [], [""], Array.from({ length: 10 }, (_, i) => `s${i}`), "END", [1], null])],
    ["metadata", (rng) => rng.pick<Value>([{ user_id: "u-1" }, { user_id: "" }, { user_id: null }, { user_id: 5 }, { other: "x" }, {}, null])],
    ["tools", (rng) => rng.pick<Value>([[anthropicTool], [], [{ name: "" }], [{ type: "web_search_20250305", name: "web_search" }], [{ name: "t", input_schema: { type: "array" } }], null])],
    [
      "tool_choice",
      (rng) =>
        rng.pick<Value>([{ type: "auto" }, { type: "any" }, { type: "none" }, { type: "tool", name: "nope" }, { type: "tool", name: "get_weather" }, { type: "required" }, "auto", null])
    ],
    ["models", (rng) => rng.pick<Value>([["gpt-4.1"], ["auto"], [], Array.from({ length: 9 }, () => "gpt-4.1"), ["nobody/x"], ["deepseek-reasoner", "openai/gpt-tiny"], [""]])],
    ["routing_bias", (rng) => rng.pick<Value>(["cheaper", "balanced", "better", "worse", null])],
    ["conversation_id", (rng) => rng.pick<Value>(["conv-1", "", weirdString(rng)])],
    ["container", (rng) => rng.pick<Value>(["c", null])],
    ["mcp_servers", (rng) => rng.pick<Value>([[], null])],
    ["context_management", () => ({})],
    ["output_config", () => ({ effort: "low" })],
    ["output_format", (rng) => rng.pick<Value>([{ type: "json_schema", schema: {} }, null])],
    ["cache_control", (rng) => rng.pick<Value>([{ type: "ephemeral" }, null])],
    ["inference_geo", (rng) => rng.pick<Value>(["us", null])],
    ["betas", (rng) => rng.pick<Value>([["x"], null])],
    ["service_tier", (rng) => rng.pick<Value>(["auto", "standard_only", 1])],
    ["speed", (rng) => rng.pick<Value>(["fast", null])],
    ["diagnostics", (rng) => rng.pick<Value>([true, {}])]
  ]
}

// ---------------------------------------------------------------------------------------------------------
// The walk and the mutations

interface Slot {
  readonly parent: Obj | Array<Value>
  readonly key: string | number
  readonly value: Value
  readonly path: string
}

export const slotsOf = (root: Value): Array<Slot> => {
  const out: Array<Slot> = []
  const walk = (value: Value, path: string) => {
    if (Array.isArray(value)) {
      value.forEach((child, i) => {
        out.push({ parent: value, key: i, value: child, path: `${path}[${i}]` })
        walk(child, `${path}[${i}]`)
      })
    } else if (isObj(value)) {
      for (const key of Object.keys(value)) {
        const child = value[key]!
        out.push({ parent: value, key, value: child, path: `${path}.${key}` })
        walk(child, `${path}.${key}`)
      }
    }
  }
  walk(root, "")
  return out
}

export const put = (slot: Slot, value: Value) => {
  if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = value
  else setKey(slot.parent, slot.key as string, value)
}

export const objectsOf = (root: Value): Array<{ obj: Obj; path: string }> => {
  const out: Array<{ obj: Obj; path: string }> = isObj(root) ? [{ obj: root, path: "" }] : []
  for (const slot of slotsOf(root)) if (isObj(slot.value)) out.push({ obj: slot.value, path: slot.path })
  return out
}

export const arraysOf = (root: Value): Array<Slot> => slotsOf(root).filter((slot) => Array.isArray(slot.value))

const messagesOf = (root: Value): Array<Obj> => {
  if (!isObj(root) || !Array.isArray(root["messages"])) return []
  return root["messages"].filter(isObj)
}

type Mutation = (rng: Rng, body: Obj, format: FuzzFormat) => string | undefined

const MUTATIONS: ReadonlyArray<readonly [weight: number, name: string, Mutation]> = [
  [
    10,
    "delete",
    (rng, body) => {
      const objects = objectsOf(body).filter((o) => Object.keys(o.obj).length > 0)
      if (objects.length === 0) return undefined
      const { obj, path } = rng.chance(0.3) ? objects[0]! : rng.pick(objects)
      const key = rng.pick(Object.keys(obj))
      delete obj[key]
      return `delete ${path}.${key}`
    }
  ],
  [
    14,
    "retype",
    (rng, body) => {
      const slots = slotsOf(body)
      if (slots.length === 0) return undefined
      // Top-level fields half the time, else anywhere.
      const top = slots.filter((s) => s.parent === body)
      const slot = rng.chance(0.5) && top.length > 0 ? rng.pick(top) : rng.pick(slots)
      const value = randomValue(rng)
      put(slot, value)
      return `retype ${slot.path}`
    }
  ],
  [
    8,
    "unknown field",
    (rng, body) => {
      const objects = objectsOf(body)
      const { obj, path } = rng.chance(0.35) ? objects[0]! : rng.pick(objects)
      const key = rng.chance(0.2) ? weirdString(rng).slice(0, 40) : rng.pick(UNKNOWN_KEYS)
      setKey(obj, key, randomValue(rng, 1))
      return `add ${path}.${JSON.stringify(key)}`
    }
  ],
  [
    6,
    "array size",
    (rng, body) => {
      const arrays = arraysOf(body)
      if (arrays.length === 0) return undefined
      const slot = rng.pick(arrays)
      const items = slot.value as Array<Value>
      const size = rng.pick([0, 0, 1, 2, 3, 8, 9, 20, 21, 50, 51, 200, 201])
      const grown: Array<Value> =
        items.length === 0 ? [] : Array.from({ length: size }, (_, i) => clone(items[rng.chance(0.8) ? i % items.length : rng.int(items.length)]!))
      put(slot, grown)
      return `resize ${slot.path} to ${grown.length}`
    }
  ],
  [
    6,
    "role",
    (rng, body) => {
      const messages = messagesOf(body)
      if (messages.length === 0) return undefined
      const message = rng.pick(messages)
      message["role"] = rng.pick<Value>(["user", "assistant", "system", "developer", "tool", "function", "model", "USER", "", null, 7, ["user"]])
      return `role ${String(message["role"])}`
    }
  ],
  [
    7,
    "content parts",
    (rng, body) => {
      const messages = messagesOf(body)
      if (messages.length === 0) return undefined
      const message = rng.pick(messages)
      message["content"] = rng.chance(0.1) ? [] : Array.from({ length: rng.between(1, 4) }, () => randomPart(rng))
      return "content parts"
    }
  ],
  [
    3,
    "message",
    (rng, body, format) => {
      if (!Array.isArray(body["messages"])) return undefined
      const messages = body["messages"]
      const at = rng.int(messages.length + 1)
      messages.splice(at, 0, randomMessage(rng, format))
      return `insert message at ${at}`
    }
  ],
  [
    8,
    "model",
    (rng, body) => {
      if (rng.chance(0.2)) {
        body["models"] = Array.from({ length: rng.pick([1, 2, 3, 8, 9]) }, () => clone(rng.pick(MODEL_IDS)))
        return "models list"
      }
      body["model"] = clone(rng.pick(MODEL_IDS))
      return `model ${JSON.stringify(body["model"])}`.slice(0, 80)
    }
  ],
  [
    10,
    "known field",
    (rng, body, format) => {
      const [name, make] = rng.pick(KNOWN_FIELDS[format])
      // Cloned: the tables share objects (the seed tools) that later mutations of this body must not change.
      setKey(body, name, clone(make(rng)))
      return `set ${name}`
    }
  ],
  [
    3,
    "deep nesting",
    (rng, body) => {
      const slots = slotsOf(body)
      if (slots.length === 0) return undefined
      const slot = rng.pick(slots)
      const depth = rng.pick([10, 100, 1000, 3000, 5000])
      put(slot, nested(rng, depth))
      return `nest ${slot.path} ${depth} deep`
    }
  ],
  [
    6,
    "unicode",
    (rng, body) => {
      const strings = slotsOf(body).filter((s) => typeof s.value === "string")
      if (strings.length === 0) return undefined
      const slot = rng.pick(strings)
      const original = slot.value as string
      const at = rng.int(original.length + 1)
      put(slot, rng.chance(0.5) ? original.slice(0, at) + rng.pick(WEIRD_STRINGS) + original.slice(at) : weirdString(rng))
      return `unicode ${slot.path}`
    }
  ],
  [
    4,
    "number",
    (rng, body) => {
      const numbers = slotsOf(body).filter((s) => typeof s.value === "number")
      if (numbers.length === 0) return undefined
      const slot = rng.pick(numbers)
      put(slot, weirdNumber(rng))
      return `number ${slot.path}`
    }
  ],
  [
    4,
    "stream",
    (_rng, body) => {
      body["stream"] = body["stream"] !== true
      return `stream ${String(body["stream"])}`
    }
  ]
]

const TOTAL_WEIGHT = MUTATIONS.reduce((sum, [w]) => sum + w, 0)

const pickMutation = (rng: Rng) => rng.weighted(MUTATIONS, TOTAL_WEIGHT)

/** A body that is not a JSON object at all. */
export const nonObjectBody = (rng: Rng, valid: string): { bytes: Uint8Array; note: string } => {
  const text = (s: string) => new TextEncoder().encode(s)
  const choice = rng.int(12)
  switch (choice) {
    case 0:
      return { bytes: text(valid.slice(0, rng.int(valid.length))), note: "truncated JSON" }
    case 1:
      return { bytes: text(rng.pick(["null", "true", "0", "-1", "\"text\"", "[]", "[{}]", "1e400", "\"\""])), note: "JSON non-object" }
    case 2:
      return { bytes: text(`[${valid}]`), note: "JSON array of the body" }
    case 3:
      return { bytes: new Uint8Array(0), note: "empty body" }
    case 4:
      return { bytes: Uint8Array.from({ length: rng.between(1, 256) }, () => rng.int(256)), note: "random bytes" }
    case 5:
      return { bytes: text(`\ufeff${valid}`), note: "BOM before the JSON" }
    case 6:
      return { bytes: text(valid.replace(/}$/, ",}")), note: "trailing comma" }
    case 7:
      return { bytes: text(valid.replace(/"/g, "'")), note: "single quotes" }
    case 8: {
      const bytes = text(valid)
      const out = new Uint8Array(bytes.length + 2)
      const at = rng.int(bytes.length)
      out.set(bytes.subarray(0, at))
      out.set([0xc3, 0x28], at)
      out.set(bytes.subarray(at), at + 2)
      return { bytes: out, note: "invalid UTF-8 inside" }
    }
    case 9:
      return { bytes: text(`${valid}${valid}`), note: "two JSON documents" }
    case 10:
      return { bytes: text(`${valid}\u0000`), note: "NUL after the JSON" }
    default:
      return { bytes: text("model=gpt-4.1&messages=hi"), note: "form encoded" }
  }
}

export interface FuzzBody {
  readonly format: FuzzFormat
  readonly index: number
  readonly seedRequest: number
  readonly mutations: ReadonlyArray<string>
  readonly bytes: Uint8Array
  /** undefined = no Content-Type header. */
  readonly contentType: string | undefined
  /** messages only: send the key as x-api-key rather than Bearer. */
  readonly xApiKey: boolean
}

export const MAX_FUZZ_BODY_BYTES = 16 * 1024

/** Body `index` of a run with `seed`: a seed request of `format` with 1-3 mutations, or (rarely) not a JSON object. */
export const generateFuzzBody = (format: FuzzFormat, seed: number, index: number): FuzzBody => {
  const rng = new Rng(mulberry32(mixSeed(seed, format, index)))
  const seeds = format === "chat" ? CHAT_SEEDS : MESSAGES_SEEDS
  const seedRequest = rng.int(seeds.length)
  const contentType = rng.chance(0.03)
    ? rng.pick([undefined, "text/plain", "application/json; charset=utf-8", "application/vnd.api+json", "application/x-www-form-urlencoded", "APPLICATION/JSON"])
    : "application/json"
  const xApiKey = format === "messages" && rng.chance(0.5)
  const validText = serialize(seeds[seedRequest]!)
  if (rng.chance(0.04)) {
    const { bytes, note } = nonObjectBody(rng, validText)
    return { format, index, seedRequest, mutations: [note], bytes, contentType, xApiKey }
  }
  for (let attempt = 0; ; attempt++) {
    const body = clone(seeds[seedRequest]!) as Obj
    const mutations: Array<string> = []
    const count = attempt >= 5 ? 1 : rng.between(1, 3)
    for (let i = 0; i < count; i++) {
      const [, name, mutate] = attempt >= 5 ? MUTATIONS[2]! : pickMutation(rng)
      const note = mutate(rng, body, format)
      mutations.push(note ?? `${name} (no-op)`)
    }
    let text = serialize(body)
    const keys = Object.keys(body)
    if (keys.length > 0 && rng.chance(0.02)) {
      // A key written twice: JSON.parse keeps the last one.
      const key = rng.pick(keys)
      text = serialize(new RawEntries([...keys.map((k) => [k, body[k]!] as const), [key, randomValue(rng, 1)]]))
      mutations.push(`duplicate key ${key}`)
    }
    const bytes = new TextEncoder().encode(text)
    if (bytes.length <= MAX_FUZZ_BODY_BYTES || attempt >= 8) {
      return { format, index, seedRequest, mutations, bytes: bytes.length <= MAX_FUZZ_BODY_BYTES ? bytes : new TextEncoder().encode(validText), contentType, xApiKey }
    }
  }
}
