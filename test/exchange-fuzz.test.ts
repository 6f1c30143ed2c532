/**
 * Fuzzing the two inference endpoints (issue 11 item 8): FUZZ_COUNT (default 10000) seeded bodies per inbound format,
 * each a valid request mutated 1-3 times (test/support/fuzzBodies.ts), sent over a real socket to the real server on
 * the vendor simulator and a real database. Every answer is below 500; every refusal is SPEC "Errors"' envelope with
 * a known code at that code's status; every stream ends as SPEC "Streaming" says (or with `stream_interrupted`); and
 * the ledger moved only for the answers that were served: one charge per 2xx equal to its reported bill, no live
 * hold, the balance down by exactly the charges.
 *
 * Replay: FUZZ_SEED=<seed> (printed) regenerates the same bodies; `generateFuzzBody(format, seed, index)` one of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { envelopeTextProblem } from "./support/errorEnvelope.ts"
import { envInt, type FuzzBody, type FuzzFormat, generateFuzzBody } from "./support/fuzzBodies.ts"
import { recordFigure } from "./support/reliability.ts"

const DEFAULT_SEED = 0x5eed_2011
const SEED = envInt("FUZZ_SEED", DEFAULT_SEED, 0)
const COUNT = envInt("FUZZ_COUNT", 10_000, 1)
const CONCURRENCY = envInt("FUZZ_CONCURRENCY", 8, 1)
/** FUZZ_ONLY="chat:16,messages:240-250,7" replays just those bodies of the run (no format: of both formats). */
const ONLY = (process.env.FUZZ_ONLY ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
const indexesOf = (format: FuzzFormat): ReadonlyArray<number> => {
  if (ONLY.length === 0) return Array.from({ length: COUNT }, (_, i) => i)
  return ONLY.flatMap((entry) => {
    const [prefix, range] = entry.includes(":") ? entry.split(":") : [format, entry]
    const [from, to = from] = (range ?? "").split("-").map(Number)
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from! < 0 || to! < from!) {
      throw new Error(`FUZZ_ONLY: ${JSON.stringify(entry)} is not [format:]index or [format:]from-to`)
    }
    return prefix === format ? Array.from({ length: to! - from! + 1 }, (_, i) => from! + i) : []
  })
}
/** Per request: a stuck answer is a failure, not a hung suite. */
const REQUEST_TIMEOUT_MS = 30_000
/** Each format's run, and the ledger's check. */
const RUN_TIMEOUT_MS = 170_000

/** The vendor refused a request the exchange had already reserved for (Exchange.ts): its hold is released. */
const VENDOR_REFUSAL = / refused the request: /

interface Outcome {
  readonly index: number
  readonly status: number
  readonly code: string | undefined
  readonly vendorRefusal: boolean
  readonly requestId: string | undefined
  readonly stream: boolean
  /** X-Compute-Used of a whole answer. */
  readonly computeUsed: bigint | undefined
}

interface Failure {
  readonly body: FuzzBody
  readonly problem: string
}

interface Run {
  readonly count: number
  readonly outcomes: Array<Outcome>
  readonly failures: Array<Failure>
  readonly ms: number
}

let fx: ExchangeFixture
const keys = {} as Record<FuzzFormat, { id: string; secret: string }>
const runs: Partial<Record<FuzzFormat, Run>> = {}
let balanceBefore: bigint
let lastEntryBefore: bigint
let accountId: string

const account = async () =>
  (await makeClient(fx.baseUrl).call("GET", "/v1/account", undefined, { cookie: fx.cookie, ip: fx.ip })).body as { balanceWei: string; reservedWei: string }

const describeBody = (body: FuzzBody): string => {
  // Long runs of one character (deep nesting, long strings) are abbreviated; the replay regenerates the exact bytes.
  const text = Buffer.from(body.bytes).toString("utf8").replace(/(.)\1{31,}/gsu, (run, char: string) => `<${JSON.stringify(char)} x ${[...run].length}>`)
  const shown = text.length > 3000 ? `${text.slice(0, 3000)}... (${body.bytes.length} bytes)` : text
  return [
    `FUZZ_SEED=${SEED} format=${body.format} index=${body.index} (seed request ${body.seedRequest}; replay: generateFuzzBody(${JSON.stringify(body.format)}, ${SEED}, ${body.index}))`,
    `mutations: ${JSON.stringify(body.mutations)}`,
    `content-type: ${body.contentType ?? "(none)"}${body.format === "messages" ? `, key as ${body.xApiKey ? "x-api-key" : "Bearer"}` : ""}`,
    `body: ${JSON.stringify(shown)}`
  ].join("\n")
}

/** Splits a server-sent event stream into its events (the `event:` name, if any, and the joined `data:` lines). */
const sseEvents = (text: string): Array<{ event: string | undefined; data: string }> =>
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

/** SPEC "Streaming": the chat stream ends `data: [DONE]` after the final chunk; the messages stream ends `message_stop`. */
const streamProblem = (format: FuzzFormat, text: string): string | undefined => {
  if (!text.endsWith("\n\n")) return "the stream does not end on an event boundary"
  const events = sseEvents(text)
  if (events.length === 0) return "the stream is empty"
  const last = events[events.length - 1]!
  const interrupted = (data: string) => {
    try {
      const parsed = JSON.parse(data) as { error?: { code?: unknown; type?: unknown } }
      return parsed.error?.code === "stream_interrupted" && parsed.error.type === "server_error"
    } catch {
      return false
    }
  }
  if (format === "chat") {
    const json = events.filter((e) => e.data !== "[DONE]")
    for (const e of json) {
      try {
        JSON.parse(e.data)
      } catch {
        return `a chunk is not JSON: ${JSON.stringify(e.data.slice(0, 200))}`
      }
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
    try {
      const parsed = JSON.parse(e.data) as { type?: unknown }
      if (parsed.type !== e.event) return `event ${JSON.stringify(e.event)} carries data of type ${JSON.stringify(parsed.type)}`
    } catch {
      return `the data of event ${JSON.stringify(e.event)} is not JSON`
    }
  }
  if (last.event === "message_stop") {
    if (events.filter((e) => e.event === "message_stop").length !== 1) return "message_stop is sent more than once"
    if (events[events.length - 2]?.event !== "message_delta") return "message_stop does not follow message_delta"
    return undefined
  }
  return last.event === "error" && interrupted(last.data) ? undefined : `the messages stream ends with ${JSON.stringify(last.event)}, neither message_stop nor stream_interrupted`
}

/** Sends one body and judges the answer; the outcome feeds the ledger's check. */
const exercise = async (body: FuzzBody): Promise<{ outcome?: Outcome; problem?: string }> => {
  const key = keys[body.format]
  const headers: Record<string, string> = {
    ...(body.contentType === undefined ? {} : { "content-type": body.contentType }),
    ...(body.xApiKey ? { "x-api-key": key.secret } : { authorization: `Bearer ${key.secret}` })
  }
  const path = body.format === "chat" ? "/v1/chat/completions" : "/v1/messages"
  let status: number
  let responseHeaders: Headers
  let text: string
  try {
    const response = await fetch(`${fx.baseUrl}${path}`, {
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
    const error = (JSON.parse(text) as { error: { code: string; message: string } }).error
    // A 5xx in the envelope still counts for the ledger's check (its hold, if any, must have been released).
    return {
      outcome: {
        index: body.index,
        status,
        code: error.code,
        vendorRefusal: error.code === "validation_failed" && VENDOR_REFUSAL.test(error.message),
        requestId: undefined,
        stream: false,
        computeUsed: undefined
      },
      ...(status >= 500 ? { problem: `5xx answer: ${answer}` } : {})
    }
  }
  if (status !== 200) return { problem: `a success other than 200: ${answer}` }
  const requestId = responseHeaders.get("x-request-id") ?? ""
  if (!/^gen_[0-9a-f]{24}$/.test(requestId)) return { problem: `a 200 without a generation id in X-Request-Id: ${answer}` }
  if (contentType.startsWith("text/event-stream")) {
    const problem = streamProblem(body.format, text)
    if (problem !== undefined) return { problem: `${problem}: ${answer}` }
    return { outcome: { index: body.index, status, code: undefined, vendorRefusal: false, requestId, stream: true, computeUsed: undefined } }
  }
  if (!contentType.startsWith("application/json")) return { problem: `a 200 that is neither JSON nor a stream: ${answer}` }
  let reply: { id?: unknown; object?: unknown; type?: unknown }
  try {
    reply = JSON.parse(text) as typeof reply
  } catch {
    return { problem: `a 200 whose body is not JSON: ${answer}` }
  }
  if (reply.id !== requestId) return { problem: `the reply's id is not its X-Request-Id: ${answer}` }
  if (body.format === "chat" ? reply.object !== "chat.completion" : reply.type !== "message") return { problem: `a 200 that is not a ${body.format} reply: ${answer}` }
  const used = responseHeaders.get("x-compute-used") ?? ""
  if (!/^\d+$/.test(used)) return { problem: `a 200 without X-Compute-Used: ${answer}` }
  return { outcome: { index: body.index, status, code: undefined, vendorRefusal: false, requestId, stream: false, computeUsed: BigInt(used) } }
}

/** Every 97th body's bytes, generated before anything else: the run must send exactly these (replayable by index). */
const sampled = (format: FuzzFormat) => indexesOf(format).filter((i) => i % 97 === 0)
const fingerprints = new Map<string, string>()
const fingerprint = (body: FuzzBody) => `${body.contentType}|${body.xApiKey}|${Buffer.from(body.bytes).toString("base64")}`
for (const format of ["chat", "messages"] as const) {
  for (const index of sampled(format)) fingerprints.set(`${format}:${index}`, fingerprint(generateFuzzBody(format, SEED, index)))
}

const runFormat = async (format: FuzzFormat): Promise<Run> => {
  const started = Date.now()
  const outcomes: Array<Outcome> = []
  const failures: Array<Failure> = []
  const indexes = indexesOf(format)
  let next = 0
  const worker = async () => {
    for (;;) {
      const index = indexes[next++]
      if (index === undefined) return
      const body = generateFuzzBody(format, SEED, index)
      const expected = fingerprints.get(`${format}:${index}`)
      if (expected !== undefined && expected !== fingerprint(body)) {
        failures.push({ body, problem: "the generator is not a pure function of (format, seed, index): this body differs from its first generation" })
      }
      const { outcome, problem } = await exercise(body)
      if (problem !== undefined) failures.push({ body, problem })
      if (outcome !== undefined) outcomes.push(outcome)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  failures.sort((a, b) => a.body.index - b.body.index)
  return { outcomes, failures, ms: Date.now() - started, count: indexes.length }
}

const summary = (run: Run) => {
  const byAnswer = new Map<string, number>()
  for (const o of run.outcomes) {
    const label = o.status === 200 ? (o.stream ? "200 stream" : "200 json") : `${o.status} ${o.code}`
    byAnswer.set(label, (byAnswer.get(label) ?? 0) + 1)
  }
  return [...byAnswer.entries()].sort((a, b) => b[1] - a[1]).map(([label, n]) => `${label}: ${n}`).join(", ")
}

const fuzz = async (format: FuzzFormat) => {
  const run = await runFormat(format)
  runs[format] = run
  console.log(`[fuzz] ${format}: ${run.count} bodies, seed ${SEED}, ${CONCURRENCY} in flight, ${run.ms} ms; ${summary(run)}; ${run.failures.length} failing`)
  for (const failure of run.failures.slice(0, 20)) {
    console.log(`[fuzz] ${format} #${failure.body.index} ${JSON.stringify(failure.body.mutations)}: ${failure.problem.slice(0, 400)}`)
  }
  const first = run.failures[0]
  expect(
    run.failures.length,
    first === undefined
      ? ""
      : `${run.failures.length} of ${run.count} ${format} bodies failed; the first:\n${first.problem}\n${describeBody(first.body)}\n` +
        `other failing indexes: ${run.failures.slice(1, 40).map((f) => f.body.index).join(", ")}\n`
  ).toBe(0)
  expect(run.outcomes).toHaveLength(run.count)
  if (ONLY.length > 0) return
  // The generator reaches both sides: some bodies are served, most are refused.
  expect(run.outcomes.some((o) => o.status === 200 && o.stream)).toBe(true)
  expect(run.outcomes.some((o) => o.status === 200 && !o.stream)).toBe(true)
  expect(run.outcomes.some((o) => o.status === 422)).toBe(true)
}

beforeAll(async () => {
  console.log(`[fuzz] FUZZ_SEED=${SEED} FUZZ_COUNT=${COUNT}`)
  fx = await startExchangeFixture()
  keys.chat = await fx.issueKey({ label: "fuzz chat" })
  keys.messages = await fx.issueKey({ label: "fuzz messages" })
  // Enough that no hold of a served body is refused for the balance (a few are, by design, for huge max_tokens).
  await fx.grant(1_000_000n * ONE_CREDIT)
  const [row] = await fx.query(`SELECT account_id::text AS account FROM api_keys WHERE id = $1`, [keys.chat.id])
  accountId = row.account
  const [last] = await fx.query(`SELECT coalesce(max(id), 0)::text AS id FROM ledger_entries`)
  lastEntryBefore = BigInt(last.id)
  const before = await account()
  expect(before.reservedWei).toBe("0")
  balanceBefore = BigInt(before.balanceWei)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

describe(`fuzzing the inference endpoints with ${COUNT} seeded mutations of valid requests per format`, () => {
  it(
    "POST /v1/chat/completions never answers 5xx, refuses only in SPEC's error envelope at its code's status, and ends every stream with [DONE] or stream_interrupted",
    () => fuzz("chat"),
    RUN_TIMEOUT_MS
  )

  it(
    "POST /v1/messages never answers 5xx, refuses only in SPEC's error envelope at its code's status, and ends every stream with message_stop or stream_interrupted",
    () => fuzz("messages"),
    RUN_TIMEOUT_MS
  )

  it(
    "no refusal touches the ledger: one charge per served body equal to its reported bill, every hold settled or released, the balance down by exactly the charges",
    async () => {
      const served = new Map<string, Outcome>()
      // Refusals that come after the reservation: the vendor refused the body, or no upstream key could take it.
      let refusedAfterHold = 0
      for (const format of ["chat", "messages"] as const) {
        const run = runs[format]
        expect(run, `the ${format} run did not complete`).toBeDefined()
        for (const o of run!.outcomes) {
          if (o.requestId !== undefined) served.set(o.requestId, o)
          if (o.vendorRefusal || o.code === "all_keys_exhausted") refusedAfterHold++
        }
      }
      const keyIds = [keys.chat.id, keys.messages.id]
      // Streams settle after their last byte: allow the settlements a moment.
      const until = Date.now() + 15_000
      let live: Array<any> = []
      for (;;) {
        live = await fx.query(`SELECT request_id FROM holds WHERE api_key_id = ANY($1) AND released_at IS NULL AND settled_at IS NULL`, [keyIds])
        if (live.length === 0 || Date.now() > until) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(live.map((h) => h.request_id), "holds left live").toEqual([])

      // The account's every hold and bill (the fixture's account has no others).
      const holds = await fx.query(
        `SELECT request_id, api_key_id, settled_at IS NOT NULL AS settled, released_at IS NOT NULL AS released, charged_wei::text AS charged
         FROM holds WHERE account_id = $1`,
        [accountId]
      )
      expect(holds.every((h) => keyIds.includes(h.api_key_id))).toBe(true)
      const settled = holds.filter((h) => h.settled)
      // A hold is taken only for a body that passed every check; it is settled exactly for the served ones.
      expect(settled.map((h) => h.request_id).sort()).toEqual([...served.keys()].sort())
      // The only others: bodies refused after the reservation, whose holds were released without a charge.
      expect(holds.filter((h) => !h.settled).length, "holds neither settled for a served body nor released for a refusal after reserving").toBe(refusedAfterHold)
      expect(holds.filter((h) => !h.settled).every((h) => h.released)).toBe(true)

      const generations = await fx.query(`SELECT id, charge_wei::text AS charge, stream FROM generations WHERE account_id = $1`, [accountId])
      expect(generations.map((g) => g.id).sort()).toEqual([...served.keys()].sort())
      const chargeOf = new Map<string, bigint>(generations.map((g) => [g.id as string, BigInt(g.charge)]))
      const streamed = new Map<string, boolean>(generations.map((g) => [g.id as string, g.stream as boolean]))
      for (const [id, outcome] of served) {
        expect(streamed.get(id), id).toBe(outcome.stream)
        // A whole answer reported its bill in X-Compute-Used; a stream's is its stored generation.
        if (outcome.computeUsed !== undefined) expect(chargeOf.get(id), id).toBe(outcome.computeUsed)
      }
      for (const h of settled) expect(BigInt(h.charged), h.request_id).toBe(chargeOf.get(h.request_id))

      // Every ledger entry since the run began is a charge of a served body (entries are never zero: a zero bill has none).
      const entries = await fx.query(
        `SELECT kind, reference, api_key_id, (-amount_wei)::text AS charge FROM ledger_entries WHERE account_id = $1 AND id > $2`,
        [accountId, lastEntryBefore.toString()]
      )
      expect(entries.filter((e) => e.kind !== "charge" || !keyIds.includes(e.api_key_id))).toEqual([])
      const charged = [...chargeOf.entries()].filter(([, wei]) => wei > 0n)
      expect(entries.map((e) => e.reference).sort()).toEqual(charged.map(([id]) => id).sort())
      for (const e of entries) expect(BigInt(e.charge), e.reference).toBe(chargeOf.get(e.reference))
      const total = charged.reduce((sum, [, wei]) => sum + wei, 0n)
      if (ONLY.length === 0) expect(total).toBeGreaterThan(0n)

      const after = await account()
      expect(after.reservedWei).toBe("0")
      expect(balanceBefore - BigInt(after.balanceWei)).toBe(total)
      console.log(`[fuzz] ledger: ${served.size} served, ${entries.length} charges totalling ${total} wei, ${refusedAfterHold} holds released for refusals after reserving`)
      if (ONLY.length === 0) {
        const chat = runs.chat!
        const messages = runs.messages!
        recordFigure({
          suite: "test/exchange-fuzz.test.ts",
          tried: "seeded hostile bodies to /v1/chat/completions and /v1/messages",
          volume: `${chat.count + messages.count} bodies (${chat.count} per format), seed ${SEED}`,
          held: `0 answers 5xx; every refusal in the envelope at its code's status; ${served.size} served, ${entries.length} charges each equal to its bill; ${refusedAfterHold} holds released for refusals after reserving; none left live; the balance down by exactly the charges`
        })
      }
    },
    60_000
  )
})
