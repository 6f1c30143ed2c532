/**
 * What Anthropic's own clients send to POST /v1/messages and /v1/messages/count_tokens, valid (docs/decisions.md
 * "Messages as Anthropic's own clients send them", "Token counting"): the seeds with context_management,
 * output_config, output_format, per-turn system turns, thinking / redacted_thinking blocks and the tools' own fields,
 * trimmed Claude Code bodies (test/fixtures/claude-code), the whole MESSAGES_SEEDS and COUNT_SEEDS, and the request
 * head beyond the body (the `anthropic-beta` header and the query string). Their hostile variants are in
 * fuzzAgentMutations.ts.
 */
import * as Fs from "node:fs"
import { clone, deepFreeze, type FuzzFormat, isObj, mixSeed, mulberry32, type Obj, Rng, setKey, type Value } from "./fuzzCore.ts"
import { anthropicTool, PLAIN_MESSAGES_SEEDS } from "./fuzzSeeds.ts"

// What Anthropic's own clients send (docs/decisions.md "Messages as Anthropic's own clients send them").

/** A captured Claude Code request (test/fixtures/claude-code): its path, headers and body. */
interface ClaudeCodeCapture {
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: Obj
}

const claudeCodeCapture = (turn: "turn1" | "turn2"): ClaudeCodeCapture =>
  JSON.parse(Fs.readFileSync(new URL(`../fixtures/claude-code/${turn}.json`, import.meta.url), "utf8")) as ClaudeCodeCapture

/** The `anthropic-beta` header Claude Code sends (the same on both captured turns). */
export const CLAUDE_CODE_BETAS: string = claudeCodeCapture("turn1").headers["anthropic-beta"]!

/** Every string cut to `max` characters (the ids and signatures are shorter): the body keeps its shape, not its bulk. */
const shorten = (value: Value, max: number): Value => {
  if (typeof value === "string") return value.length > max ? value.slice(0, max) : value
  if (Array.isArray(value)) return value.map((v) => shorten(v, max))
  if (isObj(value)) {
    const out: Obj = {}
    for (const key of Object.keys(value)) setKey(out, key, shorten(value[key]!, max))
    return out
  }
  return value
}

/** The tools of a captured body kept in its trimmed copy: one with a full schema, a small one, the deferred one. */
const CLAUDE_CODE_TOOLS = ["Read", "Write", "DeferredToolPlaceholder"]

/**
 * A captured Claude Code body, cheap: three of its twelve tools, every text cut to 120 characters, served by `model`
 * with `max_tokens` (adaptive thinking at medium effort needs more than 2048). Everything else as captured: adaptive
 * thinking with display omitted, output_config.effort, context_management, the per-turn system message with its
 * effort, breakpoints on system blocks and the tool_result, a replayed thinking block with its signature (turn 2).
 */
const trimmedClaudeCode = (turn: "turn1" | "turn2", model: string, maxTokens: number): Obj => {
  const body = clone(claudeCodeCapture(turn).body) as Obj
  body["tools"] = (body["tools"] as Array<Obj>).filter((tool) => CLAUDE_CODE_TOOLS.includes(tool["name"] as string))
  body["model"] = model
  body["max_tokens"] = maxTokens
  return shorten(body, 120) as Obj
}

/**
 * Claude Code's second turn replays a thinking block signed by the simulator process that served the capture: an
 * Anthropic upstream refuses it (400 `Invalid signature in thinking block`), which the exchange answers as a 4xx.
 */
const CLAUDE_CODE_TURN2_TO_ANTHROPIC = trimmedClaudeCode("turn2", "claude-sonnet-4-5", 2100)

export const ANSWER_SCHEMA = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false }

/** A redacted_thinking block's opaque data, as Anthropic returns it (forwarded as sent; the simulator does not check it). */
export const REDACTED_DATA = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"

/** A signature Anthropic would not take back: the simulator process that issued it is gone. */
export const FOREIGN_SIGNATURE = "QGFrm6yj302pjWXMD0VEo/9HKt0GiuPbOEsnfNPAf1Y="

const ANTHROPIC_CLIENT_SEEDS: ReadonlyArray<Obj> = [
  {
    model: "claude-sonnet-4-5",
    max_tokens: 32,
    context_management: { edits: [{ type: "clear_tool_uses_20250919", trigger: { type: "input_tokens", value: 30000 } }] },
    messages: [{ role: "user", content: "Manage my context" }]
  },
  { model: "openai/gpt-4.1", max_tokens: 24, context_management: {}, cache_control: { type: "ephemeral" }, messages: [{ role: "user", content: "Dropped and named" }] },
  { model: "anthropic/claude-sonnet-4.5", max_tokens: 24, output_config: { effort: "high" }, messages: [{ role: "user", content: "Effort without thinking" }] },
  {
    model: "openai/gpt-4.1",
    max_tokens: 48,
    output_config: { format: { type: "json_schema", schema: ANSWER_SCHEMA } },
    messages: [{ role: "user", content: "Answer in JSON" }]
  },
  {
    model: "claude-sonnet-4-5",
    stream: true,
    max_tokens: 48,
    output_format: { type: "json_schema", schema: ANSWER_SCHEMA },
    messages: [{ role: "user", content: "Stream JSON" }]
  },
  {
    model: "claude-sonnet-4-5",
    max_tokens: 2100,
    thinking: { type: "adaptive", display: "omitted" },
    output_config: { effort: "medium" },
    messages: [{ role: "user", content: "Think adaptively, quietly" }]
  },
  {
    model: "deepseek/deepseek-reasoner",
    stream: true,
    max_tokens: 1300,
    thinking: { type: "adaptive" },
    output_config: { effort: "xhigh" },
    messages: [{ role: "user", content: "Think hard" }]
  },
  {
    model: "google/gemini-2.5-flash",
    max_tokens: 1300,
    thinking: { type: "adaptive", display: "summarized" },
    output_config: { effort: "max", format: { type: "json_schema", schema: ANSWER_SCHEMA } },
    messages: [{ role: "user", content: "Think as hard as you can" }]
  },
  { model: "openai/gpt-5", max_tokens: 1100, thinking: { type: "adaptive" }, output_config: { effort: "low" }, messages: [{ role: "user", content: "Think a little" }] },
  {
    model: "anthropic/claude-sonnet-4.5",
    max_tokens: 16,
    cache_control: { type: "ephemeral", ttl: "1h" },
    system: "You are a careful assistant with a long enough system prompt to cache.",
    messages: [{ role: "user", content: "Cache automatically" }]
  },
  {
    model: "claude-sonnet-4-5",
    max_tokens: 32,
    messages: [
      { role: "user", content: "First question" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Another vendor's reasoning, unsigned", signature: "" },
          { type: "redacted_thinking", data: REDACTED_DATA },
          { type: "text", text: "First answer" }
        ]
      },
      { role: "user", content: "Second question" }
    ]
  },
  {
    model: "deepseek/deepseek-reasoner",
    max_tokens: 1100,
    thinking: { type: "enabled", budget_tokens: 1024 },
    tools: [anthropicTool],
    messages: [
      { role: "user", content: "Weather in Oslo? Use a tool." },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I should call the tool.", signature: FOREIGN_SIGNATURE },
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Oslo" }, cache_control: { type: "ephemeral" } }
        ]
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "4 degrees", cache_control: { type: "ephemeral", ttl: "5m" } }] }
    ]
  },
  {
    model: "anthropic/claude-sonnet-4.5",
    max_tokens: 48,
    tools: [anthropicTool],
    messages: [
      { role: "user", content: "Weather in Lima? Use a tool." },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_3", name: "get_weather", input: { city: "Lima" }, cache_control: { type: "ephemeral" } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_3", content: [{ type: "text", text: "20 degrees" }], is_error: false, cache_control: { type: "ephemeral" } },
          { type: "text", text: "Thanks" }
        ]
      }
    ]
  },
  {
    model: "claude-sonnet-4-5",
    max_tokens: 32,
    system: "Top-level instructions.",
    messages: [
      { role: "user", content: "Hello" },
      { role: "system", content: "Reply in one line.", output_config: { effort: "low" } }
    ]
  },
  {
    model: "openai/gpt-4.1",
    stream: true,
    max_tokens: 24,
    messages: [
      { role: "user", content: "Hello" },
      { role: "assistant", content: "Hi." },
      { role: "system", content: [{ type: "text", text: "From now on, be terse.", cache_control: { type: "ephemeral" } }], output_config: { effort: null } },
      { role: "user", content: "Go on" }
    ]
  },
  {
    model: "claude-sonnet-4-5",
    max_tokens: 48,
    tools: [
      { ...anthropicTool, strict: true, input_examples: [{ city: "Paris" }], eager_input_streaming: true },
      { name: "lookup", description: "Loaded on demand", input_schema: { type: "object", properties: {} }, defer_loading: true }
    ],
    messages: [{ role: "user", content: "Which tools do you have?" }]
  },
  {
    model: "google/gemini-2.5-flash",
    max_tokens: 48,
    tools: [{ ...anthropicTool, type: "custom", defer_loading: false, strict: false, input_examples: [], eager_input_streaming: false }],
    messages: [{ role: "user", content: "Tools with fields Gemini drops" }]
  },
  trimmedClaudeCode("turn1", "claude-sonnet-4-5", 2100),
  trimmedClaudeCode("turn1", "openai/gpt-5", 2100),
  CLAUDE_CODE_TURN2_TO_ANTHROPIC,
  trimmedClaudeCode("turn2", "deepseek/deepseek-reasoner", 2100)
]

export const MESSAGES_SEEDS: ReadonlyArray<Obj> = deepFreeze([...PLAIN_MESSAGES_SEEDS, ...ANTHROPIC_CLIENT_SEEDS])

/** Seeds that are valid here but that the upstream refuses (a 4xx in the envelope, after the hold is released). */
export const UPSTREAM_REFUSED_SEEDS: ReadonlySet<Obj> = new Set([CLAUDE_CODE_TURN2_TO_ANTHROPIC])

const omitKeys = (obj: Obj, keys: ReadonlyArray<string>): Obj => {
  const out: Obj = {}
  for (const key of Object.keys(obj)) if (!keys.includes(key)) setKey(out, key, clone(obj[key]!))
  return out
}

/**
 * POST /v1/messages/count_tokens: the prompt of a messages request, `max_tokens` optional (a whole messages body is
 * taken too). Counted by the vendor's counter (Anthropic, Gemini) or estimated locally (OpenAI, DeepSeek).
 */
export const COUNT_SEEDS: ReadonlyArray<Obj> = deepFreeze([
  { model: "anthropic/claude-sonnet-4.5", messages: [{ role: "user", content: "Count me" }] },
  {
    model: "claude-sonnet-4-5",
    system: [{ type: "text", text: "You are a careful assistant.", cache_control: { type: "ephemeral" } }],
    tools: [anthropicTool],
    tool_choice: { type: "auto" },
    messages: [{ role: "user", content: "Count with tools" }]
  },
  { model: "google/gemini-2.5-flash", system: "Be brief.", messages: [{ role: "user", content: "Count for Gemini" }] },
  { model: "openai/gpt-4.1", messages: [{ role: "user", content: "Count locally" }, { role: "assistant", content: "Counted." }, { role: "user", content: "Again" }] },
  { model: "deepseek/deepseek-reasoner", thinking: { type: "enabled", budget_tokens: 4096 }, messages: [{ role: "user", content: "A budget and no max_tokens" }] },
  { model: "auto", messages: [{ role: "user", content: "Count for whichever serves" }] },
  { messages: [{ role: "user", content: "No model is auto" }] },
  { model: "auto", routing_bias: "cheaper", messages: [{ role: "user", content: "Cheap" }] },
  { model: "openai/gpt-5", models: ["google/gemini-2.5-flash", "claude-sonnet-4-5"], messages: [{ role: "user", content: "The costliest candidate" }] },
  { model: "claude-sonnet-4-5", max_tokens: 16, stream: true, temperature: 0.5, stop_sequences: ["END"], metadata: { user_id: "u-1" }, messages: [{ role: "user", content: "A whole send body" }] },
  {
    model: "claude-sonnet-4-5",
    thinking: { type: "adaptive", display: "omitted" },
    output_config: { effort: "max" },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    cache_control: { type: "ephemeral" },
    messages: [{ role: "user", content: "Count it all" }, { role: "system", content: "Per turn.", output_config: { effort: "high" } }]
  },
  // The messages seeds: every other one without max_tokens and stream, which do not change the count.
  ...MESSAGES_SEEDS.map((seed, i) => (i % 2 === 0 ? omitKeys(seed, ["max_tokens", "stream"]) : seed))
])

/** `anthropic-beta` values: Claude Code's list most often, then single betas, empty, repeated and garbage ones. */
const BETA_HEADERS: ReadonlyArray<readonly [weight: number, value: string]> = [
  [8, CLAUDE_CODE_BETAS],
  [2, "context-management-2025-06-27"],
  [2, "interleaved-thinking-2025-05-14, effort-2025-11-24"],
  [2, ""],
  [1, " , ,,"],
  [1, "not-a-beta"],
  [1, "claude-code-20250219,claude-code-20250219"],
  [1, Array.from({ length: 200 }, (_, i) => `beta-${i}`).join(",")],
  [1, "b".repeat(4000)],
  [1, "'; DROP TABLE holds; --"],
  [1, "{\"betas\":[\"x\"]}"],
  [1, "caf\u00e9-2025"],
  [1, "data: [DONE]"]
]
const BETA_TOTAL = BETA_HEADERS.reduce((sum, [w]) => sum + w, 0)

/** Query strings: `?beta=true` (Claude Code) most often, then empty, repeated, odd and malformed ones. */
const QUERIES: ReadonlyArray<readonly [weight: number, value: string]> = [
  [10, "?beta=true"],
  [1, "?beta=false"],
  [1, "?"],
  [1, "?beta"],
  [1, "?beta=true&beta=true"],
  [1, "?beta=%ZZ"],
  [1, "?%E0%A4%A"],
  [1, "?beta[]=true&__proto__[x]=1"],
  [1, `?beta=true&x=${"y".repeat(2000)}`],
  [1, "?beta=true&&&=&;x=1"],
  [1, "?model=openai%2Fgpt-4.1&stream=true"]
]
const QUERY_TOTAL = QUERIES.reduce((sum, [w]) => sum + w, 0)

/**
 * The request head beyond the body, from a stream of its own (so the bodies do not depend on it): the messages
 * formats carry the beta header about a third of the time and a query string about a quarter; chat rarely.
 */
export const headOf = (format: FuzzFormat, seed: number, index: number): { betaHeader: string | undefined; query: string } => {
  const rng = new Rng(mulberry32(mixSeed(seed, format, index) ^ 0x68e31da4))
  const often = format !== "chat"
  const betaHeader = rng.chance(often ? 0.35 : 0.05) ? rng.weighted(BETA_HEADERS, BETA_TOTAL)[1] : undefined
  const query = rng.chance(often ? 0.25 : 0.05) ? rng.weighted(QUERIES, QUERY_TOTAL)[1] : ""
  return { betaHeader, query }
}
