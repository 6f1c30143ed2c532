/**
 * Hostile values of the Responses formats (POST /v1/responses and /v1/responses/input_tokens), valid-looking or not:
 * input parts and items of every kind (images, files, audio, unknown types), reasoning items with sealed content that
 * is not ours, tools and tool choices, and the body's known fields with plausible, borderline and wrong values. The
 * mutations that put them in a body are fuzzResponsesMutations.ts.
 */
import { clone, type Obj, type Rng, type Value } from "./fuzzCore.ts"
import { ANSWER_SCHEMA } from "./fuzzAgentDialect.ts"
import { agentsNamespace, applyPatchTool, BUILT_IN_TOOLS, RESPONSES_MODELS, responsesWeatherTool } from "./fuzzResponses.ts"
import { longString, nested, randomPart, randomValue, weirdString } from "./fuzzValues.ts"

/** A previous_response_id no account has: the request is 404 not_found before anything is reserved. */
export const MISSING_RESPONSE_ID = "resp_000000000000000000000000"

/** Keys the Responses format knows somewhere, put where they do not belong. */
export const RESPONSES_KEYS: ReadonlyArray<string> = [
  "call_id",
  "encrypted_content",
  "summary",
  "namespace",
  "format",
  "verbosity",
  "effort",
  "generate_summary",
  "external_web_access",
  "execution",
  "phase",
  "annotations",
  "logprobs",
  "status",
  "output",
  "arguments",
  "input",
  "instructions",
  "previous_response_id",
  "background",
  "conversation",
  "prompt",
  "defer_loading",
  "strict",
  "include_obfuscation"
]

/** An input part of any type: the text ones (valid), images, files, audio and unknown ones (refused, naming the part). */
export const responsesPart = (rng: Rng): Value => {
  const text = rng.chance(0.7) ? "part text" : weirdString(rng)
  return rng.pick<() => Value>([
    () => ({ type: "input_text", text }),
    () => ({ type: "output_text", text, annotations: [], logprobs: [] }),
    () => ({ type: "output_text", text, annotations: [{ type: "url_citation", url: "https://example.com" }] }),
    () => ({ type: "refusal", refusal: text }),
    () => ({ type: "refusal", text }),
    () => ({ type: "input_text" }),
    () => ({ type: "input_text", text: randomValue(rng, 2) }),
    () => ({ type: "input_image", image_url: "https://example.com/cat.png", detail: "auto" }),
    () => ({ type: "input_image", file_id: "file-1" }),
    () => ({ type: "input_file", file_id: "file-1" }),
    () => ({ type: "input_file", filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" }),
    () => ({ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }),
    () => ({ type: "reasoning_text", text }),
    () => ({ type: "summary_text", text }),
    () => randomPart(rng),
    () => ({ type: rng.pick(["", "INPUT_TEXT", "text", "input_text "]), text }),
    () => text,
    () => null
  ])()
}

/** An input item of any kind, valid-looking or not. */
export const responsesItem = (rng: Rng): Value => {
  const callId = rng.pick(["call_1", "call_fake_1", "call_9", "", "call_" + "x".repeat(300)])
  return rng.pick<() => Value>([
    () => ({ role: rng.pick(["user", "assistant", "system", "developer"]), content: rng.chance(0.5) ? "another turn" : [responsesPart(rng)] }),
    () => ({ type: "message", role: "user", content: [responsesPart(rng), responsesPart(rng)] }),
    () => ({ type: "message", role: "assistant", status: rng.pick(["completed", "in_progress", "incomplete", "done", null]), content: [{ type: "output_text", text: "x", annotations: [] }] }),
    () => ({ type: "message", role: "user", content: Array.from({ length: 51 }, () => ({ type: "input_text", text: "s" })) }),
    () => ({ type: "function_call", call_id: callId, name: "get_weather", arguments: rng.pick(["{\"city\":\"Oslo\"}", "", "not json", "{", "[]", "null"]) }),
    () => ({ type: "function_call", call_id: callId, name: "spawn_agent", namespace: rng.pick(["agents", "", "nope"]), arguments: "{}" }),
    () => ({ type: "function_call", call_id: callId, name: rng.pick(["", "no_such_tool", "x y", "😀"]), arguments: "{}" }),
    () => ({ type: "function_call_output", call_id: callId, output: rng.pick<Value>(["sunny", "", [{ type: "input_text", text: "sunny" }], [{ type: "input_image", image_url: "https://x" }], { text: "x" }, 5]) }),
    () => ({ type: "custom_tool_call", call_id: callId, name: rng.pick(["apply_patch", "nope"]), input: rng.pick(["*** Begin Patch\n*** End Patch\n", "", weirdString(rng)]) }),
    () => ({ type: "custom_tool_call_output", call_id: callId, output: rng.pick<Value>(["Done.", [{ type: "input_text", text: "Done." }], null]) }),
    () => reasoningValue(rng),
    () => ({ type: rng.pick(["item_reference", "computer_call", "computer_call_output", "web_search_call", "file_search_call", "image_generation_call", "code_interpreter_call", "local_shell_call", "mcp_call", "mcp_list_tools", "compaction", "tool_search_call", "unknown"]), id: "x_1" }),
    () => ({ type: "message", role: rng.pick(["tool", "function", "model", "", "USER"]), content: "x" }),
    () => ({ type: "message", content: "no role" }),
    () => randomValue(rng, 1)
  ])()
}

/** A reasoning item: its summary, content and sealed content as a client replays them, or wrong. */
export const reasoningValue = (rng: Rng): Value => {
  const item: Obj = { type: "reasoning" }
  if (rng.chance(0.8)) item["summary"] = clone(rng.pick<Value>([[], [{ type: "summary_text", text: "Thought." }], [{ type: "summary_text" }], [{ type: "text", text: "x" }], "summary", null]))
  if (rng.chance(0.6)) item["content"] = clone(rng.pick<Value>([null, [], [{ type: "reasoning_text", text: "Steps." }], [{ type: "text", text: "x" }], "steps"]))
  if (rng.chance(0.8)) {
    item["encrypted_content"] = rng.pick<() => Value>([
      () => "xyz",
      () => "",
      () => null,
      () => weirdString(rng),
      () => "gAAAAAB" + Array.from({ length: rng.between(10, 400) }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[rng.int(64)]).join(""),
      () => Buffer.from(JSON.stringify({ vendor: "anthropic", thinking: "forged", signature: "sig" })).toString("base64"),
      () => longString(rng),
      () => 42
    ])()
  }
  if (rng.chance(0.3)) item["id"] = rng.pick<Value>(["rs_fake_1", "", 7])
  if (rng.chance(0.1)) item["status"] = rng.pick<Value>(["completed", "bogus"])
  return item
}

/** A tool, valid-looking or not: functions with odd names and schemas, custom formats, namespaces, built-ins. */
export const toolValue = (rng: Rng): Value =>
  rng.pick<() => Value>([
    () => clone(responsesWeatherTool),
    () => clone(applyPatchTool),
    () => clone(agentsNamespace),
    () => clone(rng.pick(BUILT_IN_TOOLS)),
    () => ({ type: "function", name: rng.pick(["", "x y", "a".repeat(65), "😀", "get-weather_2", "__proto__"]), parameters: { type: "object" } }),
    () => ({ type: "function", name: "f", parameters: clone(rng.pick<Value>([[], "schema", { type: "array" }, null, { type: "object", properties: nested(rng, 30) }])) }),
    () => ({ type: "function", name: "f", strict: rng.pick<Value>([true, "yes", null]), defer_loading: rng.pick<Value>([true, false, "no"]) }),
    () => ({ type: "custom", name: "freeform", format: clone(rng.pick<Value>([{ type: "text" }, { type: "grammar", syntax: "regex", definition: "^[a-z]+$" }, { type: "grammar" }, { type: "grammar", syntax: 5, definition: [] }, "lark", null])) }),
    () => ({ type: "namespace", name: rng.pick(["ns", "n".repeat(40), ""]), tools: [{ type: "function", name: rng.pick(["inner", "i".repeat(30)]) }, { type: "custom", name: "inner2" }] }),
    () => ({ type: "namespace", name: "dup", tools: [{ type: "function", name: "same" }, { type: "function", name: "same" }] }),
    () => ({ type: "namespace", name: "nested", tools: [clone(agentsNamespace)] }),
    () => ({ type: "namespace", name: "ns", tools: rng.pick<Value>([[], null, "x", [{ type: "web_search" }]]) }),
    () => ({ type: "web_search", external_web_access: rng.pick<Value>([false, true, "no"]), user_location: { type: "approximate", country: "NO" }, filters: { allowed_domains: ["example.com"] } }),
    () => ({ type: "tool_search", execution: rng.pick<Value>(["client", "server", 5]), description: weirdString(rng), parameters: randomValue(rng, 1) }),
    () => ({ type: "mcp", server_label: "deepwiki", server_url: "https://mcp.example.com", require_approval: "never" }),
    () => ({ type: rng.pick(["computer_use_preview", "shell", "apply_patch", "function ", "Function", "", "unknown"]), name: "t" }),
    () => ({ name: "get_weather", parameters: {} }),
    () => ({ type: "function", function: { name: "get_weather" } })
  ])()

export const toolChoiceValue = (rng: Rng): Value =>
  clone(
    rng.pick<Value>([
      "auto",
      "none",
      "required",
      "any",
      "",
      { type: "function", name: "get_weather" },
      { type: "function", name: "no_such_tool" },
      { type: "function", name: "spawn_agent" },
      { type: "function", name: "agents__spawn_agent" },
      { type: "function", name: "spawn_agent", namespace: "agents" },
      { type: "custom", name: "apply_patch" },
      { type: "custom", name: "get_weather" },
      { type: "function" },
      { type: "web_search" },
      { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "get_weather" }] },
      { type: "mcp", server_label: "deepwiki" },
      { type: "function", function: { name: "get_weather" } },
      null
    ])
  )

/** The body's known fields with plausible, borderline or wrong values: they reach the refusals after parsing. */
export const KNOWN_FIELDS: ReadonlyArray<readonly [string, (rng: Rng) => Value]> = [
  ["input", (rng) => rng.pick<Value>(["Hi", "", [], [{ role: "user", content: "Hi" }], null, 5, { role: "user", content: "Hi" }, [[]]])],
  ["instructions", (rng) => rng.pick<Value>(["Be brief.", "", null, 5, ["Be brief."], weirdString(rng)])],
  ["stream", (rng) => rng.pick<Value>([true, true, false, null, "true", 1])],
  ["store", (rng) => rng.pick<Value>([false, false, false, true, null, "false", 0])],
  ["include", (rng) => rng.pick<Value>([["reasoning.encrypted_content"], ["message.output_text.logprobs", "file_search_call.results"], [], ["reasoning"], ["x"], "reasoning.encrypted_content", null])],
  ["tools", (rng) => Array.from({ length: rng.pick([0, 1, 2, 3, 129]) }, () => toolValue(rng))],
  ["tool_choice", toolChoiceValue],
  ["parallel_tool_calls", (rng) => rng.pick<Value>([true, false, null, "yes", 1])],
  [
    "text",
    (rng) =>
      clone(
        rng.pick<Value>([
          { format: { type: "text" } },
          { format: { type: "json_object" }, verbosity: "high" },
          { format: { type: "json_schema", name: "answer", schema: ANSWER_SCHEMA, strict: true } },
          { format: { type: "json_schema", name: "bad name!", schema: {} } },
          { format: { type: "json_schema", schema: {} } },
          { format: { type: "json_schema", name: "x", schema: "object" } },
          { format: { type: "yaml" } },
          { format: "json" },
          { verbosity: rng.pick(["low", "medium", "high", "max", "", null]) },
          { verbosity: "low", extra: true },
          {},
          null,
          "text"
        ])
      )
  ],
  [
    "reasoning",
    (rng) =>
      clone(
        rng.pick<Value>([
          { effort: rng.pick(["none", "minimal", "low", "medium", "high", "xhigh"]) },
          { effort: rng.pick(["max", "", "HIGH", null]), summary: rng.pick(["auto", "concise", "detailed", "none", null]) },
          { summary: "auto", generate_summary: "concise" },
          { effort: "high", budget_tokens: 1024 },
          { max_tokens: 1024 },
          {},
          null,
          "high"
        ])
      )
  ],
  ["max_output_tokens", (rng) => rng.pick<Value>([16, 15, 1, 0, -1, 1.5, 2100, 4096, 1e9, 10_000_000, null, "16"])],
  ["temperature", (rng) => rng.pick<Value>([0, 0.7, 1, 2, 2.5, -0.1, null, "0.5"])],
  ["top_p", (rng) => rng.pick<Value>([0, 0.5, 1, 1.5, -1, null])],
  ["metadata", (rng) => rng.pick<Value>([{ a: "b" }, { a: 1 }, { ["k".repeat(65)]: "v" }, { k: "v".repeat(513) }, Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])), {}, null, []])],
  ["user", (rng) => rng.pick<Value>(["u-1", "", weirdString(rng), null, 5])],
  ["safety_identifier", (rng) => rng.pick<Value>(["s-1", "", null, {}])],
  ["prompt_cache_key", (rng) => rng.pick<Value>(["session-1", "", null, weirdString(rng), 1])],
  ["prompt_cache_retention", (rng) => rng.pick<Value>(["in-memory", "24h", "", null, 24])],
  ["service_tier", (rng) => rng.pick<Value>(["auto", "flex", "priority", "", null, 1])],
  ["truncation", (rng) => rng.pick<Value>(["auto", "disabled", "none", null])],
  ["max_tool_calls", (rng) => rng.pick<Value>([1, 0, -1, 1.5, null])],
  ["top_logprobs", (rng) => rng.pick<Value>([0, 5, 20, 21, -1, null])],
  ["stream_options", (rng) => rng.pick<Value>([{ include_obfuscation: false }, { include_obfuscation: "no" }, { include_usage: true }, {}, null, "yes"])],
  ["client_metadata", (rng) => rng.pick<Value>([{ session_id: "s" }, { n: 1, o: { deep: [1] } }, {}, null, "meta", ["x"]])],
  ["background", (rng) => rng.pick<Value>([true, false, null, "true"])],
  ["conversation", (rng) => rng.pick<Value>(["conv_1", { id: "conv_1" }, null, ""])],
  ["prompt", (rng) => rng.pick<Value>([{ id: "pmpt_1", version: "2" }, { id: "pmpt_1", variables: { city: "Oslo" } }, null, "pmpt_1"])],
  ["previous_response_id", (rng) => rng.pick<Value>([MISSING_RESPONSE_ID, "resp_", "", null, "gen_000000000000000000000000", "x".repeat(300), 5])],
  ["models", (rng) => rng.pick<Value>([["gpt-4.1"], ["auto"], [], Array.from({ length: 9 }, () => "gpt-4.1"), ["nobody/x", "gpt-4.1"], ["openai/gpt-tiny"], [""]])],
  ["conversation_id", (rng) => rng.pick<Value>(["conv-1", "", "c".repeat(201), weirdString(rng), null])],
  ["routing_bias", (rng) => rng.pick<Value>(["cheaper", "balanced", "better", "worse", null])],
  ["model", (rng) => rng.pick<Value>([...RESPONSES_MODELS, "gpt-5.5", "codex-mini-latest", "openai/gpt-tiny"])]
]
