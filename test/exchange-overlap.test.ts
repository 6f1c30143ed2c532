/**
 * The overlap of the upstream call with the reservation (DESIGN.md section 10, "Overlap"): when the replica last saw
 * room for at least 32 more holds on an account, it calls the vendor while the reservation is in flight. A
 * reservation refused meanwhile (here: a cap set since, which the replica has not seen yet) cancels the call: the
 * client gets the refusal and no byte of the answer, and nothing is charged or held.
 */
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
