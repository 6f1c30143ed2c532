/**
 * The mutations of the Responses formats (POST /v1/responses and /v1/responses/input_tokens): the shared ones of
 * fuzzMutations.ts that know no format (delete, retype, array size, model, deep nesting, unicode, number, stream),
 * then the Responses body's own, with the values of fuzzResponsesValues.ts: its known fields, input items of every
 * kind (images, files, audio and unknown ones among them), content parts, roles, tools and tool_choice, call pairs
 * whose ids match or not, reasoning items with sealed content that is not ours, the refused fields (background,
 * conversation, prompt, a previous_response_id naming nothing), unknown fields at every depth, huge strings and the
 * input's form. Also the request head beside the body (Codex's headers, a query string now and then).
 */
import { arraysOf, clone, type FuzzFormat, isObj, mixSeed, mulberry32, type Mutation, type Obj, objectsOf, put, Rng, setKey, slotsOf, type Value } from "./fuzzCore.ts"
import { MUTATIONS } from "./fuzzMutations.ts"
import { applyPatchTool, CODEX_HEADERS, responsesWeatherTool } from "./fuzzResponses.ts"
import { KNOWN_FIELDS, MISSING_RESPONSE_ID, reasoningValue, RESPONSES_KEYS, responsesItem, responsesPart, toolChoiceValue, toolValue } from "./fuzzResponsesValues.ts"
import { randomValue, UNKNOWN_KEYS, weirdNumber, weirdString } from "./fuzzValues.ts"

export { MISSING_RESPONSE_ID } from "./fuzzResponsesValues.ts"

/** The body's `input` as items (a string input becomes one user message), or undefined when it is not an array. */
const itemsOf = (body: Obj): Array<Value> | undefined => {
  if (typeof body["input"] === "string") body["input"] = [{ role: "user", content: body["input"] }]
  return Array.isArray(body["input"]) ? body["input"] : undefined
}

const messageItems = (body: Obj): Array<Obj> => (Array.isArray(body["input"]) ? body["input"].filter((item): item is Obj => isObj(item) && "role" in item) : [])

const byName = (names: ReadonlyArray<string>) => MUTATIONS.filter(([, name]) => names.includes(name))

export const RESPONSES_MUTATIONS: ReadonlyArray<readonly [weight: number, name: string, Mutation]> = [
  ...byName(["delete", "retype", "array size", "model", "deep nesting", "unicode", "number", "stream"]),
  [
    8,
    "unknown field",
    (rng, body) => {
      const objects = objectsOf(body)
      const { obj, path } = rng.chance(0.3) ? objects[0]! : rng.pick(objects)
      const key = rng.chance(0.35) ? rng.pick(RESPONSES_KEYS) : rng.chance(0.2) ? weirdString(rng).slice(0, 40) : rng.pick(UNKNOWN_KEYS)
      setKey(obj, key, randomValue(rng, 1))
      return `add ${path}.${JSON.stringify(key)}`
    }
  ],
  [
    10,
    "known field",
    (rng, body) => {
      const [name, make] = rng.pick(KNOWN_FIELDS)
      setKey(body, name, clone(make(rng)))
      return `set ${name}`
    }
  ],
  [
    6,
    "input item",
    (rng, body) => {
      const items = itemsOf(body)
      if (items === undefined) return undefined
      const at = rng.int(items.length + 1)
      items.splice(at, 0, responsesItem(rng))
      return `insert input item at ${at}`
    }
  ],
  [
    5,
    "content parts",
    (rng, body) => {
      itemsOf(body)
      const messages = messageItems(body)
      if (messages.length === 0) return undefined
      const message = rng.pick(messages)
      message["content"] = rng.chance(0.1) ? [] : Array.from({ length: rng.between(1, 3) }, () => responsesPart(rng))
      return "content parts"
    }
  ],
  [
    3,
    "role",
    (rng, body) => {
      itemsOf(body)
      const messages = messageItems(body)
      if (messages.length === 0) return undefined
      const message = rng.pick(messages)
      message["role"] = rng.pick<Value>(["user", "assistant", "system", "developer", "tool", "function", "model", "USER", "", null, 7])
      return `role ${String(message["role"])}`
    }
  ],
  [
    4,
    "tool",
    (rng, body) => {
      const tools = Array.isArray(body["tools"]) ? body["tools"] : (body["tools"] = [])
      tools.splice(rng.int(tools.length + 1), 0, toolValue(rng))
      if (rng.chance(0.3)) body["tool_choice"] = toolChoiceValue(rng)
      return "tool added"
    }
  ],
  [
    4,
    "refused field",
    (rng, body) => {
      const [name, value] = rng.pick<readonly [string, Value]>([
        ["background", true],
        ["conversation", "conv_1"],
        ["conversation", { id: "conv_1" }],
        ["prompt", { id: "pmpt_1" }],
        ["previous_response_id", MISSING_RESPONSE_ID],
        ["tool_choice", { type: "function", name: "no_such_tool" }]
      ])
      setKey(body, name, clone(value))
      return `refused ${name}`
    }
  ],
  [
    3,
    "reasoning item",
    (rng, body) => {
      const items = itemsOf(body)
      if (items === undefined) return undefined
      const existing = items.filter((item): item is Obj => isObj(item) && item["type"] === "reasoning")
      if (existing.length > 0 && rng.chance(0.5)) {
        const item = rng.pick(existing)
        const fresh = reasoningValue(rng) as Obj
        const key = rng.pick(["summary", "content", "encrypted_content", "id"])
        if (key in fresh) setKey(item, key, fresh[key]!)
        else delete item[key]
        return `reasoning item ${key}`
      }
      // Before an assistant's answer or call most of the time, else anywhere.
      const at = rng.int(items.length + 1)
      items.splice(at, 0, reasoningValue(rng))
      return `reasoning item at ${at}`
    }
  ],
  [
    3,
    "call pair",
    (rng, body) => {
      const items = itemsOf(body)
      if (items === undefined) return undefined
      const id = `call_fz_${rng.int(100)}`
      const custom = rng.chance(0.4)
      const call: Obj = custom
        ? { type: "custom_tool_call", call_id: id, name: "apply_patch", input: "*** Begin Patch\n*** End Patch\n" }
        : { type: "function_call", call_id: id, name: "get_weather", arguments: "{\"city\":\"Oslo\"}" }
      const output: Obj = { type: custom ? "custom_tool_call_output" : "function_call_output", call_id: rng.chance(0.7) ? id : "call_other", output: "ok" }
      const pair = rng.pick([[call, output], [call, output], [output, call], [call], [output]])
      items.splice(rng.int(items.length + 1), 0, ...pair)
      if (rng.chance(0.7)) {
        const tools = Array.isArray(body["tools"]) ? body["tools"] : (body["tools"] = [])
        tools.push(clone(custom ? applyPatchTool : responsesWeatherTool))
      }
      return `call pair ${pair.map((item) => item["type"]).join(",")}`
    }
  ],
  [
    2,
    "huge string",
    (rng, body) => {
      const strings = slotsOf(body).filter((slot) => typeof slot.value === "string")
      const huge = rng.pick(["a", "word ", "日本", "😀", "\\\""]).repeat(rng.between(2_000, 6_000))
      if (strings.length === 0 || rng.chance(0.3)) {
        body["instructions"] = huge
        return "huge instructions"
      }
      const slot = rng.pick(strings)
      put(slot, huge)
      return `huge string at ${slot.path}`
    }
  ],
  [
    2,
    "input form",
    (rng, body) => {
      if (Array.isArray(body["input"]) && rng.chance(0.5)) {
        body["input"] = rng.pick<Value>(["Just a string now", "", []])
        return "input made a string or empty"
      }
      if (rng.chance(0.3)) {
        delete body["input"]
        return "input deleted"
      }
      const arrays = arraysOf(body)
      body["input"] = rng.chance(0.5) || arrays.length === 0 ? [{ role: "user", content: weirdNumber(rng) }] : [clone(rng.pick(arrays).value)]
      return "input replaced"
    }
  ]
]

const TOTAL = RESPONSES_MUTATIONS.reduce((sum, [w]) => sum + w, 0)

export const pickResponsesMutation = (rng: Rng) => rng.weighted(RESPONSES_MUTATIONS, TOTAL)

/** The mutation a body too large to send falls back to: one unknown field. */
export const RESPONSES_FALLBACK = RESPONSES_MUTATIONS.find(([, name]) => name === "unknown field")!

// ---------------------------------------------------------------------------------------------------------
// The request head

/** Codex's headers as sent, or with odd values (the exchange reads none of them). */
const HEADER_VARIANTS: ReadonlyArray<(rng: Rng) => Record<string, string>> = [
  () => ({ ...CODEX_HEADERS }),
  () => ({ ...CODEX_HEADERS }),
  () => ({ ...CODEX_HEADERS, "x-codex-turn-metadata": "{not json" }),
  () => ({ ...CODEX_HEADERS, "x-codex-turn-metadata": `{"k":"${"v".repeat(4000)}"}` }),
  () => ({ "session-id": "", "thread-id": "x", originator: "codex_exec" }),
  () => ({ accept: "application/json" }),
  () => ({ accept: "text/event-stream", "openai-beta": "responses=v1" }),
  () => ({ "x-stainless-lang": "js", "openai-organization": "org-1", "openai-project": "proj-1" })
]

const QUERIES: ReadonlyArray<string> = ["?", "?stream=true", "?model=openai%2Fgpt-4.1", "?api-version=2025-04-01-preview", "?%E0%A4%A", "?x[]=1&__proto__[y]=2"]

/** The head beside a Responses body, from a stream of its own (so the bodies do not depend on it). */
export const responsesHeadOf = (format: FuzzFormat, seed: number, index: number): { extraHeaders: Record<string, string> | undefined; query: string } => {
  const rng = new Rng(mulberry32(mixSeed(seed, format, index) ^ 0x3c6ef372))
  const extraHeaders = rng.chance(0.3) ? rng.pick(HEADER_VARIANTS)(rng) : undefined
  const query = rng.chance(0.05) ? rng.pick(QUERIES) : ""
  return { extraHeaders, query }
}
