/**
 * The mutations of every inference format (delete, retype, unknown field, array size, role, content parts, message,
 * model, known field, deep nesting, unicode, number, stream), their ingredients (model ids, the known optional
 * fields of each format), and the weighted draw of one: the messages formats draw from these and then the ones of
 * fuzzAgentMutations.ts.
 */
import { arraysOf, clone, deepFreeze, type FuzzFormat, messagesOf, type Mutation, type Obj, objectsOf, put, type Rng, setKey, slotsOf, type Value } from "./fuzzCore.ts"
import {
  ANTHROPIC_KEYS,
  ANTHROPIC_MUTATIONS,
  anthropicPart,
  cacheControlValue,
  contextManagementValue,
  outputConfigValue,
  outputFormatValue,
  systemTurn,
  thinkingValue,
  toolWithFields
} from "./fuzzAgentMutations.ts"
import { anthropicTool, weatherTool } from "./fuzzSeeds.ts"
import { nested, randomPart, randomValue, UNKNOWN_KEYS, weirdNumber, weirdString, WEIRD_STRINGS } from "./fuzzValues.ts"

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

const randomMessage = (rng: Rng, format: FuzzFormat): Value => {
  if (format !== "chat" && rng.chance(0.25)) return systemTurn(rng)
  const role = rng.pick(format === "chat" ? ["user", "assistant", "system", "developer", "tool"] : ["user", "assistant"])
  const content: Value = rng.chance(0.5) ? "another turn" : [format !== "chat" && rng.chance(0.4) ? anthropicPart(rng) : randomPart(rng)]
  const message: Obj = { role, content }
  if (role === "tool") message["tool_call_id"] = "call_1"
  return message
}

/** Known optional fields with plausible, borderline or wrong values: they reach the refusals after parsing. */
const KNOWN_FIELDS: Record<"chat" | "messages", ReadonlyArray<readonly [string, (rng: Rng) => Value]>> = {
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
    ["max_tokens", (rng) => rng.pick<Value>([1, 8, 16, 100, 1024, 1100, 2048, 2049, 0, -5, 1.5, 10_000_000, 1e9, null, "16"])],
    ["system", (rng) => rng.pick<Value>(["sys", "", [], [{ type: "text", text: "s" }], Array.from({ length: 21 }, () => ({ type: "text", text: "s" })), [{ type: "image" }], null])],
    ["thinking", thinkingValue],
    ["temperature", (rng) => rng.pick<Value>([0, 0.5, 1, 1.5, -0.1, null])],
    ["top_p", (rng) => rng.pick<Value>([0, 0.5, 0.99, 1, 2, null])],
    ["top_k", (rng) => rng.pick<Value>([1, 40, 0, -1, 1.5, null])],
    ["stop_sequences", (rng) => rng.pick<Value>([["END"], [], [""], Array.from({ length: 10 }, (_, i) => `s${i}`), "END", [1], null])],
    ["metadata", (rng) => rng.pick<Value>([{ user_id: "u-1" }, { user_id: "" }, { user_id: null }, { user_id: 5 }, { other: "x" }, {}, null])],
    [
      "tools",
      (rng) =>
        rng.chance(0.35)
          ? Array.from({ length: rng.between(1, 3) }, () => toolWithFields(rng))
          : rng.pick<Value>([[anthropicTool], [], [{ name: "" }], [{ type: "web_search_20250305", name: "web_search" }], [{ name: "t", input_schema: { type: "array" } }], null])
    ],
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
    ["context_management", contextManagementValue],
    ["output_config", outputConfigValue],
    ["output_format", outputFormatValue],
    ["cache_control", cacheControlValue],
    ["inference_geo", (rng) => rng.pick<Value>(["us", null])],
    ["betas", (rng) => rng.pick<Value>([["x"], null])],
    ["service_tier", (rng) => rng.pick<Value>(["auto", "standard_only", 1])],
    ["speed", (rng) => rng.pick<Value>(["fast", null])],
    ["diagnostics", (rng) => rng.pick<Value>([true, {}])]
  ]
}

/** The count takes the messages body's fields (max_tokens optional): the same table. */
const knownFieldsOf = (format: FuzzFormat) => KNOWN_FIELDS[format === "chat" ? "chat" : "messages"]

export const MUTATIONS: ReadonlyArray<readonly [weight: number, name: string, Mutation]> = [
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
    (rng, body, format) => {
      const objects = objectsOf(body)
      const { obj, path } = rng.chance(0.35) ? objects[0]! : rng.pick(objects)
      const key = format !== "chat" && rng.chance(0.3)
        ? rng.pick(ANTHROPIC_KEYS)
        : rng.chance(0.2) ? weirdString(rng).slice(0, 40) : rng.pick(UNKNOWN_KEYS)
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
    (rng, body, format) => {
      const messages = messagesOf(body)
      if (messages.length === 0) return undefined
      const message = rng.pick(messages)
      const part = () => (format !== "chat" && rng.chance(0.35) ? anthropicPart(rng) : randomPart(rng))
      message["content"] = rng.chance(0.1) ? [] : Array.from({ length: rng.between(1, 4) }, part)
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
      const [name, make] = rng.pick(knownFieldsOf(format))
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
const MESSAGES_MUTATIONS = [...MUTATIONS, ...ANTHROPIC_MUTATIONS]
const MESSAGES_TOTAL_WEIGHT = MESSAGES_MUTATIONS.reduce((sum, [w]) => sum + w, 0)

export const pickMutation = (rng: Rng, format: FuzzFormat) =>
  format === "chat" ? rng.weighted(MUTATIONS, TOTAL_WEIGHT) : rng.weighted(MESSAGES_MUTATIONS, MESSAGES_TOTAL_WEIGHT)
