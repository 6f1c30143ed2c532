/**
 * The Responses stream we write (the event sequence the official SDK and Codex read): canonical events in, SSE text
 * out, each event `event: <type>` + `data: <json>` with its `sequence_number`. Pure apart from the renderer's state.
 *
 * Order: `response.created`, `response.in_progress`; per output item `response.output_item.added`, its parts and
 * deltas (`response.reasoning_summary_part.added` / `response.reasoning_summary_text.delta` for a summary asked for,
 * `response.content_part.added` / `response.output_text.delta` for the message, `response.function_call_arguments.delta`
 * for a call), their `.done` events and `response.output_item.done` when the next item starts or the answer ends; then
 * `response.completed` (or `response.incomplete`) carrying the whole response, its usage and the bill. A failure after
 * the first byte is `response.failed` whose error is SPEC's `stream_interrupted`.
 *
 * A freeform (`custom`) tool's input is the string inside the function arguments the model streams: it is sent whole
 * when the call ends (a JSON fragment is not the input's text).
 */
import type { ChatEvent, ReplyBill, ReplyMeta, StopReason, StreamFailure, Usage } from "../canonical.ts"
import type { OutputItem, OutputText, ResponseObject, ResponsesStreamEvent } from "../wire/openaiResponsesReply.ts"
import type { ReasoningSealer, ResponseOptions } from "./responsesInbound.ts"
import { callItem, isCustomCall, itemIds, reasoningItem, responseObject, statusOf } from "./responsesRender.ts"

type Unsequenced = ResponsesStreamEvent extends infer E ? E extends unknown ? Omit<E, "sequence_number"> : never : never

export interface ResponsesStream {
  /** The frames an event adds (possibly none). */
  readonly event: (event: ChatEvent) => string
  /** Closes the open item and writes `response.completed` / `response.incomplete` with the usage and the bill. */
  readonly finish: (usage: Usage, bill: ReplyBill) => string
  /** `response.failed` for a stream that broke after it started. */
  readonly interrupted: (failure: StreamFailure) => string
  /** The response as the last frame described it (for storage), once finished. */
  readonly final: () => ResponseObject | undefined
}

type Open =
  | { readonly kind: "reasoning"; text: string; signature: string; summaryOpened: boolean; readonly index: number }
  | { readonly kind: "message"; text: string; readonly index: number }
  | { readonly kind: "call"; readonly call: { id: string; name: string; arguments: string }; readonly callIndex: number; readonly index: number }

export const makeResponsesStream = (meta: ReplyMeta, options: ResponseOptions, sealer: ReasoningSealer): ResponsesStream => {
  const ids = itemIds(meta.id)
  let sequence = 0
  let started = false
  let open: Open | undefined
  let stopReason: StopReason = "stop"
  let final: ResponseObject | undefined
  const output: Array<OutputItem> = []
  const showsSummary = options.reasoningSummary !== null && options.reasoningSummary !== "none"

  const frame = (event: Unsequenced): string => {
    const sequenced = { ...event, sequence_number: sequence++ } as ResponsesStreamEvent
    return `event: ${sequenced.type}\ndata: ${JSON.stringify(sequenced)}\n\n`
  }

  const inProgress = (): ResponseObject =>
    responseObject(meta, options, { status: "in_progress", output: [], usage: undefined, incomplete: null, error: null, bill: undefined })

  const opening = (): string => {
    if (started) return ""
    started = true
    const response = inProgress()
    return frame({ type: "response.created", response }) + frame({ type: "response.in_progress", response })
  }

  const callOf = (state: Extract<Open, { kind: "call" }>) =>
    callItem(ids.call(state.callIndex, isCustomCall(state.call, options)), state.call, options, "completed")

  /** The `.done` events of the open item, which joins the output. */
  const close = (): string => {
    const state = open
    if (state === undefined) return ""
    open = undefined
    const index = state.index
    switch (state.kind) {
      case "reasoning": {
        const item = reasoningItem(ids.reasoning, { text: state.text, signature: state.signature }, meta, options, sealer)
        output.push(item)
        const summary = state.summaryOpened
          ? frame({ type: "response.reasoning_summary_text.done", item_id: item.id, output_index: index, summary_index: 0, text: state.text }) +
            frame({ type: "response.reasoning_summary_part.done", item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: state.text } })
          : ""
        return summary + frame({ type: "response.output_item.done", output_index: index, item })
      }
      case "message": {
        const part: OutputText = { type: "output_text", text: state.text, annotations: [], logprobs: [] }
        const item: OutputItem = {
          type: "message",
          id: ids.message,
          role: "assistant",
          status: statusOf(stopReason).status === "incomplete" ? "incomplete" : "completed",
          content: [part]
        }
        output.push(item)
        return frame({ type: "response.output_text.done", item_id: ids.message, output_index: index, content_index: 0, text: state.text, logprobs: [] }) +
          frame({ type: "response.content_part.done", item_id: ids.message, output_index: index, content_index: 0, part }) +
          frame({ type: "response.output_item.done", output_index: index, item })
      }
      case "call": {
        const item = callOf(state)
        output.push(item)
        const done = item.type === "custom_tool_call"
          ? frame({ type: "response.custom_tool_call_input.delta", item_id: item.id, output_index: index, delta: item.input }) +
            frame({ type: "response.custom_tool_call_input.done", item_id: item.id, output_index: index, input: item.input })
          : frame({ type: "response.function_call_arguments.done", item_id: item.id, output_index: index, name: item.name, arguments: item.arguments })
        return done + frame({ type: "response.output_item.done", output_index: index, item })
      }
    }
  }

  const reasoningState = (): { frames: string; state: Extract<Open, { kind: "reasoning" }> } => {
    if (open?.kind === "reasoning") return { frames: "", state: open }
    const frames = close()
    const state: Extract<Open, { kind: "reasoning" }> = { kind: "reasoning", text: "", signature: "", summaryOpened: false, index: output.length }
    open = state
    const item = { type: "reasoning" as const, id: ids.reasoning, summary: [] }
    return { frames: frames + frame({ type: "response.output_item.added", output_index: state.index, item }), state }
  }

  const messageState = (): { frames: string; state: Extract<Open, { kind: "message" }> } => {
    if (open?.kind === "message") return { frames: "", state: open }
    const frames = close()
    const state: Extract<Open, { kind: "message" }> = { kind: "message", text: "", index: output.length }
    open = state
    return {
      frames: frames +
        frame({
          type: "response.output_item.added",
          output_index: state.index,
          item: { type: "message", id: ids.message, role: "assistant", status: "in_progress", content: [] }
        }) +
        frame({
          type: "response.content_part.added",
          item_id: ids.message,
          output_index: state.index,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [], logprobs: [] }
        }),
      state
    }
  }

  let callCount = 0

  const event = (e: ChatEvent): string => {
    switch (e.type) {
      case "start":
        return opening()
      case "reasoning_delta": {
        if (e.text === "") return opening()
        const { frames, state } = reasoningState()
        state.text += e.text
        if (!showsSummary) return opening() + frames
        const part = state.summaryOpened
          ? ""
          : frame({ type: "response.reasoning_summary_part.added", item_id: ids.reasoning, output_index: state.index, summary_index: 0, part: { type: "summary_text", text: "" } })
        state.summaryOpened = true
        return opening() + frames + part +
          frame({ type: "response.reasoning_summary_text.delta", item_id: ids.reasoning, output_index: state.index, summary_index: 0, delta: e.text })
      }
      case "reasoning_signature": {
        const { frames, state } = reasoningState()
        state.signature += e.signature
        return opening() + frames
      }
      case "text_delta": {
        if (e.text === "") return opening()
        const { frames, state } = messageState()
        state.text += e.text
        return opening() + frames +
          frame({ type: "response.output_text.delta", item_id: ids.message, output_index: state.index, content_index: 0, delta: e.text, logprobs: [] })
      }
      case "tool_call_delta": {
        let frames = opening()
        if (open?.kind !== "call" || (e.id !== undefined && open.call.id !== e.id)) {
          frames += close()
          const state: Extract<Open, { kind: "call" }> = {
            kind: "call",
            call: { id: e.id ?? "", name: e.name ?? "", arguments: "" },
            callIndex: callCount++,
            index: output.length
          }
          open = state
          const item = callItem(ids.call(state.callIndex, isCustomCall(state.call, options)), state.call, options, "in_progress")
          frames += frame({ type: "response.output_item.added", output_index: state.index, item })
        }
        const state = open as Extract<Open, { kind: "call" }>
        if (e.name !== undefined && state.call.name === "") state.call.name = e.name
        state.call.arguments += e.argumentsDelta
        if (e.argumentsDelta === "" || isCustomCall(state.call, options)) return frames
        return frames + frame({
          type: "response.function_call_arguments.delta",
          item_id: ids.call(state.callIndex, false),
          output_index: state.index,
          delta: e.argumentsDelta
        })
      }
      case "stop":
        stopReason = e.reason
        return ""
      case "usage":
        return ""
    }
  }

  const finish = (usage: Usage, bill: ReplyBill): string => {
    const frames = opening() + close()
    // A reply with nothing in it still answers with an (empty) message, as a whole reply does.
    const empty = output.length === 0
      ? (() => {
        const { frames: added } = messageState()
        return added + close()
      })()
      : ""
    const { status, incomplete } = statusOf(stopReason)
    final = responseObject(meta, options, { status, output, usage, incomplete, error: null, bill })
    return frames + empty + frame({ type: status === "incomplete" ? "response.incomplete" : "response.completed", response: final })
  }

  const interrupted = (failure: StreamFailure): string => {
    const response = responseObject(meta, options, {
      status: "failed",
      output,
      usage: undefined,
      incomplete: null,
      error: { code: failure.code, message: failure.message },
      bill: undefined
    })
    return opening() + frame({ type: "response.failed", response })
  }

  return { event, finish, interrupted, final: () => final }
}
