/**
 * The Anthropic Messages API's JSON shapes, both as OUR `/v1/messages` endpoint accepts them (inbound, strict) and
 * as an Anthropic upstream sends them back (lenient). Field names follow the official types
 * (@anthropic-ai/sdk resources/messages: MessageCreateParams, Message, ContentBlock, RawMessageStreamEvent, Usage,
 * MessageTokensCount).
 *
 * Inbound: a wire shape we do not understand is refused by the schema (validation_error with issues), because the
 * parameter policy allows no silent change of meaning. Objects are strict (`onExcessProperty: "error"`), except
 * the fields a replayed reply legitimately carries (`citations` on a text block, `caller` on a tool_use block).
 * The reply shapes we render and the upstream shapes we decode are in anthropicMessagesReply.ts.
 */
import { Schema } from "effect"

const Strict = { parseOptions: { onExcessProperty: "error" } } as const

/**
 * A literal union with one message listing every value. (`Schema.Literal("a", "b")` under `optional` is flattened
 * into the optional's union, and the formatter then reports each literal as a separate issue.)
 */
const oneOf = <const L extends ReadonlyArray<string>>(...values: L) =>
  Schema.String.pipe(
    Schema.filter((s): s is L[number] => values.includes(s), {
      message: (issue) => `Expected one of ${values.map((v) => JSON.stringify(v)).join(", ")}, actual ${JSON.stringify(issue.actual)}`
    })
  )

const PositiveInt = Schema.Number.pipe(Schema.int(), Schema.positive())
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  message: () => "Expected a JSON object"
})

/**
 * Refuses a block whose `type` is not one of `allowed`, naming the `type` field and saying what would be accepted
 * (a union's own message lists literals, not why). Anything not shaped like a block passes to the union behind it,
 * which reports it.
 */
const blockGate = (where: string, allowed: ReadonlyArray<string>, explain: (type: string) => string | undefined = () => undefined) =>
  Schema.Unknown.pipe(
    Schema.filter((u) => {
      if (typeof u !== "object" || u === null || !("type" in u) || typeof u.type !== "string") return true
      if (allowed.includes(u.type)) return true
      return {
        path: ["type"],
        message: explain(u.type) ?? `Content block type "${u.type}" is not supported in ${where}; use ${allowed.map((t) => `"${t}"`).join(", ")}.`
      }
    })
  )

// ---------------------------------------------------------------------------------------------------------
// Inbound request (POST /v1/messages)

/** SPEC "Prompt caching": `{type:"ephemeral", ttl?: "5m" | "1h"}`, anything else refused before pricing. */
export const CacheControl = Schema.Struct({
  type: Schema.Literal("ephemeral"),
  ttl: Schema.optional(oneOf("5m", "1h"))
}).annotations({ ...Strict, identifier: "CacheControl" })
export type CacheControl = typeof CacheControl.Type

/** `null` is what the SDK types allow for "no breakpoint". */
const OptionalCache = Schema.optional(Schema.NullOr(CacheControl))

export const TextBlockParam = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  cache_control: OptionalCache,
  // Dropped: citations annotate an earlier answer a client replays; they do not change the next one.
  citations: Schema.optional(Schema.Unknown)
}).annotations(Strict)
export type TextBlockParam = typeof TextBlockParam.Type

export const ToolUseBlockParam = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: JsonObject,
  // Declared so a breakpoint here is refused by name (SPEC lists no tool_use placement), not as an unknown field.
  cache_control: OptionalCache,
  // Dropped: who invoked the tool in an earlier reply (the SDK's Message carries it; a replayed turn echoes it).
  caller: Schema.optional(Schema.Unknown)
}).annotations(Strict)
export type ToolUseBlockParam = typeof ToolUseBlockParam.Type

const toolResultTextGate = blockGate("a tool_result's content", ["text"])

export const ToolResultBlockParam = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: Schema.optional(
    Schema.Union(
      Schema.String,
      Schema.Array(Schema.compose(toolResultTextGate, TextBlockParam, { strict: false })).pipe(Schema.maxItems(50))
    )
  ),
  is_error: Schema.optional(Schema.Boolean),
  // Declared so it is refused by name: SPEC puts breakpoints on the text blocks inside, not on the result itself.
  cache_control: OptionalCache
}).annotations(Strict)
export type ToolResultBlockParam = typeof ToolResultBlockParam.Type

/** An earlier turn's reasoning as Anthropic issued it, replayed with its signature (DESIGN.md section 10). */
export const ThinkingBlockParam = Schema.Struct({
  type: Schema.Literal("thinking"),
  thinking: Schema.String,
  signature: Schema.String
}).annotations(Strict)
export type ThinkingBlockParam = typeof ThinkingBlockParam.Type

export const RedactedThinkingBlockParam = Schema.Struct({
  type: Schema.Literal("redacted_thinking"),
  data: Schema.String
}).annotations(Strict)
export type RedactedThinkingBlockParam = typeof RedactedThinkingBlockParam.Type

const userGate = blockGate("a user turn", ["text", "tool_result"], (type) =>
  type === "tool_use" || type === "thinking" || type === "redacted_thinking" ? `A "${type}" block belongs in an assistant turn.` : undefined)
const assistantGate = blockGate("an assistant turn", ["text", "tool_use", "thinking", "redacted_thinking"], (type) =>
  type === "tool_result" ? `A "tool_result" block belongs in a user turn.` : undefined)
const systemTurnGate = blockGate("a system turn", ["text"])

const MAX_BLOCKS = 200

export const UserContentBlock = Schema.compose(userGate, Schema.Union(TextBlockParam, ToolResultBlockParam), { strict: false })
export const AssistantContentBlock = Schema.compose(
  assistantGate,
  Schema.Union(TextBlockParam, ToolUseBlockParam, ThinkingBlockParam, RedactedThinkingBlockParam),
  { strict: false }
)

export const UserMessageParam = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Union(Schema.String, Schema.Array(UserContentBlock).pipe(Schema.minItems(1), Schema.maxItems(MAX_BLOCKS)))
}).annotations(Strict)
export type UserMessageParam = typeof UserMessageParam.Type

export const AssistantMessageParam = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.Union(Schema.String, Schema.Array(AssistantContentBlock).pipe(Schema.minItems(1), Schema.maxItems(MAX_BLOCKS)))
}).annotations(Strict)
export type AssistantMessageParam = typeof AssistantMessageParam.Type

/** Adaptive thinking's depth; `xhigh` and `max` are Anthropic's levels above `high`. */
export const EffortLevel = oneOf("low", "medium", "high", "xhigh", "max")

/**
 * A system turn among the messages (Anthropic's per-turn system messages, which Claude Code sends with its
 * `per-turn-control` beta): text only, like the top-level `system`.
 */
export const SystemMessageParam = Schema.Struct({
  role: Schema.Literal("system"),
  content: Schema.Union(
    Schema.String,
    Schema.Array(Schema.compose(systemTurnGate, TextBlockParam, { strict: false })).pipe(Schema.minItems(1), Schema.maxItems(20))
  ),
  // The effort from this turn on (per-turn control): forwarded to Anthropic, dropped and named elsewhere.
  output_config: Schema.optional(Schema.NullOr(Schema.Struct({ effort: Schema.optional(Schema.NullOr(EffortLevel)) }).annotations(Strict)))
}).annotations(Strict)
export type SystemMessageParam = typeof SystemMessageParam.Type

export const MessageParam = Schema.Union(UserMessageParam, AssistantMessageParam, SystemMessageParam)
export type MessageParam = typeof MessageParam.Type

const systemGate = blockGate("system", ["text"])
export const SystemParam = Schema.Union(
  Schema.String,
  Schema.Array(Schema.compose(systemGate, TextBlockParam, { strict: false })).pipe(Schema.maxItems(20))
)

/** A client tool. Server tools (`web_search_...`, `bash_...`, ...) run on Anthropic's side: we cannot honour them. */
export const ToolParam = Schema.compose(
  Schema.Unknown.pipe(
    Schema.filter((u) =>
      typeof u === "object" && u !== null && "type" in u && u.type !== undefined && u.type !== "custom"
        ? { path: ["type"], message: `Tool type ${JSON.stringify(u.type)} is not supported; only client tools ({name, description?, input_schema}) are.` }
        : true
    )
  ),
  Schema.Struct({
    type: Schema.optional(Schema.Literal("custom")),
    name: Schema.String.pipe(Schema.minLength(1)),
    description: Schema.optional(Schema.String),
    input_schema: Schema.Struct({ type: Schema.Literal("object") }, Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    cache_control: OptionalCache,
    // Anthropic's own tool fields (tool search, examples, strict schemas, streaming of inputs): forwarded to
    // Anthropic as they are, dropped and named for other vendors.
    defer_loading: Schema.optional(Schema.Boolean),
    input_examples: Schema.optional(Schema.Array(JsonObject)),
    strict: Schema.optional(Schema.Boolean),
    eager_input_streaming: Schema.optional(Schema.Boolean)
  }).annotations(Strict),
  { strict: false }
)
export type ToolParam = typeof ToolParam.Type

const DisableParallel = Schema.optional(Schema.Boolean)
export const ToolChoiceParam = Schema.Union(
  Schema.Struct({ type: Schema.Literal("auto"), disable_parallel_tool_use: DisableParallel }).annotations(Strict),
  Schema.Struct({ type: Schema.Literal("any"), disable_parallel_tool_use: DisableParallel }).annotations(Strict),
  Schema.Struct({ type: Schema.Literal("tool"), name: Schema.String, disable_parallel_tool_use: DisableParallel }).annotations(Strict),
  Schema.Struct({ type: Schema.Literal("none") }).annotations(Strict)
)
export type ToolChoiceParam = typeof ToolChoiceParam.Type

/** `display: "omitted"` = reason but withhold the text (our `exclude`); `summarized` is the default. */
const ThinkingDisplay = Schema.optional(Schema.NullOr(oneOf("summarized", "omitted")))
export const ThinkingParam = Schema.Union(
  Schema.Struct({ type: Schema.Literal("enabled"), budget_tokens: Schema.Number.pipe(Schema.int()), display: ThinkingDisplay }).annotations(Strict),
  Schema.Struct({ type: Schema.Literal("disabled") }).annotations(Strict),
  Schema.Struct({ type: Schema.Literal("adaptive"), display: ThinkingDisplay }).annotations(Strict)
)
export type ThinkingParam = typeof ThinkingParam.Type

const UnitInterval = Schema.Number.pipe(Schema.between(0, 1))

/** Accepted and dropped: they pick capacity or diagnostics, never the answer (see anthropicInbound.ts). */
export const DROPPED_FIELDS = ["service_tier", "speed", "diagnostics"] as const
/**
 * Parsed so they can be refused by name (invalid_request_error): each runs something on the vendor's side that the
 * exchange can neither bill exactly nor promise (see anthropicInbound.ts).
 */
export const REFUSED_FIELDS = ["container", "mcp_servers", "inference_geo", "betas"] as const


const JsonSchemaFormat = Schema.Struct({ type: Schema.Literal("json_schema"), schema: JsonObject }).annotations(Strict)

export const OutputConfigParam = Schema.Struct({
  effort: Schema.optional(Schema.NullOr(EffortLevel)),
  format: Schema.optional(Schema.NullOr(JsonSchemaFormat))
}).annotations(Strict)
export type OutputConfigParam = typeof OutputConfigParam.Type

const ignored = <const K extends ReadonlyArray<string>>(keys: K) =>
  Object.fromEntries(keys.map((key) => [key, Schema.optional(Schema.Unknown)])) as { [P in K[number]]: Schema.optional<typeof Schema.Unknown> }

export const MessagesRequest = Schema.Struct({
  model: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  messages: Schema.Array(MessageParam).pipe(Schema.minItems(1)),
  max_tokens: PositiveInt,
  system: Schema.optional(SystemParam),
  stream: Schema.optional(Schema.Boolean),
  tools: Schema.optional(Schema.Array(ToolParam)),
  tool_choice: Schema.optional(ToolChoiceParam),
  thinking: Schema.optional(ThinkingParam),
  stop_sequences: Schema.optional(Schema.Array(Schema.String)),
  metadata: Schema.optional(Schema.Struct({ user_id: Schema.optional(Schema.NullOr(Schema.String)) }).annotations(Strict)),
  temperature: Schema.optional(UnitInterval),
  top_p: Schema.optional(UnitInterval),
  top_k: Schema.optional(PositiveInt),
  // The exchange's extensions (SPEC "Model selection").
  models: Schema.optional(Schema.Array(Schema.String.pipe(Schema.minLength(1))).pipe(Schema.minItems(1), Schema.maxItems(8))),
  routing_bias: Schema.optional(oneOf("cheaper", "balanced", "better")),
  conversation_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  // Anthropic's own fields that Claude Code sends (DESIGN.md section 10, "Agents' dialects").
  context_management: Schema.optional(Schema.NullOr(JsonObject)),
  output_config: Schema.optional(Schema.NullOr(OutputConfigParam)),
  output_format: Schema.optional(Schema.NullOr(JsonSchemaFormat)),
  cache_control: Schema.optional(Schema.NullOr(CacheControl)),
  ...ignored(DROPPED_FIELDS),
  ...ignored(REFUSED_FIELDS)
}).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" }, identifier: "MessagesRequest" })
export type MessagesRequest = typeof MessagesRequest.Type

/**
 * `POST /v1/messages/count_tokens`: the prompt of a messages request. `max_tokens` is optional (Anthropic's counter
 * takes none; a client that sends its whole messages body is answered all the same), and what only shapes the output
 * is accepted and does not change the count.
 */
export const CountTokensRequest = Schema.Struct({
  ...MessagesRequest.fields,
  max_tokens: Schema.optional(PositiveInt)
}).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" }, identifier: "CountTokensRequest" })
export type CountTokensRequest = typeof CountTokensRequest.Type

// ---------------------------------------------------------------------------------------------------------
// Outbound request (what we send to an Anthropic upstream): only what the exchange forwards.

export const CacheControlOut = Schema.Struct({ type: Schema.Literal("ephemeral"), ttl: Schema.optional(Schema.Literal("1h")) })
export type CacheControlOut = typeof CacheControlOut.Type

export const TextBlockOut = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  cache_control: Schema.optional(CacheControlOut)
})
export type TextBlockOut = typeof TextBlockOut.Type

export const ToolUseBlockOut = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: JsonObject,
  cache_control: Schema.optional(CacheControlOut)
})
export const ToolResultBlockOut = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: Schema.optional(Schema.Array(TextBlockOut)),
  is_error: Schema.optional(Schema.Boolean),
  cache_control: Schema.optional(CacheControlOut)
})
export type ToolResultBlockOut = typeof ToolResultBlockOut.Type

/** A replayed reasoning block, forwarded as the client sent it. */
export const ReasoningBlockOut = Schema.Union(
  Schema.Struct({ type: Schema.Literal("thinking"), thinking: Schema.String, signature: Schema.String }),
  Schema.Struct({ type: Schema.Literal("redacted_thinking"), data: Schema.String })
)

export const MessageOut = Schema.Struct({
  // `system`: a per-turn system message, kept in place for a client that sent it so (with its turn's effort).
  role: Schema.Literal("user", "assistant", "system"),
  content: Schema.Array(Schema.Union(TextBlockOut, ToolUseBlockOut, ToolResultBlockOut, ReasoningBlockOut)),
  output_config: Schema.optional(Schema.Struct({ effort: Schema.optional(Schema.Literal("low", "medium", "high", "xhigh", "max")) }))
})
export type MessageOut = typeof MessageOut.Type

export const ToolOut = Schema.Struct({
  name: Schema.String,
  description: Schema.optional(Schema.String),
  input_schema: JsonObject,
  cache_control: Schema.optional(CacheControlOut),
  defer_loading: Schema.optional(Schema.Boolean),
  input_examples: Schema.optional(Schema.Array(JsonObject)),
  strict: Schema.optional(Schema.Boolean),
  eager_input_streaming: Schema.optional(Schema.Boolean)
})
export type ToolOut = typeof ToolOut.Type

export const ToolChoiceOut = Schema.Union(
  Schema.Struct({ type: Schema.Literal("auto", "any"), disable_parallel_tool_use: Schema.optional(Schema.Boolean) }),
  Schema.Struct({ type: Schema.Literal("tool"), name: Schema.String, disable_parallel_tool_use: Schema.optional(Schema.Boolean) }),
  Schema.Struct({ type: Schema.Literal("none") })
)
export type ToolChoiceOut = typeof ToolChoiceOut.Type

export const ThinkingOut = Schema.Union(
  Schema.Struct({ type: Schema.Literal("enabled"), budget_tokens: Schema.Number, display: Schema.optional(Schema.Literal("summarized", "omitted")) }),
  Schema.Struct({ type: Schema.Literal("disabled") }),
  // Newer Claude models: the depth is `output_config.effort`; `display` asks for the summarized thinking text
  // (Opus 4.7 and later omit it by default) or omits it when the reply withholds reasoning anyway.
  Schema.Struct({ type: Schema.Literal("adaptive"), display: Schema.optional(Schema.Literal("summarized", "omitted")) })
)
export type ThinkingOut = typeof ThinkingOut.Type

/** `output_config`: the effort of adaptive thinking, and structured output (a JSON Schema the reply text follows). */
export const OutputConfigOut = Schema.Struct({
  effort: Schema.optional(Schema.Literal("low", "medium", "high", "xhigh", "max")),
  format: Schema.optional(Schema.Struct({ type: Schema.Literal("json_schema"), schema: JsonObject }))
})
export type OutputConfigOut = typeof OutputConfigOut.Type

/** The prompt side, shared by `/v1/messages` and `/v1/messages/count_tokens`. */
const promptFields = {
  model: Schema.String,
  messages: Schema.Array(MessageOut),
  system: Schema.optional(Schema.Array(TextBlockOut)),
  tools: Schema.optional(Schema.Array(ToolOut)),
  tool_choice: Schema.optional(ToolChoiceOut),
  thinking: Schema.optional(ThinkingOut),
  // Passed through from an Anthropic client (DESIGN.md section 10, "Agents' dialects").
  context_management: Schema.optional(JsonObject)
}

export const CountTokensRequestOut = Schema.Struct(promptFields)
export type CountTokensRequestOut = typeof CountTokensRequestOut.Type

export const MessagesRequestOut = Schema.Struct({
  ...promptFields,
  max_tokens: Schema.Number,
  stream: Schema.optional(Schema.Boolean),
  temperature: Schema.optional(Schema.Number),
  top_p: Schema.optional(Schema.Number),
  top_k: Schema.optional(Schema.Number),
  stop_sequences: Schema.optional(Schema.Array(Schema.String)),
  metadata: Schema.optional(Schema.Struct({ user_id: Schema.String })),
  output_config: Schema.optional(OutputConfigOut),
  cache_control: Schema.optional(CacheControlOut)
})
export type MessagesRequestOut = typeof MessagesRequestOut.Type
