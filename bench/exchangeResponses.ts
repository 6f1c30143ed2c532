/**
 * `npm run bench:exchange`: the Responses phase. The exchange is measured a second time over OpenAI's Responses API
 * (`POST /v1/responses`), in the same run and the same rounds as chat completions, with the same request:
 * `{model, input: <chat's prompt>, max_output_tokens: <chat's max_tokens>}` (`stream: true` for the TTFB), on an
 * account of its own (so each account's billing check covers one format), with `store: false` (Codex's default):
 *   responses         latency, stream TTFB and throughput at chat's concurrency (one account), each phase taking its
 *                     turn beside chat's exchange run (after it in the first, third, ... chunk and round, before it
 *                     in the others: bench/exchange.ts besideExchange);
 *   responses-stored  the same non-streaming request with `store: true` (the response and its input kept 30 days):
 *                     the latency phase only, one figure for what storing adds.
 * Added figures are taken against the same reference as chat's: the simulator answering the chat request the exchange
 * sends it upstream for either format. Before measuring, one request of each checks that `store` does what it says
 * (GET /v1/responses/{id}: 200 when stored, 404 when not).
 *
 * "Responses beside chat" compares the two within the run: a figure is within chat's spread when it is no worse than
 * chat's worst chunk (latency, TTFB, CPU per request: the per-chunk p50 minus the direct one's of the same chunk) or
 * round (throughput); beyond that the Responses path costs more than chat's in this run.
 */
import * as Http from "node:http"
import { log } from "./common.ts"
import { EXCHANGE_MODEL, MAX_TOKENS, PROMPT } from "./exchangeSettings.ts"
import { chargeOf, type Charges, measureCharges } from "./exchangeBilling.ts"
import { type SequentialFigures, sequential } from "./exchangeMeasure.ts"
import { makeTarget, RequestFailure, type Target, timedRequest } from "./exchangeRequests.ts"
import type { Results, Verdict } from "./exchangeReport.ts"
import type { BenchAccount, Child } from "./exchangeTargets.ts"

export const RESPONSES_PATH = "/v1/responses"

/** The request of the Responses phase: chat's model, prompt and output cap in the Responses shape. */
export const responsesBody = (model: string, stream: boolean, store: boolean) =>
  JSON.stringify({ model, input: PROMPT, max_output_tokens: MAX_TOKENS, store, ...(stream ? { stream: true } : {}) })

export interface ResponsesTargets {
  /** `store: false`: every phase but the mix. */
  readonly plain: Target
  /** `store: true`: the latency phase only. */
  readonly stored: Target
}

export const makeResponsesTargets = (baseUrl: string, apiKey: string, child: Child): ResponsesTargets => {
  const of = (key: "responses" | "responses-stored", label: string, store: boolean): Target => ({
    ...makeTarget(key, label, baseUrl, { authorization: `Bearer ${apiKey}` }, EXCHANGE_MODEL, child),
    kind: "responses",
    path: RESPONSES_PATH,
    body: { plain: responsesBody(EXCHANGE_MODEL, false, store), stream: responsesBody(EXCHANGE_MODEL, true, store) },
    mix: { plain: [], stream: [] },
    answeredMix: { plain: [], stream: [] }
  })
  return {
    plain: of("responses", "exchange, Responses (store: false)", false),
    stored: of("responses-stored", "exchange, Responses (stored)", true)
  }
}

/**
 * One non-streaming request to `target`, then GET /v1/responses/{its id} with the same key: 200 when the target
 * stores (`store: true`), 404 when it does not. Throws when `store` did not do what it says.
 */
export const checkStorage = async (target: Target, stores: boolean) => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const answer = await timedRequest(agent, target, false, true)
    if (answer.status !== 200) throw new RequestFailure(`${target.label}: answered ${answer.status}: ${answer.body.slice(0, 300)}`)
    target.answered.plain++
    const id = (JSON.parse(answer.body) as { id?: unknown }).id
    if (typeof id !== "string") throw new RequestFailure(`${target.label}: the response has no id`)
    const read = await fetch(`${target.origin}${RESPONSES_PATH}/${encodeURIComponent(id)}`, { headers: { authorization: target.headers.authorization! } })
    await read.arrayBuffer()
    if (read.status !== (stores ? 200 : 404)) {
      throw new RequestFailure(`${target.label}: GET ${RESPONSES_PATH}/${id} answered ${read.status} where ${stores ? "a stored response (200)" : "nothing stored (404)"} was expected`)
    }
    log(`  ${target.label}: GET ${RESPONSES_PATH}/{id} answers ${read.status} (${stores ? "stored" : "not stored"}, as asked)`)
  } finally {
    agent.destroy()
  }
}

export interface ResponsesCharges extends Charges {
  readonly perStoredWei: bigint
}

/** What one request of each Responses kind is charged on its account (alone, on a settled account). */
export const measureResponsesCharges = async (account: BenchAccount, targets: ResponsesTargets): Promise<ResponsesCharges> => {
  log("  (Responses, store: false, on its own account)")
  const charges = await measureCharges(account, targets.plain)
  const perStoredWei = await chargeOf(account, () => sequential(targets.stored, false, 0).then(() => undefined))
  if (perStoredWei <= 0n) throw new Error(`billing did not happen: a stored Responses request was charged ${perStoredWei} wei`)
  log(`  (Responses) a stored request is charged ${perStoredWei} wei`)
  return { ...charges, perStoredWei }
}

/** The Responses account: its spentWei grew by at least the charge of every 2xx answer it got, of each kind. */
export const checkResponsesAccount = (
  account: BenchAccount,
  spentWeiNow: bigint,
  targets: ResponsesTargets,
  charges: ResponsesCharges
): { readonly answered: number; readonly problems: ReadonlyArray<string>; readonly lines: ReadonlyArray<string> } => {
  const { plain, stream } = targets.plain.answered
  const stored = targets.stored.answered.plain + targets.stored.answered.stream
  const expectedWei = BigInt(plain) * charges.perPlainWei + BigInt(stream) * charges.perStreamWei + BigInt(stored) * charges.perStoredWei
  const spentWei = spentWeiNow - account.startSpentWei
  const answered = plain + stream + stored
  return {
    answered,
    problems: spentWei < expectedWei || spentWei <= 0n ? [`the Responses account's spentWei grew by ${spentWei} wei, less than the ${expectedWei} wei of its ${answered} answered requests`] : [],
    lines: [`Responses account: spentWei grew by ${spentWei} wei over ${plain} non-streaming, ${stream} streaming and ${stored} stored 2xx answers (expected at least ${expectedWei} wei)`]
  }
}

// ---------------------------------------------------------------------------------------------- Responses beside chat

const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a")
const signed = (value: number, digits = 2) => (Number.isFinite(value) ? `${value >= 0 ? "+" : ""}${value.toFixed(digits)}` : "n/a")
const range = (values: ReadonlyArray<number>, show: (value: number) => string) =>
  values.length === 0 ? "n/a" : `${show(Math.min(...values))} .. ${show(Math.max(...values))}`

/** Per-chunk added p50 of `key` (its chunk's p50 minus the direct target's of the same chunk), and the overall one. */
const added = (phase: ReadonlyMap<string, SequentialFigures>, key: string) => {
  const figures = phase.get(key)
  const direct = phase.get("direct")
  if (figures === undefined || direct === undefined) return undefined
  return { value: figures.p50 - direct.p50, chunks: figures.chunks.map((chunk, i) => chunk.p50 - (direct.chunks[i]?.p50 ?? Number.NaN)) }
}

interface Row {
  readonly figure: string
  readonly chat: { readonly value: number; readonly spread: ReadonlyArray<number> } | undefined
  readonly responses: { readonly value: number; readonly spread: ReadonlyArray<number> } | undefined
  /** Higher is better (throughput); else lower is. */
  readonly higherIsBetter: boolean
  readonly digits: number
  readonly show: (value: number) => string
}

/** The comparison table, the stored figure and a verdict per figure (PASS: no worse than chat's worst chunk or round). */
export const besideChat = (results: Results, connections: number): { readonly lines: ReadonlyArray<string>; readonly verdicts: ReadonlyArray<Verdict> } => {
  const cpu = (key: string) => {
    const figures = results.latency.get(key as never)
    return figures === undefined ? undefined : { value: figures.cpuMsPerRequest, spread: figures.chunks.map((chunk) => chunk.cpuMsPerRequest) }
  }
  const rps = (key: string) => {
    const t = results.throughput.get(key as never)
    return t === undefined ? undefined : { value: t.requestsPerSecond, spread: t.roundsPerSecond ?? [] }
  }
  const spreadOf = (a: ReturnType<typeof added>) => (a === undefined ? undefined : { value: a.value, spread: a.chunks })
  const rows: ReadonlyArray<Row> = [
    { figure: "added p50 ms (1 connection)", chat: spreadOf(added(results.latency, "exchange")), responses: spreadOf(added(results.latency, "responses")), higherIsBetter: false, digits: 2, show: (v) => signed(v) },
    { figure: "added stream TTFB p50 ms", chat: spreadOf(added(results.ttfb, "exchange")), responses: spreadOf(added(results.ttfb, "responses")), higherIsBetter: false, digits: 2, show: (v) => signed(v) },
    { figure: `req/s (${connections} conn, 1 account)`, chat: rps("exchange"), responses: rps("responses"), higherIsBetter: true, digits: 0, show: (v) => fixed(v, 0) },
    { figure: "CPU ms/req (1 connection)", chat: cpu("exchange"), responses: cpu("responses"), higherIsBetter: false, digits: 2, show: (v) => fixed(v) }
  ]
  const lines = [
    "| figure | chat | Responses (store: false) | Responses - chat | chat's spread (chunks / rounds) | Responses' spread | within chat's spread |",
    "|---|---:|---:|---:|---:|---:|---|"
  ]
  const verdicts: Array<Verdict> = []
  for (const row of rows) {
    if (row.chat === undefined || row.responses === undefined) {
      lines.push(`| ${row.figure} | ${row.chat === undefined ? "n/a" : row.show(row.chat.value)} | ${row.responses === undefined ? "n/a" : row.show(row.responses.value)} | | | | not evaluated |`)
      verdicts.push({ name: `Responses beside chat: ${row.figure}`, outcome: "not evaluated", detail: "no figure" })
      continue
    }
    const difference = row.responses.value - row.chat.value
    // Within: no worse than chat's worst chunk (round) of this run.
    const worst = row.higherIsBetter ? Math.min(...row.chat.spread) : Math.max(...row.chat.spread)
    const within = row.higherIsBetter ? row.responses.value >= worst : row.responses.value <= worst
    const relative = row.chat.value === 0 ? "" : ` (${signed((100 * difference) / row.chat.value, 0)}%)`
    lines.push(
      `| ${[row.figure, row.show(row.chat.value), row.show(row.responses.value), `${signed(difference, row.digits)}${relative}`, range(row.chat.spread, row.show), range(row.responses.spread, row.show), within ? "yes" : "no"].join(" | ")} |`
    )
    verdicts.push({
      name: `Responses beside chat: ${row.figure} no worse than chat's within the run's spread`,
      outcome: within ? "PASS" : "MISS",
      detail: `${row.show(row.responses.value)} vs chat's ${row.show(row.chat.value)} (${signed(difference, row.digits)}${relative}); chat's worst ${row.higherIsBetter ? "round" : "chunk"} ${row.show(worst)}`
    })
  }
  const plain = added(results.latency, "responses")
  const stored = added(results.latency, "responses-stored")
  const storedCpu = results.latency.get("responses-stored")?.cpuMsPerRequest
  lines.push(
    "",
    stored === undefined || plain === undefined
      ? "Stored (`store: true`): not measured."
      : `Stored (\`store: true\`, the response kept 30 days): added p50 ${signed(stored.value)} ms (chunks ${range(stored.chunks, (v) => signed(v))}), ${signed(stored.value - plain.value)} ms over \`store: false\`;` +
        ` CPU ${fixed(storedCpu ?? Number.NaN)} ms/req; p99 ${fixed(results.latency.get("responses-stored")!.p99)} ms.`
  )
  return { lines, verdicts }
}
