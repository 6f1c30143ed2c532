/**
 * Connected apps (issue 12 item 5) over real sockets, PostgreSQL and the vendor simulator: grants issued for the active
 * context with their token shown once; `GET /v1/account-tools` and `POST /v1/account-tools/call` as COMPAT.md's client
 * calls them, each tool's result checked against the ledger and the stored bills; the scope and role refusals; freeze,
 * unfreeze and revoke (SPEC's states); a removed member's grants revoked; inference sent with a grant through the
 * official SDKs, billed to the grant's context, and refused to a read-only grant before anything is held.
 */
import Anthropic from "@anthropic-ai/sdk"
import { createHash } from "node:crypto"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, MAINTAINER_TOKEN, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"
import { type Answer, asUser, makeTeam, type TeamUser, walletUsers } from "./support/orgTeam.ts"

let fx: ExchangeFixture
let newUser: ReturnType<typeof walletUsers>

beforeAll(async () => {
  fx = await startExchangeFixture()
  newUser = walletUsers(fx.baseUrl, "192.0.2")
  await fx.grant(100n * ONE_CREDIT)
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

type User = TeamUser

/** The fixture's signed-in identity, which holds the credits. */
const funded = () => asUser(fx.baseUrl, fx.cfId, fx.cookie, fx.ip)

const connect = async (user: User, body: unknown = { appName: "Agent" }) => {
  const created = await user.call("POST", "/v1/apps/grants", body)
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return created.body as { grant: { id: string; prefix: string; scopes: ReadonlyArray<string> }; token: string }
}

const asApp = (token: string) => ({
  tools: (): Promise<Answer> => makeClient(fx.baseUrl).call("GET", "/v1/account-tools", undefined, { headers: { authorization: `Bearer ${token}` } }),
  call: (tool: string, input?: unknown): Promise<Answer> =>
    makeClient(fx.baseUrl).call("POST", "/v1/account-tools/call", input === undefined ? { tool } : { tool, input }, {
      headers: { authorization: `Bearer ${token}` }
    })
})

const refused = (answer: Answer, status: number, code: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status)
  expect(answer.body.error.code).toBe(code)
}

const NEEDS_ACT = "needs account:act access (held: account:read)"

/** An organization with an owner, an admin and a member, in whose context each of them works. */
const team = async () => {
  const owner = await newUser()
  const admin = await newUser()
  const member = await newUser()
  const orgId = await makeTeam(fx.query, owner, admin, member, "Apps team")
  for (const user of [owner, admin, member]) expect((await user.call("POST", "/v1/orgs/context", { orgId })).status).toBe(200)
  const [{ account_id: accountId }] = await fx.query("SELECT account_id::text FROM organizations WHERE id = $1", [orgId])
  return { owner, admin, member, orgId, accountId: accountId as string }
}

describe("issuing and listing grants", () => {
  it("issues a grant for the personal context: the token once, only its hash stored, the list shows its prefix", async () => {
    const user = await newUser()
    const { grant, token } = await connect(user, { appName: "  Claude Desktop  " })
    expect(token).toMatch(/^cfa_live_[A-Za-z0-9_-]{43}$/)
    expect(grant).toMatchObject({ appName: "Claude Desktop", scopes: ["account:read"], status: "active", issuedByCfId: user.cfId, prefix: token.slice(0, 15) })
    const listed = await user.call("GET", "/v1/apps/grants")
    expect(listed.body.data).toEqual([grant])
    expect(JSON.stringify(listed.body)).not.toContain(token.slice(15))
    const [row] = await fx.query("SELECT token_hash, scopes FROM app_grants WHERE id = $1", [grant.id])
    expect(row.token_hash).toBe(createHash("sha256").update(token).digest("hex"))
    // An app that may act always reads too, whatever order it asked in.
    expect((await connect(user, { appName: "Actor", scopes: ["account:act"] })).grant.scopes).toEqual(["account:read", "account:act"])
    const invalid = await user.call("POST", "/v1/apps/grants", { appName: " ", scopes: ["account:write"] })
    refused(invalid, 422, "validation_failed")
    expect(invalid.body.error.issues.map((issue: { param: string }) => issue.param).sort()).toEqual(["appName", "scopes.0"])
    // Sessions only: a grant cannot manage grants.
    refused(await makeClient(fx.baseUrl).call("GET", "/v1/apps/grants", undefined, { headers: { authorization: `Bearer ${token}` } }), 401, "unauthorized")
  })

  it("lists the tools as COMPAT.md reads them: a personal grant's context is null, each tool with scope, minimum role and JSON Schema", async () => {
    const { token } = await connect(await newUser(), { appName: "MCP server", scopes: ["account:act"] })
    const listed = await asApp(token).tools()
    expect(listed.status).toBe(200)
    expect(listed.body.appName).toBe("MCP server")
    expect(listed.body.context).toBeNull()
    const tools = Object.fromEntries(listed.body.tools.map((tool: { name: string }) => [tool.name, tool]))
    expect(Object.keys(tools)).toEqual(expect.arrayContaining(["account.overview", "account.keys", "account.spend", "account.set_budget_caps"]))
    expect(tools["account.overview"]).toMatchObject({ scope: "account:read", minimumOrgRole: null, inputSchema: { type: "object" } })
    expect(tools["account.set_budget_caps"]).toMatchObject({ scope: "account:act", minimumOrgRole: null })
    expect(tools["account.set_budget_caps"].inputSchema.properties.dailyWei.anyOf).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "string", pattern: "^[1-9][0-9]{0,77}$" }), { type: "null" }])
    )
    expect(tools["account.spend"].inputSchema).toMatchObject({
      type: "object",
      required: ["breakdown", "period"],
      properties: { breakdown: { type: "string", enum: ["model", "key", "day"] }, period: { type: "string", enum: ["day", "week", "month"] } },
      additionalProperties: false
    })
    for (const tool of listed.body.tools) expect(typeof tool.description).toBe("string")
  })
})

describe("what a grant lists: the tools its scopes and its issuer's role allow", () => {
  const READ_TOOLS = ["account.keys", "account.overview", "account.pools", "account.spend"]
  const ALL_TOOLS = [...READ_TOOLS, "account.set_budget_caps"].sort()

  /** The listed tools by name, after checking the answer. */
  const listing = async (token: string) => {
    const listed = await asApp(token).tools()
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    return Object.fromEntries(listed.body.tools.map((tool: { name: string }) => [tool.name, tool])) as Record<
      string,
      { name: string; scope: string; minimumOrgRole: string | null }
    >
  }

  it("a read-only personal grant lists no account:act tool, and none of its tools has a minimum role", async () => {
    const tools = await listing((await connect(await newUser(), { appName: "Reader" })).token)
    expect(Object.keys(tools).sort()).toEqual(READ_TOOLS)
    for (const tool of Object.values(tools)) expect(tool).toMatchObject({ scope: "account:read", minimumOrgRole: null })
  })

  it("an act personal grant lists account.set_budget_caps, with no minimum role", async () => {
    const tools = await listing((await connect(await newUser(), { appName: "Actor", scopes: ["account:act"] })).token)
    expect(Object.keys(tools).sort()).toEqual(ALL_TOOLS)
    expect(tools["account.set_budget_caps"]).toMatchObject({ scope: "account:act", minimumOrgRole: null })
    for (const tool of Object.values(tools)) expect(tool.minimumOrgRole).toBeNull()
  })

  it("an org grant lists set_budget_caps (ADMIN) when its issuer is an Admin or the Owner, not when a Member: whose call is refused for the role", async () => {
    const { owner, admin, member } = await team()
    for (const issuer of [owner, admin]) {
      const tools = await listing((await connect(issuer, { appName: "Budget bot", scopes: ["account:act"] })).token)
      expect(Object.keys(tools).sort()).toEqual(ALL_TOOLS)
      expect(tools["account.set_budget_caps"]?.minimumOrgRole).toBe("ADMIN")
      for (const name of READ_TOOLS) expect(tools[name]?.minimumOrgRole).toBe("MEMBER")
    }
    // A Member cannot ask for account:act (the creation test shows it); the scope is given in the database, so only the
    // issuer's role stands between the grant and the tool.
    const memberApp = await connect(member, { appName: "Member bot" })
    await fx.query("UPDATE app_grants SET scopes = ARRAY['account:read', 'account:act'] WHERE id = $1", [memberApp.grant.id])
    const tools = await listing(memberApp.token)
    expect(Object.keys(tools).sort()).toEqual(READ_TOOLS)
    for (const name of READ_TOOLS) expect(tools[name]?.minimumOrgRole).toBe("MEMBER")
    const call = await asApp(memberApp.token).call("account.set_budget_caps", { dailyWei: "5000" })
    refused(call, 403, "org_role_required")
    expect(call.body.error.details).toEqual({ minimumRole: "admin", actualRole: "member" })
  })

  it("a read-only grant calling set_budget_caps, which it does not list, is still refused 403 forbidden naming the scope", async () => {
    const { token } = await connect(await newUser(), { appName: "Reader" })
    expect(Object.keys(await listing(token))).not.toContain("account.set_budget_caps")
    const call = await asApp(token).call("account.set_budget_caps", { dailyWei: "5000" })
    refused(call, 403, "forbidden")
    expect(call.body.error.message).toBe(NEEDS_ACT)
  })
})

describe("refusals of the grant itself", () => {
  it("answers invalid_app_grant for no token, a malformed one, an unknown one and an API key", async () => {
    const none = await makeClient(fx.baseUrl).call("GET", "/v1/account-tools")
    refused(none, 401, "invalid_app_grant")
    refused(await asApp("cfa_live_short").tools(), 401, "invalid_app_grant")
    refused(await asApp(`cfa_live_${"A".repeat(43)}`).call("account.overview"), 401, "invalid_app_grant")
    const key = await fx.issueKey({ label: "not a grant" })
    refused(await asApp(key.secret).tools(), 401, "invalid_app_grant")
  })

  it("freezes (403 app_grant_frozen while the session and another grant keep working), unfreezes, and revokes for good", async () => {
    const user = await newUser()
    const first = await connect(user, { appName: "First" })
    const second = await connect(user, { appName: "Second" })
    const frozen = await user.call("POST", `/v1/apps/grants/${first.grant.id}/freeze`)
    expect(frozen.status).toBe(200)
    expect(frozen.body).toMatchObject({ id: first.grant.id, status: "frozen", revokedAt: null })
    expect(frozen.body.frozenAt).not.toBeNull()
    refused(await asApp(first.token).tools(), 403, "app_grant_frozen")
    refused(await asApp(first.token).call("account.overview"), 403, "app_grant_frozen")
    expect((await asApp(second.token).call("account.overview")).status).toBe(200)
    expect((await user.call("GET", "/v1/account")).status).toBe(200)
    // Freezing twice answers the grant as it stands.
    expect((await user.call("POST", `/v1/apps/grants/${first.grant.id}/freeze`)).body.status).toBe("frozen")
    const lifted = await user.call("POST", `/v1/apps/grants/${first.grant.id}/unfreeze`)
    expect(lifted.body).toMatchObject({ status: "active", frozenAt: null })
    expect((await asApp(first.token).tools()).status).toBe(200)
    const revoked = await user.call("POST", `/v1/apps/grants/${first.grant.id}/revoke`)
    expect(revoked.body.status).toBe("revoked")
    refused(await asApp(first.token).tools(), 401, "app_grant_revoked")
    refused(await user.call("POST", `/v1/apps/grants/${first.grant.id}/freeze`), 409, "conflict")
    refused(await user.call("POST", `/v1/apps/grants/${first.grant.id}/unfreeze`), 409, "conflict")
    expect((await user.call("POST", `/v1/apps/grants/${first.grant.id}/revoke`)).body.status).toBe("revoked")
    // Frozen to revoked: revoking is permanent from any live state.
    await user.call("POST", `/v1/apps/grants/${second.grant.id}/freeze`)
    expect((await user.call("POST", `/v1/apps/grants/${second.grant.id}/revoke`)).body).toMatchObject({ status: "revoked", frozenAt: null })
    refused(await asApp(second.token).call("account.overview"), 401, "app_grant_revoked")
    expect((await user.call("GET", "/v1/apps/grants")).body.data.map((g: { status: string }) => g.status)).toEqual(["revoked", "revoked"])
    // Another account's grant is not found, whatever the action.
    const stranger = await newUser()
    for (const verb of ["freeze", "unfreeze", "revoke"]) refused(await stranger.call("POST", `/v1/apps/grants/${second.grant.id}/${verb}`), 404, "not_found")
    refused(await stranger.call("POST", "/v1/apps/grants/app_0000000000000000/freeze"), 404, "not_found")
    refused(await stranger.call("POST", "/v1/apps/grants/not-an-id/freeze"), 422, "validation_failed")
  })
})

describe("grants in an organization", () => {
  it("acts in its context with the issuer's current role; a Member connects only read-only apps; the scope is checked before the role", async () => {
    const { owner, admin, member, orgId, accountId } = await team()
    const adminApp = await connect(admin, { appName: "Budget bot", scopes: ["account:read", "account:act"] })
    const adminTools = await asApp(adminApp.token).tools()
    expect(adminTools.body.context).toEqual({ orgId, orgName: "Apps team", role: "ADMIN" })
    const denied = await member.call("POST", "/v1/apps/grants", { appName: "Spender", scopes: ["account:act"] })
    expect(denied.status).toBe(403)
    expect(denied.body.error).toMatchObject({ code: "org_role_required", details: { minimumRole: "admin", actualRole: "member" } })
    const memberApp = await connect(member, { appName: "Reader" })
    expect((await asApp(memberApp.token).tools()).body.context).toEqual({ orgId, orgName: "Apps team", role: "MEMBER" })
    const byReader = await asApp(memberApp.token).call("account.set_budget_caps", { dailyWei: "5000" })
    refused(byReader, 403, "forbidden")
    expect(byReader.body.error.message).toBe(NEEDS_ACT)

    // The admin's grant changes the organization's caps, and the organization's account shows them.
    const set = await asApp(adminApp.token).call("account.set_budget_caps", { dailyWei: "5000", monthlyWei: "90000" })
    expect(set.status, JSON.stringify(set.body)).toBe(200)
    expect(set.body).toEqual({ tool: "account.set_budget_caps", result: { limits: { dailyWei: "5000", weeklyWei: null, monthlyWei: "90000" } } })
    expect((await owner.call("GET", "/v1/account")).body.limits).toEqual({ dailyWei: "5000", weeklyWei: null, monthlyWei: "90000" })
    // Omitted keeps a cap, null removes it.
    const changed = await asApp(adminApp.token).call("account.set_budget_caps", { dailyWei: null, weeklyWei: "7000" })
    expect(changed.body.result.limits).toEqual({ dailyWei: null, weeklyWei: "7000", monthlyWei: "90000" })
    const [stored] = await fx.query("SELECT daily_limit_wei::text AS d, weekly_limit_wei::text AS w, monthly_limit_wei::text AS m FROM accounts WHERE id = $1::bigint", [accountId])
    expect(stored).toEqual({ d: null, w: "7000", m: "90000" })
    // The issuer's personal caps are untouched: the grant keeps its context.
    await admin.call("POST", "/v1/orgs/context", { orgId: null })
    expect((await admin.call("GET", "/v1/account")).body.limits).toEqual({ dailyWei: null, weeklyWei: null, monthlyWei: null })
    expect((await asApp(adminApp.token).tools()).body.context.orgId).toBe(orgId)
    const overview = await asApp(memberApp.token).call("account.overview")
    expect(overview.body.result.limits).toEqual({ dailyWei: null, weeklyWei: "7000", monthlyWei: "90000" })

    // The role is the issuer's as it stands at each call.
    await fx.query("UPDATE organization_members SET role = 'member' WHERE account_id = $1::bigint AND cf_id = $2", [accountId, admin.cfId])
    const demoted = await asApp(adminApp.token).call("account.set_budget_caps", { dailyWei: "1" })
    expect(demoted.status).toBe(403)
    expect(demoted.body.error).toMatchObject({ code: "org_role_required", details: { minimumRole: "admin", actualRole: "member" } })
    expect((await asApp(adminApp.token).tools()).body.context.role).toBe("MEMBER")
    await fx.query("UPDATE organization_members SET role = 'admin' WHERE account_id = $1::bigint AND cf_id = $2", [accountId, admin.cfId])

    // Managing another member's grant takes connectApps: the admin may freeze the member's, not the reverse.
    await admin.call("POST", "/v1/orgs/context", { orgId })
    const byMember = await member.call("POST", `/v1/apps/grants/${adminApp.grant.id}/freeze`)
    expect(byMember.body.error).toMatchObject({ code: "org_role_required", details: { minimumRole: "admin", actualRole: "member" } })
    expect((await admin.call("POST", `/v1/apps/grants/${memberApp.grant.id}/freeze`)).body.status).toBe("frozen")
    expect((await member.call("POST", `/v1/apps/grants/${memberApp.grant.id}/unfreeze`)).body.status).toBe("active")
    expect((await member.call("GET", "/v1/apps/grants")).body.data.map((g: { id: string }) => g.id)).toEqual([adminApp.grant.id, memberApp.grant.id])

    // Removing the admin revokes every grant they issued there, at once; the member's keeps working.
    expect((await owner.call("DELETE", `/v1/orgs/${orgId}/members/${admin.cfId}`)).status).toBe(200)
    refused(await asApp(adminApp.token).call("account.overview"), 401, "app_grant_revoked")
    const [row] = await fx.query("SELECT status, revoked_at IS NOT NULL AS revoked FROM app_grants WHERE id = $1", [adminApp.grant.id])
    expect(row).toEqual({ status: "revoked", revoked: true })
    expect((await asApp(memberApp.token).call("account.overview")).status).toBe(200)
    // Leaving does the same.
    expect((await member.call("POST", `/v1/orgs/${orgId}/leave`)).status).toBe(200)
    refused(await asApp(memberApp.token).tools(), 401, "app_grant_revoked")
  })

  it("lists the organization's pools to a grant made there (none to a personal grant)", async () => {
    const { owner, member, orgId } = await team()
    const pool = (await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Research", weeklyWei: "7000" })).body
    await owner.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`)
    const reader = asApp((await connect(member, { appName: "Pool reader" })).token)
    const listed = await reader.call("account.pools")
    expect(listed.status, JSON.stringify(listed.body)).toBe(200)
    expect(listed.body.result).toEqual({
      pools: [
        {
          id: pool.id,
          name: "Research",
          caps: { dailyWei: null, weeklyWei: "7000", monthlyWei: null },
          used: { dailyWei: "0", weeklyWei: "0", monthlyWei: "0" },
          members: [{ cfId: member.cfId, displayName: expect.any(String) }]
        }
      ]
    })
    const personal = await newUser()
    expect((await asApp((await connect(personal)).token).call("account.pools")).body.result).toEqual({ pools: [] })
  })

  it("an org grant's inference is billed to the organization, recorded with the grant's id", async () => {
    const { admin, orgId, accountId } = await team()
    const granted = await makeClient(fx.baseUrl).call("POST", `/v1/admin/accounts/${orgId}/credits`, { amountWei: (10n * ONE_CREDIT).toString() }, {
      headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
    })
    expect(granted.status, JSON.stringify(granted.body)).toBe(200)
    const { grant, token } = await connect(admin, { appName: "Org agent", scopes: ["account:act"] })
    const { data, response } = await sdkClients(fx.baseUrl, token)
      .openai.chat.completions.create({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "Hello from the org" }] })
      .withResponse()
    const charge = BigInt(response.headers.get("x-compute-used")!)
    expect(charge).toBeGreaterThan(0n)
    const [entry] = await fx.query("SELECT account_id::text, api_key_id, amount_wei::text FROM ledger_entries WHERE reference = $1 AND kind = 'charge'", [data.id])
    expect(entry).toEqual({ account_id: accountId, api_key_id: grant.id, amount_wei: (-charge).toString() })
    expect((await admin.call("GET", "/v1/account")).body.balanceWei).toBe((10n * ONE_CREDIT - charge).toString())
  })
})

describe("the tools against the ledger, and inference with a grant", () => {
  it("sends inference with an act grant (openai and anthropic SDKs) billed to its account; overview, spend and keys agree with the database", async () => {
    const user = funded()
    const { grant, token } = await connect(user, { appName: "Coding agent", scopes: ["account:act"] })
    const key = await fx.issueKey({ label: "beside the grant" })
    const sdk = sdkClients(fx.baseUrl, token)
    const chat = await sdk.openai.chat.completions.create({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "Say something" }] })
    expect(chat.object).toBe("chat.completion")
    const message = await sdk.anthropic.messages.create({ model: "claude-sonnet-4.5", max_tokens: 200, messages: [{ role: "user", content: "Hi" }] })
    expect(message.type).toBe("message")
    await sdkClients(fx.baseUrl, key.secret).openai.chat.completions.create({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "By key" }] })
    const charges = await fx.query(
      "SELECT reference, api_key_id, (-amount_wei)::text AS wei FROM ledger_entries WHERE kind = 'charge' AND reference = ANY($1)",
      [[chat.id, message.id]]
    )
    expect(charges.map((c) => c.api_key_id)).toEqual([grant.id, grant.id])
    // The grant reads its bills and usage like a key.
    const bearer = { headers: { authorization: `Bearer ${token}` } }
    expect((await makeClient(fx.baseUrl).call("GET", `/v1/generations/${chat.id}`, undefined, bearer)).body.id).toBe(chat.id)
    const usage = await makeClient(fx.baseUrl).call("GET", "/v1/usage", undefined, bearer)
    expect(usage.body.key.id).toBe(grant.id)

    const app = asApp(token)
    const account = (await user.call("GET", "/v1/account")).body
    const overview = (await app.call("account.overview")).body
    const [today] = await fx.query(
      "SELECT COALESCE(-sum(amount_wei), 0)::text AS wei FROM ledger_entries l JOIN accounts a ON a.id = l.account_id WHERE a.owner_cf_id = $1 AND a.kind = 'personal' AND l.kind = 'charge' AND l.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
      [fx.cfId]
    )
    expect(overview).toEqual({
      tool: "account.overview",
      result: {
        context: null,
        balanceWei: account.balanceWei,
        reservedWei: "0",
        availableWei: account.balanceWei,
        spentWei: account.spentWei,
        limits: account.limits,
        spend: { todayWei: today.wei, thisWeekWei: expect.any(String), thisMonthWei: expect.any(String) }
      }
    })
    expect(BigInt(overview.result.spend.thisMonthWei)).toBeGreaterThanOrEqual(BigInt(today.wei))

    const expected = async (column: string) =>
      fx.query(
        `SELECT ${column} AS bucket, sum(charge_wei)::text AS wei, count(*)::int AS n FROM generations g JOIN accounts a ON a.id = g.account_id
         WHERE a.owner_cf_id = $1 AND a.kind = 'personal' AND g.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
         GROUP BY 1`,
        [fx.cfId]
      )
    const byKey = (await app.call("account.spend", { breakdown: "key", period: "day" })).body.result
    const keyRows = await expected("api_key_id")
    expect(byKey.rows.length).toBe(keyRows.length)
    for (const row of keyRows) expect(byKey.rows).toContainEqual({ key: row.bucket, chargeWei: row.wei, requests: row.n })
    expect(byKey.rows.find((r: { key: string }) => r.key === grant.id).requests).toBe(2)
    expect(byKey.rows.some((r: { key: string }) => r.key === key.id)).toBe(true)
    const byModel = (await app.call("account.spend", { breakdown: "model", period: "week" })).body.result
    expect(byModel).toMatchObject({ breakdown: "model", period: "week" })
    expect(byModel.rows.map((r: { model: string }) => r.model)).toEqual(expect.arrayContaining(["openai/gpt-4.1"]))
    const byDay = (await app.call("account.spend", { breakdown: "day", period: "month" })).body.result
    const day = new Date().toISOString().slice(0, 10)
    expect(byDay.rows.at(-1)).toMatchObject({ day })
    expect(byDay.totalWei).toBe(overview.result.spend.thisMonthWei)

    const keys = (await app.call("account.keys")).body.result.keys
    const listed = (await user.call("GET", "/v1/keys")).body.data
    expect(keys).toEqual(
      listed.map((k: any) => ({
        id: k.id,
        prefix: k.prefix,
        label: k.label,
        status: k.status,
        dailyLimitWei: k.dailyLimitWei,
        monthlyLimitWei: k.monthlyLimitWei,
        allowedModels: k.allowedModels,
        createdAt: k.createdAt
      }))
    )
  })

  it("refuses a read-only grant's inference (403 forbidden naming the scope) before anything is held", async () => {
    const { token } = await connect(funded(), { appName: "Reader" })
    const [before] = await fx.query("SELECT count(*)::int AS n FROM holds")
    try {
      await sdkClients(fx.baseUrl, token).openai.chat.completions.create({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "x" }] })
      throw new Error("expected a refusal")
    } catch (error) {
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(403)
      expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("forbidden")
      expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ message: NEEDS_ACT })
    }
    try {
      await sdkClients(fx.baseUrl, token).anthropic.messages.create({ model: "claude-sonnet-4.5", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      throw new Error("expected a refusal")
    } catch (error) {
      expect(error).toBeInstanceOf(Anthropic.APIError)
      expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(403)
    }
    const [after] = await fx.query("SELECT count(*)::int AS n FROM holds")
    expect(after.n).toBe(before.n)
    expect((await funded().call("GET", "/v1/account")).body.reservedWei).toBe("0")
    // Reading is its scope: its usage answers.
    expect((await makeClient(fx.baseUrl).call("GET", "/v1/usage", undefined, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
  })

  it("names an unknown tool (404) and every invalid input field under `input` (422)", async () => {
    const app = asApp((await connect(funded(), { appName: "Sloppy" })).token)
    const unknown = await app.call("account.delete_everything")
    refused(unknown, 404, "not_found")
    expect(unknown.body.error.message).toContain("account.delete_everything")
    const wrong = await app.call("account.spend", { breakdown: "vendor" })
    refused(wrong, 422, "validation_failed")
    expect(wrong.body.error.issues.map((issue: { param: string }) => issue.param).sort()).toEqual(["input.breakdown", "input.period"])
    const extra = await app.call("account.spend", { breakdown: "day", period: "day", since: "yesterday" })
    expect(extra.body.error.issues.map((issue: { param: string }) => issue.param)).toEqual(["input.since"])
    refused(await app.call("account.spend"), 422, "validation_failed")
    // A tool without input takes none: {} or nothing, never a field it would ignore.
    expect((await app.call("account.overview", {})).status).toBe(200)
    const ignored = await app.call("account.overview", { verbose: true })
    refused(ignored, 422, "validation_failed")
    expect(ignored.body.error.issues.map((issue: { param: string }) => issue.param)).toEqual(["input.verbose"])
    // A read-only grant is refused an act tool for its scope before its input is looked at.
    const caps = await app.call("account.set_budget_caps", { dailyWei: "not digits" })
    refused(caps, 403, "forbidden")
    expect(caps.body.error.message).toBe(NEEDS_ACT)
    const actor = asApp((await connect(funded(), { appName: "Actor", scopes: ["account:act"] })).token)
    const digits = await actor.call("account.set_budget_caps", { dailyWei: "12.5", monthlyWei: 7 })
    expect(digits.body.error.issues.map((issue: { param: string }) => issue.param).sort()).toEqual(["input.dailyWei", "input.monthlyWei"])
  })
})
