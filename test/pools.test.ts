/**
 * Spending pools (issue 12 item 4) over real sockets, PostgreSQL and the vendor simulator: Owners and Admins create,
 * edit and delete pools and manage who is in them, every member sees them (SPEC "Organization rules"); a pool's caps
 * are checked at reservation like the key's and the account's, and a refusal names the pool (`details.scope`,
 * `details.pool`); concurrent requests never carry a pool past its cap; leaving the organization leaves the pool.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeClient } from "./support/accounts.ts"
import { type ExchangeFixture, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"
import { grantCredits, makeTeam, refusedFor, type TeamUser, walletUsers } from "./support/orgTeam.ts"

let fx: ExchangeFixture
let newUser: ReturnType<typeof walletUsers>

/** An organization with an owner, an admin and a member, funded by an operator grant to the organization's id. */
const team = async (credits = 100n) => {
  const owner = await newUser()
  const admin = await newUser()
  const member = await newUser()
  const orgId = await makeTeam(fx.query, owner, admin, member, "Pool team")
  expect((await grantCredits(fx.baseUrl, orgId, credits * ONE_CREDIT)).cfId).toBe(owner.cfId)
  return { owner, admin, member, orgId }
}

/** A key issued by `user` in the organization's context: it spends the organization's account. */
const orgKey = async (user: TeamUser, orgId: string) => {
  expect((await user.call("POST", "/v1/orgs/context", { orgId })).status).toBe(200)
  const issued = await user.call("POST", "/v1/keys", { label: "team" })
  expect(issued.status, JSON.stringify(issued.body)).toBe(201)
  return sdkClients(fx.baseUrl, issued.body.secret as string).openai
}

const ask = (client: OpenAI) =>
  client.chat.completions.create({ model: "openai/gpt-4.1", max_tokens: 16, messages: [{ role: "user", content: "Say something about pools" }] })

/** The refusal a request gets, or "ok". */
const outcome = async (client: OpenAI): Promise<any> => {
  try {
    await ask(client)
    return "ok"
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status, error: (error.error as any) }
    throw error
  }
}

const liveHolds = async (orgId: string) =>
  (await fx.query(
    `SELECT count(*)::int AS n FROM holds h JOIN organizations o ON o.account_id = h.account_id
     WHERE o.id = $1 AND h.released_at IS NULL AND h.settled_at IS NULL`,
    [orgId]
  ))[0].n as number

beforeAll(async () => {
  fx = await startExchangeFixture()
  newUser = walletUsers(fx.baseUrl, "198.51.100")
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

describe("managing pools", () => {
  it("lets Owners and Admins create, edit and delete pools and manage members; Members see them and are refused the rest", async () => {
    const { owner, admin, member, orgId } = await team()
    refusedFor(await member.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Research" }), "admin", "member")

    const created = await admin.call("POST", `/v1/orgs/${orgId}/pools`, { name: " Research ", dailyWei: "5000", monthlyWei: 90000 })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const pool = created.body
    expect(pool).toMatchObject({
      name: "Research",
      caps: { dailyWei: "5000", weeklyWei: null, monthlyWei: "90000" },
      used: { dailyWei: "0", weeklyWei: "0", monthlyWei: "0" },
      members: []
    })
    expect(pool.id).toMatch(/^pool_[0-9a-f]{16}$/)

    // Names are unique among the organization's live pools, whatever the case.
    expect((await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "research" })).status).toBe(409)
    // Bad caps are named.
    const bad = await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Ops", dailyWei: "0", weeklyWei: "-5" })
    expect(bad.status).toBe(422)
    expect(bad.body.error.issues.map((i: any) => i.param).sort()).toEqual(["dailyWei", "weeklyWei"])

    // Every member sees the pools.
    const listed = await member.call("GET", `/v1/orgs/${orgId}/pools`)
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((p: any) => p.id)).toEqual([pool.id])
    expect((await member.call("GET", `/v1/orgs/${orgId}/pools/${pool.id}`)).body.name).toBe("Research")

    // Members may not edit, add, remove or delete.
    refusedFor(await member.call("PATCH", `/v1/orgs/${orgId}/pools/${pool.id}`, { dailyWei: null }), "admin", "member")
    refusedFor(await member.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`), "admin", "member")
    refusedFor(await member.call("DELETE", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`), "admin", "member")
    refusedFor(await member.call("DELETE", `/v1/orgs/${orgId}/pools/${pool.id}`), "admin", "member")

    // An edit keeps what it does not name and removes a cap given as null.
    const edited = await admin.call("PATCH", `/v1/orgs/${orgId}/pools/${pool.id}`, { name: "Lab", dailyWei: null, weeklyWei: "7000" })
    expect(edited.status, JSON.stringify(edited.body)).toBe(200)
    expect(edited.body).toMatchObject({ name: "Lab", caps: { dailyWei: null, weeklyWei: "7000", monthlyWei: "90000" } })

    // Members in and out; adding twice changes nothing; one pool per member.
    const added = await admin.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`)
    expect(added.status, JSON.stringify(added.body)).toBe(200)
    expect(added.body.members.map((m: any) => m.cfId)).toEqual([member.cfId])
    expect((await admin.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`)).body.members).toHaveLength(1)
    const other = await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Ops" })
    const moved = await owner.call("PUT", `/v1/orgs/${orgId}/pools/${other.body.id}/members/${member.cfId}`)
    expect(moved.status).toBe(409)
    expect(moved.body.error.message).toContain("Lab")
    // Someone outside the organization cannot be added.
    const outsider = await newUser()
    expect((await owner.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${outsider.cfId}`)).status).toBe(404)
    expect((await owner.call("DELETE", `/v1/orgs/${orgId}/pools/${other.body.id}/members/${member.cfId}`)).status).toBe(404)
    const out = await owner.call("DELETE", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`)
    expect(out.status).toBe(200)
    expect(out.body.members).toEqual([])

    // Another organization's pools are not found, and outsiders see none of this one's.
    expect((await outsider.call("GET", `/v1/orgs/${orgId}/pools`)).status).toBe(404)
    const elsewhere = await team()
    expect((await elsewhere.owner.call("GET", `/v1/orgs/${elsewhere.orgId}/pools/${pool.id}`)).status).toBe(404)

    const deleted = await owner.call("DELETE", `/v1/orgs/${orgId}/pools/${pool.id}`)
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ deleted: pool.id })
    expect((await owner.call("GET", `/v1/orgs/${orgId}/pools/${pool.id}`)).status).toBe(404)
    // The name is free again once the pool is gone.
    expect((await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Lab" })).status).toBe(201)
  })
})

describe("pool caps at reservation", () => {
  it("refuses a pool member's request the pool cannot cover, naming the pool, while others in the organization proceed", async () => {
    const { owner, admin, orgId } = await team()
    const pool = (await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Interns", dailyWei: "1" })).body
    await owner.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${admin.cfId}`)
    const adminClient = await orgKey(admin, orgId)
    const ownerClient = await orgKey(owner, orgId)

    const refused = await outcome(adminClient)
    expect(refused.status).toBe(429)
    expect(refused.error).toMatchObject({
      code: "spending_limit_reached",
      details: { scope: "pool_daily", pool: { id: pool.id, name: "Interns" } }
    })
    expect(refused.error.message).toContain("Interns")
    expect(await liveHolds(orgId)).toBe(0)
    // The owner is in no pool: the organization's balance serves them.
    expect(await outcome(ownerClient)).toBe("ok")

    // Lifting the cap lets the same key through; taking the member out of the pool does too.
    expect((await owner.call("PATCH", `/v1/orgs/${orgId}/pools/${pool.id}`, { dailyWei: null })).status).toBe(200)
    expect(await outcome(adminClient)).toBe("ok")
    const charged = await fx.query(
      `SELECT e.pool_id, -e.amount_wei AS charge FROM ledger_entries e JOIN organizations o ON o.account_id = e.account_id
       WHERE o.id = $1 AND e.kind = 'charge' ORDER BY e.id`,
      [orgId]
    )
    // The owner's charge counts against no pool, the admin's against theirs.
    expect(charged.map((row) => row.pool_id)).toEqual([null, pool.id])
    const used = (await owner.call("GET", `/v1/orgs/${orgId}/pools/${pool.id}`)).body.used
    expect(used).toEqual({ dailyWei: String(charged[1].charge), weeklyWei: String(charged[1].charge), monthlyWei: String(charged[1].charge) })

    // The weekly and monthly caps bind the same way: a cap just below what the next request holds refuses it.
    expect((await owner.call("PATCH", `/v1/orgs/${orgId}/pools/${pool.id}`, { weeklyWei: String(charged[1].charge) })).status).toBe(200)
    expect((await outcome(adminClient)).error.details).toEqual({ scope: "pool_weekly", pool: { id: pool.id, name: "Interns" } })
    await owner.call("PATCH", `/v1/orgs/${orgId}/pools/${pool.id}`, { weeklyWei: null, monthlyWei: String(charged[1].charge) })
    expect((await outcome(adminClient)).error.details.scope).toBe("pool_monthly")

    await owner.call("DELETE", `/v1/orgs/${orgId}/pools/${pool.id}/members/${admin.cfId}`)
    expect(await outcome(adminClient)).toBe("ok")
    expect(await liveHolds(orgId)).toBe(0)
  })

  it("never lets concurrent requests carry a pool past its cap", async () => {
    const { owner, admin, orgId } = await team()
    const pool = (await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Burst" })).body
    await owner.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${admin.cfId}`)
    const client = await orgKey(admin, orgId)
    // One request measures what a hold of this request is; the cap then admits about two more.
    expect(await outcome(client)).toBe("ok")
    const [hold] = await fx.query("SELECT amount_wei::text AS amount FROM holds WHERE pool_id = $1", [pool.id])
    const usedBefore = BigInt((await owner.call("GET", `/v1/orgs/${orgId}/pools/${pool.id}`)).body.used.dailyWei)
    const cap = usedBefore + 2n * BigInt(hold.amount)
    expect((await owner.call("PATCH", `/v1/orgs/${orgId}/pools/${pool.id}`, { dailyWei: cap.toString() })).status).toBe(200)

    const outcomes = await Promise.all(Array.from({ length: 12 }, () => outcome(client)))
    const refusals = outcomes.filter((o) => o !== "ok")
    expect(refusals.length).toBeGreaterThan(0)
    for (const refusal of refusals) expect(refusal.error.details.scope).toBe("pool_daily")
    const used = BigInt((await owner.call("GET", `/v1/orgs/${orgId}/pools/${pool.id}`)).body.used.dailyWei)
    expect(used).toBeLessThanOrEqual(cap)
    const [charged] = await fx.query(
      "SELECT COALESCE(-SUM(amount_wei), 0)::text AS total FROM ledger_entries WHERE pool_id = $1 AND kind = 'charge'",
      [pool.id]
    )
    expect(BigInt(charged.total)).toBe(used)
    expect(await liveHolds(orgId)).toBe(0)
  })

  it("counts a key an Admin issues for a Member against the Member's pool; the Member spends the organization's balance with it", async () => {
    const { owner, admin, member, orgId } = await team()
    const pool = (await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Members", dailyWei: "1" })).body
    await owner.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`)
    await admin.call("POST", "/v1/orgs/context", { orgId })
    // Only members of the organization can hold its keys.
    const outsider = await newUser()
    const refused = await admin.call("POST", "/v1/keys", { holderCfId: outsider.cfId })
    expect(refused.status).toBe(422)
    expect(refused.body.error.issues.map((i: any) => i.param)).toEqual(["holderCfId"])
    const issued = await admin.call("POST", "/v1/keys", { label: "for the member", holderCfId: member.cfId })
    expect(issued.status, JSON.stringify(issued.body)).toBe(201)
    expect(issued.body.key.holderCfId).toBe(member.cfId)
    const memberClient = sdkClients(fx.baseUrl, issued.body.secret as string).openai

    const capped = await outcome(memberClient)
    expect(capped.status).toBe(429)
    expect(capped.error.details).toEqual({ scope: "pool_daily", pool: { id: pool.id, name: "Members" } })

    // Out of the pool, the Member's requests are paid from the organization's balance (SPEC: every role may send them).
    await owner.call("DELETE", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`)
    const before = (await admin.call("GET", "/v1/account")).body.balanceWei as string
    expect(await outcome(memberClient)).toBe("ok")
    expect(BigInt((await admin.call("GET", "/v1/account")).body.balanceWei)).toBeLessThan(BigInt(before))

    // The Member leaves: the key they hold is revoked with their membership.
    expect((await member.call("POST", `/v1/orgs/${orgId}/leave`)).status).toBe(200)
    const gone = await outcome(memberClient)
    expect(gone.status).toBe(401)
    expect(gone.error.code).toBe("api_key_revoked")
  })

  it("refuses a key for someone else in the personal context", async () => {
    const { owner, member } = await team()
    const refused = await owner.call("POST", "/v1/keys", { holderCfId: member.cfId })
    expect(refused.status).toBe(422)
    expect(refused.body.error.issues.map((i: any) => i.param)).toEqual(["holderCfId"])
    const own = await owner.call("POST", "/v1/keys", { holderCfId: owner.cfId })
    expect(own.status).toBe(201)
    expect(own.body.key.holderCfId).toBe(owner.cfId)
  })

  it("narrows the remaining budget of /v1/usage by the holder's pool", async () => {
    const { owner, admin, orgId } = await team()
    const pool = (await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Narrow", weeklyWei: "1000000" })).body
    await owner.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${admin.cfId}`)
    await admin.call("POST", "/v1/orgs/context", { orgId })
    const secret = (await admin.call("POST", "/v1/keys", {})).body.secret as string
    const usage = async () =>
      (await makeClient(fx.baseUrl).call("GET", "/v1/usage", undefined, { headers: { authorization: `Bearer ${secret}` } })).body
    expect((await usage()).remainingWei).toBe("1000000")
    await owner.call("DELETE", `/v1/orgs/${orgId}/pools/${pool.id}/members/${admin.cfId}`)
    expect((await usage()).remainingWei).toBe((100n * ONE_CREDIT).toString())
  })

  it("takes a member who leaves the organization out of its pool in the same transaction", async () => {
    const { owner, member, orgId } = await team()
    const pool = (await owner.call("POST", `/v1/orgs/${orgId}/pools`, { name: "Leavers" })).body
    await owner.call("PUT", `/v1/orgs/${orgId}/pools/${pool.id}/members/${member.cfId}`)
    expect((await member.call("POST", `/v1/orgs/${orgId}/leave`)).status).toBe(200)
    expect((await owner.call("GET", `/v1/orgs/${orgId}/pools/${pool.id}`)).body.members).toEqual([])
  })
})
