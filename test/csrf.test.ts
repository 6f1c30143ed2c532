/**
 * Cross-site requests (DESIGN section 13 "Security") over real sockets: a request the `cf_session` cookie
 * authenticates that changes state is refused 403 `forbidden`, with nothing changed, when it comes from another site
 * (`Origin`, `Sec-Fetch-Site`) or carries neither a same-origin `Origin` nor `X-CF-Console: 1`. Reads, sign-in, and
 * requests authenticated by an API key, an app grant or a wallet signature are unaffected. Node's fetch sends no
 * Origin and no Sec-Fetch-Site of its own, so each request here carries exactly the headers the test gives it.
 */
import { createHash, randomBytes } from "node:crypto"
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CONSOLE_HEADER, CONSOLE_HEADER_VALUE, crossSiteRefusal, ownOrigins } from "../src/http/csrf.ts"
import { type Answer, makeClient, signInByWallet, siweSignature } from "./support/accounts.ts"
import { type ExchangeFixture, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"

let fx: ExchangeFixture
let client: ReturnType<typeof makeClient>

beforeAll(async () => {
  fx = await startExchangeFixture()
  client = makeClient(fx.baseUrl)
  await fx.grant(10n * ONE_CREDIT)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

const EVIL = "https://evil.example"
const MISSING = "send the X-CF-Console: 1 header (the console does) or a same-origin Origin"

/**
 * A call with the fixture's session cookie and exactly `headers` besides (the console header only when given here).
 */
const withCookie = (method: string, path: string, body: unknown, headers: Record<string, string>, cookie = fx.cookie) =>
  client.call(method, path, body, { cookie, ip: fx.ip, headers, console: false })

const consoleHeader = { [CONSOLE_HEADER]: CONSOLE_HEADER_VALUE }

const keyCount = async (cookie = fx.cookie): Promise<number> => {
  const listed = await withCookie("GET", "/v1/keys", undefined, {}, cookie)
  expect(listed.status, JSON.stringify(listed.body)).toBe(200)
  return (listed.body.data as Array<unknown>).length
}

const expectForbidden = (answer: Answer, message: string | RegExp) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(403)
  expect(answer.body.error).toMatchObject({ code: "forbidden", type: "forbidden" })
  expect(answer.body.error.message).toMatch(message)
}

describe("a signed-in request that changes state, authenticated by the session cookie", () => {
  it("is refused 403 forbidden without the console header and without an Origin, and no key is created", async () => {
    const before = await keyCount()
    const refused = await withCookie("POST", "/v1/keys", { label: "forged" }, {})
    expectForbidden(refused, MISSING)
    expect(refused.body.error.message).toContain("A signed-in request that changes state must come from this site")
    expect(await keyCount()).toBe(before)
    // A header with another value is not the console's.
    expectForbidden(await withCookie("POST", "/v1/keys", { label: "forged" }, { [CONSOLE_HEADER]: "yes" }), MISSING)
    expect(await keyCount()).toBe(before)
  })

  it("is refused for every unsafe method (PATCH, PUT), and nothing changes", async () => {
    const me = (await withCookie("GET", "/v1/me", undefined, {})).body
    expectForbidden(await withCookie("PATCH", "/v1/me", { display_name: "forged name" }, {}), MISSING)
    expect((await withCookie("GET", "/v1/me", undefined, {})).body.display_name).toBe(me.display_name)
    const limits = (await withCookie("GET", "/v1/account", undefined, {})).body.limits
    expectForbidden(await withCookie("PUT", "/v1/account/limits", { dailyWei: "1", weeklyWei: null, monthlyWei: null }, {}), MISSING)
    expect((await withCookie("GET", "/v1/account", undefined, {})).body.limits).toEqual(limits)
  })

  it("is refused when its Origin names another site, even with the console header", async () => {
    const before = await keyCount()
    expectForbidden(await withCookie("POST", "/v1/keys", { label: "forged" }, { ...consoleHeader, origin: EVIL }), /Origin names another site/)
    // Another port of the same host is another origin; `Origin: null` names no site at all.
    const otherPort = `http://127.0.0.1:${fx.server.port === 65535 ? 1 : fx.server.port + 1}`
    expectForbidden(await withCookie("POST", "/v1/keys", {}, { ...consoleHeader, origin: otherPort }), /Origin names another site/)
    expectForbidden(await withCookie("POST", "/v1/keys", {}, { ...consoleHeader, origin: "null" }), /Origin names another site/)
    expectForbidden(await withCookie("POST", "/v1/keys", {}, { origin: EVIL }), /Origin names another site/)
    expect(await keyCount()).toBe(before)
  })

  it("is refused when Sec-Fetch-Site says cross-site or same-site, even with the console header or a same-origin Origin", async () => {
    const before = await keyCount()
    for (const site of ["cross-site", "same-site"]) {
      expectForbidden(
        await withCookie("POST", "/v1/keys", { label: "forged" }, { ...consoleHeader, "sec-fetch-site": site }),
        `Sec-Fetch-Site: ${site}`
      )
      expectForbidden(
        await withCookie("POST", "/v1/keys", { label: "forged" }, { origin: fx.baseUrl, "sec-fetch-site": site }),
        `Sec-Fetch-Site: ${site}`
      )
    }
    expect(await keyCount()).toBe(before)
  })

  it("is allowed with a same-origin Origin and no console header (Sec-Fetch-Site same-origin or absent)", async () => {
    const before = await keyCount()
    const plain = await withCookie("POST", "/v1/keys", { label: "same origin" }, { origin: fx.baseUrl })
    expect(plain.status, JSON.stringify(plain.body)).toBe(201)
    const fetched = await withCookie("POST", "/v1/keys", { label: "same origin 2" }, { origin: fx.baseUrl, "sec-fetch-site": "same-origin" })
    expect(fetched.status, JSON.stringify(fetched.body)).toBe(201)
    expect(await keyCount()).toBe(before + 2)
  })

  it("is allowed with the console header and no Origin (Sec-Fetch-Site none or absent)", async () => {
    const before = await keyCount()
    const issued = await withCookie("POST", "/v1/keys", { label: "console" }, consoleHeader)
    expect(issued.status, JSON.stringify(issued.body)).toBe(201)
    const typed = await withCookie("POST", "/v1/keys", { label: "console 2" }, { ...consoleHeader, "sec-fetch-site": "none" })
    expect(typed.status, JSON.stringify(typed.body)).toBe(201)
    expect(await keyCount()).toBe(before + 2)
    // Without the header, Sec-Fetch-Site: none alone is not enough.
    expectForbidden(await withCookie("POST", "/v1/keys", {}, { "sec-fetch-site": "none" }), MISSING)
    expect(await keyCount()).toBe(before + 2)
  })

  it("behind a trusted proxy, an Origin matching X-Forwarded-Proto and X-Forwarded-Host is this site", async () => {
    const before = await keyCount()
    const forwarded = { "x-forwarded-proto": "https", "x-forwarded-host": "cx.example" }
    const allowed = await withCookie("POST", "/v1/keys", { label: "proxied" }, { ...forwarded, origin: "https://cx.example" })
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201)
    expectForbidden(await withCookie("POST", "/v1/keys", {}, { ...forwarded, origin: "http://cx.example" }), /Origin names another site/)
    expect(await keyCount()).toBe(before + 1)
  })
})

describe("what the rule leaves alone", () => {
  it("reads with the cookie need neither the header nor an Origin, even from another site", async () => {
    const listed = await withCookie("GET", "/v1/keys", undefined, {})
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    const me = await withCookie("GET", "/v1/me", undefined, { origin: EVIL, "sec-fetch-site": "cross-site" })
    expect(me.status, JSON.stringify(me.body)).toBe(200)
    expect(me.body.cf_id).toBe(fx.cfId)
    expect((await withCookie("HEAD", "/v1/me", undefined, {})).status).toBe(200)
  })

  it("a state change without any cookie is 401 unauthorized, not a CSRF refusal", async () => {
    const answer = await client.call("POST", "/v1/keys", {}, { ip: fx.ip })
    expect(answer.status, JSON.stringify(answer.body)).toBe(401)
    expect(answer.body.error.code).toBe("unauthorized")
  })

  it("sign-in needs no header (there is no session yet), even when an old session cookie comes along", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const signed = await siweSignature(client, wallet, { ip: "203.0.113.71" })
    const first = await client.call("POST", "/v1/auth/siwe/verify", { message: signed.message, signature: signed.signature }, { ip: "203.0.113.71" })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const again = await siweSignature(client, wallet, { ip: "203.0.113.71" })
    const second = await withCookie("POST", "/v1/auth/siwe/verify", { message: again.message, signature: again.signature }, {})
    expect(second.status, JSON.stringify(second.body)).toBe(200)
    expect(second.body.cf_id).toBe(first.body.cf_id)
  })

  it("an API key (Bearer) changes state without either, even with a cookie and a foreign Origin along", async () => {
    const { secret } = await fx.issueKey({ label: "bearer" })
    const chat = { model: "openai/gpt-4.1", messages: [{ role: "user", content: "Hello" }] }
    const plain = await client.call("POST", "/v1/chat/completions", chat, { headers: { authorization: `Bearer ${secret}` } })
    expect(plain.status, JSON.stringify(plain.body)).toBe(200)
    expect(plain.body.object).toBe("chat.completion")
    const alongside = await withCookie("POST", "/v1/chat/completions", chat, { authorization: `Bearer ${secret}`, origin: EVIL, "sec-fetch-site": "cross-site" })
    expect(alongside.status, JSON.stringify(alongside.body)).toBe(200)
  })

  it("an app grant (Bearer) acts through POST /v1/account-tools/call without either", async () => {
    const created = await withCookie("POST", "/v1/apps/grants", { appName: "Agent", scopes: ["account:act"] }, consoleHeader)
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const grant = { authorization: `Bearer ${created.body.token}` }
    const call = await client.call("POST", "/v1/account-tools/call", { tool: "account.set_budget_caps", input: { dailyWei: "777" } }, { headers: grant })
    expect(call.status, JSON.stringify(call.body)).toBe(200)
    expect((await withCookie("GET", "/v1/account", undefined, {})).body.limits.dailyWei).toBe("777")
    const alongside = await withCookie(
      "POST",
      "/v1/account-tools/call",
      { tool: "account.set_budget_caps", input: { dailyWei: "888" } },
      { ...grant, origin: EVIL, "sec-fetch-site": "cross-site" }
    )
    expect(alongside.status, JSON.stringify(alongside.body)).toBe(200)
    expect((await withCookie("GET", "/v1/account", undefined, {})).body.limits.dailyWei).toBe("888")
  })

  it("a wallet-signed request changes state without either, even with the cookie along", async () => {
    const wallet: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())
    const { cookie } = await signInByWallet(client, wallet, "203.0.113.72")
    const body = JSON.stringify({ display_name: "signed name" })
    const timestamp = Math.floor(Date.now() / 1000)
    const nonce = randomBytes(12).toString("hex")
    const message = `CF-SIGNED-REQUEST\nPATCH\n/v1/me\n${timestamp}\n${nonce}\n${createHash("sha256").update(body).digest("hex")}`
    const signed = {
      "x-cf-address": wallet.address,
      "x-cf-timestamp": String(timestamp),
      "x-cf-nonce": nonce,
      "x-cf-signature": await wallet.signMessage({ message })
    }
    const renamed = await withCookie("PATCH", "/v1/me", body, signed, cookie)
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200)
    expect(renamed.body.display_name).toBe("signed name")
  })
})

describe("logout with the cookie", () => {
  it("follows the same rule: refused without the header (the session lives on), done with it", async () => {
    const { cookie } = await signInByWallet(client, privateKeyToAccount(generatePrivateKey()), "203.0.113.73")
    expectForbidden(await withCookie("POST", "/v1/auth/logout", undefined, {}, cookie), MISSING)
    expectForbidden(await withCookie("POST", "/v1/auth/logout", undefined, { ...consoleHeader, origin: EVIL }, cookie), /Origin names another site/)
    expect((await withCookie("GET", "/v1/me", undefined, {}, cookie)).status).toBe(200)
    const out = await withCookie("POST", "/v1/auth/logout", undefined, consoleHeader, cookie)
    expect(out.status, JSON.stringify(out.body)).toBe(204)
    expect((await withCookie("GET", "/v1/me", undefined, {}, cookie)).status).toBe(401)
    // Without a cookie there is nothing to end, and nothing to forge.
    expect((await client.call("POST", "/v1/auth/logout")).status).toBe(204)
  })
})

describe("the rule itself (src/http/csrf.ts)", () => {
  const own = ownOrigins({ headers: { host: "cx.example:8080" }, trustProxy: false, publicBaseUrl: undefined })
  const refusal = (method: string, headers: Record<string, string>) => crossSiteRefusal({ method, headers, ownOrigins: own })

  it("judges only unsafe methods", () => {
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(refusal(method, { "sec-fetch-site": "cross-site" }), method).toBeUndefined()
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) expect(refusal(method, {}), method).toContain(MISSING)
  })

  it("compares origins as browsers write them: scheme, host and port, default ports dropped, case folded", () => {
    expect(refusal("POST", { origin: "http://CX.example:8080" })).toBeUndefined()
    expect(refusal("POST", { origin: "https://cx.example:8080" })).toContain("another site")
    expect(refusal("POST", { origin: "http://cx.example" })).toContain("another site")
    const defaultPort = ownOrigins({ headers: { host: "cx.example:80" }, trustProxy: false, publicBaseUrl: undefined })
    expect(crossSiteRefusal({ method: "POST", headers: { origin: "http://cx.example" }, ownOrigins: defaultPort })).toBeUndefined()
  })

  it("reads X-Forwarded-* only when the proxy is trusted, and takes PUBLIC_BASE_URL's origin as this site's", () => {
    const headers = { host: "10.0.0.5:8080", "x-forwarded-proto": "https", "x-forwarded-host": "cx.example" }
    expect([...ownOrigins({ headers, trustProxy: false, publicBaseUrl: undefined })]).toEqual(["http://10.0.0.5:8080"])
    expect([...ownOrigins({ headers, trustProxy: true, publicBaseUrl: undefined })]).toEqual(["http://10.0.0.5:8080", "https://cx.example"])
    expect([...ownOrigins({ headers, trustProxy: false, publicBaseUrl: "https://api.cx.example/prefix/" })]).toEqual([
      "http://10.0.0.5:8080",
      "https://api.cx.example"
    ])
  })
})
