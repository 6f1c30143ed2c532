/**
 * The account endpoints over a real socket (issue 9 item 5 and 9): balance, caps and the ledger of the signed-in
 * account; bad input in the envelope and nothing written.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient, signInByWallet } from "./support/accounts.ts"
import { startTestServer, type TestServer } from "./support/server.ts"
import { createTestDatabase, type TestDatabase } from "./support/database.ts"

const MAINTAINER_TOKEN = "account-test-maintainer-token"

let database: TestDatabase
let server: TestServer
let client: ReturnType<typeof makeClient>
let cookie: string
let cfId: string

const call = (method: string, path: string, body?: unknown) => client.call(method, path, body, { cookie, ip: "203.0.113.30" })

beforeAll(async () => {
  database = await createTestDatabase()
  server = await startTestServer({ DATABASE_URL: database.url, TRUST_PROXY: "true", MAINTAINER_TOKEN })
  client = makeClient(server.baseUrl)
  const signedIn = await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), "203.0.113.30")
  cookie = signedIn.cookie
  cfId = signedIn.me.cf_id
}, 60_000)

afterAll(async () => {
  await server?.close()
  await database?.close()
})

describe("/v1/account", () => {
  it("starts empty, shows an operator's grant, and lists it in the ledger", async () => {
    expect((await call("GET", "/v1/account")).body).toEqual({
      balanceWei: "0",
      reservedWei: "0",
      spentWei: "0",
      limits: { dailyWei: null, weeklyWei: null, monthlyWei: null }
    })
    const granted = await client.call("POST", `/v1/admin/accounts/${cfId}/credits`, { amountWei: "25000000000000000000", note: "welcome" }, {
      headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
    })
    expect(granted.status).toBeLessThan(300)
    expect((await call("GET", "/v1/account")).body.balanceWei).toBe("25000000000000000000")
    const ledger = await call("GET", "/v1/account/ledger")
    expect(ledger.status).toBe(200)
    expect(ledger.body.data[0]).toMatchObject({ kind: "grant", amountWei: "25000000000000000000", balanceAfterWei: "25000000000000000000", note: "welcome" })
  })

  it("GET /v1/account/spend: recent spend, and each cap's limit, use, what it leaves and when it resets (UTC)", async () => {
    await call("PUT", "/v1/account/limits", { dailyWei: "700", weeklyWei: null, monthlyWei: "9000" })
    const answer = await call("GET", "/v1/account/spend")
    expect(answer.status).toBe(200)
    const asOf = new Date(answer.body.asOf)
    const nextDay = new Date(Date.UTC(asOf.getUTCFullYear(), asOf.getUTCMonth(), asOf.getUTCDate() + 1)).toISOString()
    const nextMonth = new Date(Date.UTC(asOf.getUTCFullYear(), asOf.getUTCMonth() + 1, 1)).toISOString()
    expect(answer.body).toMatchObject({ todayWei: "0", last7DaysWei: "0", last30DaysWei: "0" })
    expect(answer.body.caps).toEqual([
      { window: "day", limitWei: "700", usedWei: "0", leftWei: "700", resetsAt: nextDay },
      { window: "week", limitWei: null, usedWei: "0", leftWei: null, resetsAt: expect.stringMatching(/T00:00:00\.000Z$/) },
      { window: "month", limitWei: "9000", usedWei: "0", leftWei: "9000", resetsAt: nextMonth }
    ])
    expect(new Date(answer.body.caps[1].resetsAt).getUTCDay()).toBe(1)
    await call("PUT", "/v1/account/limits", { dailyWei: null, weeklyWei: null, monthlyWei: null })
  })

  it("PUT /v1/account/limits sets the caps; bad input is 422 naming each field and changes nothing", async () => {
    const set = await call("PUT", "/v1/account/limits", { dailyWei: "1000", weeklyWei: "5000", monthlyWei: null })
    expect(set.status).toBe(200)
    expect((await call("GET", "/v1/account")).body.limits).toEqual({ dailyWei: "1000", weeklyWei: "5000", monthlyWei: null })
    const refused = await call("PUT", "/v1/account/limits", { dailyWei: "0", weeklyWei: "abc", monthlyWei: -1 })
    expect(refused.status).toBe(422)
    expect(refused.body.error.issues.map((i: any) => i.param).sort()).toEqual(["dailyWei", "monthlyWei", "weeklyWei"])
    expect((await call("GET", "/v1/account")).body.limits).toEqual({ dailyWei: "1000", weeklyWei: "5000", monthlyWei: null })
  })

  it("refuses a bad page request with 422, and every route without a session with 401", async () => {
    expect((await call("GET", "/v1/account/ledger?limit=0")).status).toBe(422)
    for (const [method, path] of [["GET", "/v1/account"], ["GET", "/v1/account/ledger"], ["PUT", "/v1/account/limits"]] as const) {
      const answer = await client.call(method, path, method === "PUT" ? {} : undefined, { ip: "203.0.113.31" })
      expect(answer.status, `${method} ${path}`).toBe(401)
    }
  })
})
