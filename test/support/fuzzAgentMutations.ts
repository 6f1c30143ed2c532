/**
 * The mutations of the messages formats only (POST /v1/messages and count_tokens): what Anthropic's own clients send
 * (efforts, cache_control, per-turn system turns, thinking / redacted_thinking blocks, the tools' own fields,
 * output_config, output_format, context_management, thinking), put where it belongs or where it does not. Drawn
 * with the shared mutations of fuzzMutations.ts.
 */
import { clone, isObj, messagesOf, type Mutation, type Obj, type Rng, setKey, type Value } from "./fuzzCore.ts"
import { ANSWER_SCHEMA, FOREIGN_SIGNATURE, REDACTED_DATA } from "./fuzzAgentDialect.ts"
import { anthropicTool } from "./fuzzSeeds.ts"
import { randomValue, weirdString } from "./fuzzValues.ts"

// ---------------------------------------------------------------------------------------------------------
// What Anthropic's own clients send, valid and hostile (the messages and count formats only)

export const EFFORTS: ReadonlyArray<string> = ["low", "medium", "high", "xhigh", "max"]
const BAD_EFFORTS: ReadonlyArray<Value> = ["minimal", "none", "", "HIGH", "Medium", "ultra", "max ", 1, 0.5, true, ["high"], { level: "high" }]

const effortValue = (rng: Rng): Value => (rng.chance(0.6) ? rng.pick(EFFORTS) : clone(rng.pick(BAD_EFFORTS)))

/** `cache_control` wherever Anthropic takes one: the two valid shapes, null (none), and what is refused. */
export const cacheControlValue = (rng: Rng): Value =>
  rng.pick<() => Value>([
    () => ({ type: "ephemeral" }),
    () => ({ type: "ephemeral", ttl: "1h" }),
    () => ({ type: "ephemeral", ttl: "5m" }),
    () => null,
    () => ({ type: "ephemeral", ttl: rng.pick<Value>(["2h", "", "5M", "1H", 300, null]) }),
    () => ({ type: rng.pick<Value>(["persistent", "", "EPHEMERAL", null, 1]) }),
    () => ({}),
    () => "ephemeral",
    () => true,
    () => [{ type: "ephemeral" }],
    () => ({ type: "ephemeral", scope: "global" })
  ])()

/** A per-turn `output_config` (effort only) or something like it. */
const turnOutputConfig = (rng: Rng): Value =>
  rng.pick<() => Value>([
    () => ({ effort: effortValue(rng) }),
    () => ({ effort: null }),
    () => ({}),
    () => null,
    () => ({ effort: "low", format: { type: "json_schema", schema: {} } }),
    () => ({ effort: "high", [rng.pick(["extra", "budget_tokens", "display"])]: 1 }),
    () => rng.pick(EFFORTS),
    () => []
  ])()

/** A system turn inside `messages` (per-turn control), usually well-formed. */
export const systemTurn = (rng: Rng): Obj => {
  const content = rng.pick<() => Value>([
    () => "Per-turn instructions.",
    () => "Per-turn instructions.",
    () => [{ type: "text", text: "Per-turn instructions.", cache_control: { type: "ephemeral" } }],
    () => [{ type: "text", text: "a" }, { type: "text", text: "b" }],
    () => "",
    () => [],
    () => Array.from({ length: 21 }, () => ({ type: "text", text: "s" })),
    () => [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }],
    () => [{ type: "tool_result", tool_use_id: "toolu_9", content: "x" }],
    () => [anthropicPart(rng)],
    () => null,
    () => 5
  ])()
  const turn: Obj = { role: "system", content }
  if (rng.chance(0.6)) turn["output_config"] = turnOutputConfig(rng)
  if (rng.chance(0.05)) setKey(turn, rng.pick(["name", "cache_control", "effort", "thinking"]), randomValue(rng, 1))
  return turn
}

/** A thinking / redacted_thinking block, or a tool block with a breakpoint: valid-looking or not. */
export const anthropicPart = (rng: Rng): Value => {
  const text = rng.chance(0.7) ? "Some earlier reasoning." : weirdString(rng)
  const withExtra = (block: Obj): Obj => {
    setKey(block, rng.pick(["cache_control", "citations", "id", "index", "extra", "signature_delta", "text", "type "]), randomValue(rng, 2))
    return block
  }
  return rng.pick<() => Value>([
    () => ({ type: "thinking", thinking: text, signature: FOREIGN_SIGNATURE }),
    () => ({ type: "thinking", thinking: text, signature: "" }),
    () => ({ type: "thinking", thinking: "", signature: "" }),
    () => ({ type: "thinking", thinking: "", signature: FOREIGN_SIGNATURE }),
    () => ({ type: "thinking", thinking: text }),
    () => ({ type: "thinking", signature: FOREIGN_SIGNATURE }),
    () => ({ type: "thinking", thinking: text, signature: clone(rng.pick<Value>([null, 5, ["sig"], {}, true])) }),
    () => ({ type: "thinking", thinking: randomValue(rng, 2), signature: "" }),
    () => ({ type: "thinking", thinking: text, signature: "", cache_control: { type: "ephemeral" } }),
    () => withExtra({ type: "thinking", thinking: text, signature: "" }),
    () => ({ type: "thinking", thinking: text, signature: "sig".repeat(rng.pick([1, 100, 2000])) }),
    () => ({ type: "redacted_thinking", data: REDACTED_DATA }),
    () => ({ type: "redacted_thinking", data: "" }),
    () => ({ type: "redacted_thinking" }),
    () => ({ type: "redacted_thinking", data: clone(rng.pick<Value>([null, 1, {}, ["x"]])) }),
    () => withExtra({ type: "redacted_thinking", data: REDACTED_DATA }),
    () => ({ type: "redacted_thinking", data: REDACTED_DATA, signature: FOREIGN_SIGNATURE }),
    () => ({ type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Oslo" }, cache_control: cacheControlValue(rng) }),
    () => ({ type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Oslo" }, caller: { type: "direct" } }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", content: "sunny", cache_control: cacheControlValue(rng) }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", is_error: true, cache_control: { type: "ephemeral" } }),
    () => ({ type: "tool_result", tool_use_id: "toolu_9", content: [{ type: "text", text: "sunny" }], cache_control: { type: "ephemeral", ttl: "1h" } }),
    () => ({ type: "text", text, cache_control: null })
  ])()
}

/** Anthropic's tool fields on a tool, as sent or wrongly typed. */
const TOOL_FIELDS: ReadonlyArray<readonly [string, (rng: Rng) => Value]> = [
  ["defer_loading", (rng) => rng.pick<Value>([true, false, true, "yes", 1, null])],
  ["input_examples", (rng) => clone(rng.pick<Value>([[{ city: "Paris" }], [], [{ city: "Paris" }, { city: "Rome" }], { city: "Paris" }, ["Paris"], [null], [[]], null, "x"]))],
  ["strict", (rng) => rng.pick<Value>([true, false, "true", 0, null])],
  ["eager_input_streaming", (rng) => rng.pick<Value>([true, false, "false", 1, null])],
  ["type", (rng) => rng.pick<Value>(["custom", "custom", "function", "bash_20250124", "", null])]
]

export const toolWithFields = (rng: Rng): Obj => {
  const tool = clone(anthropicTool) as Obj
  for (const [name, make] of TOOL_FIELDS) if (rng.chance(0.4)) setKey(tool, name, make(rng))
  return tool
}

/** Top-level `output_config`: effort and json_schema format, and their near misses. */
export const outputConfigValue = (rng: Rng): Value =>
  rng.pick<() => Value>([
    () => ({ effort: effortValue(rng) }),
    () => ({ effort: rng.pick(EFFORTS) }),
    () => ({ format: { type: "json_schema", schema: clone(ANSWER_SCHEMA) } }),
    () => ({ effort: rng.pick(EFFORTS), format: { type: "json_schema", schema: { type: "object" } } }),
    () => ({ effort: null, format: null }),
    () => ({}),
    () => null,
    () => ({ format: { type: "json_object" } }),
    () => ({ format: { type: "json_schema" } }),
    () => ({ format: { type: "json_schema", schema: clone(rng.pick<Value>(["x", [], null, 1])) } }),
    () => ({ format: { type: "json_schema", schema: {}, name: "answer" } }),
    () => ({ task_budget: { type: "tokens", total: 1000 } }),
    () => ({ effort: "low", extra: true }),
    () => rng.pick<Value>(["high", [], 1, true])
  ])()

export const outputFormatValue = (rng: Rng): Value =>
  clone(
    rng.pick<Value>([
      { type: "json_schema", schema: ANSWER_SCHEMA },
      { type: "json_schema", schema: {} },
      null,
      { type: "json_schema" },
      { type: "json_object" },
      { type: "json" },
      { schema: {} },
      { type: "json_schema", schema: ANSWER_SCHEMA, strict: true },
      "json_schema",
      []
    ])
  )

export const contextManagementValue = (rng: Rng): Value =>
  clone(
    rng.pick<Value>([
      {},
      { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      { edits: [{ type: "clear_tool_uses_20250919", trigger: { type: "input_tokens", value: 30000 }, keep: { type: "tool_uses", value: 3 } }] },
      { edits: [] },
      { edits: "clear" },
      null,
      "auto",
      [],
      [{}],
      5,
      true
    ])
  )

export const thinkingValue = (rng: Rng): Value =>
  clone(
    rng.pick<Value>([
      { type: "enabled", budget_tokens: 1024 },
      { type: "enabled", budget_tokens: 1023 },
      { type: "enabled", budget_tokens: 100_000 },
      { type: "enabled" },
      { type: "disabled" },
      { type: "adaptive" },
      { type: "adaptive", display: "omitted" },
      { type: "adaptive", display: "summarized" },
      { type: "adaptive", display: null },
      { type: "adaptive", display: "hidden" },
      { type: "adaptive", budget_tokens: 1024 },
      { type: "adaptive", effort: "high" },
      { type: "disabled", display: "omitted" },
      { type: "between_tools" },
      { type: "enabled", budget_tokens: 1024, display: "full" },
      { type: "enabled", budget_tokens: 1024, display: "omitted" },
      null
    ])
  )

// ---------------------------------------------------------------------------------------------------------
// The mutations

/** Object keys the messages formats know somewhere, put where they do not belong. */
export const ANTHROPIC_KEYS: ReadonlyArray<string> = [
  "output_config",
  "context_management",
  "output_format",
  "thinking",
  "redacted_thinking",
  "signature",
  "data",
  "effort",
  "display",
  "budget_tokens",
  "defer_loading",
  "input_examples",
  "strict",
  "eager_input_streaming",
  "cache_control",
  "citations",
  "caller",
  "betas",
  "anthropic-beta",
  "anthropic_beta"
]

const assistantTurns = (body: Obj): Array<Obj> => messagesOf(body).filter((m) => m["role"] === "assistant")

const blocksOf = (body: Obj, type: string): Array<Obj> =>
  messagesOf(body).flatMap((m) => (Array.isArray(m["content"]) ? m["content"].filter((b): b is Obj => isObj(b) && b["type"] === type) : []))

/** Turns appended after the last message (which a mutation may have made anything): a new exchange to mutate. */
const appendTurns = (body: Obj, turns: ReadonlyArray<Obj>): boolean => {
  if (!Array.isArray(body["messages"])) return false
  body["messages"].push(...turns)
  return true
}

/** The messages formats only: what Anthropic's own clients send, put where it belongs or where it does not. */
export const ANTHROPIC_MUTATIONS: ReadonlyArray<readonly [weight: number, name: string, Mutation]> = [
  [
    3,
    "system turn",
    (rng, body) => {
      if (!Array.isArray(body["messages"])) return undefined
      const messages = body["messages"]
      // First a third of the time: refused (messages.0.role), the top-level system is for that.
      const at = rng.chance(0.35) ? 0 : rng.between(1, messages.length)
      messages.splice(at, 0, systemTurn(rng))
      return `system turn at ${at}`
    }
  ],
  [
    1,
    "system turn first",
    (rng, body) => {
      const messages = messagesOf(body)
      if (messages.length === 0) return undefined
      messages[0]!["role"] = "system"
      if (rng.chance(0.5)) messages[0]!["output_config"] = turnOutputConfig(rng)
      return "first turn made a system turn"
    }
  ],
  [
    3,
    "reasoning block",
    (rng, body) => {
      const messages = messagesOf(body)
      if (messages.length === 0) return undefined
      // An assistant turn most of the time (where they belong), else any.
      const turns = assistantTurns(body)
      const message = turns.length > 0 && rng.chance(0.8) ? rng.pick(turns) : rng.pick(messages)
      const block = rng.chance(0.5)
        ? ({ type: "thinking", thinking: "Replayed reasoning.", signature: rng.pick(["", "", FOREIGN_SIGNATURE]) } as Obj)
        : anthropicPart(rng)
      const content = message["content"]
      const blocks: Array<Value> = Array.isArray(content) ? content : typeof content === "string" ? [{ type: "text", text: content }] : []
      // Reasoning leads its turn; now and then it comes after the text.
      if (rng.chance(0.8)) blocks.unshift(block)
      else blocks.push(block)
      message["content"] = blocks
      return `reasoning block in a ${String(message["role"])} turn`
    }
  ],
  [
    2,
    "thinking block fields",
    (rng, body) => {
      const blocks = [...blocksOf(body, "thinking"), ...blocksOf(body, "redacted_thinking")]
      if (blocks.length === 0) {
        // None to change: an earlier answer with its reasoning replayed, then the next question.
        const replayed: Obj = rng.chance(0.7)
          ? { type: "thinking", thinking: "Earlier reasoning.", signature: "" }
          : { type: "redacted_thinking", data: REDACTED_DATA }
        const added = appendTurns(body, [
          { role: "assistant", content: [replayed, { type: "text", text: "Earlier answer." }] },
          { role: "user", content: "And then?" }
        ])
        if (!added) return undefined
        blocks.push(replayed)
      }
      const block = rng.pick(blocks)
      switch (rng.int(5)) {
        case 0:
          block["signature"] = ""
          return "empty signature"
        case 1:
          delete block[rng.pick(["signature", "thinking", "data"])]
          return "a reasoning block's field deleted"
        case 2:
          setKey(block, rng.pick(["cache_control", "extra", "signature", "data", "thinking", "citations"]), randomValue(rng, 1))
          return "extra key on a reasoning block"
        case 3:
          block["type"] = rng.pick(["thinking", "redacted_thinking", "Thinking", "thinking_delta", "reasoning"])
          return `reasoning block type ${String(block["type"])}`
        default:
          block[block["type"] === "redacted_thinking" ? "data" : "signature"] = weirdString(rng)
          return "weird signature"
      }
    }
  ],
  [
    2,
    "tool fields",
    (rng, body) => {
      const tools = Array.isArray(body["tools"]) ? body["tools"].filter(isObj) : []
      if (tools.length === 0) {
        body["tools"] = [toolWithFields(rng)]
        return "tools with Anthropic's fields"
      }
      const [name, make] = rng.pick(TOOL_FIELDS)
      setKey(rng.pick(tools), name, make(rng))
      return `tool field ${name}`
    }
  ],
  [
    2,
    "tool block breakpoint",
    (rng, body) => {
      const blocks = [...blocksOf(body, "tool_use"), ...blocksOf(body, "tool_result")]
      if (blocks.length === 0) {
        // None to mark: a tool call and its result, with the tool offered.
        const use: Obj = { type: "tool_use", id: "toolu_7", name: "get_weather", input: { city: "Kyiv" } }
        const result: Obj = { type: "tool_result", tool_use_id: "toolu_7", content: "9 degrees" }
        const added = appendTurns(body, [
          { role: "assistant", content: [use] },
          { role: "user", content: [result] }
        ])
        if (!added) return undefined
        if (!Array.isArray(body["tools"])) body["tools"] = [clone(anthropicTool)]
        blocks.push(use, result)
      }
      setKey(rng.pick(blocks), "cache_control", cacheControlValue(rng))
      return "cache_control on a tool block"
    }
  ],
  [
    3,
    "effort",
    (rng, body) => {
      // Adaptive thinking's budget is the effort's share of max_tokens: the boundaries are around 1024 and 2048.
      if (rng.chance(0.6)) body["thinking"] = clone(rng.pick<Value>([{ type: "adaptive" }, { type: "adaptive", display: "omitted" }, { type: "enabled", budget_tokens: 1024 }]))
      body["output_config"] = rng.chance(0.85) ? { effort: effortValue(rng) } : outputConfigValue(rng)
      if (rng.chance(0.5)) body["max_tokens"] = rng.pick<Value>([1024, 1025, 1280, 2048, 2049, 2100, 4096])
      return `effort ${JSON.stringify(body["output_config"])}`.slice(0, 80)
    }
  ],
  [
    2,
    "top-level fields",
    (rng, body) => {
      const [name, make] = rng.pick<readonly [string, (rng: Rng) => Value]>([
        ["context_management", contextManagementValue],
        ["output_config", outputConfigValue],
        ["output_format", outputFormatValue],
        ["cache_control", cacheControlValue]
      ])
      setKey(body, name, make(rng))
      // Both structured-output fields at once now and then (refused, naming output_format).
      if (name === "output_format" && rng.chance(0.3)) body["output_config"] = { format: { type: "json_schema", schema: { type: "object" } } }
      return `set ${name}`
    }
  ]
]
