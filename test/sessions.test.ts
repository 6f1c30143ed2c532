/**
 * Sessions (issue 9): the cf_session cookie's attributes, sliding expiry, logout, unknown and expired sessions.
 */
import { Option } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sessionCookieIsSecure } from "../src/handlers/auth.ts"
import { makeClient, signInByWallet, siweSignature } from "./support/accounts.ts"
import { createTestDatabase, queryDatabase, type TestDatabase } from "./support/database.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

let database: TestDatabase
let server: TestServer
let client: ReturnType<typeof makeClient>

beforeAll(async () => {
  database = await createTestDatabase()
  server = await startTestServer({ DATABASE_URL: database.url, TRUST_PROXY: "true" })
  client = makeClient(server.baseUrl)
}, 60_000)

afterAll(async () => {
  await server?.close()
  await database?.close()
})

const query = (text: string, values: ReadonlyArray<unknown> = []) => queryDatabase(database, text, values)

const signIn = () => signInByWallet(client, privateKeyToAccount(generatePrivateKey()), "10.3.0.1")
const me = (cookie: string) => client.call("GET", "/v1/me", undefined, { cookie })

describe("the session cookie", () => {
  it("is HttpOnly, SameSite=Lax, 30 days, on /, and not Secure on loopback; only its SHA-256 is stored", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const { cookie } = await signInByWallet(client, wallet, "10.3.0.1")
    const token = cookie.slice("cf_session=".length)
    expect(Buffer.from(token, "base64url")).toHaveLength(32)
    const stored = await query("SELECT token_hash FROM sessions")
    expect(JSON.stringify(stored)).not.toContain(token)

    const signed = await siweSignature(client, wallet)
    const verified = await client.call("POST", "/v1/auth/siwe/verify", { message: signed.message, signature: signed.signature })
    const header = verified.headers.getSetCookie().find((c) => c.startsWith("cf_session="))!
    const attributes = header.split(";").slice(1).map((a) => a.trim().toLowerCase())
    expect(attributes).toEqual(expect.arrayContaining(["httponly", "samesite=lax", "path=/", "max-age=2592000"]))
    expect(attributes).not.toContain("secure")
  })

  it("is Secure except on loopback or a plain-http PUBLIC_BASE_URL", () => {
    expect(sessionCookieIsSecure({ host: "127.0.0.1", publicBaseUrl: Option.none() })).toBe(false)
    expect(sessionCookieIsSecure({ host: "localhost", publicBaseUrl: Option.none() })).toBe(false)
    expect(sessionCookieIsSecure({ host: "::1", publicBaseUrl: Option.none() })).toBe(false)
    expect(sessionCookieIsSecure({ host: "0.0.0.0", publicBaseUrl: Option.none() })).toBe(true)
    expect(sessionCookieIsSecure({ host: "0.0.0.0", publicBaseUrl: Option.some("http://10.0.0.5:8080") })).toBe(false)
    expect(sessionCookieIsSecure({ host: "127.0.0.1", publicBaseUrl: Option.some("https://api.example.com") })).toBe(true)
  })
})

describe("sessions", () => {
  it("end at logout: the cookie is cleared and the session no longer works", async () => {
    const { cookie } = await signIn()
    expect((await me(cookie)).status).toBe(200)
    const out = await client.call("POST", "/v1/auth/logout", undefined, { cookie })
    expect(out.status).toBe(204)
    const cleared = out.headers.getSetCookie().find((c) => c.startsWith("cf_session="))!
    expect(cleared.toLowerCase()).toContain("max-age=0")
    const after = await me(cookie)
    expect(after.status).toBe(401)
    expect(after.body.error.code).toBe("unauthorized")
    // Logging out without a session is harmless.
    expect((await client.call("POST", "/v1/auth/logout")).status).toBe(204)
  })

  it("refuse an unknown or malformed cookie, and no cookie at all (401 unauthorized)", async () => {
    for (const cookie of [`cf_session=${Buffer.alloc(32, 7).toString("base64url")}`, "cf_session=garbage", "other=1"]) {
      const answer = await me(cookie)
      expect(answer.status, cookie).toBe(401)
      expect(answer.body.error.code).toBe("unauthorized")
    }
    expect((await client.call("GET", "/v1/me")).body.error.code).toBe("unauthorized")
  })

  it("refuse an expired session", async () => {
    const { cookie, me: identity } = await signIn()
    await query("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE cf_id = $1", [identity.cf_id])
    const answer = await me(cookie)
    expect(answer.status).toBe(401)
    expect(answer.body.error).toMatchObject({ code: "unauthorized", message: expect.stringContaining("expired") })
  })

  it("slide: a session in use is extended to 30 days again and its cookie re-sent", async () => {
    const { cookie, me: identity } = await signIn()
    await query("UPDATE sessions SET expires_at = now() + interval '10 days' WHERE cf_id = $1", [identity.cf_id])
    const answer = await me(cookie)
    expect(answer.status).toBe(200)
    const resent = answer.headers.getSetCookie().find((c) => c.startsWith("cf_session="))!
    expect(resent.split(";")[0]).toBe(cookie)
    const maxAge = Number(/max-age=(\d+)/i.exec(resent)![1])
    expect(maxAge).toBeGreaterThan(2592000 - 60)
    const [row] = await query("SELECT extract(epoch FROM expires_at - now())::int AS seconds FROM sessions WHERE cf_id = $1", [identity.cf_id])
    expect(row.seconds).toBeGreaterThan(2592000 - 60)
    // A fresh session is not rewritten on every request.
    expect((await me(cookie)).headers.getSetCookie()).toEqual([])
  })
})
