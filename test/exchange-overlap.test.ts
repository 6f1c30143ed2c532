/**
 * The overlap of the upstream call with the reservation (DESIGN.md section 10, "Overlap"): when the replica last saw
 * room for at least 32 more holds on an account, it calls the vendor while the reservation is in flight. A
 * reservation refused meanwhile (here: a cap set since, which the replica has not seen yet) cancels the call: the
 * client gets the refusal and no byte of the answer, and nothing is charged or held.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"

let fx: ExchangeFixture
let secret: string

beforeAll(async () => {
  fx = await startExchangeFixture()
  secret = (await fx.issueKey({ label: "overlap" })).secret
  await fx.grant(100n * ONE_CREDIT)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

const chat = (content: string, stream = false) =>
  fetch(`${fx.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "openai/gpt-4.1", messages: [{ role: "user", content }], max_tokens: 16, stream })
  })

const ledgerState = async () => {
  const [account] = await fx.query("SELECT balance_wei::text AS balance, reserved_wei::text AS reserved FROM accounts WHERE owner_cf_id = $1", [fx.cfId])
  const [entries] = await fx.query(
    "SELECT count(*)::text AS n FROM ledger_entries e JOIN accounts a ON a.id = e.account_id WHERE a.owner_cf_id = $1",
    [fx.cfId]
  )
  const [live] = await fx.query(
    "SELECT count(*)::text AS n FROM holds h JOIN accounts a ON a.id = h.account_id WHERE a.owner_cf_id = $1 AND h.released_at IS NULL AND h.settled_at IS NULL",
    [fx.cfId]
  )
  return { balance: account.balance as string, reserved: account.reserved as string, entries: entries.n as string, liveHolds: live.n as string }
}

const upstreamCallsFor = async (marker: string) => {
  const log = (await (await fetch(`${fx.simulatorUrl}/__control/requests`)).json()) as Array<{ body: any }>
  return log.filter((entry) => JSON.stringify(entry.body ?? "").includes(marker)).length
}

describe("the upstream call overlapped with the reservation", () => {
  for (const stream of [false, true]) {
    it(`a reservation refused while the call is in flight (${stream ? "streaming" : "whole"}): the refusal, no answer, nothing charged`, async () => {
      // A first request shows this replica the account's headroom: 100 credits, thousands of holds of room.
      const first = await chat(`warm the headroom ${stream}`)
      expect(first.status).toBe(200)
      await first.text()
      // Then a daily cap below what was spent today: the next reservation is refused, which this replica cannot know.
      const client = makeClient(fx.baseUrl)
      const capped = await client.call("PUT", "/v1/account/limits", { dailyWei: "1" }, { cookie: fx.cookie, ip: fx.ip })
      expect(capped.status).toBe(200)
      const before = await ledgerState()
      await fx.fault({ model: "gpt-4.1", fault: "slow_first_byte", delayMs: 300 })
      const marker = `overlapped ${stream} ${Date.now()}`
      const refused = await chat(marker, stream)
      const text = await refused.text()
      expect(refused.status).toBe(429)
      expect(JSON.parse(text).error.code).toBe("spending_limit_reached")
      expect(refused.headers.get("content-type")).toContain("application/json")
      // The vendor was called (the overlap happened) and the client saw none of its answer.
      expect(await upstreamCallsFor(marker)).toBe(1)
      expect(text).not.toContain("chat.completion")
      // Nothing charged, nothing left held.
      expect(await ledgerState()).toEqual(before)
      expect(before.liveHolds).toBe("0")
      await fx.clearFaults()
      const lifted = await client.call("PUT", "/v1/account/limits", {}, { cookie: fx.cookie, ip: fx.ip })
      expect(lifted.status).toBe(200)
    })
  }

  it("without headroom seen, the reservation comes first: a refusal calls no vendor", async () => {
    const client = makeClient(fx.baseUrl)
    await client.call("PUT", "/v1/account/limits", { dailyWei: "1" }, { cookie: fx.cookie, ip: fx.ip })
    // The refusal above taught the replica that a cap applies: no overlap now.
    const marker = `not overlapped ${Date.now()}`
    const refused = await chat(marker)
    expect(refused.status).toBe(429)
    await refused.text()
    expect(await upstreamCallsFor(marker)).toBe(0)
    await client.call("PUT", "/v1/account/limits", {}, { cookie: fx.cookie, ip: fx.ip })
  })
})

/**
 * The same headroom lets a large input be held at its byte bound without running the tokenizer (DESIGN.md "Hot path
 * budget"); a small one is always counted, and without headroom seen the hold is the counted estimate.
 */
describe("the hold of a large input", () => {
  const holdOf = async (response: Response) => {
    const body = (await response.json()) as { id: string }
    const [hold] = await fx.query("SELECT amount_wei::text AS amount, charged_wei::text AS charged FROM holds WHERE request_id = $1", [body.id])
    return { amount: hold.amount as string, charged: hold.charged as string }
  }
  // SPEC "Billing" 4 on one user message: 4 tokens of framing for it and 3 for the reply; openai's ratio is 1.
  const quotedHold = async (promptTokens: number) => {
    const quote = await fetch(`${fx.baseUrl}/v1/inference/estimate?model=openai/gpt-4.1&promptTokens=${promptTokens}&completionTokens=16`)
    expect(quote.status).toBe(200)
    return ((await quote.json()) as { reservedWei: string }).reservedWei
  }

  it("is the counted estimate without headroom, its byte bound with it, and the charge is the vendor's usage either way", async () => {
    // The last test above left this replica seeing a cap, so no headroom: the first request is counted.
    // Each starts differently, so that the vendor's prompt cache does not make their usages differ.
    const large = (n: number) => `${n} ` + "the quick brown fox jumps over the lazy dog, ünïcödé 漢字. ".repeat(200)
    const counted = 7 + countTokens(large(1))
    const bound = 7 + Buffer.byteLength(large(1))
    expect(bound).toBeGreaterThan(4096)
    expect(bound).toBeGreaterThan(counted)
    const first = await holdOf(await chat(large(1)))
    expect(first.amount).toBe(await quotedHold(counted))
    expect([7 + countTokens(large(2)), 7 + Buffer.byteLength(large(2))]).toEqual([counted, bound])
    const second = await holdOf(await chat(large(2)))
    expect(second.amount).toBe(await quotedHold(bound))
    expect(BigInt(second.amount)).toBeGreaterThan(BigInt(first.amount))
    expect(second.charged).toBe(first.charged)

    // Below 4096 bytes the input is counted even with headroom seen.
    const small = "the quick brown fox jumps over the lazy dog. ".repeat(40)
    expect(7 + Buffer.byteLength(small)).toBeLessThan(4096)
    const smallHold = await holdOf(await chat(small))
    expect(smallHold.amount).toBe(await quotedHold(7 + countTokens(small)))
    expect(await ledgerState()).toMatchObject({ reserved: "0", liveHolds: "0" })
  })
})
