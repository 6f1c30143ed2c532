/**
 * Per-model traits the exchange needs beyond the price cards: how a model takes reasoning, how reasoning is switched
 * off, which sampling parameters it refuses, and which structured features it takes natively. The cards are hashed
 * into attested revisions and stay as they are; these traits live in data/exchange/model-traits.yaml (read once by
 * services/exchange/traitsData.ts), each entry with the vendor document it comes from. Pure.
 *
 * A model the file does not list gets DEFAULT_TRAITS: today's behaviour, nothing refused that a vendor might take
 * (sampling free, tools and structured output taken, the upstream format's default reasoning shape: `budget_tokens`
 * on Anthropic, `thinkingBudget` on Gemini, `reasoning_effort` on OpenAI-shaped vendors, and reasoning switched off
 * the way each translator did before traits: `{type:"disabled"}`, `thinkingBudget: 0`, nothing).
 */
import { Either, ParseResult, Schema } from "effect"
import { parse as parseYaml } from "yaml"
import { ValidationFailed } from "../errors.ts"
import type { ChatRequest } from "./canonical.ts"

export const MODEL_TRAITS_PATH = "data/exchange/model-traits.yaml"

/**
 * How the model is asked to reason:
 * - `adaptive`: Anthropic `thinking:{type:"adaptive"}` with `output_config.effort` (newer Claude models refuse
 *   `budget_tokens`);
 * - `budget`: a token budget (Anthropic `{type:"enabled", budget_tokens}`, Gemini 2.5 `thinkingBudget`);
 * - `level`: Gemini 3+ `thinkingLevel` (from `thinkingLevels`);
 * - `effort`: OpenAI-shaped `reasoning_effort`.
 */
export const ThinkingStyle = Schema.Literal("adaptive", "budget", "level", "effort")
export type ThinkingStyle = typeof ThinkingStyle.Type

/** A Gemini thinking level, in increasing depth. */
export const ThinkingLevel = Schema.Literal("minimal", "low", "medium", "high")
export type ThinkingLevel = typeof ThinkingLevel.Type

/**
 * What `reasoning.enabled:false` / `thinking:{type:"disabled"}` becomes upstream (SPEC "false switches reasoning off"):
 * - `disabled`: `thinking:{type:"disabled"}` (Anthropic; DeepSeek, Z.ai and Moonshot on the OpenAI-shaped format);
 * - `omit`: nothing is sent: the model does not reason unless asked (Claude Opus 4.7 / 4.8);
 * - `none` / `minimal`: that `reasoning_effort` (OpenAI-shaped), or `thinkingLevel:"minimal"` (Gemini 3 Flash);
 *   `minimal` is the vendor's documented lowest setting, "very few or no reasoning tokens";
 * - `budget0`: Gemini 2.5 `thinkingBudget: 0`;
 * - `refuse`: the model cannot stop reasoning; the request is refused with 422 naming the field.
 */
export const ReasoningOff = Schema.Literal("disabled", "omit", "none", "minimal", "budget0", "refuse")
export type ReasoningOff = typeof ReasoningOff.Type

/**
 * `locked`: the model takes `temperature` only at 1.0 and `top_p` only at 0.99 or above, and no `top_k` (SPEC
 * "Parameter policy": current Claude models); `free`: any value the format takes.
 */
export const Sampling = Schema.Literal("locked", "free")
export type Sampling = typeof Sampling.Type

/** One model's traits as resolved (the file's entry over DEFAULT_TRAITS). */
export interface ModelTraits {
  /** Undefined: the upstream format's default shape (what the translators did before traits). */
  readonly thinking?: ThinkingStyle | undefined
  /** The levels a `level` model accepts; undefined: all four. */
  readonly thinkingLevels?: ReadonlyArray<ThinkingLevel> | undefined
  /** Undefined: the format's default (Anthropic `disabled`, Gemini `budget0`, OpenAI-shaped nothing sent). */
  readonly reasoningOff?: ReasoningOff | undefined
  /** True when the model reasons when the request does not mention reasoning (relevant to forced tool choice). */
  readonly thinkingByDefault: boolean
  readonly sampling: Sampling
  /** Undefined: by vendor (Anthropic and Google take `top_k`, OpenAI-shaped vendors have no such field). */
  readonly topK?: boolean | undefined
  readonly tools: boolean
  /** `response_format` `json_schema` taken natively. */
  readonly structuredOutput: boolean
  /** `response_format` `json_object` taken natively; undefined: by vendor (Anthropic has no JSON mode). */
  readonly jsonMode?: boolean | undefined
  /** Where the traits come from; undefined on the default. */
  readonly source?: string | undefined
}

/** The traits of a model the file does not list: today's behaviour, nothing refused (see the module comment). */
export const DEFAULT_TRAITS: ModelTraits = {
  thinkingByDefault: false,
  sampling: "free",
  tools: true,
  structuredOutput: true
}

// ---------------------------------------------------------------------------------------------------------
// data/exchange/model-traits.yaml

const Text = Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "must not be empty"))

const Entry = Schema.Struct({
  source: Text,
  note: Schema.optional(Text),
  thinking: Schema.optional(ThinkingStyle),
  thinkingLevels: Schema.optional(Schema.Array(ThinkingLevel).pipe(Schema.minItems(1))),
  reasoningOff: Schema.optional(ReasoningOff),
  thinkingByDefault: Schema.optional(Schema.Boolean),
  sampling: Schema.optional(Sampling),
  topK: Schema.optional(Schema.Boolean),
  tools: Schema.optional(Schema.Boolean),
  structuredOutput: Schema.optional(Schema.Boolean),
  jsonMode: Schema.optional(Schema.Boolean)
}).pipe(
  Schema.filter((entry) => {
    if (entry.thinkingLevels !== undefined && entry.thinking !== "level") return "thinkingLevels needs thinking: level"
    if (entry.reasoningOff === "minimal" && entry.thinking === "level" && !(entry.thinkingLevels ?? ["minimal"]).includes("minimal")) {
      return "reasoningOff: minimal needs minimal among thinkingLevels"
    }
    if (entry.reasoningOff === "budget0" && entry.thinking !== undefined && entry.thinking !== "budget") return "reasoningOff: budget0 needs thinking: budget"
    return true
  })
)

const KEY = /^[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9.\-]*$/

const TraitsFile = Schema.Struct({
  models: Schema.Record({ key: Schema.String, value: Entry }).pipe(
    Schema.filter((models) => {
      const bad = Object.keys(models).find((key) => !KEY.test(key))
      return bad === undefined || `"${bad}" is not a catalog model key (<vendor>/<model>, lower case, as in data/cards)`
    })
  )
}).annotations({ parseOptions: { errors: "all", onExcessProperty: "error" } })

/** The traits table: lower-cased catalog key -> traits. */
export type TraitsTable = ReadonlyMap<string, ModelTraits>

const resolve = (entry: typeof Entry.Type): ModelTraits => ({
  ...DEFAULT_TRAITS,
  thinking: entry.thinking,
  thinkingLevels: entry.thinkingLevels,
  reasoningOff: entry.reasoningOff,
  thinkingByDefault: entry.thinkingByDefault ?? false,
  sampling: entry.sampling ?? "free",
  topK: entry.topK,
  tools: entry.tools ?? DEFAULT_TRAITS.tools,
  structuredOutput: entry.structuredOutput ?? DEFAULT_TRAITS.structuredOutput,
  jsonMode: entry.jsonMode,
  source: entry.source
})

/** The file's text into the traits table, or one message naming every problem (file, model key, field). */
export const parseModelTraits = (yamlText: string): Either.Either<TraitsTable, string> => {
  let raw: unknown
  try {
    raw = parseYaml(yamlText)
  } catch (error) {
    return Either.left(`${MODEL_TRAITS_PATH} is not valid YAML: ${error instanceof Error ? error.message : String(error)}`)
  }
  return Either.match(Schema.decodeUnknownEither(TraitsFile)(raw), {
    onLeft: (error) =>
      Either.left(
        `${MODEL_TRAITS_PATH}: ` +
          ParseResult.ArrayFormatter.formatErrorSync(error)
            .map((issue) => `${issue.path.length === 0 ? "(file)" : issue.path.join(".")}: ${issue.message}`)
            .join("; ")
      ),
    onRight: (file) => Either.right(new Map(Object.entries(file.models).map(([key, entry]) => [key.toLowerCase(), resolve(entry)] as const)))
  })
}

/** A model's traits: its entry, else DEFAULT_TRAITS. The key is a catalog key, any case. */
export const traitsFor = (table: TraitsTable, modelKey: string): ModelTraits => table.get(modelKey.toLowerCase()) ?? DEFAULT_TRAITS

// ---------------------------------------------------------------------------------------------------------
// Parameters a model refuses (SPEC "Parameter policy"): 422 naming the field, before any credit moves

/** Which inbound format the request came in: decides the name of the reasoning switch in a refusal. */
export type InboundFormatName = "chat" | "messages" | "responses"

const TOP_K_VENDORS = new Set(["anthropic", "google"])

/** The lowest `top_p` a `locked` model takes, and the one `temperature` it takes. */
export const LOCKED_TOP_P_FLOOR = 0.99
export const LOCKED_TEMPERATURE = 1

/**
 * The first parameter of the request the model refuses, as the 422 to answer, or undefined when the model takes
 * them all. Checked in this order:
 * 1. `locked` sampling (current Claude models): `temperature` other than 1.0, `top_p` below 0.99 (the message names
 *    the accepted value), any `top_k`; on Anthropic a `temperature` above 1 (its range is 0-1);
 * 2. `top_k` where the model has no such parameter (OpenAI-shaped vendors);
 * 3. `tools` on a model without native tool use; a forced `tool_choice` (required / a named tool) on an Anthropic
 *    model that will be reasoning (Anthropic takes only auto or none with thinking on);
 * 4. `response_format` json_schema without native structured output, json_object without a native JSON mode;
 * 5. reasoning switched off on a model that cannot stop reasoning: `reasoning.enabled` (chat) or `thinking.type`
 *    (messages).
 * `vendor` is the catalog vendor (the model key's prefix); `model` (the catalog key) only names it in messages.
 */
export const parameterRefusal = (
  traits: ModelTraits,
  vendor: string,
  chat: ChatRequest,
  options: { readonly inbound?: InboundFormatName | undefined; readonly model?: string | undefined } = {}
): ValidationFailed | undefined => {
  const name = options.model ?? "This model"
  const refuse = (message: string, param: string) => new ValidationFailed({ message, param })
  if (traits.sampling === "locked") {
    if (chat.temperature !== undefined && chat.temperature !== LOCKED_TEMPERATURE) {
      return refuse(`${name} accepts temperature only at 1.0; send temperature=1.0 or leave it out (got ${chat.temperature}).`, "temperature")
    }
    if (chat.topP !== undefined && chat.topP < LOCKED_TOP_P_FLOOR) {
      return refuse(`${name} accepts top_p only at 0.99 or above; send top_p=0.99 or higher, or leave it out (got ${chat.topP}).`, "top_p")
    }
    if (chat.topK !== undefined) return refuse(`${name} does not accept top_k; leave it out.`, "top_k")
  }
  if (vendor === "anthropic" && chat.temperature !== undefined && chat.temperature > 1) {
    return refuse(`${name} accepts temperature from 0 to 1 (got ${chat.temperature}).`, "temperature")
  }
  if (chat.topK !== undefined && !(traits.topK ?? TOP_K_VENDORS.has(vendor))) {
    return refuse(`${name} has no top_k parameter; leave it out.`, "top_k")
  }
  if (chat.tools.length > 0 && !traits.tools) return refuse(`${name} does not take tools.`, "tools")
  if (vendor === "anthropic" && chat.tools.length > 0 && (chat.toolChoice?.type === "required" || chat.toolChoice?.type === "tool")) {
    const reasoning = chat.reasoning === undefined ? traits.thinkingByDefault : chat.reasoning !== null
    if (reasoning) {
      return refuse(`${name} takes only tool_choice auto or none while it reasons; switch reasoning off or let the model choose.`, "tool_choice")
    }
  }
  const format = chat.responseFormat?.type
  const formatParam = options.inbound === "responses" ? "text.format" : "response_format"
  if (format === "json_schema" && !traits.structuredOutput) {
    return refuse(`${name} has no native structured output (${formatParam} json_schema).`, formatParam)
  }
  if (format === "json_object" && !(traits.jsonMode ?? (vendor !== "anthropic" && traits.structuredOutput))) {
    return refuse(
      `${name} has no native JSON mode (${formatParam} json_object)${traits.structuredOutput ? `; send a json_schema ${formatParam} instead` : ""}.`,
      formatParam
    )
  }
  if (chat.reasoning === null && traits.reasoningOff === "refuse") {
    const param = options.inbound === "messages" ? "thinking.type" : options.inbound === "responses" ? "reasoning.effort" : "reasoning.enabled"
    return refuse(`${name} always reasons; it cannot switch reasoning off (${param}).`, param)
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// What each upstream translator takes from the traits (optional fields of its target; absent = today's shape)

export interface AnthropicTraitOptions {
  /** `adaptive`: `{type:"adaptive"}` + `output_config.effort`; else `{type:"enabled", budget_tokens}`. */
  readonly thinkingStyle?: "adaptive" | "budget" | undefined
  /** Reasoning switched off: `omit` sends no `thinking`; anything else sends `{type:"disabled"}`. */
  readonly reasoningOff?: ReasoningOff | undefined
}

export interface GeminiTraitOptions {
  /** `level`: `thinkingLevel`; else `thinkingBudget`. */
  readonly thinkingStyle?: "level" | "budget" | undefined
  /** The levels a `level` model accepts (default all four). */
  readonly thinkingLevels?: ReadonlyArray<ThinkingLevel> | undefined
  /** Reasoning switched off: `budget0` (default) `thinkingBudget: 0`, `minimal` `thinkingLevel:"minimal"`, else nothing. */
  readonly reasoningOff?: ReasoningOff | undefined
}

export interface OpenaiChatTraitOptions {
  /** Reasoning switched off: `none` / `minimal` as `reasoning_effort`, `disabled` as `thinking:{type:"disabled"}`, else nothing. */
  readonly reasoningOff?: ReasoningOff | undefined
}

export const anthropicOptionsOf = (traits: ModelTraits): AnthropicTraitOptions => ({
  thinkingStyle: traits.thinking === "adaptive" ? "adaptive" : "budget",
  reasoningOff: traits.reasoningOff
})

export const geminiOptionsOf = (traits: ModelTraits): GeminiTraitOptions => ({
  thinkingStyle: traits.thinking === "level" ? "level" : "budget",
  thinkingLevels: traits.thinkingLevels,
  reasoningOff: traits.reasoningOff
})

export const openaiChatOptionsOf = (traits: ModelTraits): OpenaiChatTraitOptions => ({ reasoningOff: traits.reasoningOff })
