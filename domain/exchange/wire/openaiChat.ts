/**
 * The OpenAI chat-completions wire format (DESIGN.md section 10: used by our `/v1/chat/completions` AND by the
 * OpenAI-compatible upstream adapter). Here, our endpoint's side:
 * - the request as WE accept it: strict (unknown fields are 422 naming them, SPEC "Parameter policy": every
 *   parameter takes effect, is refused, or is dropped under a stated policy);
 * - the reply, chunk and usage as WE send them: exact, so what we write is type-checked against one definition.
 * The vendor side (the request we send upstream, the lenient shapes of what vendors answer) is openaiChatVendor.ts.
 * Shapes follow `openai` (node_modules/openai/resources/chat/completions/completions.d.ts).
 */
import { Schema } from "effect"

// ---------------------------------------------------------------------------------------------------------
// The request as we accept it

/** OpenAI's types allow `null` on most optional fields; SDK users send it to mean "unset", so null = absent. */
const nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

const PositiveInt = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
const NonEmptyString = Schema.String.pipe(Schema.minLength(1))
/** OpenAI's (and Anthropic's) rule for tool and schema names; checked here so `auto` can route anywhere. */
const FunctionName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, { message: () => "must be 1-64 letters, digits, underscores or dashes" })
)
/** A JSON Schema object (tool parameters, response schema): passed through, not interpreted. */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ title: "a JSON Schema object" })

export const CacheControl = Schema.Struct({
  type: Schema.Literal("ephemeral"),
  ttl: Schema.optional(Schema.Literal("5m", "1h"))
}).annotations({ identifier: "CacheControl", description: "Prompt-cache breakpoint; ttl 5m (default) or 1h" })

/** Only text parts: any other type (image_url, input_audio, file, refusal ...) is refused naming it (SPEC). */
export const InboundTextPart = Schema.Struct({
  type: Schema.Literal("text").annotations({
    message: (issue) => ({
      message: `content part type ${JSON.stringify(issue.actual)} is not supported: only {type:"text"} parts are accepted`,
      override: true
    })
  }),
  text: Schema.String,
  cache_control: Schema.optional(CacheControl)
}).pipe(
  Schema.filter((part) =>
    part.cache_control !== undefined && part.text.trim() === ""
      ? { path: ["cache_control"], message: "cache_control needs a part with text" }
      : undefined
  )
)

export const MAX_CONTENT_PARTS = 50
// Titles name the members in a refusal's message ("Expected string or an array of text parts").
const Content = Schema.Union(
  Schema.String,
  Schema.Array(InboundTextPart).annotations({ title: "an array of text parts" }).pipe(Schema.maxItems(MAX_CONTENT_PARTS))
)

export const InboundToolCall = Schema.Struct({
  id: NonEmptyString,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String }),
  /** Present on calls a client accumulated from stream deltas and echoes back; meaningless here. */
  index: Schema.optional(Schema.Int)
})

// `name` on a message is accepted and dropped: no upstream format but OpenAI's has a place for it, and it never
// changes what the model is asked (it only labels a participant).
const name = Schema.optional(Schema.String)

const SystemMessage = Schema.Struct({ role: Schema.Literal("system"), content: Content, name })
const DeveloperMessage = Schema.Struct({ role: Schema.Literal("developer"), content: Content, name })
const UserMessage = Schema.Struct({ role: Schema.Literal("user"), content: Content, name })
const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: nullable(Content),
  tool_calls: nullable(Schema.Array(InboundToolCall)),
  /** Reasoning of that turn as we returned it; replayed to vendors that require it. */
  reasoning: nullable(Schema.String),
  /** On OpenAI replies a client echoes back; a refusal text stands for the turn's content. */
  refusal: nullable(Schema.String),
  /** On OpenAI replies a client echoes back (citations); dropped. */
  annotations: nullable(Schema.Array(Schema.Unknown)),
  name
}).pipe(
  Schema.filter((m) =>
    m.content == null && (m.tool_calls ?? []).length === 0 && m.refusal == null
      ? { path: ["content"], message: "is required unless tool_calls are present" }
      : undefined
  )
)
const ToolMessage = Schema.Struct({ role: Schema.Literal("tool"), content: Content, tool_call_id: NonEmptyString, name })

export const InboundMessage = Schema.Union(SystemMessage, DeveloperMessage, UserMessage, AssistantMessage, ToolMessage).annotations({
  message: () => "Expected a message object with role system, developer, user, assistant or tool"
})
export type InboundMessage = typeof InboundMessage.Type
export type InboundContent = typeof Content.Type

export const InboundTool = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: FunctionName,
    description: Schema.optional(Schema.String),
    parameters: Schema.optional(JsonObject),
    strict: nullable(Schema.Boolean)
  }),
  cache_control: Schema.optional(CacheControl)
})

const InboundTools = Schema.Array(InboundTool).pipe(
  Schema.filter((tools) => {
    const issues = tools.flatMap((tool, i) =>
      tools.findIndex((other) => other.function.name === tool.function.name) < i
        ? [{ path: [i, "function", "name"], message: `duplicates the name of an earlier tool (${tool.function.name})` }]
        : []
    )
    return issues.length === 0 ? undefined : issues
  })
)

export const InboundToolChoice = Schema.Union(
  Schema.Literal("none", "auto", "required"),
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) }).annotations({
    title: '{type:"function", function:{name}}'
  })
)

export const InboundResponseFormat = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    json_schema: Schema.Struct({
      name: FunctionName,
      schema: JsonObject,
      strict: nullable(Schema.Boolean),
      description: Schema.optional(Schema.String)
    })
  })
)

export const Effort = Schema.Literal("low", "medium", "high")

/** Not in the canonical model, harmless to drop: accepted so SDK defaults do not fail, never forwarded. */
const Dropped = {
  store: nullable(Schema.Boolean),
  metadata: nullable(Schema.Record({ key: Schema.String, value: Schema.String })),
  service_tier: nullable(Schema.String),
  prompt_cache_key: nullable(Schema.String),
  prompt_cache_retention: nullable(Schema.String),
  safety_identifier: nullable(Schema.String),
  /** Usage is always included in our streams; the options change nothing. Lenient: new SDK options pass. */
  stream_options: nullable(
    Schema.Struct({ include_usage: nullable(Schema.Boolean), include_obfuscation: nullable(Schema.Boolean) }).annotations({
      parseOptions: { onExcessProperty: "ignore" }
    })
  )
}

/** Parsed so that they can be refused naming the field afterwards (SPEC refusals: the invalid_request_error kind). */
const RefusedWhenSet = {
  n: nullable(PositiveInt),
  functions: Schema.optional(Schema.Unknown),
  function_call: Schema.optional(Schema.Unknown),
  audio: Schema.optional(Schema.Unknown),
  modalities: nullable(Schema.Array(Schema.Literal("text", "audio"))),
  prediction: Schema.optional(Schema.Unknown),
  web_search_options: Schema.optional(Schema.Unknown),
  verbosity: Schema.optional(Schema.Unknown)
}

/**
 * `POST /v1/chat/completions`. Every schema failure is reported (errors: all) and unknown fields are refused
 * (onExcessProperty: error) at every depth but where annotated otherwise.
 */
export const ChatCompletionsRequest = Schema.Struct({
  model: Schema.optional(NonEmptyString),
  messages: Schema.Array(InboundMessage).annotations({ title: "an array of messages" }).pipe(Schema.minItems(1)),
  stream: nullable(Schema.Boolean),
  temperature: nullable(Schema.Number.pipe(Schema.between(0, 2))),
  top_p: nullable(Schema.Number.pipe(Schema.between(0, 1))),
  max_tokens: nullable(PositiveInt),
  max_completion_tokens: nullable(PositiveInt),
  stop: nullable(
    Schema.Union(Schema.String, Schema.Array(Schema.String).annotations({ title: "an array of strings" }).pipe(Schema.maxItems(4)))
  ),
  frequency_penalty: nullable(Schema.Number.pipe(Schema.between(-2, 2))),
  presence_penalty: nullable(Schema.Number.pipe(Schema.between(-2, 2))),
  seed: nullable(Schema.Int),
  logit_bias: nullable(
    Schema.Record({
      key: Schema.String.pipe(Schema.pattern(/^\d+$/, { message: () => "logit_bias keys are token ids" })),
      value: Schema.Number.pipe(Schema.between(-100, 100))
    })
  ),
  logprobs: nullable(Schema.Boolean),
  top_logprobs: nullable(Schema.Int.pipe(Schema.between(0, 20))),
  user: nullable(Schema.String),
  response_format: nullable(InboundResponseFormat),
  tools: nullable(InboundTools),
  tool_choice: nullable(InboundToolChoice),
  parallel_tool_calls: nullable(Schema.Boolean),
  reasoning_effort: nullable(Effort),
  reasoning: nullable(
    Schema.Struct({
      effort: Schema.optional(Effort),
      max_tokens: Schema.optional(Schema.Int.pipe(Schema.between(1024, 200_000))),
      enabled: Schema.optional(Schema.Boolean),
      exclude: Schema.optional(Schema.Boolean)
    })
  ),
  models: Schema.optional(Schema.Array(NonEmptyString).pipe(Schema.minItems(1), Schema.maxItems(8))),
  conversation_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  routing_bias: Schema.optional(Schema.Literal("cheaper", "balanced", "better")),
  ...Dropped,
  ...RefusedWhenSet
}).annotations({
  identifier: "ChatCompletionsRequest",
  parseOptions: { errors: "all", onExcessProperty: "error" }
})
export type ChatCompletionsRequest = typeof ChatCompletionsRequest.Type

// ---------------------------------------------------------------------------------------------------------
// The reply as we send it (no transformations: Type = Encoded, so a typed value is its own wire form)

export const FinishReason = Schema.Literal("stop", "length", "tool_calls", "content_filter")

export const ChatUsage = Schema.Struct({
  prompt_tokens: Schema.Number,
  completion_tokens: Schema.Number,
  total_tokens: Schema.Number,
  prompt_tokens_details: Schema.Struct({ cached_tokens: Schema.Number, cache_creation_tokens: Schema.Number }),
  completion_tokens_details: Schema.Struct({ reasoning_tokens: Schema.Number })
}).annotations({ identifier: "ChatUsage" })
export type ChatUsage = typeof ChatUsage.Type

export const ChatToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

/** The bill's figures every final reply carries. */
const BillFields = {
  x_credits_used: Schema.Number,
  x_credits_remaining: Schema.Number,
  x_ratelimit_requests_remaining: Schema.NullOr(Schema.Number)
}

export const ChatCompletion = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion"),
  created: Schema.Number,
  model: Schema.String,
  choices: Schema.Array(
    Schema.Struct({
      index: Schema.Number,
      message: Schema.Struct({
        role: Schema.Literal("assistant"),
        content: Schema.NullOr(Schema.String),
        // Required (nullable) in OpenAI's ChatCompletionMessage; typed SDK clients read it.
        refusal: Schema.Null,
        reasoning: Schema.optional(Schema.String),
        tool_calls: Schema.optional(Schema.Array(ChatToolCall))
      }),
      finish_reason: FinishReason,
      logprobs: Schema.Null
    })
  ),
  usage: ChatUsage,
  ...BillFields
}).annotations({ identifier: "ChatCompletion" })
export type ChatCompletion = typeof ChatCompletion.Type

export const ChatToolCallDelta = Schema.Struct({
  index: Schema.Number,
  id: Schema.optional(Schema.String),
  type: Schema.optional(Schema.Literal("function")),
  function: Schema.Struct({ name: Schema.optional(Schema.String), arguments: Schema.String })
})

export const ChatCompletionChunk = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion.chunk"),
  created: Schema.Number,
  model: Schema.String,
  choices: Schema.Array(
    Schema.Struct({
      index: Schema.Number,
      delta: Schema.Struct({
        role: Schema.optional(Schema.Literal("assistant")),
        content: Schema.optional(Schema.String),
        reasoning: Schema.optional(Schema.String),
        tool_calls: Schema.optional(Schema.Array(ChatToolCallDelta))
      }),
      finish_reason: Schema.NullOr(FinishReason),
      logprobs: Schema.Null
    })
  ),
  usage: Schema.NullOr(ChatUsage),
  // Only on the final chunk.
  x_credits_used: Schema.optional(Schema.Number),
  x_credits_remaining: Schema.optional(Schema.Number),
  x_ratelimit_requests_remaining: Schema.optional(Schema.NullOr(Schema.Number))
}).annotations({ identifier: "ChatCompletionChunk" })
export type ChatCompletionChunk = typeof ChatCompletionChunk.Type

/** A failure after the stream started; the openai SDK throws an APIError on a chunk carrying `error`. */
export const ChatStreamError = Schema.Struct({
  error: Schema.Struct({
    message: Schema.String,
    type: Schema.Literal("server_error"),
    code: Schema.Literal("stream_interrupted")
  })
})
export type ChatStreamError = typeof ChatStreamError.Type
