/**
 * `GET /v1/usage` with an API key over a real socket (issue 9 items 8 and 10), on two instances that share one
 * database: the key check on every request (frozen 403, revoked 401, unknown 401), a revocation made through one
 * instance refused by the other within a second, and the figures after an operator's grant.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient, signInByWallet } from "./support/accounts.ts"
import { type FixtureServer, startFixtureServer } from "./support/fixtureServer.ts"
import { freePort, startTestServer, type TestServer } from "./support/server.ts"

const MAINTAINER_TOKEN = "usage-test-maintainer-token"

let first: FixtureServer
let second: TestServer
let cookie: string
let cfId: string

const onFirst = () => makeClient(first.baseUrl)
const usage = (server: { baseUrl: string }, key: string) => makeClient(server.baseUrl).call("GET", "/v1/usage", undefined, { headers: { authorization: `Bearer ${key}` } })
const issue = async (body: unknown = {}) => {
  const issued = await onFirst().call("POST", "/v1/keys", body, { cookie, ip: "203.0.113.20" })
  expect(issued.status).toBe(201)
  return issued.body as { key: { id: string }; secret: string }
}

beforeAll(async () => {
  const chainPort = await freePort()
  first = await startFixtureServer({ TRUST_PROXY: "true", RATE_LIMIT_ENABLED: "false", MAINTAINER_TOKEN, EMBEDDED_CHAIN_PORT: String(chainPort) })
  const registry = (await onFirst().call("GET", "/v1/oracle/contract-metadata")).body.address as string
  // A second instance on the same database (reading the first one's chain), as a second replica would.
  second = await startTestServer({
    DATABASE_URL: first.database.url,
    PRICE_DATA_DIR: first.priceDir,
    RATE_LIMIT_ENABLED: "false",
    RPC_URL: `http://127.0.0.1:${chainPort}`,
    REGISTRY_ADDRESS: registry
  })
  const signedIn = await signInByWallet(onFirst(), privateKeyToAccount(generatePrivateKey()), "203.0.113.20")
  cookie = signedIn.cookie
  cfId = signedIn.me.cf_id
}, 90_000)

afterAll(async () => {
  await second?.close()
  await first?.close()
})

describe("GET /v1/usage", () => {
  it("shows the balance an operator granted, zero spend, the key's caps and the budget they leave", async () => {
    const { secret } = await issue({ dailyLimitWei: "3000000000000000000" })
    const empty = await usage(second, secret)
    expect(empty.status).toBe(200)
    expect(empty.body).toMatchObject({ balanceWei: "0", spentWei: "0", remainingWei: "0", cachedInputTokens: null })
    const granted = await onFirst().call("POST", `/v1/admin/accounts/${cfId}/credits`, { amountWei: "5000000000000000000" }, {
      headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
    })
    expect(granted.status, JSON.stringify(granted.body)).toBeLessThan(300)
    const funded = await usage(second, secret)
    expect(funded.body).toMatchObject({
      balanceWei: "5000000000000000000",
      spentWei: "0",
      key: { dailyLimitWei: "3000000000000000000", monthlyLimitWei: null, dailyUsedWei: "0", monthlyUsedWei: "0" },
      // The key's daily cap is tighter than the balance.
      remainingWei: "3000000000000000000",
      cachedInputTokens: null,
      cacheWrite5mTokens: null,
      cacheWrite1hTokens: null
    })
  })

  it("checks the key on every request: none or unknown 401 invalid_api_key, frozen 403, revoked 401", async () => {
    const none = await makeClient(second.baseUrl).call("GET", "/v1/usage")
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe("invalid_api_key")
    expect((await usage(second, `ct_live_${"x".repeat(43)}`)).body.error.code).toBe("invalid_api_key")
    const { key, secret } = await issue()
    await onFirst().call("POST", `/v1/keys/${key.id}/freeze`, undefined, { cookie, ip: "203.0.113.20" })
    const frozen = await usage(first, secret)
    expect(frozen.status).toBe(403)
    expect(frozen.body.error.code).toBe("api_key_frozen")
    await onFirst().call("POST", `/v1/keys/${key.id}/revoke`, undefined, { cookie, ip: "203.0.113.20" })
    const revoked = await usage(first, secret)
    expect(revoked.status).toBe(401)
    expect(revoked.body.error.code).toBe("api_key_revoked")
  })

  it("a key frozen by support is refused, and its owner cannot lift that freeze (403 naming support)", async () => {
    const { key, secret } = await issue()
    const frozen = await onFirst().call("POST", `/v1/admin/keys/${key.id}/freeze`, undefined, {
      headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
    })
    expect(frozen.body).toEqual({ id: key.id, status: "frozen", frozenBy: "admin" })
    expect((await usage(first, secret)).body.error.code).toBe("api_key_frozen")
    const lifted = await onFirst().call("POST", `/v1/keys/${key.id}/reactivate`, undefined, { cookie, ip: "203.0.113.20" })
    expect(lifted.status).toBe(403)
    expect(lifted.body.error).toMatchObject({ code: "forbidden" })
    expect(lifted.body.error.message).toContain("support")
    expect((await onFirst().call("POST", "/v1/admin/keys/key_0000000000000000/freeze", undefined, { headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` } })).status).toBe(404)
  })

  it("a key revoked through one instance is refused by the other within a second", async () => {
    const { key, secret } = await issue()
    expect((await usage(second, secret)).status).toBe(200)
    await onFirst().call("POST", `/v1/keys/${key.id}/revoke`, undefined, { cookie, ip: "203.0.113.20" })
    const revokedAt = Date.now()
    let refused: number | undefined
    while (Date.now() - revokedAt < 1_000) {
      const answer = await usage(second, secret)
      if (answer.status === 401) {
        expect(answer.body.error.code).toBe("api_key_revoked")
        refused = Date.now() - revokedAt
        break
      }
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect(refused, "the second instance still accepted the key a second after it was revoked").toBeDefined()
  })
})
