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
 * POST /v1/responses is fuzzed with FUZZ_COUNT / RESPONSES_SHARE bodies (test/support/fuzzResponses*.ts: generated
 * valid bodies, Codex CLI's captured ones with Codex's headers, and their mutations) under the same rules, its served
 * answers in the ledger's check, and a stored response exactly for each served one that did not say store=false; a
 * refusal names its field (`param` or `issues`); a previous_response_id naming nothing is 404 not_found, never
 * served. Each refused field alone on the seeds is refused with its code and the param naming it. The responses the
 * run stored are then read, paged (limit, order, after, before) and deleted with odd ids and queries: never a 5xx.
 * POST /v1/responses/input_tokens is fuzzed like count_tokens, with FUZZ_COUNT / INPUT_TOKENS_SHARE bodies.
 *
 * POST /v1/embeddings is fuzzed with FUZZ_COUNT / EMBEDDINGS_SHARE bodies (test/support/fuzzEmbeddings.ts): its seeds
 * (every input form, dimensions, encodings, user, models lists) each served as they are, then their mutations; never
 * a 5xx, every refusal in the envelope naming its `param`, a body with a refusing mutation never served, and its
 * served answers in the ledger's check beside the other formats'.
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
import { clone, envInt, type FuzzFormat, isCountFormat, type Obj, serialize } from "./support/fuzzCore.ts"
import { type Failure, failureReport as reportOf, makeExercise, type Outcome } from "./support/fuzzExercise.ts"
import { readProblem, readRequest } from "./support/fuzzResponsesReads.ts"
import { RESPONSES_REFUSALS } from "./support/fuzzResponsesRefusals.ts"
import { EMBEDDINGS_SEEDS, runEmbeddings, sendEmbeddingsSeeds } from "./support/fuzzEmbeddings.ts"
import { recordFigure } from "./support/reliability.ts"

const DEFAULT_SEED = 0x5eed_2011
const SEED = envInt("FUZZ_SEED", DEFAULT_SEED, 0)
const COUNT = envInt("FUZZ_COUNT", 10_000, 1)
const CONCURRENCY = envInt("FUZZ_CONCURRENCY", 8, 1)
/** The token count's run is FUZZ_COUNT / COUNT_SHARE bodies: one body shape, no generation, no ledger to move. */
const COUNT_SHARE = 4
/**
 * The Responses run is FUZZ_COUNT / RESPONSES_SHARE bodies (one costs about two chat bodies: larger bodies, Codex's
 * ~40 kB ones among them, and more of them served), its input_tokens' half of that.
 */
const RESPONSES_SHARE = 4
const INPUT_TOKENS_SHARE = 8
const SHARES: Record<FuzzFormat, number> = { chat: 1, messages: 1, count: COUNT_SHARE, responses: RESPONSES_SHARE, input_tokens: INPUT_TOKENS_SHARE }
/** The embeddings run: FUZZ_COUNT / EMBEDDINGS_SHARE bodies (small, whole answers: about a second per thousand). */
const EMBEDDINGS_SHARE = 10
const countOf = (format: FuzzFormat | "embeddings") => Math.ceil(COUNT / (format === "embeddings" ? EMBEDDINGS_SHARE : SHARES[format]))
/** FUZZ_ONLY="chat:16,messages:240-250,count:3,7,responses:9" replays just those bodies of the run (no format: of every format). */
const ONLY = (process.env.FUZZ_ONLY ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
const indexesOf = (format: FuzzFormat | "embeddings"): ReadonlyArray<number> => {
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
/** The reads of stored responses: one per 40 bodies of a format. */
const READS = Math.ceil(COUNT / 40)
/** Each format's run, and the ledger's check. */
const RUN_TIMEOUT_MS = 170_000

interface Run {
  readonly count: number
  readonly outcomes: Array<Outcome>
  readonly failures: Array<Failure>
  readonly ms: number
}

let fx: ExchangeFixture
const keys = {} as Record<FuzzFormat, { id: string; secret: string }>
const runs: Partial<Record<FuzzFormat | "embeddings", Run>> = {}
let embeddingsKey: { id: string; secret: string }
let balanceBefore: bigint
let lastEntryBefore: bigint
let accountId: string

const exercise = makeExercise({ baseUrl: () => fx.baseUrl, keyOf: (format) => keys[format] })
const failureReport = (failures: ReadonlyArray<Failure>, total: number, what: string) => reportOf(failures, total, what, SEED)

const account = async () =>
  (await makeClient(fx.baseUrl).call("GET", "/v1/account", undefined, { cookie: fx.cookie, ip: fx.ip })).body as { balanceWei: string; reservedWei: string }

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
      const refusedUpstream = !isCountFormat(format) && UPSTREAM_REFUSED_SEEDS.has(seed)
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

/** Every 97th body's bytes, generated before anything else: the run must send exactly these (replayable by index). */
const sampled = (format: FuzzFormat) => indexesOf(format).filter((i) => i % 97 === 0)
const fingerprints = new Map<string, string>()
const fingerprint = (body: FuzzBody) =>
  `${body.contentType}|${body.xApiKey}|${body.betaHeader}|${body.query}|${JSON.stringify(body.extraHeaders)}|${Buffer.from(body.bytes).toString("base64")}`
for (const format of ["chat", "messages", "count", "responses", "input_tokens"] as const) {
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
  if (!isCountFormat(format)) expect(run.outcomes.some((o) => o.status === 200 && o.stream)).toBe(true)
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
  keys.responses = await fx.issueKey({ label: "fuzz responses" })
  keys.input_tokens = await fx.issueKey({ label: "fuzz responses input_tokens" })
  embeddingsKey = await fx.issueKey({ label: "fuzz embeddings" })
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
    "every seed request of chat, messages and responses, sent as it is, is served (or refused by the upstream, where the seed says so)",
    async () => {
      for (const format of ["chat", "messages", "responses"] as const) {
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
    "POST /v1/responses never answers 5xx, refuses only in the envelope naming the field, is 404 for a previous_response_id naming nothing, and ends every stream with response.completed or stream_interrupted",
    () => fuzz("responses"),
    RUN_TIMEOUT_MS
  )

  it(
    "POST /v1/embeddings serves each seed as it is, never answers 5xx, refuses only in the envelope naming the param, and never serves a body with a refusing mutation",
    async () => {
      const seeds = await sendEmbeddingsSeeds(fx.baseUrl, embeddingsKey.secret, SEED)
      seedOutcomes.push(...seeds.outcomes)
      expect(seeds.failures).toEqual([])
      const indexes = indexesOf("embeddings")
      const { outcomes, failures, ms } = await runEmbeddings(fx.baseUrl, embeddingsKey.secret, SEED, indexes, CONCURRENCY)
      const run: Run = { outcomes, failures: [], ms, count: indexes.length }
      runs.embeddings = run
      console.log(`[fuzz] embeddings: ${run.count} bodies and ${EMBEDDINGS_SEEDS.length} seeds, seed ${SEED}, ${CONCURRENCY} in flight, ${run.ms} ms; ${summary(run)}; ${failures.length} failing`)
      expect(failures.slice(0, 5).map((f) => f.text), `${failures.length} of ${run.count} embeddings bodies failed; other failing indexes: ${failures.slice(5, 40).map((f) => f.index).join(", ")}`).toEqual([])
      expect(outcomes).toHaveLength(run.count)
      if (ONLY.length === 0) {
        expect(outcomes.some((o) => o.status === 200)).toBe(true)
        expect(outcomes.some((o) => o.status === 422)).toBe(true)
      }
    },
    RUN_TIMEOUT_MS
  )

  it(
    "each refused field of a Responses body, alone on the seeds, is refused with its code and the param naming it",
    async () => {
      const failures: Array<string> = []
      for (const format of ["responses", "input_tokens"] as const) {
        // Every third seed and every Codex body: each case on a dozen-odd bodies.
        const seeds = seedsOf(format).map((seed, i) => ({ seed, i })).filter(({ i }) => i % 3 === 0 || i >= seedsOf(format).length - 3)
        const cases = RESPONSES_REFUSALS.filter((c) => format === "responses" ? c.name !== "background on input_tokens" : c.sendOnly !== true)
        await Promise.all(cases.flatMap((refusal) =>
          seeds.map(async ({ seed, i }) => {
            const body = clone(seed) as Obj
            const param = refusal.apply(body)
            const sent: FuzzBody = { ...seedBody(format, i), index: -1, mutations: [refusal.name], bytes: new TextEncoder().encode(serialize(body)) }
            const { outcome, problem } = await exercise(sent)
            const error = outcome?.code
            if (problem !== undefined) failures.push(`${format} ${refusal.name} on seed ${i}: ${problem}`)
            else if (outcome?.status !== refusal.status || error !== refusal.code || (outcome.param ?? undefined) !== param) {
              failures.push(`${format} ${refusal.name} on seed ${i}: answered ${outcome?.status} ${error} param ${JSON.stringify(outcome?.param)}, expected ${refusal.status} ${refusal.code} param ${JSON.stringify(param)}`)
            }
          })
        ))
      }
      expect(failures.slice(0, 20)).toEqual([])
    },
    60_000
  )

  it(
    "no refusal touches the ledger: one charge per served body equal to its reported bill, every hold settled or released, the balance down by exactly the charges; a response is stored exactly for each served body that did not say store=false",
    async () => {
      const served = new Map<string, Outcome>()
      // Refusals that come after the reservation: the vendor refused the body, or no upstream key could take it.
      let refusedAfterHold = 0
      for (const format of ["chat", "messages", "responses", "embeddings"] as const) expect(runs[format], `the ${format} run did not complete`).toBeDefined()
      for (const o of [...seedOutcomes, ...runs.chat!.outcomes, ...runs.messages!.outcomes, ...runs.responses!.outcomes, ...runs.embeddings!.outcomes]) {
        if (o.requestId !== undefined) served.set(o.requestId, o)
        if (o.vendorRefusal || o.code === "all_keys_exhausted") refusedAfterHold++
      }
      const keyIds = [keys.chat.id, keys.messages.id, keys.responses.id, embeddingsKey.id]
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
      // Stored responses: exactly the served Responses bodies that did not say store=false, none for a refusal.
      const stored = await fx.query(`SELECT request_id FROM stored_responses WHERE account_id = $1`, [accountId])
      const storedIds = new Set(stored.map((row) => row.request_id as string))
      const storedWrongly = [...served.entries()].filter(([id, o]) => (o.stored === true) !== storedIds.has(id))
      expect(
        storedWrongly.map(([id, o]) => `${id} (responses body ${o.index}) ${o.stored === true ? "not stored" : "stored"}`),
        "responses stored though store=false, or not stored though served and asked for"
      ).toEqual([])
      expect(stored.every((row) => served.has(row.request_id)), "a stored response of no served body").toBe(true)

      console.log(`[fuzz] ledger: ${served.size} served, ${entries.length} charges totalling ${total} wei, ${refusedAfterHold} holds released for refusals after reserving; ${stored.length} responses stored`)
      if (ONLY.length === 0) {
        const chat = runs.chat!
        const messages = runs.messages!
        const responses = runs.responses!
        const embeddings = runs.embeddings!
        recordFigure({
          suite: "test/exchange-fuzz.test.ts",
          tried: "seeded hostile bodies to /v1/chat/completions, /v1/messages, /v1/responses and /v1/embeddings",
          volume: `${chat.count + messages.count + responses.count + embeddings.count} bodies (${chat.count} chat and messages, ${responses.count} responses, ${embeddings.count} embeddings), seed ${SEED}`,
          held: `0 answers 5xx; every refusal in the envelope at its code's status; ${served.size} served, ${entries.length} charges each equal to its bill; ${refusedAfterHold} holds released for refusals after reserving; none left live; the balance down by exactly the charges; ${stored.length} responses stored, each of a served body that asked for it`
        })
      }
    },
    60_000
  )

  it(
    "GET /v1/responses/{id}, its input_items (limit, order, after, before) and DELETE never answer 5xx for any id or query, read back what was stored and forget what was deleted",
    async () => {
      const rows = await fx.query(`SELECT id, input_items FROM stored_responses WHERE account_id = $1 ORDER BY id`, [accountId])
      const stored = rows.map((row) => ({
        id: row.id as string,
        itemIds: (JSON.parse(row.input_items as string) as Array<{ id?: unknown }>).flatMap((item) => (typeof item.id === "string" ? [item.id] : []))
      }))
      const deleted = new Set<string>()
      const failures: Array<string> = []
      const byAnswer = new Map<string, number>()
      // One at a time: whether a stored response is still there depends on the deletes before.
      for (let index = 0; index < READS; index++) {
        const request = readRequest(SEED, index, stored)
        const response = await fetch(`${fx.baseUrl}${request.path}`, {
          method: request.method,
          headers: { authorization: `Bearer ${keys.responses.secret}` },
          signal: AbortSignal.timeout(30_000)
        })
        const text = await response.text()
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          body = undefined
        }
        const problem = response.status >= 500
          ? "5xx answer"
          : response.status >= 400
          ? envelopeTextProblem(response.status, text)
          : readProblem(request, deleted, response.status, body)
        if (problem !== undefined) failures.push(`read ${index}: ${request.method} ${request.path.slice(0, 300)}: ${problem}: ${response.status} ${text.slice(0, 500)}`)
        if (request.kind === "delete" && response.status === 200 && request.stored !== undefined) deleted.add(request.stored.id)
        const label = `${request.kind} ${response.status}`
        byAnswer.set(label, (byAnswer.get(label) ?? 0) + 1)
      }
      console.log(`[fuzz] reads of ${stored.length} stored responses: ${[...byAnswer.entries()].map(([label, n]) => `${label}: ${n}`).join(", ")}`)
      expect(failures.slice(0, 10)).toEqual([])
      if (ONLY.length === 0) expect(byAnswer.get("input_items 200") ?? 0).toBeGreaterThan(0)
    },
    60_000
  )

  /** A token count's run: below 500, refusals in the envelope, each 200 its count object, and nothing billed. */
  const countRun = async (format: "count" | "input_tokens") => {
    const ledgerOf = async () => {
      const [row] = await fx.query(
        `SELECT coalesce(max(id), 0)::text AS last, count(*)::int AS entries FROM ledger_entries WHERE account_id = $1`,
        [accountId]
      )
      const [holds] = await fx.query(`SELECT count(*)::int AS n FROM holds WHERE account_id = $1`, [accountId])
      const [generations] = await fx.query(`SELECT count(*)::int AS n FROM generations WHERE account_id = $1`, [accountId])
      const [stored] = await fx.query(`SELECT count(*)::int AS n FROM stored_responses WHERE account_id = $1`, [accountId])
      const { balanceWei, reservedWei } = await account()
      return { lastEntry: row.last as string, entries: row.entries as number, holds: holds.n as number, generations: generations.n as number, stored: stored.n as number, balanceWei, reservedWei }
    }
    // After the sends have settled, the account is still: whatever moves now moved for a count.
    await settled()
    const before = await ledgerOf()
    expect(before.reservedWei).toBe("0")

    const seeds = await sendSeeds(format)
    const run = await runAndReport(format)

    // Nothing billed, whatever the answers were.
    expect(await ledgerOf(), "the account after counting").toEqual(before)
    const byKey = await fx.query(
      `SELECT (SELECT count(*) FROM holds WHERE api_key_id = $1)::int AS holds,
              (SELECT count(*) FROM generations WHERE api_key_id = $1)::int AS generations,
              (SELECT count(*) FROM ledger_entries WHERE api_key_id = $1)::int AS entries`,
      [keys[format].id]
    )
    expect(byKey[0]).toEqual({ holds: 0, generations: 0, entries: 0 })
    expect(seeds.failures.length, failureReport(seeds.failures, seedsOf(format).length, `${format} seeds`)).toBe(0)
    expectClean(format, run)
    if (ONLY.length === 0) {
      recordFigure({
        suite: "test/exchange-fuzz.test.ts",
        tried: `seeded hostile bodies to ${FUZZ_PATHS[format]}`,
        volume: `${run.count} bodies and ${seedsOf(format).length} seed requests, seed ${SEED}`,
        held: `0 answers 5xx; every refusal in the envelope at its code's status; ${run.outcomes.filter((o) => o.status === 200).length} counts, each ${format === "count" ? "{input_tokens}" : "{object, input_tokens}"} a non-negative integer; no hold, generation or ledger entry, the balance unchanged`
      })
    }
  }

  it(
    "POST /v1/messages/count_tokens never answers 5xx, refuses only in the envelope, answers {input_tokens} with a non-negative integer, and bills nothing",
    () => countRun("count"),
    RUN_TIMEOUT_MS
  )

  it(
    "POST /v1/responses/input_tokens never answers 5xx, refuses only in the envelope naming the field, answers {object, input_tokens} with a non-negative integer, and bills nothing",
    () => countRun("input_tokens"),
    RUN_TIMEOUT_MS
  )
})
