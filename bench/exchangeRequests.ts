/** `npm run bench:exchange`: the targets it measures and the one request shape it sends them. */
import * as Http from "node:http"
import { log, sleep } from "./common.ts"
import { mixBodies, requestBody, stripAnsi } from "./exchangeSettings.ts"
import { PORTKEY_HONO_NODE_SERVER } from "./exchangePortkey.ts"
import type { Child } from "./exchangeTargets.ts"

// ---------------------------------------------------------------------------------------------- targets and requests

/**
 * The four targets of chat completions, the exchange again over `POST /v1/responses` (bench/exchangeResponses.ts),
 * and a second exchange process with traces on (bench/exchangeTracing.ts).
 */
export type TargetKey = "direct" | "bare" | "exchange" | "portkey" | "responses" | "responses-stored" | "exchange-traced"

export interface Target {
  readonly key: TargetKey
  readonly label: string
  /** The wire format it is sent: chat completions, or OpenAI's Responses. */
  readonly kind: "chat" | "responses"
  readonly origin: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: { readonly plain: string; readonly stream: string }
  /** The mix's bodies (exchangeSettings.mixBodies), sent in turn. */
  readonly mix: { readonly plain: ReadonlyArray<string>; readonly stream: ReadonlyArray<string> }
  readonly child: Child | undefined
  /** Set when the target could not be measured at all. */
  notMeasured: string | undefined
  /** Set when its streaming answers could not be measured. */
  streamNotMeasured: string | undefined
  /** A longer explanation for the report, when there is one. */
  note: string | undefined
  /** 2xx answers it gave the bench to the one request shape, by kind (for the billing check of the exchange). */
  readonly answered: { plain: number; stream: number }
  /** 2xx answers it gave to each of the mix's bodies (by index in `mix`), by kind. */
  readonly answeredMix: { readonly plain: Array<number>; readonly stream: Array<number> }
}

export const makeTarget = (key: TargetKey, label: string, origin: string, headers: Record<string, string>, model: string, child: Child | undefined): Target => ({
  key,
  label,
  kind: "chat",
  origin,
  path: "/v1/chat/completions",
  headers: { "content-type": "application/json", ...headers },
  body: { plain: requestBody(model, false), stream: requestBody(model, true) },
  mix: {
    plain: mixBodies((id) => model.replace(/[^/]*$/, id), false),
    stream: mixBodies((id) => model.replace(/[^/]*$/, id), true)
  },
  child,
  notMeasured: undefined,
  streamNotMeasured: undefined,
  note: undefined,
  answered: { plain: 0, stream: 0 },
  answeredMix: { plain: mixBodies((id) => id, false).map(() => 0), stream: mixBodies((id) => id, true).map(() => 0) }
})

export interface Timed {
  readonly status: number
  readonly contentType: string
  /** From sending the request to the first byte of the body, in ms. */
  readonly ttfbMs: number
  /** From sending the request to the end of the body, in ms. */
  readonly totalMs: number
  readonly body: string
}

/** One request over `agent` with plain `node:http`, timed to the first body byte and to the end. */
export const timedRequest = (agent: Http.Agent, target: Target, stream: boolean, keepBody: boolean, body?: string): Promise<Timed> =>
  new Promise((resolve, reject) => {
    const url = new URL(target.path, target.origin)
    const payload = body ?? (stream ? target.body.stream : target.body.plain)
    const started = process.hrtime.bigint()
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6
    const request = Http.request(
      {
        agent,
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { ...target.headers, "content-length": String(Buffer.byteLength(payload)) }
      },
      (response) => {
        let ttfbMs = Number.NaN
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => {
          if (Number.isNaN(ttfbMs)) ttfbMs = elapsed()
          if (keepBody || (response.statusCode ?? 0) >= 300) chunks.push(chunk)
        })
        response.on("end", () => {
          const totalMs = elapsed()
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers["content-type"] ?? ""),
            ttfbMs: Number.isNaN(ttfbMs) ? totalMs : ttfbMs,
            totalMs,
            body: Buffer.concat(chunks).toString("utf8")
          })
        })
        response.on("error", reject)
      }
    )
    request.setTimeout(30_000, () => request.destroy(new Error("no answer within 30 s")))
    request.on("error", reject)
    request.end(payload)
  })

export class RequestFailure extends Error {}

/**
 * A Responses answer as the bench expects it: a response object (`status` completed, or incomplete at
 * `max_output_tokens`) with a message carrying output text, or an event stream from `response.created` through text
 * deltas to `response.completed` / `response.incomplete` (a Responses stream has no [DONE]).
 */
const responsesProblem = (answer: Timed, stream: boolean): string | undefined => {
  if (stream) {
    if (!answer.contentType.startsWith("text/event-stream")) return `answered content-type "${answer.contentType}", not text/event-stream`
    if (!answer.body.includes("event: response.created") && !answer.body.includes('"type":"response.created"')) return "the stream has no response.created"
    if (!answer.body.includes('"type":"response.output_text.delta"')) return "the stream has no response.output_text.delta"
    if (!/"type":"response\.(completed|incomplete)"/.test(answer.body.slice(-20_000))) return `the stream did not end in response.completed: ${answer.body.slice(-200)}`
    return undefined
  }
  try {
    const parsed = JSON.parse(answer.body) as { object?: unknown; status?: unknown; output?: Array<{ type?: unknown; content?: Array<{ type?: unknown; text?: unknown }> }> }
    const text = parsed.output?.find((item) => item.type === "message")?.content?.find((part) => part.type === "output_text")?.text
    if (parsed.object !== "response" || (parsed.status !== "completed" && parsed.status !== "incomplete") || typeof text !== "string") {
      return `not a finished response with output text: ${answer.body.slice(0, 200)}`
    }
  } catch {
    return `not JSON: ${answer.body.slice(0, 200)}`
  }
  return undefined
}

/**
 * Checks one probe answer: a chat completion (JSON) or an SSE stream ending in [DONE], or for the Responses targets
 * a response object or its event stream (responsesProblem); the reason when it is not.
 */
export const probeProblem = (answer: Timed, stream: boolean, kind: Target["kind"] = "chat"): string | undefined => {
  if (answer.status < 200 || answer.status >= 300) return `answered ${answer.status}: ${answer.body.slice(0, 200)}`
  if (kind === "responses") return responsesProblem(answer, stream)
  if (stream) {
    if (!answer.contentType.startsWith("text/event-stream")) return `answered content-type "${answer.contentType}", not text/event-stream`
    if (!answer.body.includes("data: [DONE]")) return `the stream did not end in data: [DONE]: ${answer.body.slice(-200)}`
    if (!answer.body.includes("chat.completion.chunk")) return "the stream has no chat.completion.chunk"
    return undefined
  }
  try {
    const parsed = JSON.parse(answer.body) as { object?: unknown; choices?: Array<{ message?: { content?: unknown } }> }
    if (parsed.object !== "chat.completion" || typeof parsed.choices?.[0]?.message?.content !== "string") return `not a chat completion: ${answer.body.slice(0, 200)}`
  } catch {
    return `not JSON: ${answer.body.slice(0, 200)}`
  }
  return undefined
}

/**
 * One request of each kind (`kinds`: non-streaming, streaming) to `target`; throws for the targets that must work,
 * marks Portkey "not measured".
 */
export const probe = async (target: Target, kinds: ReadonlyArray<boolean> = [false, true]) => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    for (const stream of kinds) {
      let problem: string | undefined
      let answer: Timed | undefined
      try {
        answer = await timedRequest(agent, target, stream, true)
        problem = probeProblem(answer, stream, target.kind)
      } catch (error) {
        problem = `request failed: ${error instanceof Error ? error.message : String(error)}`
      }
      if (problem === undefined) {
        if (stream) target.answered.stream++
        else target.answered.plain++
        log(`  ${target.label}: ${stream ? "stream" : "plain"} probe OK (${answer!.totalMs.toFixed(1)} ms, ${answer!.body.length} bytes)`)
        continue
      }
      if (target.key !== "portkey") {
        const failure = `${target.label}: the ${stream ? "streaming" : "non-streaming"} probe ${problem}`
        // The exchange's own log says why (a 500 carries no detail).
        if (target.child !== undefined && (target.key === "exchange" || target.key === "exchange-traced")) {
          await sleep(200)
          throw new RequestFailure(`${failure}\n--- its output (last 3000 characters) ---\n${stripAnsi(target.child.output()).slice(-3000)}`)
        }
        throw new RequestFailure(failure)
      }
      // Portkey: tell why, from its answer and its own log.
      await sleep(200)
      const logged = stripAnsi(target.child?.output() ?? "")
      const immutable = /TypeError: immutable/.test(logged)
      const status = /^answered (\d+)/.exec(problem)?.[1]
      const reason =
        immutable && status !== undefined
          ? `${stream ? "stream: true" : "a chat completion"} answered ${status} (gateway: "TypeError: immutable", Portkey-AI/gateway#1389)`
          : `${stream ? "stream: true" : "a chat completion"} ${problem.replace(/\s+/g, " ").slice(0, 160)}`
      if (immutable) {
        target.note =
          `${target.label}: ${stream ? "stream: true" : "a chat completion"} ${problem.replace(/\s+/g, " ").slice(0, 160)}; its log says "TypeError: immutable" from` +
          " ResponseService.updateHeaders: the gateway appends x-portkey-* headers to a Response that keeps the upstream fetch Response's immutable" +
          " headers, which @hono/node-server does from 1.14.2 on (honojs/node-server#242; the gateway's range ^1.3.3 installs the latest)." +
          ` Known: Portkey-AI/gateway#1389. package.json's overrides pin ${PORTKEY_HONO_NODE_SERVER} for the gateway: is it installed (npm ls @hono/node-server)?`
      }
      log(`  ${target.label}: ${stream ? "stream" : "plain"} probe FAILED: ${reason}`)
      if (stream) target.streamNotMeasured = reason
      else {
        target.notMeasured = reason
        return
      }
    }
  } finally {
    agent.destroy()
  }
}

