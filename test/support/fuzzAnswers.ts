/**
 * What the fuzz suite (test/exchange-fuzz.test.ts) holds a served answer to, by format: a stream ends as SPEC
 * "Streaming" says (or with `stream_interrupted`), a whole reply is its format's object under the request's id, and a
 * token count is exactly its format's count object. Each check says why an answer is wrong, or undefined.
 */
import type { FuzzFormat } from "./fuzzCore.ts"

/** Splits a server-sent event stream into its events (the `event:` name, if any, and the joined `data:` lines). */
export const sseEvents = (text: string): Array<{ event: string | undefined; data: string }> =>
  text
    .split(/\n\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      let event: string | undefined
      const data: Array<string> = []
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim()
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""))
      }
      return { event, data: data.join("\n") }
    })

const parse = (data: string): unknown => {
  try {
    return JSON.parse(data)
  } catch {
    return undefined
  }
}

const interrupted = (data: string) => {
  const parsed = parse(data) as { error?: { code?: unknown; type?: unknown } } | undefined
  return parsed?.error?.code === "stream_interrupted" && parsed.error.type === "server_error"
}

/** The response id of a request id (`gen_<hex>` answers as `resp_<hex>`). */
const responseIdOf = (requestId: string) => `resp_${requestId.slice(4)}`

/**
 * The Responses stream: `response.created` first, every event's data of its event's type with the next
 * sequence_number, and exactly one terminal event last: `response.completed` / `response.incomplete` carrying the
 * whole response (its id, usage), or `response.failed` whose error is `stream_interrupted`.
 */
const responsesStreamProblem = (text: string, requestId: string): string | undefined => {
  const events = sseEvents(text)
  for (const [i, e] of events.entries()) {
    const parsed = parse(e.data) as { type?: unknown; sequence_number?: unknown } | undefined
    if (parsed === undefined) return `the data of event ${JSON.stringify(e.event)} is not JSON`
    if (parsed.type !== e.event) return `event ${JSON.stringify(e.event)} carries data of type ${JSON.stringify(parsed.type)}`
    if (parsed.sequence_number !== i) return `event ${i} (${e.event}) has sequence_number ${JSON.stringify(parsed.sequence_number)}`
  }
  if (events[0]!.event !== "response.created") return `the responses stream starts with ${JSON.stringify(events[0]!.event)}`
  const terminal = (event: string | undefined) => event === "response.completed" || event === "response.incomplete" || event === "response.failed"
  if (events.filter((e) => terminal(e.event)).length !== 1) return "not exactly one terminal event (completed, incomplete or failed)"
  const last = events[events.length - 1]!
  if (!terminal(last.event)) return `the responses stream ends with ${JSON.stringify(last.event)}, not a terminal event`
  const response = (parse(last.data) as { response?: { id?: unknown; status?: unknown; usage?: unknown; error?: { code?: unknown } | null } }).response
  if (response?.id !== responseIdOf(requestId)) return `the terminal event's response.id ${JSON.stringify(response?.id)} is not of X-Request-Id ${requestId}`
  if (last.event === "response.failed") return response.error?.code === "stream_interrupted" ? undefined : "response.failed without stream_interrupted"
  if (response.status !== last.event.slice("response.".length)) return `${last.event} carries status ${JSON.stringify(response.status)}`
  return response.usage == null ? `${last.event} carries no usage` : undefined
}

/**
 * SPEC "Streaming": the chat stream ends `data: [DONE]` after the final chunk; the messages stream ends
 * `message_stop`; the Responses stream ends `response.completed` (or `.incomplete`); any may end stream_interrupted.
 */
export const streamProblem = (format: "chat" | "messages" | "responses", text: string, requestId: string): string | undefined => {
  if (!text.endsWith("\n\n")) return "the stream does not end on an event boundary"
  const events = sseEvents(text)
  if (events.length === 0) return "the stream is empty"
  const last = events[events.length - 1]!
  if (format === "responses") return responsesStreamProblem(text, requestId)
  if (format === "chat") {
    const json = events.filter((e) => e.data !== "[DONE]")
    for (const e of json) {
      if (parse(e.data) === undefined) return `a chunk is not JSON: ${JSON.stringify(e.data.slice(0, 200))}`
    }
    if (last.data === "[DONE]") {
      if (events.filter((e) => e.data === "[DONE]").length !== 1) return "[DONE] is sent more than once"
      const final = JSON.parse(events[events.length - 2]?.data ?? "null") as { choices?: Array<{ finish_reason?: unknown }>; usage?: unknown } | null
      if (final?.choices?.[0]?.finish_reason == null || final.usage == null) return "the chunk before [DONE] has no finish_reason or usage"
      const first = JSON.parse(events[0]!.data) as { object?: unknown; choices?: Array<{ delta?: { role?: unknown } }> }
      if (first.object !== "chat.completion.chunk" || first.choices?.[0]?.delta?.role !== "assistant") return "the first chunk does not carry role assistant"
      return undefined
    }
    return interrupted(last.data) ? undefined : `the chat stream ends neither with [DONE] nor stream_interrupted: ${JSON.stringify(last.data.slice(0, 300))}`
  }
  if (events[0]!.event !== "message_start") return `the messages stream starts with ${JSON.stringify(events[0]!.event)}`
  for (const e of events) {
    const parsed = parse(e.data) as { type?: unknown } | undefined
    if (parsed === undefined) return `the data of event ${JSON.stringify(e.event)} is not JSON`
    if (parsed.type !== e.event) return `event ${JSON.stringify(e.event)} carries data of type ${JSON.stringify(parsed.type)}`
  }
  if (last.event === "message_stop") {
    if (events.filter((e) => e.event === "message_stop").length !== 1) return "message_stop is sent more than once"
    if (events[events.length - 2]?.event !== "message_delta") return "message_stop does not follow message_delta"
    return undefined
  }
  return last.event === "error" && interrupted(last.data) ? undefined : `the messages stream ends with ${JSON.stringify(last.event)}, neither message_stop nor stream_interrupted`
}

/** A whole reply: the format's object, under the id X-Request-Id names (a response's is `resp_<hex>`). */
export const wholeProblem = (format: "chat" | "messages" | "responses", reply: { id?: unknown; object?: unknown; type?: unknown; status?: unknown }, requestId: string): string | undefined => {
  if (format === "responses") {
    if (reply.object !== "response") return "a 200 that is not a response object"
    if (reply.id !== responseIdOf(requestId)) return "the response's id is not of its X-Request-Id"
    return reply.status === "completed" || reply.status === "incomplete" ? undefined : `a whole response with status ${JSON.stringify(reply.status)}`
  }
  if (reply.id !== requestId) return "the reply's id is not its X-Request-Id"
  return (format === "chat" ? reply.object === "chat.completion" : reply.type === "message") ? undefined : `a 200 that is not a ${format} reply`
}

/** A token count: `{input_tokens}` (count_tokens) or `{object: "response.input_tokens", input_tokens}`, a non-negative integer. */
export const countProblem = (format: Extract<FuzzFormat, "count" | "input_tokens">, count: unknown): string | undefined => {
  const keys = format === "count" ? "input_tokens" : "object,input_tokens"
  if (typeof count !== "object" || count === null || Array.isArray(count) || Object.keys(count).sort().join() !== keys.split(",").sort().join()) {
    return `a count that is not {${keys}}`
  }
  const { input_tokens: inputTokens, object } = count as { input_tokens?: unknown; object?: unknown }
  if (format === "input_tokens" && object !== "response.input_tokens") return `a count whose object is ${JSON.stringify(object)}`
  return typeof inputTokens === "number" && Number.isSafeInteger(inputTokens) && inputTokens >= 0 ? undefined : "input_tokens is not a non-negative integer"
}
