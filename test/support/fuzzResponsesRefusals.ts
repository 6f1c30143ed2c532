/**
 * The Responses formats' refusals one at a time: each hostile change alone on a valid seed, with the answer it must
 * get (status, code and the `param` naming the field). The fuzz run mixes them with other changes, so only the
 * envelope can be checked there; here the exact refusal is. Every case applies to both POST /v1/responses and
 * /v1/responses/input_tokens unless it says otherwise.
 */
import { clone, isObj, type Obj, type Value } from "./fuzzCore.ts"
import { MISSING_RESPONSE_ID } from "./fuzzResponsesMutations.ts"

export interface RefusalCase {
  readonly name: string
  /** Changes the body (a copy of a seed) and returns the param the refusal must name (undefined: none). */
  readonly apply: (body: Obj) => string | undefined
  readonly status: number
  readonly code: string
  /** Only on POST /v1/responses (input_tokens takes no such field). */
  readonly sendOnly?: boolean
}

/** The body's input as items (a string input becomes one user message). */
const items = (body: Obj): Array<Value> => {
  if (!Array.isArray(body["input"])) body["input"] = [{ role: "user", content: typeof body["input"] === "string" ? body["input"] : "Hi" }]
  return body["input"] as Array<Value>
}

const appendItem = (body: Obj, item: Obj): string => `input.${items(body).push(item) - 1}`

const set = (key: string, value: Value) => (body: Obj) => {
  body[key] = clone(value)
  return key
}

export const RESPONSES_REFUSALS: ReadonlyArray<RefusalCase> = [
  { name: "background: true", apply: set("background", true), status: 422, code: "validation_failed", sendOnly: true },
  // input_tokens takes no `background`: an unknown field, refused naming it all the same.
  { name: "background on input_tokens", apply: set("background", true), status: 422, code: "validation_failed" },
  { name: "conversation", apply: set("conversation", "conv_1"), status: 422, code: "validation_failed" },
  { name: "conversation object", apply: set("conversation", { id: "conv_1" }), status: 422, code: "validation_failed" },
  { name: "prompt", apply: set("prompt", { id: "pmpt_1", version: "2" }), status: 422, code: "validation_failed", sendOnly: true },
  {
    name: "tool_choice naming a missing tool",
    apply: (body) => {
      body["tool_choice"] = { type: "function", name: "no_such_tool" }
      return "tool_choice.name"
    },
    status: 422,
    code: "validation_failed"
  },
  { name: "previous_response_id naming nothing", apply: (body) => (set("previous_response_id", MISSING_RESPONSE_ID)(body), undefined), status: 404, code: "not_found" },
  { name: "unknown top-level field", apply: set("x_extra", 1), status: 422, code: "validation_failed" },
  { name: "temperature of the wrong type", apply: set("temperature", "hot"), status: 422, code: "validation_failed", sendOnly: true },
  { name: "max_output_tokens below 16", apply: set("max_output_tokens", 15), status: 422, code: "validation_failed", sendOnly: true },
  { name: "top_p above 1", apply: set("top_p", 1.5), status: 422, code: "validation_failed", sendOnly: true },
  { name: "reasoning.effort unknown", apply: (body) => (set("reasoning", { effort: "max" })(body), "reasoning.effort"), status: 422, code: "validation_failed" },
  {
    name: "an image part",
    apply: (body) => `${appendItem(body, { role: "user", content: [{ type: "input_image", image_url: "https://example.com/cat.png" }] })}.content.0.type`,
    status: 422,
    code: "validation_failed"
  },
  {
    name: "a file part",
    apply: (body) => `${appendItem(body, { type: "message", role: "user", content: [{ type: "input_text", text: "See:" }, { type: "input_file", file_id: "file-1" }] })}.content.1.type`,
    status: 422,
    code: "validation_failed"
  },
  {
    name: "an unknown field on a message item",
    apply: (body) => `${appendItem(body, { type: "message", role: "user", content: "Hi", x_extra: true })}.x_extra`,
    status: 422,
    code: "validation_failed"
  },
  {
    name: "an unknown field on a message item without its type",
    apply: (body) => `${appendItem(body, { role: "user", content: "Hi", x_extra: true })}.x_extra`,
    status: 422,
    code: "validation_failed"
  },
  {
    name: "a message item's role",
    apply: (body) => `${appendItem(body, { type: "message", role: "tool", content: "Hi" })}.role`,
    status: 422,
    code: "validation_failed"
  },
  {
    name: "an unknown field on a function_call item",
    apply: (body) => `${appendItem(body, { type: "function_call", call_id: "call_x", name: "get_weather", arguments: "{}", x_extra: 1 })}.x_extra`,
    status: 422,
    code: "validation_failed"
  },
  {
    name: "a reasoning item's encrypted_content of the wrong type",
    apply: (body) => `${appendItem(body, { type: "reasoning", summary: [], encrypted_content: 5 })}.encrypted_content`,
    status: 422,
    code: "validation_failed"
  },
  {
    name: "an unknown field on a tool",
    apply: (body) => {
      const tools = Array.isArray(body["tools"]) ? body["tools"] : (body["tools"] = [])
      return `tools.${tools.push({ type: "function", name: "f", x_extra: 1 }) - 1}.x_extra`
    },
    status: 422,
    code: "validation_failed"
  },
  {
    name: "a namespace whose flattened name exceeds 64 characters",
    apply: (body) => {
      const tools = Array.isArray(body["tools"]) ? body["tools"] : (body["tools"] = [])
      return `tools.${tools.push({ type: "namespace", name: "n".repeat(40), tools: [{ type: "function", name: "f".repeat(30) }] }) - 1}.tools.0.name`
    },
    status: 422,
    code: "validation_failed"
  },
  {
    name: "text.format json_schema without a schema",
    apply: (body) => {
      body["text"] = { ...(isObj(body["text"] ?? null) ? (body["text"] as Obj) : {}), format: { type: "json_schema", name: "answer" } }
      return "text.format.schema"
    },
    status: 422,
    code: "validation_failed"
  }
]
