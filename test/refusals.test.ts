/**
 * Every route refuses the wrong caller. The endpoints are read from the HttpApi definitions themselves (a route added
 * later is covered without touching this file), and each one behind a credential is called with every wrong one its
 * middleware can meet: none, a malformed one, the wrong kind, a revoked or frozen key, a frozen or revoked grant, a
 * signed request whose nonce was already used, a cookie request without the CSRF header, another account's session on
 * this account's resources, and a Member's session where an Admin (or the Owner) is needed. Each answers the error
 * envelope's refusal, and the database is the same, row for row, before and after. Sessions: a new one at each
 * sign-in (a cookie sent along is never adopted), gone at sign-out, never read from a query string.
 */
import { HttpApi } from "@effect/platform"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ServerApi } from "../src/api/ServerApi.ts"
import { makeClient, sessionCookieOf, signInByWallet, siweSignature } from "./support/accounts.ts"
import { databaseDigest as digestDatabase } from "./support/dbDigest.ts"
import { type ExchangeFixture, MAINTAINER_TOKEN, ONE_CREDIT, startExchangeFixture } from "./support/exchangeServer.ts"
import { asUser, makeTeam, type TeamUser, walletUsers } from "./support/orgTeam.ts"
import { recordFigure } from "./support/reliability.ts"
import { signedHeaders } from "./support/signing.ts"

interface Endpoint {
  readonly method: string
  readonly path: string
  readonly middleware: ReadonlyArray<string>
}

/** Every endpoint the server serves, with the middlewares in front of it, as the definitions declare them. */
const endpoints: Array<Endpoint> = []
HttpApi.reflect(ServerApi as unknown as HttpApi.HttpApi.AnyWithProps, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, middleware }) => {
    endpoints.push({ method: endpoint.method, path: endpoint.path, middleware: [...middleware].map((tag) => (tag as unknown as { key: string }).key) })
  }
})
const guarded = endpoints.filter((endpoint) => endpoint.middleware.length > 0)

let fx: ExchangeFixture
const ownerWallet = privateKeyToAccount(generatePrivateKey())
let owner: TeamUser & { readonly cookie: string; readonly ip: string }
let stranger: TeamUser & { readonly cookie: string; readonly ip: string }
let member: TeamUser & { readonly cookie: string; readonly ip: string }
let ids: Record<string, string>
let secrets: Record<"activeKey" | "revokedKey" | "frozenKey" | "activeGrant" | "frozenGrant" | "revokedGrant", string>

const signedIn = async (ip: string, wallet = privateKeyToAccount(generatePrivateKey())) => {
  const { cookie, me } = await signInByWallet(makeClient(fx.baseUrl), wallet, ip)
  return { ...asUser(fx.baseUrl, me.cf_id as string, cookie, ip), cookie, ip }
}

const ok = async (user: TeamUser, method: string, path: string, body?: unknown) => {
  const answer = await user.call(method, path, body)
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300)
  return answer.body
}

beforeAll(async () => {
  fx = await startExchangeFixture({ RATE_LIMIT_ENABLED: "false" })
  owner = await signedIn("203.0.113.10", ownerWallet)
  stranger = await signedIn("203.0.113.11")
  member = await signedIn("203.0.113.12")
  const admin = await walletUsers(fx.baseUrl, "203.0.114")()
  const grant = await makeClient(fx.baseUrl).call("POST", `/v1/admin/accounts/${owner.cfId}/credits`, { amountWei: (10n * ONE_CREDIT).toString() }, { headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` } })
  expect(grant.status).toBe(200)

  // The owner's personal resources.
  const key = async (label: string) => ok(owner, "POST", "/v1/keys", { label })
  const active = await key("active")
  const revoked = await key("revoked")
  const frozen = await key("frozen")
  await ok(owner, "POST", `/v1/keys/${revoked.key.id}/revoke`)
  await ok(owner, "POST", `/v1/keys/${frozen.key.id}/freeze`)
  const appGrant = async (appName: string) => ok(owner, "POST", "/v1/apps/grants", { appName })
  const activeGrant = await appGrant("active app")
  const frozenGrant = await appGrant("frozen app")
  const revokedGrant = await appGrant("revoked app")
  await ok(owner, "POST", `/v1/apps/grants/${frozenGrant.grant.id}/freeze`)
  await ok(owner, "POST", `/v1/apps/grants/${revokedGrant.grant.id}/revoke`)
  const answered = await fetch(`${fx.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${active.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "a bill to look up" }], max_tokens: 8 })
  })
  expect(answered.status).toBe(200)
  const generation = ((await answered.json()) as { id: string }).id

  // An organization the owner owns, with an admin and a member, a pool, an invitation and a key of its own.
  const orgId = await makeTeam(fx.query, owner, admin, member, "Refusals")
  const pool = await ok(owner, "POST", `/v1/orgs/${orgId}/pools`, { name: "team pool" })
  const invitation = await ok(owner, "POST", `/v1/orgs/${orgId}/invitations`, { email: "invited@example.com", role: "member" })
  await ok(owner, "POST", `/v1/orgs/${orgId}/credits`, { amountWei: ONE_CREDIT.toString() })
  await ok(owner, "POST", "/v1/orgs/context", { orgId })
  const orgKey = await key("organization key")
  await ok(owner, "POST", "/v1/orgs/context", { orgId: null })
  await ok(member, "POST", "/v1/orgs/context", { orgId })

  ids = {
    key: active.key.id,
    orgKey: orgKey.key.id,
    grant: activeGrant.grant.id,
    generation,
    orgId,
    poolId: pool.id,
    invitationId: invitation.id,
    memberCfId: member.cfId,
    ownerCfId: owner.cfId
  }
  secrets = {
    activeKey: active.secret,
    revokedKey: revoked.secret,
    frozenKey: frozen.secret,
    activeGrant: activeGrant.token,
    frozenGrant: frozenGrant.token,
    revokedGrant: revokedGrant.token
  }
}, 180_000)

afterAll(async () => {
  await fx?.close()
})

/** The path with each parameter naming the owner's resource of that kind. */
const concrete = (endpoint: Endpoint, orgScoped = false): string =>
  endpoint.path
    .replace("/v1/keys/:id", `/v1/keys/${orgScoped ? ids.orgKey : ids.key}`)
    .replace("/v1/admin/keys/:id", `/v1/admin/keys/${ids.key}`)
    .replace("/v1/apps/grants/:id", `/v1/apps/grants/${ids.grant}`)
    .replace("/v1/generations/:id", `/v1/generations/${ids.generation}`)
    .replace("/v1/orgs/:id", `/v1/orgs/${ids.orgId}`)
    .replace(":poolId", ids.poolId!)
    .replace(":invitationId", ids.invitationId!)
    .replace("/members/:cfId", `/members/${ids.memberCfId}`)
    .replace("/v1/admin/accounts/:cfId", `/v1/admin/accounts/${ids.ownerCfId}`)
    .replace(":revision", "1")

/** A body that would do something if the caller were let in. */
const bodyFor = (endpoint: Endpoint): unknown => {
  const route = `${endpoint.method} ${endpoint.path}`
  const bodies: Record<string, unknown> = {
    "PATCH /v1/me": { display_name: "intruder" },
    "POST /v1/me/email/start": { email: "intruder@example.com" },
    "POST /v1/me/email/verify": { email: "intruder@example.com", code: "000000" },
    "POST /v1/keys": { label: "intruder" },
    "PATCH /v1/keys/:id": { label: "renamed by an intruder" },
    "PUT /v1/account/limits": { dailyLimitWei: "1" },
    "POST /v1/account/withdrawals": { to: "0x000000000000000000000000000000000000dEaD", amountWei: ONE_CREDIT.toString() },
    "POST /v1/orgs": { name: "Intruders" },
    "POST /v1/orgs/:id/credits": { amountWei: "1" },
    "POST /v1/orgs/:id/credits/withdraw": { amountWei: "1" },
    "POST /v1/orgs/context": { orgId: ids.orgId },
    "POST /v1/orgs/:id/invitations": { email: "intruder@example.com", role: "admin" },
    "POST /v1/invitations/accept": { token: "x".repeat(43) },
    "POST /v1/orgs/:id/pools": { name: "intruders" },
    "PATCH /v1/orgs/:id/pools/:poolId": { name: "renamed" },
    "PUT /v1/orgs/:id/pools/:poolId/members/:cfId": {},
    "POST /v1/apps/grants": { appName: "intruder", scopes: ["account:read", "account:act"] },
    "POST /v1/account-tools/call": { tool: "freeze_key", input: { keyId: ids.key } },
    "POST /v1/chat/completions": { model: "openai/gpt-4.1", messages: [{ role: "user", content: "free ride" }] },
    "POST /v1/messages": { model: "anthropic/claude-sonnet-4.5", max_tokens: 16, messages: [{ role: "user", content: "free ride" }] },
    "POST /v1/admin/accounts/:cfId/credits": { amountWei: (1000n * ONE_CREDIT).toString() },
    "PUT /v1/admin/routing/auto": { models: ["openai/gpt-4.1"] },
    "POST /v1/admin/commands": { args: ["accounts", "grant", ids.ownerCfId, "1000"] }
  }
  return bodies[route]
}

type Headers = Record<string, string>
const send = async (endpoint: Endpoint, headers: Headers, options: { path?: string; body?: unknown } = {}) => {
  const body = options.body === undefined ? bodyFor(endpoint) : options.body
  const response = await fetch(`${fx.baseUrl}${options.path ?? concrete(endpoint)}`, {
    method: endpoint.method,
    headers: { "x-forwarded-for": "203.0.113.99", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = text
  }
  return { status: response.status, body: parsed }
}

/** Every table a refusal must leave alone, row for row (test/support/dbDigest.ts says which are left out and why). */
const databaseDigest = () => digestDatabase(fx.query)
const nonceCount = async () => Number((await fx.query("SELECT count(*)::int AS n FROM signed_request_nonces"))[0].n)

interface Refusal {
  readonly status: number
  readonly codes: ReadonlyArray<string>
}
const expectRefused = (what: string, answer: { status: number; body: any }, expected: Refusal) => {
  expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBe(expected.status)
  expect(typeof answer.body === "object" && answer.body !== null && typeof answer.body.error === "object", `${what}: not the envelope`).toBe(true)
  expect(expected.codes, `${what}: ${answer.body.error.code}`).toContain(answer.body.error.code)
  expect(answer.body.error.message, what).toEqual(expect.any(String))
}

const UNAUTHORIZED: Refusal = { status: 401, codes: ["unauthorized"] }
const BAD_KEY: Refusal = { status: 401, codes: ["invalid_api_key"] }
const BAD_GRANT: Refusal = { status: 401, codes: ["invalid_app_grant"] }
/** What each middleware answers a request that brings nothing it can read. */
const NOTHING_READABLE: Record<string, Refusal> = {
  SessionAuth: UNAUTHORIZED,
  AccountReadAuth: UNAUTHORIZED,
  MaintainerAuth: UNAUTHORIZED,
  AppGrantAuth: BAD_GRANT,
  ApiKeyAuth: BAD_KEY,
  MessagesKeyAuth: BAD_KEY
}
const unsafe = (endpoint: Endpoint) => !["GET", "HEAD", "OPTIONS"].includes(endpoint.method)

describe("every route refuses the wrong caller", () => {
  it("finds the guarded routes in the definitions: sessions, keys, grants, account readers and the maintainer", () => {
    const kinds = new Set(guarded.flatMap((endpoint) => endpoint.middleware))
    expect([...kinds].sort()).toEqual(["AccountReadAuth", "ApiKeyAuth", "AppGrantAuth", "MaintainerAuth", "MessagesKeyAuth", "SessionAuth"])
    expect(guarded.length).toBeGreaterThan(60)
  })

  it("refuses every wrong credential on every guarded route, and changes nothing", async () => {
    const before = await databaseDigest()
    const noncesBefore = await nonceCount()
    let accepted = 0
    let checked = 0
    const refused = async (endpoint: Endpoint, label: string, headers: Headers, expected: Refusal, options: { path?: string; body?: unknown } = {}) => {
      expectRefused(`${endpoint.method} ${endpoint.path} with ${label}`, await send(endpoint, headers, options), expected)
      checked++
    }
    const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` })

    for (const endpoint of guarded) {
      const [kind] = endpoint.middleware
      await refused(endpoint, "no credential", {}, NOTHING_READABLE[kind!]!)
      switch (kind) {
        case "SessionAuth": {
          // With the console's header, so it is the cookie that is judged (without it, a state change is refused first as
          // cross-site, 403, below).
          await refused(endpoint, "a malformed session cookie", { cookie: "cf_session=not-a-session", "x-cf-console": "1" }, UNAUTHORIZED)
          await refused(endpoint, "an unknown session cookie", { cookie: `cf_session=${"A".repeat(43)}`, "x-cf-console": "1" }, UNAUTHORIZED)
          await refused(endpoint, "an API key", bearer(secrets.activeKey), UNAUTHORIZED)
          await refused(endpoint, "a grant token", bearer(secrets.activeGrant), UNAUTHORIZED)
          // A signed request whose nonce a first, accepted request already used.
          const nonce = `replay${Math.random().toString(36).slice(2)}`
          const first = await fetch(`${fx.baseUrl}/v1/me`, { headers: await signedHeaders({ method: "GET", path: "/v1/me", signer: ownerWallet, nonce }) })
          expect(first.status).toBe(200)
          accepted++
          const path = concrete(endpoint)
          const body = bodyFor(endpoint)
          const replayed = await signedHeaders({ method: endpoint.method, path, signer: ownerWallet, nonce, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
          await refused(endpoint, "a replayed nonce", replayed, { status: 409, codes: ["signature_reused"] })
          // A signature by another wallet than the one it names.
          const forged = await signedHeaders({ method: endpoint.method, path, signer: privateKeyToAccount(generatePrivateKey()), address: ownerWallet.address, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
          await refused(endpoint, "a signature by another wallet", forged, { status: 401, codes: ["invalid_signature", "unauthorized"] })
          if (unsafe(endpoint)) {
            await refused(endpoint, "the owner's cookie without the CSRF header", { cookie: owner.cookie }, { status: 403, codes: ["forbidden"] })
            await refused(endpoint, "the owner's cookie from another site", { cookie: owner.cookie, origin: "https://evil.example", "x-cf-console": "1" }, { status: 403, codes: ["forbidden"] })
          }
          break
        }
        case "AccountReadAuth":
          await refused(endpoint, "a malformed bearer", bearer("ct_live_nope"), { status: 401, codes: ["invalid_api_key", "unauthorized"] })
          await refused(endpoint, "a revoked key", bearer(secrets.revokedKey), { status: 401, codes: ["api_key_revoked"] })
          await refused(endpoint, "a frozen key", bearer(secrets.frozenKey), { status: 403, codes: ["api_key_frozen"] })
          await refused(endpoint, "a frozen grant", bearer(secrets.frozenGrant), { status: 403, codes: ["app_grant_frozen"] })
          await refused(endpoint, "a revoked grant", bearer(secrets.revokedGrant), { status: 401, codes: ["app_grant_revoked"] })
          await refused(endpoint, "a malformed session cookie", { cookie: "cf_session=not-a-session" }, UNAUTHORIZED)
          break
        case "AppGrantAuth":
          await refused(endpoint, "a malformed grant", bearer("cfa_live_nope"), BAD_GRANT)
          await refused(endpoint, "a frozen grant", bearer(secrets.frozenGrant), { status: 403, codes: ["app_grant_frozen"] })
          await refused(endpoint, "a revoked grant", bearer(secrets.revokedGrant), { status: 401, codes: ["app_grant_revoked"] })
          await refused(endpoint, "an API key", bearer(secrets.activeKey), BAD_GRANT)
          await refused(endpoint, "the owner's session cookie", { cookie: owner.cookie, "x-cf-console": "1" }, BAD_GRANT)
          break
        case "ApiKeyAuth":
        case "MessagesKeyAuth": {
          const asKey = kind === "MessagesKeyAuth" ? (secret: string) => ({ "x-api-key": secret, "anthropic-version": "2023-06-01" }) : bearer
          await refused(endpoint, "a malformed key", asKey("ct_live_nope"), BAD_KEY)
          await refused(endpoint, "a revoked key", asKey(secrets.revokedKey), { status: 401, codes: ["api_key_revoked"] })
          await refused(endpoint, "a frozen key", asKey(secrets.frozenKey), { status: 403, codes: ["api_key_frozen"] })
          // A grant may send requests only with account:act (docs/decisions.md, connected apps).
          // (Reading usage is a read: account:read may.)
          if (unsafe(endpoint)) await refused(endpoint, "a read-only grant", asKey(secrets.activeGrant), { status: 403, codes: ["forbidden"] })
          await refused(endpoint, "a frozen grant", asKey(secrets.frozenGrant), { status: 403, codes: ["app_grant_frozen"] })
          await refused(endpoint, "a revoked grant", asKey(secrets.revokedGrant), { status: 401, codes: ["app_grant_revoked"] })
          await refused(endpoint, "the owner's session cookie", { cookie: owner.cookie, "x-cf-console": "1" }, BAD_KEY)
          break
        }
        case "MaintainerAuth":
          await refused(endpoint, "a wrong token", bearer("not-the-maintainer-token-not-the-maintainer-token"), UNAUTHORIZED)
          await refused(endpoint, "an API key", bearer(secrets.activeKey), UNAUTHORIZED)
          await refused(endpoint, "the owner's session cookie", { cookie: owner.cookie, "x-cf-console": "1" }, UNAUTHORIZED)
          break
      }
    }
    expect(await databaseDigest()).toEqual(before)
    // Only the accepted requests used a nonce: no refused one recorded its own.
    expect(await nonceCount()).toBe(noncesBefore + accepted)
    recordFigure({
      suite: "test/refusals.test.ts",
      tried: "every wrong credential on every guarded route (none, malformed, wrong kind, revoked or frozen key, frozen or revoked grant, replayed nonce, forged signature, cookie without CSRF header or from another site)",
      volume: `${checked} requests on ${guarded.length} routes`,
      held: "each refused in the envelope with its code; every table unchanged row for row; no nonce recorded by a refusal"
    })
  }, 300_000)

  it("refuses another account's session on this account's resources, and changes nothing", async () => {
    const before = await databaseDigest()
    const named = guarded.filter((endpoint) => endpoint.middleware[0] === "SessionAuth" && /:(id|poolId|invitationId)\b/.test(endpoint.path))
    expect(named.length).toBeGreaterThan(20)
    for (const endpoint of named) {
      const answer = await send(endpoint, { cookie: stranger.cookie, "x-cf-console": "1" })
      expectRefused(`${endpoint.method} ${endpoint.path} by a stranger`, answer, { status: 404, codes: ["not_found"] })
    }
    expect(await databaseDigest()).toEqual(before)
    recordFigure({
      suite: "test/refusals.test.ts",
      tried: "another account's session on this account's keys, grants, bills, organization, pools and invitations",
      volume: `${named.length} routes`,
      held: "each 404 not_found; every table unchanged"
    })
  })

  it("refuses a Member where an Admin or the Owner is needed, and changes nothing", async () => {
    const before = await databaseDigest()
    const needsMore = [
      "POST /v1/keys",
      "PATCH /v1/keys/:id",
      "POST /v1/keys/:id/freeze",
      "POST /v1/keys/:id/reactivate",
      "POST /v1/keys/:id/revoke",
      "PUT /v1/account/limits",
      "DELETE /v1/orgs/:id",
      "POST /v1/orgs/:id/credits/withdraw",
      "POST /v1/orgs/:id/invitations",
      "GET /v1/orgs/:id/invitations",
      "POST /v1/orgs/:id/invitations/:invitationId/resend",
      "POST /v1/orgs/:id/invitations/:invitationId/revoke",
      "POST /v1/orgs/:id/pools",
      "PATCH /v1/orgs/:id/pools/:poolId",
      "DELETE /v1/orgs/:id/pools/:poolId",
      "PUT /v1/orgs/:id/pools/:poolId/members/:cfId",
      "DELETE /v1/orgs/:id/pools/:poolId/members/:cfId",
      "POST /v1/apps/grants"
    ]
    for (const route of needsMore) {
      const endpoint = guarded.find((candidate) => `${candidate.method} ${candidate.path}` === route)
      expect(endpoint, route).toBeDefined()
      const answer = await send(endpoint!, { cookie: member.cookie, "x-cf-console": "1" }, { path: concrete(endpoint!, true) })
      expectRefused(`${route} by a Member`, answer, { status: 403, codes: ["org_role_required"] })
      expect(answer.body.error.details.actualRole, route).toBe("member")
    }
    expect(await databaseDigest()).toEqual(before)
    recordFigure({
      suite: "test/refusals.test.ts",
      tried: "a Member's session where an Admin or the Owner is needed",
      volume: `${needsMore.length} routes`,
      held: "each 403 org_role_required naming the role; every table unchanged"
    })
  })
})

describe("sessions", () => {
  it("starts a new session at each sign-in and never adopts the cookie sent along", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const first = await signInByWallet(makeClient(fx.baseUrl), wallet, "203.0.113.40")
    const client = makeClient(fx.baseUrl)
    // A second sign-in made while carrying the first cookie (or one an attacker planted) gets a cookie of its own.
    const signed = await siweSignature(client, wallet, { ip: "203.0.113.40" })
    const second = await client.call("POST", "/v1/auth/siwe/verify", { message: signed.message, signature: signed.signature }, { ip: "203.0.113.40", cookie: first.cookie })
    expect(second.status).toBe(200)
    const rotated = sessionCookieOf(second)
    expect(rotated).not.toBe(first.cookie)
    expect((await client.call("GET", "/v1/me", undefined, { cookie: rotated, ip: "203.0.113.40" })).status).toBe(200)
  })

  it("ends the session at sign-out, and never reads one from the query string", async () => {
    const user = await signedIn("203.0.113.41")
    const value = user.cookie.split("=")[1]!
    const client = makeClient(fx.baseUrl)
    expect((await client.call("GET", "/v1/me", undefined, { cookie: user.cookie, ip: user.ip })).status).toBe(200)
    for (const query of [`cf_session=${value}`, `session=${value}`, `token=${value}`]) {
      expectRefused(`/v1/me?${query.split("=")[0]}`, await client.call("GET", `/v1/me?${query}`, undefined, { ip: user.ip }), UNAUTHORIZED)
    }
    expect((await client.call("POST", "/v1/auth/logout", undefined, { cookie: user.cookie, ip: user.ip })).status).toBeLessThan(300)
    expectRefused("/v1/me after sign-out", await client.call("GET", "/v1/me", undefined, { cookie: user.cookie, ip: user.ip }), UNAUTHORIZED)
  })
})
