/**
 * The fault matrix's fixture and helpers (test/exchange-faults.test.ts, test/exchange-upstream-faults.test.ts): the real
 * server on a socket with the simulator as every vendor (test/support/faultsProviders.yaml: eight OpenAI keys, four
 * Anthropic, two Google and DeepSeek), an account with 100 credits, and what a case asserts with: a fresh key per case,
 * the stream's frames, what the simulator received, and what was billed (exactly these charges, or nothing, and no hold
 * left live).
 */
import { randomBytes } from "node:crypto"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import { expect } from "vitest"
import { makeClient } from "./accounts.ts"
import { type ExchangeFixture, expectedChargeWei, ONE_CREDIT, startExchangeFixture } from "./exchangeServer.ts"
import { waitFor } from "./polling.ts"

export const PROVIDERS_FILE = new URL("./faultsProviders.yaml", import.meta.url).pathname
export const FIRST_BYTE_TIMEOUT_MS = 1_000
export const DRAIN_TIMEOUT_MS = 2_000
export const CHAT = "/v1/chat/completions"
export const MESSAGES = "/v1/messages"
export type Endpoint = typeof CHAT | typeof MESSAGES

/** USD per million tokens, as the fixture cards say. */
export const GPT41 = { input: "2", output: "8" } as const
export const CLAUDE = { input: "3", output: "15" } as const
export const DEEPSEEK = { input: "0.28", output: "0.42" } as const
export type Rates = { readonly input: string; readonly output: string }

export const n = (text: string) => (text === "" ? 0 : encode(text).length)
/** The simulator's count of a one-message prompt (README "Token counts"). */
export const vendorInput = (prompt: string) => 3 + n(prompt) + 3
/** Our estimate of the same prompt (SPEC Billing 4: 4 per message + 3 for the reply; OpenAI's ratio is 1.0). */
export const estimatedInput = (prompt: string) => 4 + n(prompt) + 3
export const charge = (rates: Rates, input: number, output: number) => expectedChargeWei([[input, rates.input], [output, rates.output]])

export interface Case {
  /** Unique words in the prompt: how this case's requests are found in the simulator's log. */
  readonly prompt: string
  readonly key: string
  readonly keyId: string
  readonly balanceBefore: bigint
}

export const headersFor = (path: Endpoint, key: string, base: Record<string, string> = {}) =>
  path === MESSAGES
    ? { ...base, "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" }
    : { ...base, authorization: `Bearer ${key}`, "content-type": "application/json" }

export const chatBody = (c: Case, model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: "user", content: c.prompt }], ...extra })
export const messagesBody = (c: Case, model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 300,
  messages: [{ role: "user", content: c.prompt }],
  ...extra
})

export interface Frame {
  readonly event: string | undefined
  readonly data: string
}

export interface Read {
  readonly frames: Array<Frame>
  /** true: the body ended; false: `stopAt` said stop (the caller then aborts) or the connection failed. */
  readonly ended: boolean
}

/** Reads a server-sent-events body frame by frame, until it ends or `stopAt` says stop. */
export const readFrames = async (response: Response, stopAt?: (frame: Frame, frames: ReadonlyArray<Frame>) => boolean): Promise<Read> => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const frames: Array<Frame> = []
  let buffer = ""
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>
    try {
      chunk = await reader.read()
    } catch {
      return { frames, ended: false }
    }
    if (chunk.done) return { frames, ended: true }
    buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n/g, "\n")
    for (let boundary = buffer.indexOf("\n\n"); boundary >= 0; boundary = buffer.indexOf("\n\n")) {
      const raw = buffer.slice(0, boundary)
      buffer = buffer.slice(boundary + 2)
      let event: string | undefined
      const data: Array<string> = []
      for (const line of raw.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim()
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""))
      }
      if (data.length === 0) continue
      const frame = { event, data: data.join("\n") }
      frames.push(frame)
      if (stopAt?.(frame, frames) === true) {
        await reader.cancel().catch(() => undefined)
        return { frames, ended: false }
      }
    }
  }
}

export const json = (frame: Frame): any => JSON.parse(frame.data)
/** The chat stream's text deltas, joined. */
export const chatText = (frames: ReadonlyArray<Frame>) =>
  frames.filter((f) => f.data !== "[DONE]").map((f) => json(f).choices?.[0]?.delta?.content ?? "").join("")
/** The messages stream's text deltas, joined. */
export const messagesText = (frames: ReadonlyArray<Frame>) =>
  frames.filter((f) => f.event === "content_block_delta").map((f) => json(f).delta.text ?? "").join("")
export const isChatText = (frame: Frame) => frame.data !== "[DONE]" && (json(frame).choices?.[0]?.delta?.content ?? "") !== ""
export const isMessagesText = (frame: Frame) => frame.event === "content_block_delta" && json(frame).delta.type === "text_delta"

// ---------------------------------------------------------------------------------------------------------------
// The simulator's log, the bill, the holds

export interface Logged {
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: unknown
}

/** The vendor's model id a logged request asked for (Gemini names it in the path). */
export const upstreamModelOf = (r: Logged) => (r.body as { model?: string }).model ?? /\/models\/([^:/]+):/.exec(r.path)?.[1]

/** Which of our upstream keys a logged request used: `oai-k3` is openai#3 (test/support/faultsProviders.yaml). */
export const upstreamKeyOf = (r: Logged) => {
  const secret = (r.headers["authorization"] ?? r.headers["x-api-key"] ?? r.headers["x-goog-api-key"] ?? "").replace(/^Bearer /, "")
  const match = /^([a-z]{3})-k(\d)/.exec(secret)
  if (match === null) throw new Error(`no key in ${JSON.stringify(r.headers)}`)
  const provider = { oai: "openai", ant: "anthropic", goo: "google", dsk: "deepseek" }[match[1]!]
  return `${provider}#${match[2]}`
}

export const attemptsOf = (bill: any): Array<[string, number | null, string | null]> =>
  bill.attempts.map((a: { outcome: string; status: number | null; key: string | null }) => [a.outcome, a.status, a.key])

export const expectErrorEnvelope = async (response: Response, status: number, code: string) => {
  const body = (await response.json()) as { error: { code: string; message: string; type: string } }
  expect(response.status, JSON.stringify(body)).toBe(status)
  expect(body.error.code).toBe(code)
  return body.error
}

export interface FaultMatrix {
  /** The fixture; its `fault` counts what it injects (`tally`). */
  readonly fx: ExchangeFixture
  /** Cases begun and faults injected so far, for the suite's reliability figure. */
  readonly tally: () => { readonly cases: number; readonly faults: number }
  readonly accountId: string
  readonly balances: () => Promise<{ balance: bigint; reserved: bigint }>
  readonly begin: (label: string) => Promise<Case>
  readonly post: (c: Case, path: Endpoint, body: Record<string, unknown>, options?: { signal?: AbortSignal; baseUrl?: string }) => Promise<Response>
  readonly upstreamCalls: (c: Case) => Promise<Array<Logged>>
  readonly liveHolds: () => Promise<Array<{ request_id: string }>>
  readonly holdsOf: (c: Case) => Promise<Array<any>>
  readonly noHoldLeft: () => Promise<unknown>
  readonly generation: (c: Case, id: string, baseUrl?: string) => Promise<any>
  readonly expectBilled: (c: Case, bills: ReadonlyArray<{ readonly id: string; readonly chargeWei: bigint }>) => Promise<void>
  readonly expectNothingBilled: (c: Case, holds: number) => Promise<void>
  readonly onlyHold: (c: Case) => Promise<string>
}

/** The server (with `env` on top of the matrix's own settings) and the account every case spends from. */
export const startFaultMatrix = async (env: Record<string, string> = {}): Promise<FaultMatrix> => {
  const fixture = await startExchangeFixture({
    PROVIDERS_FILE,
    UPSTREAM_FIRST_BYTE_TIMEOUT_MS: String(FIRST_BYTE_TIMEOUT_MS),
    STREAM_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
    // Off here, so that a hold closed in these cases was closed by the request itself, never by the sweeper.
    HOLD_SWEEP_INTERVAL_SECONDS: "0",
    ...env
  })
  let cases = 0
  let faults = 0
  const fx: ExchangeFixture = {
    ...fixture,
    fault: (spec) => {
      faults += typeof spec["count"] === "number" ? spec["count"] : 1
      return fixture.fault(spec)
    }
  }
  await fx.grant(100n * ONE_CREDIT)
  const [account] = await fx.query("SELECT id FROM accounts WHERE owner_cf_id = $1 AND kind = 'personal'", [fx.cfId])
  const accountId = String(account.id)

  const balances = async () => {
    const [row] = await fx.query("SELECT balance_wei, reserved_wei FROM accounts WHERE id = $1", [accountId])
    return { balance: BigInt(row.balance_wei), reserved: BigInt(row.reserved_wei) }
  }

  /** A fresh API key (its holds and charges are this case's) and the balance before; no fault is left pending. */
  const begin = async (label: string): Promise<Case> => {
    cases += 1
    await fx.clearFaults()
    await noHoldLeft().catch(() => undefined)
    expect(await liveHolds(), "a live hold before the case began").toEqual([])
    const issued = await fx.issueKey({ label })
    const { balance, reserved } = await balances()
    expect(reserved).toBe(0n)
    return { prompt: `fault matrix ${label} ${randomBytes(3).toString("hex")}`, key: issued.secret, keyId: issued.id, balanceBefore: balance }
  }

  const post = (c: Case, path: Endpoint, body: Record<string, unknown>, options: { signal?: AbortSignal; baseUrl?: string } = {}) =>
    fetch(`${options.baseUrl ?? fx.baseUrl}${path}`, {
      method: "POST",
      headers: headersFor(path, c.key),
      body: JSON.stringify(body),
      ...(options.signal === undefined ? {} : { signal: options.signal })
    })

  /** The generation requests (not token counts) the simulator received for this case, oldest first. */
  const upstreamCalls = async (c: Case): Promise<Array<Logged>> => {
    const log = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<Logged>
    return log.filter((r) => !/count_?tokens|countTokens/i.test(r.path) && JSON.stringify(r.body).includes(c.prompt))
  }

  const liveHolds = async (): Promise<Array<{ request_id: string }>> =>
    fx.query("SELECT request_id FROM holds WHERE account_id = $1 AND released_at IS NULL AND settled_at IS NULL", [accountId])

  const holdsOf = async (c: Case): Promise<Array<any>> =>
    fx.query("SELECT request_id, amount_wei, released_at, settled_at, charged_wei FROM holds WHERE api_key_id = $1 ORDER BY id", [c.keyId])

  /** "No hold left behind": polls briefly until no hold of the account is live. */
  const noHoldLeft = () => waitFor("every hold of the account to be settled or released", async () => (await liveHolds()).length === 0)

  const generation = async (c: Case, id: string, baseUrl = fx.baseUrl) => {
    const answer = await makeClient(baseUrl).call("GET", `/v1/generations/${id}`, undefined, { headers: { authorization: `Bearer ${c.key}` } })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body
  }

  /**
   * What was billed for this case's key: exactly these charges, each once under its request id, each hold settled at
   * its charge, the balance down by their sum, nothing reserved, and the stored bill saying the same.
   */
  const expectBilled = async (c: Case, bills: ReadonlyArray<{ readonly id: string; readonly chargeWei: bigint }>) => {
    await noHoldLeft()
    const entries = await fx.query("SELECT reference, amount_wei FROM ledger_entries WHERE kind = 'charge' AND api_key_id = $1 ORDER BY id", [c.keyId])
    expect(entries.map((e) => [e.reference, BigInt(e.amount_wei)])).toEqual(bills.filter((b) => b.chargeWei > 0n).map((b) => [b.id, -b.chargeWei]))
    for (const bill of bills) {
      const byReference = await fx.query("SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'charge' AND reference = $1", [bill.id])
      expect(byReference[0].n, `charge entries for ${bill.id}`).toBe(bill.chargeWei > 0n ? 1 : 0)
      const [hold] = await fx.query("SELECT settled_at, charged_wei FROM holds WHERE request_id = $1", [bill.id])
      expect(hold.settled_at, `the hold of ${bill.id} is settled`).not.toBeNull()
      expect(BigInt(hold.charged_wei)).toBe(bill.chargeWei)
      expect((await generation(c, bill.id)).bill.chargeWei).toBe(bill.chargeWei.toString())
    }
    const after = await balances()
    expect(after.balance).toBe(c.balanceBefore - bills.reduce((sum, b) => sum + b.chargeWei, 0n))
    expect(after.reserved).toBe(0n)
  }

  /** Nothing billed: every hold this case's key took was released (none settled), no charge, the balance unchanged. */
  const expectNothingBilled = async (c: Case, holds: number) => {
    await noHoldLeft()
    const taken = await holdsOf(c)
    expect(taken).toHaveLength(holds)
    for (const hold of taken) {
      expect(hold.released_at).not.toBeNull()
      expect(hold.settled_at).toBeNull()
    }
    expect(await fx.query("SELECT 1 FROM ledger_entries WHERE kind = 'charge' AND api_key_id = $1", [c.keyId])).toEqual([])
    expect(await fx.query("SELECT 1 FROM generations WHERE api_key_id = $1", [c.keyId])).toEqual([])
    expect(await balances()).toEqual({ balance: c.balanceBefore, reserved: 0n })
  }

  /** The one request id this case's key reserved under (for requests whose client never saw a header). */
  const onlyHold = async (c: Case): Promise<string> => {
    const holds = await waitFor("the case's hold", async () => {
      const rows = await holdsOf(c)
      return rows.length > 0 ? rows : undefined
    })
    expect(holds).toHaveLength(1)
    return holds[0].request_id as string
  }

  const tally = () => ({ cases, faults })
  return { fx, tally, accountId, balances, begin, post, upstreamCalls, liveHolds, holdsOf, noHoldLeft, generation, expectBilled, expectNothingBilled, onlyHold }
}
