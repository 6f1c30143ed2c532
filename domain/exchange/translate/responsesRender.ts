/**
 * The Responses format out of the canonical model: the response object (whole, and as `response.completed` closes a
 * stream), its output items, its usage. The stream's event sequence is responsesStream.ts. Pure.
 *
 * Ids derive from our request id (`gen_<hex>`, the bill at /v1/generations/{id}): the response is `resp_<hex>`, its
 * items `rs_`, `msg_`, `fc_` / `ctc_` with the same hex, so any of them leads back to the bill.
 */
import { type ChatResult, inputSide, type ReplyBill, type ReplyMeta, type StopReason, type ToolCall, type Usage } from "../canonical.ts"
import type { OutputItem, OutputReasoning, ResponseObject, ResponseStatus, ResponsesUsage } from "../wire/openaiResponsesReply.ts"
import { renderBill } from "./openaiChatStream.ts"
import type { ReasoningSealer, ResponseOptions } from "./responsesInbound.ts"

const hexOf = (requestId: string) => (requestId.startsWith("gen_") ? requestId.slice(4) : requestId)

/** The response id of a request id, and back. */
export const responseIdOf = (requestId: string) => `resp_${hexOf(requestId)}`
export const requestIdOfResponse = (responseId: string) => (responseId.startsWith("resp_") ? `gen_${responseId.slice(5)}` : responseId)

export const itemIds = (requestId: string) => {
  const hex = hexOf(requestId)
  return {
    reasoning: `rs_${hex}`,
    message: `msg_${hex}`,
    call: (index: number, custom: boolean) => `${custom ? "ctc" : "fc"}_${hex}_${index}`
  }
}

/** SPEC "Prompt caching": the input side whole, cache reads named; reasoning inside the output. */
export const renderResponsesUsage = (usage: Usage): ResponsesUsage => {
  const input = inputSide(usage)
  const output = usage.output ?? 0
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    total_tokens: input + output
  }
}

export const statusOf = (reason: StopReason): { readonly status: ResponseStatus; readonly incomplete: ResponseObject["incomplete_details"] } =>
  reason === "length"
    ? { status: "incomplete", incomplete: { reason: "max_output_tokens" } }
    : reason === "content_filter"
    ? { status: "incomplete", incomplete: { reason: "content_filter" } }
    : { status: "completed", incomplete: null }

/** The vendor that served the reply (the catalog key's prefix). */
const vendorOf = (meta: ReplyMeta) => meta.model.split("/")[0] ?? meta.model

/**
 * The reasoning item of a reply that reasoned: its summary when one was asked for, and its sealed vendor reasoning
 * when `include` asks for it (DESIGN.md section 10: a stateless client replays it to keep the vendor's continuity).
 */
export const reasoningItem = (
  id: string,
  reasoning: { readonly text: string; readonly signature: string },
  meta: ReplyMeta,
  options: ResponseOptions,
  sealer: ReasoningSealer
): OutputReasoning => ({
  type: "reasoning",
  id,
  summary: options.reasoningSummary !== null && options.reasoningSummary !== "none" && reasoning.text !== ""
    ? [{ type: "summary_text", text: reasoning.text }]
    : [],
  ...(options.includeEncrypted
    ? { encrypted_content: sealer.seal({ vendor: vendorOf(meta), thinking: reasoning.text, signature: reasoning.signature }) }
    : {})
})

/** A tool call as the client declared the tool: a function (in its namespace) or a freeform tool's input. */
export const callItem = (
  id: string,
  call: ToolCall,
  options: ResponseOptions,
  status: "in_progress" | "completed"
): Extract<OutputItem, { type: "function_call" | "custom_tool_call" }> => {
  const origin = options.toolOrigins.get(call.name)
  const namespace = origin?.namespace !== undefined ? { namespace: origin.namespace } : {}
  if (origin?.custom === true) {
    return { type: "custom_tool_call", id, call_id: call.id, name: origin.name, ...namespace, input: customInput(call.arguments), status }
  }
  return { type: "function_call", id, call_id: call.id, name: origin?.name ?? call.name, ...namespace, arguments: call.arguments, status }
}

/** A freeform tool's input from the function arguments the model wrote (`{"input": ...}`), or the text as it is. */
export const customInput = (args: string): string => {
  try {
    const parsed: unknown = JSON.parse(args)
    if (typeof parsed === "object" && parsed !== null && "input" in parsed && typeof parsed.input === "string") return parsed.input
  } catch {
    // Not JSON: the model wrote the input itself.
  }
  return args
}

export const isCustomCall = (call: Pick<ToolCall, "name">, options: ResponseOptions) => options.toolOrigins.get(call.name)?.custom === true

/** The output items of a whole reply, in OpenAI's order: reasoning, message, tool calls. */
export const outputItemsOf = (result: ChatResult, meta: ReplyMeta, options: ResponseOptions, sealer: ReasoningSealer): ReadonlyArray<OutputItem> => {
  const ids = itemIds(meta.id)
  const items: Array<OutputItem> = []
  if (result.reasoning !== "" || result.reasoningSignature !== null) {
    items.push(reasoningItem(ids.reasoning, { text: result.reasoning, signature: result.reasoningSignature ?? "" }, meta, options, sealer))
  }
  if (result.text !== "" || result.toolCalls.length === 0) {
    const { status } = statusOf(result.stopReason)
    items.push({
      type: "message",
      id: ids.message,
      role: "assistant",
      status: status === "incomplete" ? "incomplete" : "completed",
      content: [{ type: "output_text", text: result.text, annotations: [], logprobs: [] }]
    })
  }
  result.toolCalls.forEach((call, index) => items.push(callItem(ids.call(index, isCustomCall(call, options)), call, options, "completed")))
  return items
}

/** The text of the output's messages (the SDK's `output_text`). */
export const outputTextOf = (output: ReadonlyArray<OutputItem>): string =>
  output.flatMap((item) => (item.type === "message" ? item.content.map((part) => part.text) : [])).join("")

export interface ResponseState {
  readonly status: ResponseStatus
  readonly output: ReadonlyArray<OutputItem>
  readonly usage: Usage | undefined
  readonly incomplete: ResponseObject["incomplete_details"]
  readonly error: ResponseObject["error"]
  readonly bill: ReplyBill | undefined
}

/** The response object: the request's settings echoed, the state of its answer. */
export const responseObject = (meta: ReplyMeta, options: ResponseOptions, state: ResponseState): ResponseObject => ({
  id: responseIdOf(meta.id),
  object: "response",
  created_at: meta.created,
  status: state.status,
  model: meta.model,
  output: state.output,
  output_text: outputTextOf(state.output),
  error: state.error,
  incomplete_details: state.incomplete,
  instructions: options.instructions,
  max_output_tokens: options.maxOutputTokens,
  metadata: options.metadata,
  parallel_tool_calls: options.parallelToolCalls,
  previous_response_id: options.previousResponseId,
  reasoning: { effort: options.reasoningEffort, summary: options.reasoningSummary },
  store: options.store,
  temperature: options.temperature,
  text: { format: options.textFormat },
  tool_choice: options.toolChoice,
  tools: options.tools,
  top_p: options.topP,
  truncation: options.truncation,
  usage: state.usage === undefined ? null : renderResponsesUsage(state.usage),
  ...(options.user !== undefined ? { user: options.user } : {}),
  ...(state.bill !== undefined ? renderBill(state.bill) : {})
})

/** The non-streaming reply. */
export const renderResponse = (
  result: ChatResult,
  meta: ReplyMeta,
  bill: ReplyBill,
  options: ResponseOptions,
  sealer: ReasoningSealer
): ResponseObject => {
  const { status, incomplete } = statusOf(result.stopReason)
  return responseObject(meta, options, {
    status,
    output: outputItemsOf(result, meta, options, sealer),
    usage: result.usage,
    incomplete,
    error: null,
    bill
  })
}
