/**
 * API keys over a real socket (issue 9 item 7): the DESIGN paths behind a session, every field optional, the raw key
 * once, edits refused on a revoked key, bad input in the envelope with nothing written.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient, signInByWallet } from "./support/accounts.ts"
import { type FixtureServer, startFixtureServer } from "./support/fixtureServer.ts"

let server: FixtureServer
let client: ReturnType<typeof makeClient>
let cookie: string

const call = (method: string, path: string, body?: unknown, as = cookie) => client.call(method, path, body, { cookie: as, ip: "203.0.113.7" })

beforeAll(async () => {
  server = await startFixtureServer({ TRUST_PROXY: "true", RATE_LIMIT_ENABLED: "false" })
  client = makeClient(server.baseUrl)
  cookie = (await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), "203.0.113.7")).cookie
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("/v1/keys", () => {
  it("issues a key with no fields at all, returning the raw key once; the list shows a prefix, never the key", async () => {
    const issued = await call("POST", "/v1/keys", {})
    expect(issued.status).toBe(201)
    expect(issued.body.secret).toMatch(/^ct_live_[A-Za-z0-9_-]{43,}$/)
    expect(issued.body.key).toMatchObject({ status: "active", label: null, allowedModels: [], prefix: issued.body.secret.slice(0, 14) })
    const listed = await call("GET", "/v1/keys")
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((k: any) => k.id)).toContain(issued.body.key.id)
    expect(JSON.stringify(listed.body)).not.toContain(issued.body.secret)
  })

  it("stores allowedModels as <vendor>/<model>, collapsing spellings; an unknown model is 422 and nothing is issued", async () => {
    const issued = await call("POST", "/v1/keys", { label: "bots", dailyLimitWei: "1000", allowedModels: ["big-2", "ACME/BIG-2", "acme/small-1"] })
    expect(issued.status).toBe(201)
    expect(issued.body.key).toMatchObject({ label: "bots", dailyLimitWei: "1000", allowedModels: ["acme/big-2", "acme/small-1"] })
    const before = (await call("GET", "/v1/keys")).body.data.length
    const refused = await call("POST", "/v1/keys", { allowedModels: ["acme/big-2", "acme/nothing-9"] })
    expect(refused.status).toBe(422)
    expect(refused.body.error).toMatchObject({ code: "validation_failed", param: "allowedModels.1" })
    expect((await call("GET", "/v1/keys")).body.data.length).toBe(before)
  })

  it("refuses malformed fields in the envelope, naming each", async () => {
    const refused = await call("POST", "/v1/keys", { label: 7, dailyLimitWei: "-5", monthlyLimitWei: "1.5" })
    expect(refused.status).toBe(422)
    expect(refused.body.error.issues.map((i: any) => i.param).sort()).toEqual(["dailyLimitWei", "label", "monthlyLimitWei"])
  })

  it("refuses text PostgreSQL cannot store (U+0000) as 422 naming the field, not a 500; nothing is issued", async () => {
    const before = (await call("GET", "/v1/keys")).body.data.length
    const refused = await call("POST", "/v1/keys", { label: "a\u0000b", allowedModels: ["acme/\u0000big-2"] })
    expect(refused.status, JSON.stringify(refused.body)).toBe(422)
    expect(refused.body.error.issues.map((i: any) => i.param).sort()).toEqual(["allowedModels.0", "label"])
    expect((await call("GET", "/v1/keys")).body.data).toHaveLength(before)
  })

  it("edits label and caps; freeze and reactivate; revoke is permanent and a revoked key cannot be edited (409)", async () => {
    const { key } = (await call("POST", "/v1/keys", { label: "a" })).body
    const edited = await call("PATCH", `/v1/keys/${key.id}`, { label: "b", monthlyLimitWei: "5000" })
    expect(edited.body).toMatchObject({ label: "b", monthlyLimitWei: "5000" })
    expect((await call("POST", `/v1/keys/${key.id}/freeze`)).body).toMatchObject({ status: "frozen", frozenBy: "owner" })
    expect((await call("POST", `/v1/keys/${key.id}/reactivate`)).body).toMatchObject({ status: "active", frozenBy: null })
    expect((await call("POST", `/v1/keys/${key.id}/revoke`)).body).toMatchObject({ status: "revoked" })
    const refused = await call("PATCH", `/v1/keys/${key.id}`, { label: "c" })
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe("conflict")
    expect((await call("GET", "/v1/keys")).body.data.find((k: any) => k.id === key.id)).toMatchObject({ status: "revoked", label: "b" })
  })

  it("another account's key is not found; without a session every route is 401", async () => {
    const { key } = (await call("POST", "/v1/keys", {})).body
    const other = (await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), "203.0.113.8")).cookie
    expect((await call("POST", `/v1/keys/${key.id}/revoke`, undefined, other)).status).toBe(404)
    for (const [method, path] of [["GET", "/v1/keys"], ["POST", "/v1/keys"], ["POST", `/v1/keys/${key.id}/freeze`]] as const) {
      const answer = await client.call(method, path, method === "POST" ? {} : undefined, { ip: "203.0.113.9" })
      expect(answer.status, `${method} ${path}`).toBe(401)
      expect(answer.body.error.code).toBe("unauthorized")
    }
  })
})
