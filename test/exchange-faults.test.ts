/**
 * The fault matrix (issue 11 item 7): each upstream or client failure scripted through the simulator's fault control
 * (simulator/README.md), against the real server on a socket, on PostgreSQL or PGlite. For every case three things are
 * asserted:
 * - what the client sees: the status and `error.code` of the envelope, or the stream's frames up to
 *   `stream_interrupted` when a stream is cut after its first byte;
 * - what is billed: the balance change, the `charge` ledger entries under the request id (exactly one, or none) and the
 *   stored bill, against arithmetic written here from the fixture cards' rates (test/fixtures/exchange) and the
 *   simulator's counts (README "Token counts": 3 per message + the text + 3 priming the reply; the reply's own
 *   tokens) — or, for a stream the vendor never reported usage on, docs/decisions.md "What is billed when the vendor
 *   reported nothing": our input estimate (4 per message + the text + 3) and the o200k count of what was delivered;
 * - no hold left behind: no hold of the account is still live (neither released nor settled) once the case settles.
 * The last case runs the service as its own process, SIGKILLs it mid-request and restarts it on the same database.
 */
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { EXCHANGE_FIXTURES, type ExchangeFixture, expectedChargeWei, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { cleanEnv, type ServiceProcess, startService } from "./support/process.ts"
import { freePort } from "./support/server.ts"
import { waitFor } from "./support/polling.ts"

const PROVIDERS_FILE = new URL("./support/faultsProviders.yaml", import.meta.url).pathname
const FIRST_BYTE_TIMEOUT_MS = 1_000
const DRAIN_TIMEOUT_MS = 2_000
const CHAT = "/v1/chat/completions"
const MESSAGES = "/v1/messages"
type Endpoint = typeof CHAT | typeof MESSAGES

/** USD per million tokens, as the fixture cards say. */
const GPT41 = { input: "2", output: "8" } as const
const CLAUDE = { input: "3", output: "15" } as const
const DEEPSEEK = { input: "0.28", output: "0.42" } as const
type Rates = { readonly input: string; readonly output: string }

const n = (text: string) => (text === "" ? 0 : encode(text).length)
/** The simulator's count of a one-message prompt (README "Token counts"). */
const vendorInput = (prompt: string) => 3 + n(prompt) + 3
/** Our estimate of the same prompt (SPEC Billing 4: 4 per message + 3 for the reply; OpenAI's ratio is 1.0). */
const estimatedInput = (prompt: string) => 4 + n(prompt) + 3
const charge = (rates: Rates, input: number, output: number) => expectedChargeWei([[input, rates.input], [output, rates.output]])

let fx: ExchangeFixture
let accountId: string
let chainPort: number
const children: Array<ServiceProcess> = []
const tempDirs: Array<string> = []

beforeAll(async () => {
  chainPort = await freePort()
  fx = await startExchangeFixture({
    PROVIDERS_FILE,
    UPSTREAM_FIRST_BYTE_TIMEOUT_MS: String(FIRST_BYTE_TIMEOUT_MS),
    STREAM_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
    // Off here, so that a hold closed in these cases was closed by the request itself, never by the sweeper; the
    // restarted process of the last case is the one that sweeps.
    HOLD_SWEEP_INTERVAL_SECONDS: "0",
    EMBEDDED_CHAIN_PORT: String(chainPort)
  })
  await fx.grant(100n * ONE_CREDIT)
  const [account] = await fx.query("SELECT id FROM accounts WHERE owner_cf_id = $1 AND kind = 'personal'", [fx.cfId])
  accountId = String(account.id)
}, 120_000)

afterAll(async () => {
  for (const child of children) await child.stop("SIGKILL")
  await fx?.close()
  for (const dir of tempDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------------------------
// Polling, requests, frames


interface Case {
  /** Unique words in the prompt: how this case's requests are found in the simulator's log. */
  readonly prompt: string
  readonly key: string
  readonly keyId: string
  readonly balanceBefore: bigint
}

const balances = async () => {
  const [row] = await fx.query("SELECT balance_wei, reserved_wei FROM accounts WHERE id = $1", [accountId])
  return { balance: BigInt(row.balance_wei), reserved: BigInt(row.reserved_wei) }
}

/** A fresh API key (its holds and charges are this case's) and the balance before; no fault is left pending. */
const begin = async (label: string): Promise<Case> => {
  await fx.clearFaults()
  await noHoldLeft().catch(() => undefined)
  expect(await liveHolds(), "a live hold before the case began").toEqual([])
  const issued = await fx.issueKey({ label })
  const { balance, reserved } = await balances()
  expect(reserved).toBe(0n)
  return { prompt: `fault matrix ${label} ${randomBytes(3).toString("hex")}`, key: issued.secret, keyId: issued.id, balanceBefore: balance }
}

const headersFor = (path: Endpoint, key: string, base: Record<string, string> = {}) =>
  path === MESSAGES
    ? { ...base, "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" }
    : { ...base, authorization: `Bearer ${key}`, "content-type": "application/json" }

const post = (c: Case, path: Endpoint, body: Record<string, unknown>, options: { signal?: AbortSignal; baseUrl?: string } = {}) =>
  fetch(`${options.baseUrl ?? fx.baseUrl}${path}`, {
    method: "POST",
    headers: headersFor(path, c.key),
    body: JSON.stringify(body),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })

const chatBody = (c: Case, model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: "user", content: c.prompt }], ...extra })
const messagesBody = (c: Case, model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 300,
  messages: [{ role: "user", content: c.prompt }],
  ...extra
})

interface Frame {
  readonly event: string | undefined
  readonly data: string
}

interface Read {
  readonly frames: Array<Frame>
  /** true: the body ended; false: `stopAt` said stop (the caller then aborts) or the connection failed. */
  readonly ended: boolean
}

/** Reads a server-sent-events body frame by frame, until it ends or `stopAt` says stop. */
const readFrames = async (response: Response, stopAt?: (frame: Frame, frames: ReadonlyArray<Frame>) => boolean): Promise<Read> => {
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

const json = (frame: Frame): any => JSON.parse(frame.data)
/** The chat stream's text deltas, joined. */
const chatText = (frames: ReadonlyArray<Frame>) =>
  frames.filter((f) => f.data !== "[DONE]").map((f) => json(f).choices?.[0]?.delta?.content ?? "").join("")
/** The messages stream's text deltas, joined. */
const messagesText = (frames: ReadonlyArray<Frame>) =>
  frames.filter((f) => f.event === "content_block_delta").map((f) => json(f).delta.text ?? "").join("")
const isChatText = (frame: Frame) => frame.data !== "[DONE]" && (json(frame).choices?.[0]?.delta?.content ?? "") !== ""
const isMessagesText = (frame: Frame) => frame.event === "content_block_delta" && json(frame).delta.type === "text_delta"

// ---------------------------------------------------------------------------------------------------------------
// The simulator's log, the bill, the holds

interface Logged {
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: unknown
}

/** The generation requests (not token counts) the simulator received for this case, oldest first. */
const upstreamCalls = async (c: Case): Promise<Array<Logged>> => {
  const log = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<Logged>
  return log.filter((r) => !/count_?tokens|countTokens/i.test(r.path) && JSON.stringify(r.body).includes(c.prompt))
}

/** The vendor's model id a logged request asked for (Gemini names it in the path). */
const upstreamModelOf = (r: Logged) => (r.body as { model?: string }).model ?? /\/models\/([^:/]+):/.exec(r.path)?.[1]

/** Which of our upstream keys a logged request used: `oai-k3` is openai#3 (test/support/faultsProviders.yaml). */
const upstreamKeyOf = (r: Logged) => {
  const secret = (r.headers["authorization"] ?? r.headers["x-api-key"] ?? r.headers["x-goog-api-key"] ?? "").replace(/^Bearer /, "")
  const match = /^([a-z]{3})-k(\d)/.exec(secret)
  if (match === null) throw new Error(`no key in ${JSON.stringify(r.headers)}`)
  const provider = { oai: "openai", ant: "anthropic", goo: "google", dsk: "deepseek" }[match[1]!]
  return `${provider}#${match[2]}`
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

const attemptsOf = (bill: any): Array<[string, number | null, string | null]> =>
  bill.attempts.map((a: { outcome: string; status: number | null; key: string | null }) => [a.outcome, a.status, a.key])

const expectErrorEnvelope = async (response: Response, status: number, code: string) => {
  const body = (await response.json()) as { error: { code: string; message: string; type: string } }
  expect(response.status, JSON.stringify(body)).toBe(status)
  expect(body.error.code).toBe(code)
  return body.error
}

// ---------------------------------------------------------------------------------------------------------------

describe("upstream 500", () => {
  it("chat, not streaming: the next key serves; billed once at the vendor's counts; the hold is settled", async () => {
    const c = await begin("500 chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "error500" })
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    const body = (await response.json()) as any
    const text = body.choices[0].message.content as string
    expect(text).toMatch(/^Simulated reply from gpt-4\.1/)
    expect(body.usage).toMatchObject({ prompt_tokens: vendorInput(c.prompt), completion_tokens: n(text) })
    const id = response.headers.get("x-request-id")!
    const calls = await upstreamCalls(c)
    expect(calls).toHaveLength(2)
    const [failed, served] = calls.map(upstreamKeyOf)
    expect(served).not.toBe(failed)
    const bill = await generation(c, id)
    expect(attemptsOf(bill)).toEqual([["status", 500, failed], ["served", 200, served]])
    const wei = charge(GPT41, vendorInput(c.prompt), n(text))
    expect(response.headers.get("x-compute-used")).toBe(wei.toString())
    expect(bill).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: vendorInput(c.prompt), output: n(text) } })
    await expectBilled(c, [{ id, chargeWei: wei }])
  })

  it("chat, streaming: a 500 before the first byte moves to the next key and the client gets one whole stream", async () => {
    const c = await begin("500 chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "error500" })
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.data).toBe("[DONE]")
    expect(json(frames[0]!).choices[0].delta.role).toBe("assistant")
    const final = json(frames.at(-2)!)
    const text = chatText(frames)
    expect(final.choices[0].finish_reason).toBe("stop")
    expect(final.usage).toMatchObject({ prompt_tokens: vendorInput(c.prompt), completion_tokens: n(text) })
    const id = response.headers.get("x-request-id")!
    const bill = await generation(c, id)
    expect(attemptsOf(bill).map(([outcome, status]) => [outcome, status])).toEqual([["status", 500], ["served", 200]])
    const wei = charge(GPT41, vendorInput(c.prompt), n(text))
    expect(final.x_credits_used).toBeCloseTo(Number(wei) / 1e18, 12)
    await expectBilled(c, [{ id, chargeWei: wei }])
  })

  it("chat: every key of the first candidate answering 500 moves to the next candidate, billed at that model's rates", async () => {
    const c = await begin("500 next candidate")
    await fx.fault({ model: "gemini-2.5-flash", fault: "error500", count: 2 })
    const response = await post(c, CHAT, chatBody(c, "google/gemini-2.5-flash", { models: ["openai/gpt-4.1"] }))
    expect(response.status).toBe(200)
    expect(response.headers.get("x-model-used")).toBe("openai/gpt-4.1")
    expect(response.headers.get("x-model-requested")).toBe("google/gemini-2.5-flash")
    expect(response.headers.get("x-fallback-used")).toBe("true")
    const body = (await response.json()) as any
    const text = body.choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const calls = (await upstreamCalls(c)).map((r) => [upstreamModelOf(r), upstreamKeyOf(r)])
    expect(calls.slice(0, 2).sort()).toEqual([["gemini-2.5-flash", "google#1"], ["gemini-2.5-flash", "google#2"]])
    expect(calls.slice(2).map(([model]) => model)).toEqual(["gpt-4.1"])
    const bill = await generation(c, id)
    // Each attempt is recorded: both keys' 500s, the model then having no key left, the next candidate serving.
    expect(attemptsOf(bill)).toEqual([
      ["status", 500, calls[0]![1]],
      ["status", 500, calls[1]![1]],
      ["no_capacity", null, null],
      ["served", 200, calls[2]![1]]
    ])
    expect(bill.modelUsed).toBe("openai/gpt-4.1")
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("chat: while both keys rest after their 500s, the model alone answers 502 all_keys_exhausted without calling the vendor; nothing billed", async () => {
    const c = await begin("500 resting keys")
    const response = await post(c, CHAT, chatBody(c, "google/gemini-2.5-flash"))
    await expectErrorEnvelope(response, 502, "all_keys_exhausted")
    expect(await upstreamCalls(c)).toEqual([])
    await expectNothingBilled(c, 1)
  })

  it("messages, not streaming: an Anthropic 500 moves to the next key; billed once at the vendor's counts", async () => {
    const c = await begin("500 messages whole")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "error500" })
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5"))
    expect(response.status).toBe(200)
    const body = (await response.json()) as any
    expect(body.type).toBe("message")
    const text = body.content[0].text as string
    expect(body.usage).toMatchObject({ input_tokens: vendorInput(c.prompt), output_tokens: n(text) })
    const id = response.headers.get("x-request-id")!
    const calls = (await upstreamCalls(c)).map(upstreamKeyOf)
    expect(calls).toHaveLength(2)
    expect(calls[1]).not.toBe(calls[0])
    expect(attemptsOf(await generation(c, id))).toEqual([["status", 500, calls[0]], ["served", 200, calls[1]]])
    await expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })
})

describe("upstream 429 with Retry-After", () => {
  // The key's return when the window ends is a rule of time: test/time-key-pools.test.ts moves the clock for it.
  it("chat: the next key serves, and the limited key rests for Retry-After: requests inside the window avoid it", async () => {
    const c = await begin("429 cooldown")
    await fx.fault({ model: "deepseek-reasoner", fault: "rate_limited", retryAfterSeconds: 2 })
    const send = async () => {
      const response = await post(c, CHAT, chatBody(c, "deepseek/deepseek-reasoner"))
      expect(response.status).toBe(200)
      const body = (await response.json()) as any
      return { id: response.headers.get("x-request-id")!, usage: body.usage as { prompt_tokens: number; completion_tokens: number } }
    }
    const first = await send()
    const limitedAt = Date.now()
    const afterFirst = (await upstreamCalls(c)).map(upstreamKeyOf)
    expect(afterFirst).toHaveLength(2)
    const [limited, other] = afterFirst as [string, string]
    expect(other).not.toBe(limited)
    expect(attemptsOf(await generation(c, first.id))).toEqual([["status", 429, limited], ["served", 200, other]])
    // Round robin would hand the limited key the next request; inside its window both go to the other key.
    const inside = [await send(), await send()]
    expect(Date.now() - limitedAt).toBeLessThan(2_000)
    expect((await upstreamCalls(c)).slice(2).map(upstreamKeyOf)).toEqual([other, other])
    const all = [first, ...inside]
    for (const r of all) expect(r.usage.prompt_tokens).toBe(vendorInput(c.prompt))
    await expectBilled(c, all.map((r) => ({ id: r.id, chargeWei: charge(DEEPSEEK, r.usage.prompt_tokens, r.usage.completion_tokens) })))
  })

  it("messages, streaming: a 429 before the first byte moves to the next key; one whole stream, billed once", async () => {
    const c = await begin("429 messages stream")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "rate_limited", retryAfterSeconds: 1 })
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.map((f) => f.event).filter((e, i, all) => e !== all[i - 1])).toEqual([
      "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"
    ])
    const text = messagesText(frames)
    const delta = json(frames.find((f) => f.event === "message_delta")!)
    expect(delta.usage.output_tokens).toBe(n(text))
    const id = response.headers.get("x-request-id")!
    expect(attemptsOf(await generation(c, id)).map(([outcome, status]) => [outcome, status])).toEqual([["status", 429], ["served", 200]])
    await expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })
})

describe("upstream timeout before the first byte", () => {
  it("chat, not streaming: after UPSTREAM_FIRST_BYTE_TIMEOUT_MS the next key serves; billed once", async () => {
    const c = await begin("timeout chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "timeout" })
    const started = Date.now()
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(FIRST_BYTE_TIMEOUT_MS - 50)
    const body = (await response.json()) as any
    const text = body.choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const keys = (await upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(attemptsOf(await generation(c, id))).toEqual([["timeout", null, keys[0]], ["served", 200, keys[1]]])
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("messages, streaming: a silent upstream is left after the timeout and the next key streams; billed once", async () => {
    const c = await begin("timeout messages stream")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "timeout" })
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.event).toBe("message_stop")
    const text = messagesText(frames)
    const id = response.headers.get("x-request-id")!
    expect(attemptsOf(await generation(c, id)).map(([outcome]) => outcome)).toEqual(["timeout", "served"])
    await expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })
})

describe("slow first byte", () => {
  it("chat, not streaming, below the timeout: the slow key itself serves, billed normally", async () => {
    const c = await begin("slow below chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 400 })
    const started = Date.now()
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
    const text = ((await response.json()) as any).choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const keys = (await upstreamCalls(c)).map(upstreamKeyOf)
    expect(attemptsOf(await generation(c, id))).toEqual([["served", 200, keys[0]]])
    expect(keys).toHaveLength(1)
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("chat, streaming, below the timeout: one upstream call, one whole stream, billed normally", async () => {
    const c = await begin("slow below chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 400 })
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.data).toBe("[DONE]")
    const text = chatText(frames)
    const id = response.headers.get("x-request-id")!
    expect(await upstreamCalls(c)).toHaveLength(1)
    expect(attemptsOf(await generation(c, id)).map(([outcome]) => outcome)).toEqual(["served"])
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("messages, not streaming, below the timeout: served by the slow key, billed normally", async () => {
    const c = await begin("slow below messages whole")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_first_byte", delayMs: 400 })
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5"))
    expect(response.status).toBe(200)
    const text = ((await response.json()) as any).content[0].text as string
    const id = response.headers.get("x-request-id")!
    expect(await upstreamCalls(c)).toHaveLength(1)
    expect(attemptsOf(await generation(c, id)).map(([outcome]) => outcome)).toEqual(["served"])
    await expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })

  it("chat, streaming, above the timeout: the slow key is left and the next one streams; billed once", async () => {
    const c = await begin("slow above chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: FIRST_BYTE_TIMEOUT_MS + 1_000 })
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    const text = chatText(frames)
    const id = response.headers.get("x-request-id")!
    const keys = (await upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(attemptsOf(await generation(c, id))).toEqual([["timeout", null, keys[0]], ["served", 200, keys[1]]])
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("messages, not streaming, above the timeout: the next key answers; billed once", async () => {
    const c = await begin("slow above messages whole")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_first_byte", delayMs: FIRST_BYTE_TIMEOUT_MS + 1_000 })
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5"))
    expect(response.status).toBe(200)
    const text = ((await response.json()) as any).content[0].text as string
    const id = response.headers.get("x-request-id")!
    expect(attemptsOf(await generation(c, id)).map(([outcome]) => outcome)).toEqual(["timeout", "served"])
    await expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })
})

describe("a drop after K chunks", () => {
  it("K=0, chat, not streaming: the connection cut before any answer moves to the next key; billed once", async () => {
    const c = await begin("drop0 chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "drop" })
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(response.status).toBe(200)
    const text = ((await response.json()) as any).choices[0].message.content as string
    const id = response.headers.get("x-request-id")!
    const keys = (await upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(keys[1]).not.toBe(keys[0])
    expect(attemptsOf(await generation(c, id)).map(([outcome]) => outcome)).toEqual(["network", "served"])
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("K=0, chat, streaming: a stream cut before its first chunk, with nothing sent to the client, moves to the next key", async () => {
    const c = await begin("drop0 chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "drop", afterChunks: 0 })
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(frames.map((f) => f.data).filter((d) => d.includes("stream_interrupted"))).toEqual([])
    expect(ended).toBe(true)
    expect(frames.at(-1)!.data).toBe("[DONE]")
    const text = chatText(frames)
    expect(text).toMatch(/^Simulated reply from gpt-4\.1/)
    const id = response.headers.get("x-request-id")!
    const keys = (await upstreamCalls(c)).map(upstreamKeyOf)
    expect(keys).toHaveLength(2)
    expect(keys[1]).not.toBe(keys[0])
    const bill = await generation(c, id)
    expect(bill.status).toBe("completed")
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, vendorInput(c.prompt), n(text)) }])
  })

  it("K=0, messages, streaming: the same through /v1/messages, from an Anthropic upstream", async () => {
    const c = await begin("drop0 messages stream")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "drop", afterChunks: 0 })
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(frames.filter((f) => f.event === "error")).toEqual([])
    expect(ended).toBe(true)
    expect(frames.at(-1)!.event).toBe("message_stop")
    const text = messagesText(frames)
    const id = response.headers.get("x-request-id")!
    expect((await upstreamCalls(c))).toHaveLength(2)
    await expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(text)) }])
  })

  it("K=3, chat, streaming: the client gets the delivered deltas then stream_interrupted; billed our input estimate plus what was delivered", async () => {
    const c = await begin("drop3 chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "drop", afterChunks: 3 })
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    // The role chunk and two content deltas (the simulator's first three chunks), then the interruption, no [DONE].
    expect(frames).toHaveLength(4)
    expect(json(frames[0]!).choices[0].delta.role).toBe("assistant")
    const last = json(frames.at(-1)!)
    expect(last.error).toMatchObject({ code: "stream_interrupted", type: "server_error" })
    expect(frames.some((f) => f.data === "[DONE]")).toBe(false)
    const delivered = chatText(frames)
    expect(delivered).toMatch(/^Simulated/)
    const id = response.headers.get("x-request-id")!
    expect(await upstreamCalls(c)).toHaveLength(1)
    const bill = await generation(c, id)
    expect(bill).toMatchObject({
      status: "interrupted",
      usage: { source: "partly_estimated", freshInput: estimatedInput(c.prompt), output: n(delivered) }
    })
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, estimatedInput(c.prompt), n(delivered)) }])
  })

  it("K=4, messages, streaming from an OpenAI upstream: deltas, then an error event with stream_interrupted; billed the estimate plus what was delivered", async () => {
    const c = await begin("drop4 messages stream")
    await fx.fault({ model: "gpt-4.1", fault: "drop", afterChunks: 4 })
    const response = await post(c, MESSAGES, messagesBody(c, "openai/gpt-4.1", { stream: true }))
    expect(response.status).toBe(200)
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames[0]!.event).toBe("message_start")
    const error = frames.at(-1)!
    expect(error.event).toBe("error")
    expect(json(error)).toMatchObject({ type: "error", error: { type: "server_error", code: "stream_interrupted" } })
    expect(frames.some((f) => f.event === "message_stop")).toBe(false)
    const delivered = messagesText(frames)
    expect(n(delivered)).toBeGreaterThan(0)
    const id = response.headers.get("x-request-id")!
    const bill = await generation(c, id)
    expect(bill).toMatchObject({ status: "interrupted", usage: { source: "partly_estimated", freshInput: estimatedInput(c.prompt), output: n(delivered) } })
    await expectBilled(c, [{ id, chargeWei: charge(GPT41, estimatedInput(c.prompt), n(delivered)) }])
  })

  it("K=5, messages, streaming from an Anthropic upstream: stream_interrupted; input at the vendor's reported count, output as delivered", async () => {
    const c = await begin("drop5 messages anthropic")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "drop", afterChunks: 5 })
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    const { frames, ended } = await readFrames(response)
    expect(ended).toBe(true)
    expect(frames.at(-1)!.event).toBe("error")
    expect(json(frames.at(-1)!).error.code).toBe("stream_interrupted")
    expect(json(frames[0]!).message.usage.input_tokens).toBe(vendorInput(c.prompt))
    const delivered = messagesText(frames)
    expect(n(delivered)).toBeGreaterThan(1)
    const id = response.headers.get("x-request-id")!
    const bill = await generation(c, id)
    expect(bill.status).toBe("interrupted")
    expect(bill.usage).toMatchObject({ freshInput: vendorInput(c.prompt), output: n(delivered) })
    await expectBilled(c, [{ id, chargeWei: charge(CLAUDE, vendorInput(c.prompt), n(delivered)) }])
  })
})

describe("the client disconnecting", () => {
  /** The answer the same prompt gets when nothing fails (the simulator is deterministic): the vendor's full counts. */
  const fullAnswer = async (c: Case, path: Endpoint, model: string) => {
    const response = await post(c, path, path === CHAT ? chatBody(c, model) : messagesBody(c, model))
    expect(response.status).toBe(200)
    const body = (await response.json()) as any
    const text: string = path === CHAT ? body.choices[0].message.content : body.content[0].text
    const usage = path === CHAT
      ? { input: body.usage.prompt_tokens as number, output: body.usage.completion_tokens as number }
      : { input: body.usage.input_tokens as number, output: body.usage.output_tokens as number }
    expect(usage).toEqual({ input: vendorInput(c.prompt), output: n(text) })
    return { id: response.headers.get("x-request-id")!, text, usage }
  }

  /** Sends, and aborts as soon as the simulator has the upstream request, before any byte of the answer. */
  const abortBeforeFirstByte = async (c: Case, path: Endpoint, body: Record<string, unknown>) => {
    const controller = new AbortController()
    const sent = post(c, path, body, { signal: controller.signal }).then(
      (response) => ({ status: response.status as number | undefined, error: undefined as unknown }),
      (error: unknown) => ({ status: undefined, error })
    )
    await waitFor("the upstream request", async () => (await upstreamCalls(c)).length === 1)
    controller.abort()
    return sent
  }

  it("before the first byte, chat, not streaming: the exchange reads the upstream answer anyway and bills its full usage once", async () => {
    const c = await begin("gone before first byte chat whole")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 500 })
    const outcome = await abortBeforeFirstByte(c, CHAT, chatBody(c, "openai/gpt-4.1"))
    expect(outcome.status).toBeUndefined()
    expect((outcome.error as Error).name).toBe("AbortError")
    const id = await onlyHold(c)
    await noHoldLeft()
    const full = await fullAnswer(c, CHAT, "openai/gpt-4.1")
    const bill = await generation(c, id)
    expect(bill).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(GPT41, full.usage.input, full.usage.output)
    await expectBilled(c, [{ id, chargeWei: wei }, { id: full.id, chargeWei: wei }])
  })

  it("before the first byte, chat, streaming: the upstream is drained to its usage and billed once", async () => {
    const c = await begin("gone before first byte chat stream")
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 500 })
    const outcome = await abortBeforeFirstByte(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }))
    expect(outcome.status).toBeUndefined()
    const id = await onlyHold(c)
    await noHoldLeft()
    const full = await fullAnswer(c, CHAT, "openai/gpt-4.1")
    expect(await generation(c, id)).toMatchObject({ status: "completed", stream: true, usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(GPT41, full.usage.input, full.usage.output)
    await expectBilled(c, [{ id, chargeWei: wei }, { id: full.id, chargeWei: wei }])
  })

  it("before the first byte, messages, streaming: the same through /v1/messages", async () => {
    const c = await begin("gone before first byte messages stream")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_first_byte", delayMs: 500 })
    const outcome = await abortBeforeFirstByte(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }))
    expect(outcome.status).toBeUndefined()
    const id = await onlyHold(c)
    await noHoldLeft()
    const full = await fullAnswer(c, MESSAGES, "anthropic/claude-sonnet-4.5")
    expect(await generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(CLAUDE, full.usage.input, full.usage.output)
    await expectBilled(c, [{ id, chargeWei: wei }, { id: full.id, chargeWei: wei }])
  })

  it("mid-stream, chat, the upstream still sending: it is drained to its end and billed its full usage once", async () => {
    const c = await begin("gone mid-stream chat drained")
    const full = await fullAnswer(c, CHAT, "openai/gpt-4.1")
    await fx.fault({ model: "gpt-4.1", fault: "slow_stream", delayMs: 15 })
    const controller = new AbortController()
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }), { signal: controller.signal })
    const id = response.headers.get("x-request-id")!
    const { frames } = await readFrames(response, isChatText)
    controller.abort()
    const received = chatText(frames)
    expect(n(received)).toBeLessThan(full.usage.output)
    await noHoldLeft()
    expect(await generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(GPT41, full.usage.input, full.usage.output)
    await expectBilled(c, [{ id: full.id, chargeWei: wei }, { id, chargeWei: wei }])
  })

  it("mid-stream, chat, the upstream stalled: cut after STREAM_DRAIN_TIMEOUT_MS, billed the estimate plus what was delivered", async () => {
    const c = await begin("gone mid-stream chat stalled")
    await fx.fault({ model: "gpt-4.1", fault: "stall", afterChunks: 3 })
    try {
      const controller = new AbortController()
      const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }), { signal: controller.signal })
      const id = response.headers.get("x-request-id")!
      // The role chunk and two deltas: everything the upstream sent before it stalled.
      const { frames } = await readFrames(response, (_, all) => all.length === 3)
      controller.abort()
      const abortedAt = Date.now()
      const delivered = chatText(frames)
      expect(n(delivered)).toBeGreaterThan(0)
      expect((await liveHolds()).map((h) => h.request_id)).toEqual([id])
      await waitFor("the hold to close once the drain timeout cut the upstream", async () => (await liveHolds()).length === 0, DRAIN_TIMEOUT_MS + 3_000)
      expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(DRAIN_TIMEOUT_MS - 100)
      expect(await generation(c, id)).toMatchObject({
        status: "interrupted",
        usage: { source: "partly_estimated", freshInput: estimatedInput(c.prompt), output: n(delivered) }
      })
      await expectBilled(c, [{ id, chargeWei: charge(GPT41, estimatedInput(c.prompt), n(delivered)) }])
    } finally {
      // Whatever happened above, the stalled upstream connection does not outlive the case.
      await fetch(`${fx.simulatorUrl}/__control/held`, { method: "DELETE" })
    }
  })

  it("mid-stream, messages, the Anthropic upstream still sending: drained to its final usage and billed once", async () => {
    const c = await begin("gone mid-stream messages drained")
    const full = await fullAnswer(c, MESSAGES, "anthropic/claude-sonnet-4.5")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_stream", delayMs: 15 })
    const controller = new AbortController()
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }), { signal: controller.signal })
    const id = response.headers.get("x-request-id")!
    const { frames } = await readFrames(response, isMessagesText)
    controller.abort()
    expect(n(messagesText(frames))).toBeLessThan(full.usage.output)
    await noHoldLeft()
    expect(await generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(CLAUDE, full.usage.input, full.usage.output)
    await expectBilled(c, [{ id: full.id, chargeWei: wei }, { id, chargeWei: wei }])
  })

  it("after the last chunk, chat: every delta received, gone before the final usage chunk: billed the full usage once, completed", async () => {
    const c = await begin("gone after last chunk chat")
    const full = await fullAnswer(c, CHAT, "openai/gpt-4.1")
    await fx.fault({ model: "gpt-4.1", fault: "slow_stream", delayMs: 15 })
    const controller = new AbortController()
    const response = await post(c, CHAT, chatBody(c, "openai/gpt-4.1", { stream: true }), { signal: controller.signal })
    const id = response.headers.get("x-request-id")!
    const { frames } = await readFrames(response, (_, all) => chatText(all) === full.text)
    controller.abort()
    expect(frames.every((f) => json(f).usage == null && json(f).choices[0].finish_reason == null)).toBe(true)
    await noHoldLeft()
    expect(await generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(GPT41, full.usage.input, full.usage.output)
    await expectBilled(c, [{ id: full.id, chargeWei: wei }, { id, chargeWei: wei }])
  })

  it("after the last chunk, messages: every text delta received, gone before message_delta: billed the full usage once, completed", async () => {
    const c = await begin("gone after last chunk messages")
    const full = await fullAnswer(c, MESSAGES, "anthropic/claude-sonnet-4.5")
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_stream", delayMs: 15 })
    const controller = new AbortController()
    const response = await post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }), { signal: controller.signal })
    const id = response.headers.get("x-request-id")!
    const { frames } = await readFrames(response, (_, all) => messagesText(all) === full.text)
    controller.abort()
    expect(frames.some((f) => f.event === "message_delta")).toBe(false)
    await noHoldLeft()
    expect(await generation(c, id)).toMatchObject({ status: "completed", usage: { source: "vendor", freshInput: full.usage.input, output: full.usage.output } })
    const wei = charge(CLAUDE, full.usage.input, full.usage.output)
    await expectBilled(c, [{ id: full.id, chargeWei: wei }, { id, chargeWei: wei }])
  })
})

describe("the exchange killed mid-request and restarted", () => {
  /** The service as its own process (src/main.ts) on the suite's database, simulator and chain; ready once it routes. */
  const startChild = async (env: Record<string, string>) => {
    const port = await freePort()
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-faults-"))
    const priceDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cx-faults-prices-"))
    tempDirs.push(dataDir, priceDir)
    Fs.cpSync(EXCHANGE_FIXTURES, priceDir, { recursive: true })
    const registry = (await makeClient(fx.baseUrl).call("GET", "/v1/oracle/contract-metadata")).body.address as string
    const service = startService(
      cleanEnv({
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: fx.database.url,
        RPC_URL: `http://127.0.0.1:${chainPort}`,
        REGISTRY_ADDRESS: registry,
        PRICE_DATA_DIR: priceDir,
        PRICE_SCAN_INTERVAL_HOURS: "0",
        CHAIN_SYNC_INTERVAL_SECONDS: "0",
        FUNDING_SCAN_INTERVAL_SECONDS: "0",
        PROVIDERS_FILE,
        SIMULATOR_URL: fx.simulatorUrl,
        RATE_LIMIT_ENABLED: "false",
        LOG_LEVEL: "WARN",
        ...env
      })
    )
    children.push(service)
    const baseUrl = `http://127.0.0.1:${port}`
    await waitFor(
      "the service process to route the catalog",
      async () => {
        if (service.child.exitCode !== null) throw new Error(`the service exited with ${service.child.exitCode}:\n${service.output()}`)
        try {
          const models = (await (await fetch(`${baseUrl}/v1/models`)).json()) as { data?: Array<unknown> }
          return (models.data?.length ?? 0) > 0
        } catch {
          return false
        }
      },
      60_000
    )
    return { service, baseUrl }
  }

  it("SIGKILL with a chat and a messages stream in flight: the client sees the connection drop, the holds stay until the restarted exchange's sweeper releases them, nothing is charged", async () => {
    const c = await begin("killed mid-request")
    // The holds it takes expire after 3 s; its own sweeper is off, so only the restarted process can release them.
    const first = await startChild({ UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "60000", HOLD_TTL_SECONDS: "3", HOLD_SWEEP_INTERVAL_SECONDS: "0" })
    await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 60_000 })
    await fx.fault({ model: "claude-sonnet-4-5", fault: "slow_first_byte", delayMs: 60_000 })
    const settle = (request: Promise<Response>) =>
      request.then(
        async (response) => ({ status: response.status as number | undefined, body: await response.text().catch((e: unknown) => String(e)) }),
        (error: unknown) => ({ status: undefined, body: String(error) })
      )
    const chat = settle(post(c, CHAT, chatBody(c, "openai/gpt-4.1"), { baseUrl: first.baseUrl }))
    const messages = settle(post(c, MESSAGES, messagesBody(c, "anthropic/claude-sonnet-4.5", { stream: true }), { baseUrl: first.baseUrl }))
    await waitFor("both upstream requests in flight", async () => (await upstreamCalls(c)).length === 2, 10_000)
    const held = await holdsOf(c)
    expect(held).toHaveLength(2)
    const reserved = held.reduce((sum, h) => sum + BigInt(h.amount_wei), 0n)

    expect(await first.service.stop("SIGKILL")).toBeNull()
    // What the clients see: the connection dropped, no status, no byte.
    expect(await chat).toEqual({ status: undefined, body: expect.stringMatching(/fetch failed|terminated|socket|ECONNRESET/i) })
    expect(await messages).toEqual({ status: undefined, body: expect.stringMatching(/fetch failed|terminated|socket|ECONNRESET/i) })
    // The crash left both holds live: reserved, not charged.
    expect((await liveHolds()).map((h) => h.request_id).sort()).toEqual(held.map((h) => h.request_id).sort())
    expect(await balances()).toEqual({ balance: c.balanceBefore, reserved })

    const second = await startChild({ HOLD_SWEEP_INTERVAL_SECONDS: "0.5" })
    await waitFor("the restarted sweeper to release both holds", async () => (await liveHolds()).length === 0, 10_000)
    await expectNothingBilled(c, 2)
    // Released by the restarted process's sweep job (the only sweeper running), two holds in all.
    const sweeps = await fx.query("SELECT summary FROM job_runs WHERE job = 'hold-sweep' AND outcome = 'succeeded'")
    expect(sweeps.reduce((sum, run) => sum + Number(/^(\d+) expired hold\(s\) released$/.exec(run.summary)![1]), 0)).toBe(2)
    for (const hold of held) {
      const answer = await makeClient(second.baseUrl).call("GET", `/v1/generations/${hold.request_id}`, undefined, { headers: { authorization: `Bearer ${c.key}` } })
      expect(answer.status).toBe(404)
    }

    // The restarted exchange serves and bills the next request normally.
    const after = await post(c, CHAT, chatBody(c, "openai/gpt-4.1"), { baseUrl: second.baseUrl })
    expect(after.status).toBe(200)
    const text = ((await after.json()) as any).choices[0].message.content as string
    const id = after.headers.get("x-request-id")!
    const wei = charge(GPT41, vendorInput(c.prompt), n(text))
    const entries = await fx.query("SELECT reference, amount_wei FROM ledger_entries WHERE kind = 'charge' AND api_key_id = $1", [c.keyId])
    expect(entries.map((e) => [e.reference, BigInt(e.amount_wei)])).toEqual([[id, -wei]])
    expect(await balances()).toEqual({ balance: c.balanceBefore - wei, reserved: 0n })
    expect(await second.service.stop("SIGTERM")).toBe(0)
  }, 120_000)
})
