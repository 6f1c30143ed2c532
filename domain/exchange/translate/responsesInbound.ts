/**
 * Our `/v1/responses` endpoint's side of OpenAI's Responses format, into the canonical model (the reply's renderers
 * are responsesRender.ts and responsesStream.ts). Pure: the stored conversation a `previous_response_id` names and
 * the key that opens sealed reasoning are given to it.
 *
 * Fields (SPEC "Parameter policy": each takes effect, is refused naming it, or is dropped under policy):
 * - used: `input` (a string, or message / function_call / function_call_output / custom_tool_call(_output) /
 *   reasoning items), `instructions` (a system message first), `tools` (function; `custom` as a function taking one
 *   string `input`; `namespace` flattened to `<namespace>__<name>`), `tool_choice`, `parallel_tool_calls`,
 *   `text.format`, `reasoning.effort`, `max_output_tokens`, `temperature`, `top_p`, `user` / `safety_identifier` (the
 *   end user, fingerprinted), the exchange's `models`, `routing_bias`, `conversation_id`;
 * - rendered: `reasoning.summary` (whether the reasoning shows as a summary), `include` of
 *   `reasoning.encrypted_content` (the serving vendor's signed reasoning, sealed), `metadata` (echoed), `store`;
 * - accepted and silent (they never change the answer): `prompt_cache_key`, `prompt_cache_retention`,
 *   `service_tier`, `client_metadata`, `stream_options`, an item's `id` and `status`;
 * - dropped and named in X-Dropped-Parameters: built-in tools (`tools[web_search]` ...), a tool's `defer_loading`,
 *   `text.verbosity`, `truncation: auto`, `max_tool_calls`, `top_logprobs`, `include` entries other than
 *   `reasoning.encrypted_content`, a reasoning item whose sealed content does not open (`input[].encrypted_content`);
 * - refused (422 naming the field): `background: true`, `conversation`, `prompt`, a `tool_choice` naming no tool of
 *   the request, a namespace tool whose flattened name exceeds 64 characters, any unknown field.
 */
import { Either } from "effect"
import { ValidationFailed } from "../../errors.ts"
import type {
  AssistantMessage,
  CanonicalMessage,
  ChatRequest,
  ReasoningBlock,
  RouteRequest,
  TextPart,
  ToolCall
} from "../canonical.ts"
import { reconcileResponsesReasoning } from "../reasoning.ts"
import { type InputItem, type RequestTool, ResponsesRequest, type TextFormat } from "../wire/openaiResponses.ts"
import { decodeBody } from "./parseIssues.ts"
import { flattened, type ToolOrigin, toolChoiceOf, toolsOf } from "./responsesTools.ts"

/** A vendor's reasoning as a reasoning item's `encrypted_content` carries it, sealed with the service's key. */
export interface SealedReasoning {
  /** The catalog vendor that produced it (only that vendor takes it back). */
  readonly vendor: string
  readonly thinking: string
  /** The vendor's signature (Anthropic); "" when it issued none. */
  readonly signature: string
}

/** Seals and opens reasoning for one account (a sealed item replayed under another account does not open). */
export interface ReasoningSealer {
  readonly seal: (reasoning: SealedReasoning) => string
  readonly open: (sealed: string) => SealedReasoning | undefined
}

/** One earlier response of the chain `previous_response_id` continues: its input, then its output. */
export interface ConversationLink {
  readonly inputItems: ReadonlyArray<InputItem>
  readonly outputItems: ReadonlyArray<InputItem>
}

/** What the renderers echo or decide from the request (OpenAI's response object repeats these). */
export interface ResponseOptions {
  readonly instructions: string | null
  readonly maxOutputTokens: number | null
  readonly metadata: Readonly<Record<string, string>>
  readonly parallelToolCalls: boolean
  readonly previousResponseId: string | null
  readonly reasoningEffort: string | null
  readonly reasoningSummary: string | null
  readonly store: boolean
  readonly temperature: number | null
  readonly topP: number | null
  readonly textFormat: TextFormat
  readonly toolChoice: string | { readonly type: string; readonly name: string }
  readonly tools: ReadonlyArray<RequestTool>
  readonly truncation: "auto" | "disabled"
  readonly user: string | undefined
  /** `include` asks for `reasoning.encrypted_content`. */
  readonly includeEncrypted: boolean
  /** Flattened tool name -> how the client declared it (only namespace and custom tools are here). */
  readonly toolOrigins: ReadonlyMap<string, ToolOrigin>
}

export interface DecodedResponses {
  readonly chat: ChatRequest
  readonly route: RouteRequest
  readonly stream: boolean
  readonly endUser: string | undefined
  readonly dropped: ReadonlyArray<string>
  readonly options: ResponseOptions
  /** This request's own input items, as the client sent them (what `store` keeps and input_items lists). */
  readonly inputItems: ReadonlyArray<InputItem>
}

const refuse = (param: string, message: string) => new ValidationFailed({ message, param })

export const parseResponsesRequest = decodeBody(ResponsesRequest)

/** The request's input as items: a string is one user message. */
export const inputItemsOf = (input: ResponsesRequest["input"] | undefined): ReadonlyArray<InputItem> =>
  input === undefined ? [] : typeof input === "string" ? [{ role: "user", content: input }] : input

const refusalOf = (request: ResponsesRequest): ValidationFailed | undefined => {
  if (request.background === true) {
    return refuse("background", "Background responses are not supported: send background=false or omit it, and stream instead.")
  }
  if (request.conversation !== undefined && request.conversation !== null) {
    return refuse("conversation", "The Conversations API is not served: continue a stored response with previous_response_id instead.")
  }
  if (request.prompt !== undefined && request.prompt !== null) {
    return refuse("prompt", "Stored prompt templates are not supported: send the prompt as instructions and input.")
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// Items into messages

const textOf = (content: Extract<InputItem, { role: string }>["content"]): ReadonlyArray<TextPart> => {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }]
  return content.flatMap((part): Array<TextPart> => {
    const text = part.type === "refusal" ? part.refusal ?? "" : part.text ?? ""
    return text === "" ? [] : [{ type: "text", text }]
  })
}

const outputText = (output: string | ReadonlyArray<{ readonly text: string }>): ReadonlyArray<TextPart> => {
  const text = typeof output === "string" ? output : output.map((part) => part.text).join("")
  return text === "" ? [] : [{ type: "text", text }]
}

interface Turn {
  parts: Array<TextPart>
  toolCalls: Array<ToolCall>
  blocks: Array<ReasoningBlock>
  reasoning: string
}

/**
 * The items in order as canonical messages. An assistant turn gathers what the model produced between two inputs:
 * its reasoning items, its message, its tool calls (OpenAI lists them as separate items; every vendor upstream takes
 * them as one turn). Sealed reasoning opens into the vendor's own block: Anthropic's signed thinking goes back only to
 * Anthropic; text without a signature is the reasoning continuity of the vendors that take it (DeepSeek).
 */
export const messagesOfItems = (
  items: ReadonlyArray<InputItem>,
  sealer: ReasoningSealer
): { readonly messages: ReadonlyArray<CanonicalMessage>; readonly unopened: boolean } => {
  const messages: Array<CanonicalMessage> = []
  let unopened = false
  let turn: Turn | undefined
  const flush = () => {
    if (turn === undefined) return
    const message: AssistantMessage = {
      role: "assistant",
      parts: turn.parts,
      toolCalls: turn.toolCalls,
      ...(turn.reasoning !== "" ? { reasoning: turn.reasoning } : {}),
      ...(turn.blocks.length > 0 ? { reasoningBlocks: turn.blocks } : {})
    }
    messages.push(message)
    turn = undefined
  }
  const current = (): Turn => (turn ??= { parts: [], toolCalls: [], blocks: [], reasoning: "" })
  for (const item of items) {
    if (!("type" in item) || item.type === undefined || item.type === "message") {
      const message = item as Extract<InputItem, { role: string }>
      switch (message.role) {
        case "assistant": {
          // A message after the turn's tool calls starts the next turn.
          if (turn !== undefined && turn.toolCalls.length > 0) flush()
          current().parts.push(...textOf(message.content))
          break
        }
        case "user":
          flush()
          messages.push({ role: "user", parts: textOf(message.content) })
          break
        case "system":
        case "developer":
          flush()
          messages.push({ role: "system", parts: textOf(message.content) })
          break
      }
      continue
    }
    switch (item.type) {
      case "reasoning": {
        if (turn !== undefined && (turn.parts.length > 0 || turn.toolCalls.length > 0)) flush()
        const sealed = item.encrypted_content == null ? undefined : sealer.open(item.encrypted_content)
        // A seal that does not open (forged, altered, another account's or key's) drops the whole item.
        if (item.encrypted_content != null && sealed === undefined) {
          unopened = true
          break
        }
        if (sealed !== undefined) {
          if (sealed.signature !== "") current().blocks.push({ type: "thinking", thinking: sealed.thinking, signature: sealed.signature })
          else current().reasoning += sealed.thinking
        } else {
          const summary = item.summary.map((s) => s.text).join("\n\n")
          if (summary !== "") current().reasoning += summary
        }
        break
      }
      case "function_call":
        current().toolCalls.push({ id: item.call_id, name: flattened(item.name, item.namespace), arguments: item.arguments })
        break
      case "custom_tool_call":
        current().toolCalls.push({
          id: item.call_id,
          name: flattened(item.name, item.namespace),
          arguments: JSON.stringify({ input: item.input })
        })
        break
      case "function_call_output":
      case "custom_tool_call_output":
        flush()
        messages.push({ role: "tool", toolCallId: item.call_id, parts: outputText(item.output) })
        break
    }
  }
  flush()
  return { messages, unopened }
}

// ---------------------------------------------------------------------------------------------------------
// The request

/** Decodes and translates a Responses request body continuing `history` (oldest first; empty without a chain). */
export const decodeResponsesRequest = (
  request: ResponsesRequest,
  history: ReadonlyArray<ConversationLink>,
  sealer: ReasoningSealer
): Either.Either<DecodedResponses, ValidationFailed> => {
  const refusal = refusalOf(request)
  if (refusal !== undefined) return Either.left(refusal)
  const declared = toolsOf(request.tools ?? [])
  if (Either.isLeft(declared)) return Either.left(declared.left)
  const { tools, origins } = declared.right
  const choice = toolChoiceOf(request.tool_choice, tools)
  if (Either.isLeft(choice)) return Either.left(choice.left)

  const inputItems = inputItemsOf(request.input)
  const earlier = history.flatMap((link) => [...link.inputItems, ...link.outputItems])
  const { messages, unopened } = messagesOfItems([...earlier, ...inputItems], sealer)
  const instructions = request.instructions ?? null
  const maxOutputTokens = request.max_output_tokens ?? undefined

  const dropped = [...declared.right.dropped]
  if (request.text?.verbosity != null) dropped.push("text.verbosity")
  if (request.truncation === "auto") dropped.push("truncation")
  if (request.max_tool_calls != null) dropped.push("max_tool_calls")
  if (request.top_logprobs != null && request.top_logprobs > 0) dropped.push("top_logprobs")
  for (const entry of request.include ?? []) if (entry !== "reasoning.encrypted_content") dropped.push(`include[${entry}]`)
  if (unopened) dropped.push("input[].encrypted_content")

  const format = request.text?.format
  const chat: ChatRequest = {
    messages: instructions === null || instructions === "" ? messages : [{ role: "system", parts: [{ type: "text", text: instructions }] }, ...messages],
    maxOutputTokens,
    temperature: request.temperature ?? undefined,
    topP: request.top_p ?? undefined,
    stop: [],
    tools,
    // SPEC "Parameter policy": without tools these are dropped.
    toolChoice: tools.length > 0 ? choice.right : undefined,
    parallelToolCalls: tools.length > 0 ? request.parallel_tool_calls ?? undefined : undefined,
    responseFormat: format === undefined || format.type === "text"
      ? undefined
      : format.type === "json_object"
      ? { type: "json_object" }
      : {
        type: "json_schema",
        name: format.name,
        schema: format.schema,
        ...(format.strict != null ? { strict: format.strict } : {}),
        ...(format.description !== undefined ? { description: format.description } : {})
      },
    reasoning: reconcileResponsesReasoning(request.reasoning?.effort ?? undefined, maxOutputTokens),
    // Reasoning reaches a Responses client only as a summary it asked for, or sealed when it asked for that.
    reasoningWithheld: true
  }
  const route: RouteRequest = {
    model: request.model,
    models: request.models,
    routingBias: request.routing_bias,
    conversationId: request.conversation_id
  }
  const endUser = request.safety_identifier ?? request.user ?? undefined
  const summary = request.reasoning?.summary ?? request.reasoning?.generate_summary ?? null
  const options: ResponseOptions = {
    instructions,
    maxOutputTokens: maxOutputTokens ?? null,
    metadata: request.metadata ?? {},
    parallelToolCalls: request.parallel_tool_calls ?? true,
    previousResponseId: request.previous_response_id ?? null,
    reasoningEffort: request.reasoning?.effort ?? null,
    reasoningSummary: summary,
    store: request.store ?? true,
    temperature: request.temperature ?? null,
    topP: request.top_p ?? null,
    textFormat: format ?? { type: "text" },
    toolChoice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    truncation: request.truncation ?? "disabled",
    user: request.user ?? undefined,
    includeEncrypted: (request.include ?? []).includes("reasoning.encrypted_content"),
    toolOrigins: origins
  }
  return Either.right({
    chat,
    route,
    stream: request.stream === true,
    endUser: endUser === "" ? undefined : endUser,
    dropped,
    options,
    inputItems
  })
}
