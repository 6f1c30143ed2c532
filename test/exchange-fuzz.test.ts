/**
 * Fuzzing the inference endpoints (issue 11 item 8): FUZZ_COUNT (default 10000) seeded bodies per inbound format,
 * each a valid request mutated 1-3 times (test/support/fuzzBodies.ts), sent over a real socket to the real server on
 * the vendor simulator and a real database. Every answer is below 500; every refusal is SPEC "Errors"' envelope with
 * a known code at that code's status; every stream ends as SPEC "Streaming" says (or with `stream_interrupted`); and
 * the ledger moved only for the answers that were served: one charge per 2xx equal to its reported bill, no live
 * hold, the balance down by exactly the charges.
 *
 * The messages bodies include what Anthropic's own clients send (a trimmed Claude Code body among them), with the
 * `anthropic-beta` header and `?beta=true` now and then. POST /v1/messages/count_tokens is fuzzed too, with
 * FUZZ_COUNT / COUNT_SHARE bodies (docs/decisions.md "Token counting"): below 500, refusals in the envelope, a 200 is
 * `{input_tokens}` with a non-negative integer, and nothing is billed (the balance and the ledger do not move).
 * Before the runs every seed request is sent as it is: each is served (or refused by the upstream, where marked).
 *
 * Replay: FUZZ_SEED=<seed> (printed) regenerates the same bodies; `generateFuzzBody(format, seed, index)` one of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { waitFor } from "./support/polling.ts"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { envelopeTextProblem } from "./support/errorEnvelope.ts"
import { UPSTREAM_REFUSED_SEEDS } from "./support/fuzzAgentDialect.ts"
import { FUZZ_PATHS, type FuzzBody, generateFuzzBody, seedBody, seedsOf } from "./support/fuzzBodies.ts"
import { envInt, type FuzzFormat } from "./support/fuzzCore.ts"
import { recordFigure } from "./support/reliability.ts"

const DEFAULT_SEED = 0x5eed_2011
const SEED = envInt("FUZZ_SEED", DEFAULT_SEED, 0)
const COUNT = envInt("FUZZ_COUNT", 10_000, 1)
const CONCURRENCY = envInt("FUZZ_CONCURRENCY", 8, 1)
/** The token count's run is FUZZ_COUNT / COUNT_SHARE bodies: one body shape, no generation, no ledger to move. */
const COUNT_SHARE = 4
const countOf = (format: FuzzFormat) => (format === "count" ? Math.ceil(COUNT / COUNT_SHARE) : COUNT)
/** FUZZ_ONLY="chat:16,messages:240-250,count:3,7" replays just those bodies of the run (no format: of every format). */
const ONLY = (process.env.FUZZ_ONLY ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
const indexesOf = (format: FuzzFormat): ReadonlyArray<number> => {
  if (ONLY.length === 0) return Array.from({ length: countOf(format) }, (_, i) => i)
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
    body.index < 0
      ? `format=${body.format} seed request ${body.seedRequest} as it is (seedBody(${JSON.stringify(body.format)}, ${body.seedRequest}))`
      : `FUZZ_SEED=${SEED} format=${body.format} index=${body.index} (seed request ${body.seedRequest}; replay: generateFuzzBody(${JSON.stringify(body.format)}, ${SEED}, ${body.index}))`,
    `mutations: ${JSON.stringify(body.mutations)}`,
    `POST ${FUZZ_PATHS[body.format]}${body.query}`,
    `content-type: ${body.contentType ?? "(none)"}${body.format !== "chat" ? `, key as ${body.xApiKey ? "x-api-key" : "Bearer"}` : ""}`,
    `anthropic-beta: ${body.betaHeader === undefined ? "(none)" : JSON.stringify(body.betaHeader.length > 300 ? `${body.betaHeader.slice(0, 300)}...` : body.betaHeader)}`,
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
const streamProblem = (format: Exclude<FuzzFormat, "count">, text: string): string | undefined => {
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

/** Seed requests sent as they are, before the runs: their outcomes feed the ledger's check. */
const seedOutcomes: Array<Outcome> = []

/**
 * Every seed request of `format`, unmutated: served (200), or, for a seed the upstream refuses by design, a 4xx in
 * the envelope. A seed that stopped being valid would leave its mutations testing only the first refusal.
 */
const sendSeeds = async (format: FuzzFormat): Promise<{ outcomes: Array<Outcome>; failures: Array<Failure> }> => {
  const outcomes: Array<Outcome> = []
  const failures: Array<Failure> = []
  await Promise.all(
    seedsOf(format).map(async (seed, i) => {
      const body = seedBody(format, i)
      const { outcome, problem } = await exercise(body)
      if (outcome !== undefined) outcomes.push(outcome)
      // The count does not reach the upstream's refusal: a vendor counter that fails leaves the local estimate.
      const refusedUpstream = format !== "count" && UPSTREAM_REFUSED_SEEDS.has(seed)
      if (problem !== undefined) failures.push({ body, problem })
      else if (outcome !== undefined && refusedUpstream !== (outcome.status !== 200)) {
        failures.push({
          body,
          problem: refusedUpstream
            ? `a seed the upstream refuses was answered ${outcome.status}`
            : `a seed request was not served: ${outcome.status} ${outcome.code}`
        })
      } else if (outcome !== undefined && refusedUpstream && !(outcome.status >= 400 && outcome.status < 500 && outcome.vendorRefusal)) {
        failures.push({ body, problem: `a seed the upstream refuses was not answered as the vendor's refusal: ${outcome.status} ${outcome.code}` })
      }
    })
  )
  failures.sort((a, b) => a.body.seedRequest - b.body.seedRequest)
  return { outcomes, failures }
}

/** Sends one body and judges the answer; the outcome feeds the ledger's check. */
const exercise = async (body: FuzzBody): Promise<{ outcome?: Outcome; problem?: string }> => {
  const key = keys[body.format]
  const headers: Record<string, string> = {
    ...(body.contentType === undefined ? {} : { "content-type": body.contentType }),
    ...(body.xApiKey ? { "x-api-key": key.secret } : { authorization: `Bearer ${key.secret}` }),
    ...(body.betaHeader === undefined ? {} : { "anthropic-beta": body.betaHeader })
  }
  const path = `${FUZZ_PATHS[body.format]}${body.query}`
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
  if (body.format === "count") {
    // Free: no generation, no id to settle; just the count.
    if (!contentType.startsWith("application/json")) return { problem: `a count that is not JSON: ${answer}` }
    let count: unknown
    try {
      count = JSON.parse(text)
    } catch {
      return { problem: `a count whose body is not JSON: ${answer}` }
    }
    const inputTokens = (count as { input_tokens?: unknown } | null)?.input_tokens
    if (typeof count !== "object" || count === null || Array.isArray(count) || Object.keys(count).join() !== "input_tokens") {
      return { problem: `a count that is not {input_tokens}: ${answer}` }
    }
    if (typeof inputTokens !== "number" || !Number.isSafeInteger(inputTokens) || inputTokens < 0) {
      return { problem: `input_tokens is not a non-negative integer: ${answer}` }
    }
    return { outcome: { index: body.index, status, code: undefined, vendorRefusal: false, requestId: undefined, stream: false, computeUsed: undefined } }
  }
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
const fingerprint = (body: FuzzBody) =>
  `${body.contentType}|${body.xApiKey}|${body.betaHeader}|${body.query}|${Buffer.from(body.bytes).toString("base64")}`
for (const format of ["chat", "messages", "count"] as const) {
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

/** The failures of a run (or of the seeds) as one message: how many, the first in full, the other indexes. */
const failureReport = (failures: ReadonlyArray<Failure>, total: number, what: string) => {
  const first = failures[0]
  return first === undefined
    ? ""
    : `${failures.length} of ${total} ${what} failed; the first:\n${first.problem}\n${describeBody(first.body)}\n` +
      `other failing indexes: ${failures.slice(1, 40).map((f) => f.body.index).join(", ")}\n`
}

/** Runs a format's bodies and prints what they were answered (the failures are asserted by `expectClean`). */
const runAndReport = async (format: FuzzFormat): Promise<Run> => {
  const run = await runFormat(format)
  runs[format] = run
  console.log(`[fuzz] ${format}: ${run.count} bodies, seed ${SEED}, ${CONCURRENCY} in flight, ${run.ms} ms; ${summary(run)}; ${run.failures.length} failing`)
  for (const failure of run.failures.slice(0, 20)) {
    console.log(`[fuzz] ${format} #${failure.body.index} ${JSON.stringify(failure.body.mutations)}: ${failure.problem.slice(0, 400)}`)
  }
  return run
}

const expectClean = (format: FuzzFormat, run: Run) => {
  expect(run.failures.length, failureReport(run.failures, run.count, `${format} bodies`)).toBe(0)
  expect(run.outcomes).toHaveLength(run.count)
  if (ONLY.length > 0) return
  // The generator reaches both sides: some bodies are served, most are refused.
  if (format !== "count") expect(run.outcomes.some((o) => o.status === 200 && o.stream)).toBe(true)
  expect(run.outcomes.some((o) => o.status === 200 && !o.stream)).toBe(true)
  expect(run.outcomes.some((o) => o.status === 422)).toBe(true)
}

const fuzz = async (format: FuzzFormat) => expectClean(format, await runAndReport(format))

/** Waits until the account holds nothing live (a stream settles after its last byte). */
const settled = () =>
  waitFor("the account's holds to settle", async () =>
    (await fx.query(`SELECT 1 FROM holds WHERE account_id = $1 AND released_at IS NULL AND settled_at IS NULL`, [accountId])).length === 0, 15_000, 100)

beforeAll(async () => {
  console.log(`[fuzz] FUZZ_SEED=${SEED} FUZZ_COUNT=${COUNT}`)
  fx = await startExchangeFixture()
  keys.chat = await fx.issueKey({ label: "fuzz chat" })
  keys.messages = await fx.issueKey({ label: "fuzz messages" })
  keys.count = await fx.issueKey({ label: "fuzz count_tokens" })
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
    "every seed request of chat and messages, sent as it is, is served (or refused by the upstream, where the seed says so)",
    async () => {
      for (const format of ["chat", "messages"] as const) {
        const { outcomes, failures } = await sendSeeds(format)
        seedOutcomes.push(...outcomes)
        expect(failures.length, failureReport(failures, seedsOf(format).length, `${format} seeds`)).toBe(0)
      }
    },
    60_000
  )

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
      for (const format of ["chat", "messages"] as const) expect(runs[format], `the ${format} run did not complete`).toBeDefined()
      for (const o of [...seedOutcomes, ...runs.chat!.outcomes, ...runs.messages!.outcomes]) {
        if (o.requestId !== undefined) served.set(o.requestId, o)
        if (o.vendorRefusal || o.code === "all_keys_exhausted") refusedAfterHold++
      }
      const keyIds = [keys.chat.id, keys.messages.id]
      // Streams settle after their last byte: allow the settlements a moment.
      await waitFor("the fuzzed keys' holds to settle", async () =>
        (await fx.query(`SELECT 1 FROM holds WHERE api_key_id = ANY($1) AND released_at IS NULL AND settled_at IS NULL`, [keyIds])).length === 0, 15_000, 100)

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

  it(
    "POST /v1/messages/count_tokens never answers 5xx, refuses only in the envelope, answers {input_tokens} with a non-negative integer, and bills nothing",
    async () => {
      const ledgerOf = async () => {
        const [row] = await fx.query(
          `SELECT coalesce(max(id), 0)::text AS last, count(*)::int AS entries FROM ledger_entries WHERE account_id = $1`,
          [accountId]
        )
        const [holds] = await fx.query(`SELECT count(*)::int AS n FROM holds WHERE account_id = $1`, [accountId])
        const [generations] = await fx.query(`SELECT count(*)::int AS n FROM generations WHERE account_id = $1`, [accountId])
        const { balanceWei, reservedWei } = await account()
        return { lastEntry: row.last as string, entries: row.entries as number, holds: holds.n as number, generations: generations.n as number, balanceWei, reservedWei }
      }
      // After the sends have settled, the account is still: whatever moves now moved for a count.
      await settled()
      const before = await ledgerOf()
      expect(before.reservedWei).toBe("0")

      const seeds = await sendSeeds("count")
      const run = await runAndReport("count")

      // Nothing billed, whatever the answers were.
      expect(await ledgerOf(), "the account after counting").toEqual(before)
      const byKey = await fx.query(
        `SELECT (SELECT count(*) FROM holds WHERE api_key_id = $1)::int AS holds,
                (SELECT count(*) FROM generations WHERE api_key_id = $1)::int AS generations,
                (SELECT count(*) FROM ledger_entries WHERE api_key_id = $1)::int AS entries`,
        [keys.count.id]
      )
      expect(byKey[0]).toEqual({ holds: 0, generations: 0, entries: 0 })
      expect(seeds.failures.length, failureReport(seeds.failures, seedsOf("count").length, "count seeds")).toBe(0)
      expectClean("count", run)
      if (ONLY.length === 0) {
        recordFigure({
          suite: "test/exchange-fuzz.test.ts",
          tried: "seeded hostile bodies to /v1/messages/count_tokens",
          volume: `${run.count} bodies and ${seedsOf("count").length} seed requests, seed ${SEED}`,
          held: `0 answers 5xx; every refusal in the envelope at its code's status; ${run.outcomes.filter((o) => o.status === 200).length} counts, each {input_tokens} a non-negative integer; no hold, generation or ledger entry, the balance unchanged`
        })
      }
    },
    RUN_TIMEOUT_MS
  )
})
