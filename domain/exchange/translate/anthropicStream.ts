/**
 * Our `/v1/messages` replies, streaming: canonical ChatEvents -> Anthropic's named SSE events, in Anthropic's order
 * (message_start, then per content block content_block_start / content_block_delta... / content_block_stop, then
 * message_delta and message_stop). Pure: each call returns the SSE text to write (possibly "").
 *
 * - message_start is written with the first event after `start` that is not a `usage` report (or at finish), so a
 *   leading usage report (Anthropic upstreams give input and cache counts on their message_start) is in it; with
 *   none, its counts are 0 and the real ones come on message_delta.
 * - A block starts when the kind changes: thinking -> text -> one tool_use block per tool index. A signature is
 *   held and written as `signature_delta` after the thinking deltas, right before that block's content_block_stop;
 *   a signature with no thinking text before it (the text withheld: `display: "omitted"`) opens an empty thinking
 *   block to carry it, as Anthropic's own omitted display does, so the client can replay it before its tool results.
 *   Every signature is dropped when the model that answered is not an Anthropic one (SPEC: else empty).
 * - `stop` is held until finish, which also closes the open block; a reply with no block gets one empty text block.
 * - Deltas of a tool index whose block already closed (an upstream interleaving calls) open a new tool_use block
 *   with the same id: Anthropic blocks cannot reopen.
 */
import type { ChatEvent, ReplyBill, ReplyMeta, StopReason, StreamFailure, Usage } from "../canonical.ts"
import { mergeUsage } from "../canonical.ts"
import type { ContentBlockStartEvent, ReplyDelta, ReplyStreamEvent } from "../wire/anthropicMessagesReply.ts"
import { billFieldsOf, passesSignature, renderUsage, stopReasonOf } from "./anthropicRender.ts"

export interface MessagesStream {
  /** The SSE text for one canonical event ("" when it writes nothing yet). */
  readonly event: (event: ChatEvent) => string
  /** Closes the reply: the open block, message_delta (stop reason, usage, bill) and message_stop. */
  readonly finish: (usage: Usage, bill: ReplyBill) => string
  /** The in-band failure of a stream already under way: an `error` event; nothing is closed. */
  readonly interrupted: (failure: StreamFailure) => string
}

const frame = (event: ReplyStreamEvent): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`

type OpenBlock =
  | { readonly kind: "thinking"; readonly index: number }
  | { readonly kind: "text"; readonly index: number }
  | { readonly kind: "tool"; readonly index: number; readonly toolIndex: number }

export const makeMessagesStream = (meta: ReplyMeta, modelAsAsked: string = meta.model): MessagesStream => {
  let startWritten = false
  let done = false
  let earlyUsage: Usage = {}
  let open: OpenBlock | undefined
  let nextIndex = 0
  let signature: string | undefined
  let stop: { reason: StopReason; stopSequence: string | null } | undefined
  const tools = new Map<number, { id: string; name: string }>()
  const signed = passesSignature(meta)

  const messageStart = (): string => {
    if (startWritten) return ""
    startWritten = true
    return frame({
      type: "message_start",
      message: {
        id: meta.id,
        type: "message",
        role: "assistant",
        model: modelAsAsked,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: renderUsage(earlyUsage)
      }
    })
  }

  const close = (): string => {
    if (open === undefined) return ""
    const index = open.index
    let out = ""
    if (open.kind === "thinking" && signature !== undefined) {
      out += frame({ type: "content_block_delta", index, delta: { type: "signature_delta", signature } })
      signature = undefined
    }
    open = undefined
    return out + frame({ type: "content_block_stop", index })
  }

  const openBlock = (block: ContentBlockStartEvent["content_block"], next: (index: number) => OpenBlock): string => {
    const out = close()
    const index = nextIndex++
    open = next(index)
    return out + frame({ type: "content_block_start", index, content_block: block })
  }

  const delta = (delta: ReplyDelta): string => frame({ type: "content_block_delta", index: open!.index, delta })

  const onEvent = (event: ChatEvent): string => {
    switch (event.type) {
      case "start":
        return ""
      case "usage":
        if (!startWritten) earlyUsage = mergeUsage(earlyUsage, event.usage)
        return ""
      case "stop":
        stop = { reason: event.reason, stopSequence: event.stopSequence ?? null }
        return ""
      case "reasoning_signature": {
        if (!signed || event.signature === "") return ""
        signature = (signature ?? "") + event.signature
        if (open?.kind === "thinking") return ""
        const head = messageStart()
        return head + openBlock({ type: "thinking", thinking: "", signature: "" }, (index) => ({ kind: "thinking", index }))
      }""
      case "reasoning_delta": {
        if (event.text === "") return ""
        const head = messageStart()
        const opening = open?.kind === "thinking"
          ? ""
          : openBlock({ type: "thinking", thinking: "", signature: "" }, (index) => ({ kind: "thinking", index }))
        return head + opening + delta({ type: "thinking_delta", thinking: event.text })
      }
      case "text_delta": {
        if (event.text === "") return ""
        const head = messageStart()
        const opening = open?.kind === "text" ? "" : openBlock({ type: "text", text: "" }, (index) => ({ kind: "text", index }))
        return head + opening + delta({ type: "text_delta", text: event.text })
      }
      case "tool_call_delta": {
        const head = messageStart()
        const known = tools.get(event.index)
        const call = { id: event.id ?? known?.id ?? "", name: event.name ?? known?.name ?? "" }
        tools.set(event.index, call)
        const opening = open?.kind === "tool" && open.toolIndex === event.index
          ? ""
          : openBlock({ type: "tool_use", ...call, input: {} }, (index) => ({ kind: "tool", index, toolIndex: event.index }))
        const args = event.argumentsDelta === "" ? "" : delta({ type: "input_json_delta", partial_json: event.argumentsDelta })
        return head + opening + args
      }
    }
  }

  return {
    event: (event) => (done ? "" : onEvent(event)),
    finish: (usage, bill) => {
      if (done) return ""
      done = true
      if (!startWritten) earlyUsage = mergeUsage(earlyUsage, usage)
      let out = messageStart()
      if (open === undefined && nextIndex === 0) out += openBlock({ type: "text", text: "" }, (index) => ({ kind: "text", index }))
      out += close()
      const reason = stop?.reason ?? "stop"
      const stopSequence = reason === "stop" ? stop?.stopSequence ?? null : null
      out += frame({
        type: "message_delta",
        delta: { stop_reason: stopReasonOf(reason, stopSequence), stop_sequence: stopSequence },
        usage: renderUsage(usage),
        ...billFieldsOf(bill)
      })
      return out + frame({ type: "message_stop" })
    },
    interrupted: (failure) => {
      if (done) return ""
      done = true
      return frame({ type: "error", error: { type: "server_error", message: failure.message, code: failure.code } })
    }
  }
}
