/**
 * The headers a signed-in console needs (src/http/securityHeaders.ts), over plain HTTP against real servers:
 * every HTML page the service answers (the public pages and their 404, the console's shell on its routes, the API
 * viewers) carries the Content-Security-Policy, X-Frame-Options and nosniff, its 304 too; each inline element a page
 * holds is allowed by the hash of its exact text and nothing else is; and the session cookie is Secure exactly when
 * the service is reached over https (PUBLIC_BASE_URL, or X-Forwarded-Proto from a trusted proxy), the referral
 * cookie always (SPEC "Referral link").
 */
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AccountServer, startAccountServer } from "./support/accountServer.ts"
import type { makeClient } from "./support/accounts.ts"

let trusted: AccountServer
let untrusted: AccountServer
let httpsBase: AccountServer

beforeAll(async () => {
  ;[trusted, untrusted, httpsBase] = await Promise.all([
    startAccountServer({ TRUST_PROXY: "true" }),
    startAccountServer({ TRUST_PROXY: "false" }),
    startAccountServer({ TRUST_PROXY: "false", PUBLIC_BASE_URL: "https://index.example.com" })
  ])
}, 180_000)

afterAll(async () => {
  await Promise.all([trusted?.close(), untrusted?.close(), httpsBase?.close()])
})

let visitor = 0
const nextIp = () => `198.51.100.${(visitor += 1)}`

const get = (server: AccountServer, path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.server.baseUrl}${path}`, { redirect: "manual", headers: { "x-forwarded-for": nextIp(), ...headers } })

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`

/** The policy's directives by name. */
const directives = (policy: string): Map<string, ReadonlyArray<string>> =>
  new Map(
    policy.split(";").map((part) => part.trim()).filter((part) => part !== "").map((part) => {
      const [name, ...values] = part.split(/\s+/)
      return [name!, values] as const
    })
  )

/** The text of each inline element `tag` in `html` that has no `src` and executes (no JSON data block). */
const inlineTexts = (html: string, tag: "script" | "style"): ReadonlyArray<string> =>
  [...html.matchAll(new RegExp(`<${tag}(\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, "g"))]
    .filter((match) => !/\ssrc=/.test(match[1] ?? "") && !/type="application\/json"/.test(match[1] ?? ""))
    .map((match) => match[2]!)

/** Asserts the page's headers and that its policy allows exactly the inline elements its HTML holds. */
const expectProtectedPage = (path: string, response: Response, html: string) => {
  expect(response.headers.get("content-type"), path).toMatch(/^text\/html/)
  expect(response.headers.get("x-frame-options"), path).toBe("DENY")
  expect(response.headers.get("x-content-type-options"), path).toBe("nosniff")
  const policy = response.headers.get("content-security-policy")
  expect(policy, path).not.toBeNull()
  const csp = directives(policy!)
  expect(csp.get("default-src"), path).toEqual(["'self'"])
  expect(csp.get("frame-ancestors"), path).toEqual(["'none'"])
  expect(csp.get("object-src"), path).toEqual(["'none'"])
  expect(csp.get("base-uri"), path).toEqual(["'self'"])
  expect(csp.get("form-action"), path).toEqual(["'self'"])
  expect(csp.get("connect-src"), path).toEqual(["'self'"])
  expect(csp.get("img-src"), path).toEqual(["'self'", "data:"])
  expect(policy, path).not.toMatch(/unsafe-inline|unsafe-eval|\*/)
  expect(csp.get("script-src"), path).toEqual(["'self'", ...inlineTexts(html, "script").map(sha256)])
  expect(csp.get("style-src"), path).toEqual(["'self'", ...inlineTexts(html, "style").map(sha256)])
}

describe("every HTML page carries the security headers", () => {
  it("the public pages (every page the sitemap lists, a model's and a revision's 404), their 304, the console on its routes, and the API viewers", async () => {
    const sitemap = await (await get(trusted, "/sitemap.xml")).text()
    const listed = [...sitemap.matchAll(/<loc>[^<]*?(\/[^<]*)<\/loc>/g)].map((match) => new URL(match[1]!, "http://x").pathname)
    expect(listed).toEqual(expect.arrayContaining(["/", "/models", "/revisions", "/methodology"]))
    const paths = [
      ...new Set([
        ...listed.slice(0, 40),
        "/models?q=gpt",
        "/models/no-such-vendor/no-such-model",
        "/revisions/999999",
        "/console",
        "/console/keys",
        "/console/invitations/some-token",
        "/v1/docs",
        "/openapi",
        "/v1/docs/inference"
      ])
    ]
    const statuses = new Map<string, number>()
    for (const path of paths) {
      const response = await get(trusted, path)
      const html = await response.text()
      statuses.set(path, response.status)
      expectProtectedPage(path, response, html)
      if (path.startsWith("/console")) expect(inlineTexts(html, "script").length + inlineTexts(html, "style").length, path).toBe(0)
      if (path === "/") expect(inlineTexts(html, "style")).toHaveLength(1)
      if (path === "/v1/docs") expect(inlineTexts(html, "script")).toHaveLength(2)
    }
    expect(statuses.get("/models/no-such-vendor/no-such-model")).toBe(404)
    expect(statuses.get("/revisions/999999")).toBe(404)
    expect(statuses.get("/")).toBe(200)

    // A revalidated page keeps its protection: the 304 carries the same headers.
    for (const path of ["/", "/v1/docs"]) {
      const first = await get(trusted, path)
      await first.text()
      const again = await get(trusted, path, { "if-none-match": first.headers.get("etag")! })
      expect(again.status, path).toBe(304)
      expect(again.headers.get("content-security-policy"), path).toBe(first.headers.get("content-security-policy"))
      expect(again.headers.get("x-frame-options"), path).toBe("DENY")
    }

    // The assets the pages load are never sniffed into something else.
    const index = await (await get(trusted, "/")).text()
    const script = /<script type="module" src="\.\/(assets\/[^"]+)"/.exec(index)![1]!
    expect((await get(trusted, `/${script}`)).headers.get("x-content-type-options")).toBe("nosniff")
  }, 120_000)
})

const setCookies = (answer: { readonly headers: Headers }, name: string) =>
  answer.headers.getSetCookie().filter((line) => line.startsWith(`${name}=`))

const isSecure = (line: string) => line.split(";").some((attribute) => attribute.trim().toLowerCase() === "secure")

/** Signs a new user in, with `headers` on every request; the session cookie line and the user's referral code. */
const signIn = async (server: AccountServer, headers: Record<string, string>) => {
  const client: ReturnType<typeof makeClient> = {
    call: (method, path, body, options = {}) => server.client.call(method, path, body, { ...options, headers: { ...options.headers, ...headers } })
  }
  const email = `secure-${Date.now()}-${(visitor += 1)}@example.com`
  const started = await client.call("POST", "/v1/auth/email/start", { email }, { ip: nextIp() })
  expect(started.status).toBe(202)
  const code = await server.mailbox.codeFor(email)
  const verified = await client.call("POST", "/v1/auth/email/verify", { email, code }, { ip: nextIp() })
  expect(verified.status).toBe(200)
  const [line] = setCookies(verified, "cf_session")
  expect(line).toBeDefined()
  const logout = await client.call("POST", "/v1/auth/logout", undefined, { ip: nextIp(), cookie: line!.split(";")[0]! })
  expect(logout.status).toBe(204)
  const [cleared] = setCookies(logout, "cf_session")
  expect(cleared).toBeDefined()
  return { session: line!, cleared: cleared!, referralCode: verified.body.referral_code as string }
}

/** The referral cookie a click on `code`'s link sets, with `headers`. */
const referralCookie = async (server: AccountServer, code: string, headers: Record<string, string>) => {
  const answer = await get(server, `/r/${code}`, headers)
  expect(answer.status).toBe(302)
  const [line] = setCookies(answer, "cf_ref")
  expect(line).toBeDefined()
  return line!
}

describe("the session cookie is Secure exactly when the service is reached over https; cf_ref always (SPEC)", () => {
  it("a trusted proxy's X-Forwarded-Proto: https makes the session cookie Secure; plain http does not; cf_ref is Secure either way", async () => {
    const overHttps = await signIn(trusted, { "x-forwarded-proto": "https" })
    expect(isSecure(overHttps.session), overHttps.session).toBe(true)
    expect(isSecure(overHttps.cleared), overHttps.cleared).toBe(true)
    expect(overHttps.session).toMatch(/HttpOnly/i)
    expect(isSecure(await referralCookie(trusted, overHttps.referralCode, { "x-forwarded-proto": "https" }))).toBe(true)

    for (const headers of [{}, { "x-forwarded-proto": "http" }]) {
      const overHttp = await signIn(trusted, headers)
      expect(isSecure(overHttp.session), overHttp.session).toBe(false)
      expect(isSecure(overHttp.cleared), overHttp.cleared).toBe(false)
      // SPEC "Referral link": cf_ref carries Secure, whatever the request came over.
      expect(isSecure(await referralCookie(trusted, overHttps.referralCode, headers))).toBe(true)
    }
  }, 60_000)

  it("X-Forwarded-Proto from a proxy the service does not trust (TRUST_PROXY=false) is ignored", async () => {
    const spoofed = await signIn(untrusted, { "x-forwarded-proto": "https" })
    expect(isSecure(spoofed.session), spoofed.session).toBe(false)
    expect(isSecure(await referralCookie(untrusted, spoofed.referralCode, { "x-forwarded-proto": "https" }))).toBe(true)
  }, 60_000)

  it("a PUBLIC_BASE_URL on https makes both cookies Secure whatever the request says", async () => {
    const configured = await signIn(httpsBase, {})
    expect(isSecure(configured.session), configured.session).toBe(true)
    expect(isSecure(configured.cleared), configured.cleared).toBe(true)
    expect(isSecure(await referralCookie(httpsBase, configured.referralCode, {}))).toBe(true)
  }, 60_000)
})
