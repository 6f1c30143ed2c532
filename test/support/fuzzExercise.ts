/**
 * Sending a fuzz body and judging its answer (test/exchange-fuzz.test.ts): below 500; a refusal in SPEC's envelope
 * (a Responses one naming its field, not_found only for a previous_response_id); a 200 its format's answer
 * (test/support/fuzzAnswers.ts) under a generation id with its bill, or a count; and what the ledger's check needs of
 * each outcome. Also how a failing body is shown, to replay it.
 */
import { envelopeTextProblem } from "./errorEnvelope.ts"
import { countProblem, streamProblem, wholeProblem } from "./fuzzAnswers.ts"
import { FUZZ_PATHS, type FuzzBody } from "./fuzzBodies.ts"
import { type FuzzFormat, isCountFormat, isMessagesFormat, isResponsesFormat } from "./fuzzCore.ts"
import { MISSING_RESPONSE_ID } from "./fuzzResponsesMutations.ts"

/** Per request: a stuck answer is a failure, not a hung suite. */
const REQUEST_TIMEOUT_MS = 30_000

/** The vendor refused a request the exchange had already reserved for (Exchange.ts): its hold is released. */
const VENDOR_REFUSAL = / refused the request: /

export interface Outcome {
  readonly index: number
  readonly status: number
  readonly code: string | undefined
  readonly vendorRefusal: boolean
  readonly requestId: string | undefined
  readonly stream: boolean
  /** X-Compute-Used of a whole answer. */
  readonly computeUsed: bigint | undefined
  /**
   * A served Responses body that did not say store=false (and did not break off) must be stored (true), whatever text
   * it holds (a NUL or a lone surrogate included).
   */
  readonly stored?: boolean
  /** A refusal's `param`. */
  readonly param?: string | undefined
}

export interface Failure {
  readonly body: FuzzBody
  readonly problem: string
}

/** A body as a failure shows it: how to replay it, its head and its text. */
export const describeBody = (body: FuzzBody, seed: number): string => {
  // Long runs of one character (deep nesting, long strings) are abbreviated; the replay regenerates the exact bytes.
  const text = Buffer.from(body.bytes).toString("utf8").replace(/(.)\1{31,}/gsu, (run, char: string) => `<${JSON.stringify(char)} x ${[...run].length}>`)
  const shown = text.length > 3000 ? `${text.slice(0, 3000)}... (${body.bytes.length} bytes)` : text
  return [
    body.index < 0
      ? `format=${body.format} seed request ${body.seedRequest} as it is (seedBody(${JSON.stringify(body.format)}, ${body.seedRequest}))`
      : `FUZZ_SEED=${seed} format=${body.format} index=${body.index} (seed request ${body.seedRequest}; replay: generateFuzzBody(${JSON.stringify(body.format)}, ${seed}, ${body.index}))`,
    `mutations: ${JSON.stringify(body.mutations)}`,
    `POST ${FUZZ_PATHS[body.format]}${body.query}`,
    `content-type: ${body.contentType ?? "(none)"}${isMessagesFormat(body.format) ? `, key as ${body.xApiKey ? "x-api-key" : "Bearer"}` : ""}`,
    `anthropic-beta: ${body.betaHeader === undefined ? "(none)" : JSON.stringify(body.betaHeader.length > 300 ? `${body.betaHeader.slice(0, 300)}...` : body.betaHeader)}`,
    ...(body.extraHeaders === undefined ? [] : [`headers: ${JSON.stringify(body.extraHeaders).slice(0, 600)}`]),
    `body: ${JSON.stringify(shown)}`
  ].join("\n")
}

/** Where the bodies go: the server and each format's key. */
export interface FuzzTarget {
  readonly baseUrl: () => string
  readonly keyOf: (format: FuzzFormat) => { readonly secret: string }
}

/** Sends one body and judges the answer; the outcome feeds the ledger's check. */
export const makeExercise = (target: FuzzTarget) => async (body: FuzzBody): Promise<{ outcome?: Outcome; problem?: string }> => {
  const key = target.keyOf(body.format)
  const headers: Record<string, string> = {
    ...(body.contentType === undefined ? {} : { "content-type": body.contentType }),
    ...(body.xApiKey ? { "x-api-key": key.secret } : { authorization: `Bearer ${key.secret}` }),
    ...(body.betaHeader === undefined ? {} : { "anthropic-beta": body.betaHeader }),
    ...body.extraHeaders
  }
  const path = `${FUZZ_PATHS[body.format]}${body.query}`
  let status: number
  let responseHeaders: Headers
  let text: string
  try {
    const response = await fetch(`${target.baseUrl()}${path}`, {
      method: "POST",
      headers,
      body: body.bytes,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    })
    status = response.status
    responseHeaders = response.headers
    text = await response.text()
  } catch (error) {
    return { problem: `no complete answer: ${String(error)}${error instanceof Error && error.cause !== undefined ? ` (${String(error.cause)})` : ""}` }
  }
  const contentType = responseHeaders.get("content-type") ?? ""
  const answer = `status ${status}, content-type ${JSON.stringify(contentType)}, body ${JSON.stringify(text.slice(0, 1500))}`
  if (status < 200 || (status >= 300 && status < 400)) return { problem: `unexpected status: ${answer}` }
  if (status >= 400) {
    if (!contentType.startsWith("application/json")) return { problem: `a refusal that is not application/json: ${answer}` }
    const problem = envelopeTextProblem(status, text)
    if (problem !== undefined) return { problem: `${status >= 500 ? "5xx answer; " : ""}${problem}: ${answer}` }
    const error = (JSON.parse(text) as { error: { code: string; message: string; param?: string; issues?: unknown } }).error
    const vendorRefusal = error.code === "validation_failed" && VENDOR_REFUSAL.test(error.message)
    const named = isResponsesFormat(body.format) ? responsesRefusalProblem(body, status, error, vendorRefusal) : undefined
    // A 5xx in the envelope still counts for the ledger's check (its hold, if any, must have been released).
    return {
      ...(named === undefined ? {} : { problem: `${named}: ${answer}` }),
      outcome: {
        index: body.index,
        status,
        code: error.code,
        vendorRefusal,
        param: error.param,
        requestId: undefined,
        stream: false,
        computeUsed: undefined
      },
      ...(status >= 500 ? { problem: `5xx answer: ${answer}` } : {})
    }
  }
  if (status !== 200) return { problem: `a success other than 200: ${answer}` }
  const format = body.format
  if (isCountFormat(format)) {
    // Free: no generation, no id to settle; just the count.
    if (!contentType.startsWith("application/json")) return { problem: `a count that is not JSON: ${answer}` }
    let count: unknown
    try {
      count = JSON.parse(text)
    } catch {
      return { problem: `a count whose body is not JSON: ${answer}` }
    }
    const problem = countProblem(format, count) ?? missingResponseServed(body)
    if (problem !== undefined) return { problem: `${problem}: ${answer}` }
    return { outcome: { index: body.index, status, code: undefined, vendorRefusal: false, requestId: undefined, stream: false, computeUsed: undefined } }
  }
  const requestId = responseHeaders.get("x-request-id") ?? ""
  if (!/^gen_[0-9a-f]{24}$/.test(requestId)) return { problem: `a 200 without a generation id in X-Request-Id: ${answer}` }
  const missing = missingResponseServed(body)
  if (missing !== undefined) return { problem: `${missing}: ${answer}` }
  if (contentType.startsWith("text/event-stream")) {
    const problem = streamProblem(format, text, requestId)
    if (problem !== undefined) return { problem: `${problem}: ${answer}` }
    const stored = format === "responses" && !text.includes("event: response.failed\n") && storesResponse(body)
    return { outcome: { index: body.index, status, code: undefined, vendorRefusal: false, requestId, stream: true, computeUsed: undefined, stored } }
  }
  if (!contentType.startsWith("application/json")) return { problem: `a 200 that is neither JSON nor a stream: ${answer}` }
  let reply: { id?: unknown; object?: unknown; type?: unknown; status?: unknown }
  try {
    reply = JSON.parse(text) as typeof reply
  } catch {
    return { problem: `a 200 whose body is not JSON: ${answer}` }
  }
  const problem = wholeProblem(format, reply, requestId)
  if (problem !== undefined) return { problem: `${problem}: ${answer}` }
  const used = responseHeaders.get("x-compute-used") ?? ""
  if (!/^\d+$/.test(used)) return { problem: `a 200 without X-Compute-Used: ${answer}` }
  const stored = format === "responses" && storesResponse(body)
  return { outcome: { index: body.index, status, code: undefined, vendorRefusal: false, requestId, stream: false, computeUsed: BigInt(used), stored } }
}

/** The body as the server reads it (the last of duplicate keys wins); undefined when it is not a JSON object. */
const parsedBody = (body: FuzzBody): Record<string, unknown> | undefined => {
  try {
    const parsed = JSON.parse(Buffer.from(body.bytes).toString("utf8")) as unknown
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** A served Responses body keeps its response unless it says store=false. */
const storesResponse = (body: FuzzBody): boolean => parsedBody(body)?.["store"] !== false

/** A previous_response_id naming nothing must never be served. */
const missingResponseServed = (body: FuzzBody) =>
  isResponsesFormat(body.format) && parsedBody(body)?.["previous_response_id"] === MISSING_RESPONSE_ID
    ? "a body continuing a response that does not exist was served"
    : undefined

/**
 * A Responses refusal names what it refuses: a validation_failed carries `param` or `issues` (each naming one); a
 * not_found comes only for a body naming a previous_response_id (which naming nothing is never served: above).
 */
const responsesRefusalProblem = (
  body: FuzzBody,
  status: number,
  error: { code: string; param?: string; issues?: unknown },
  vendorRefusal: boolean
): string | undefined => {
  if (status >= 500) return undefined
  if (error.code === "validation_failed" && !vendorRefusal && error.param === undefined && error.issues === undefined) return "a validation_failed naming no param"
  const previous = parsedBody(body)?.["previous_response_id"]
  if (error.code === "not_found" && typeof previous !== "string") return "not_found for a body naming no previous response"
  return undefined
}

/** The failures of a run (or of the seeds) as one message: how many, the first in full, the other indexes. */
export const failureReport = (failures: ReadonlyArray<Failure>, total: number, what: string, seed: number) => {
  const first = failures[0]
  return first === undefined
    ? ""
    : `${failures.length} of ${total} ${what} failed; the first:\n${first.problem}\n${describeBody(first.body, seed)}\n` +
      `other failing indexes: ${failures.slice(1, 40).map((f) => f.body.index).join(", ")}\n`
}
