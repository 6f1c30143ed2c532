/**
 * Organizations (issue 12 items 1-2) over a real socket and PostgreSQL: create (at most 10 owned), list, read, delete;
 * members with e-mails masked for Members; removal and leaving at once with the member's keys on the organization
 * revoked in the same transaction; the owner can neither leave nor be removed; each cell of SPEC's role table that
 * these routes cover; the active context. Invitations are not built yet: the tests admit members in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queryDatabase } from "./support/database.ts"
import { signInByEmail } from "./support/accounts.ts"
import { type AccountServer, startAccountServer } from "./support/accountServer.ts"

let srv: AccountServer
let users = 0

beforeAll(async () => {
  srv = await startAccountServer()
}, 60_000)

afterAll(async () => {
  await srv?.close()
})

interface User {
  readonly cfId: string
  readonly email: string
  readonly call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>
}

const newUser = async (name: string): Promise<User> => {
  const n = ++users
  const email = `${name}${n}@example.com`
  const ip = `198.51.100.${n}`
  const { cookie, me } = await signInByEmail(srv.client, srv.mailbox, email, ip)
  return {
    cfId: me.cf_id,
    email,
    call: async (method, path, body) => {
      const answer = await srv.client.call(method, path, body, { cookie, ip })
      return { status: answer.status, body: answer.body }
    }
  }
}

const query = (text: string, values: ReadonlyArray<unknown> = []) => queryDatabase(srv.database, text, values)

/** Admits `user` with `role` (invitations come later). */
const admit = async (orgId: string, user: User, role: "admin" | "member") => {
  await query(
    "INSERT INTO organization_members (account_id, cf_id, role) SELECT account_id, $2, $3 FROM organizations WHERE id = $1",
    [orgId, user.cfId, role]
  )
}

/** An organization with an owner, an admin and two members. */
const team = async () => {
  const owner = await newUser("owner")
  const admin = await newUser("admin")
  const member = await newUser("member")
  const other = await newUser("other")
  const created = await owner.call("POST", "/v1/orgs", { name: "  Acme  " })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const orgId = created.body.id as string
  await admit(orgId, admin, "admin")
  await admit(orgId, member, "member")
  await admit(orgId, other, "member")
  return { owner, admin, member, other, orgId }
}

const refusedFor = (answer: { status: number; body: any }, minimumRole: string, actualRole: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(403)
  expect(answer.body.error).toMatchObject({ code: "org_role_required", details: { minimumRole, actualRole } })
}

describe("creating and reading organizations", () => {
  it("creates one owned by the caller, lists and reads it, and refuses an eleventh owned one", async () => {
    const owner = await newUser("founder")
    const created = await owner.call("POST", "/v1/orgs", { name: "  First  " })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ name: "First", role: "owner", ownerCfId: owner.cfId, members: 1 })
    expect(created.body.id).toMatch(/^org_[a-z2-7]{12}$/)
    expect((await owner.call("GET", `/v1/orgs/${created.body.id}`)).body).toEqual(created.body)
    for (let i = 2; i <= 10; i++) expect((await owner.call("POST", "/v1/orgs", { name: `Org ${i}` })).status).toBe(201)
    const eleventh = await owner.call("POST", "/v1/orgs", { name: "One too many" })
    expect(eleventh.status).toBe(409)
    expect(eleventh.body.error.code).toBe("conflict")
    const listed = await owner.call("GET", "/v1/orgs")
    expect(listed.body.data.map((o: any) => o.name)).toEqual(["First", ...Array.from({ length: 9 }, (_, i) => `Org ${i + 2}`)])
    // Another user sees none of them, and reading one is 404 (never another's).
    const stranger = await newUser("stranger")
    expect((await stranger.call("GET", "/v1/orgs")).body.data).toEqual([])
    expect((await stranger.call("GET", `/v1/orgs/${created.body.id}`)).status).toBe(404)
    expect((await owner.call("POST", "/v1/orgs", { name: "" })).status).toBe(422)
  })
})

describe("members and the role table", () => {
  it("shows every role's members; Owners and Admins see e-mails, Members see them masked", async () => {
    const { owner, admin, member, other, orgId } = await team()
    const asAdmin = (await admin.call("GET", `/v1/orgs/${orgId}/members`)).body.data
    expect(asAdmin.map((m: any) => [m.role, m.email])).toEqual([
      ["owner", owner.email],
      ["admin", admin.email],
      ["member", member.email],
      ["member", other.email]
    ])
    const asMember = (await member.call("GET", `/v1/orgs/${orgId}/members`)).body.data
    const masked = (email: string) => `${email.slice(0, 2)}***${email.slice(email.indexOf("@"))}`
    expect(asMember.map((m: any) => m.email)).toEqual([masked(owner.email), masked(admin.email), member.email, masked(other.email)])
    expect((await owner.call("GET", `/v1/orgs/${orgId}`)).body.members).toBe(4)
  })

  it("lets Admins remove Members, only the Owner remove Admins, and nobody remove the Owner", async () => {
    const { owner, admin, member, other, orgId } = await team()
    refusedFor(await member.call("DELETE", `/v1/orgs/${orgId}/members/${other.cfId}`), "admin", "member")
    const secondAdmin = await newUser("admin2")
    await admit(orgId, secondAdmin, "admin")
    refusedFor(await admin.call("DELETE", `/v1/orgs/${orgId}/members/${secondAdmin.cfId}`), "owner", "admin")
    expect((await admin.call("DELETE", `/v1/orgs/${orgId}/members/${member.cfId}`)).status).toBe(200)
    for (const actor of [admin, owner]) {
      const answer = await actor.call("DELETE", `/v1/orgs/${orgId}/members/${owner.cfId}`)
      expect([answer.status, answer.body.error.code]).toEqual([409, "conflict"])
    }
    expect((await owner.call("DELETE", `/v1/orgs/${orgId}/members/${admin.cfId}`)).status).toBe(200)
    // Removed at once: the organization is gone for them.
    expect((await member.call("GET", `/v1/orgs/${orgId}`)).status).toBe(404)
    expect((await admin.call("GET", `/v1/orgs/${orgId}/members`)).status).toBe(404)
  })

  it("revokes every key a removed or leaving member issued on the organization's account, in the same transaction", async () => {
    const { owner, admin, member, orgId } = await team()
    const [{ account_id: accountId }] = await query("SELECT account_id::text FROM organizations WHERE id = $1", [orgId])
    const issue = async (user: User, id: string) =>
      query(
        "INSERT INTO api_keys (id, account_id, issued_by_cf_id, key_hash, key_prefix) VALUES ($1, $2::bigint, $3, $4, 'ct_live_x')",
        [id, accountId, user.cfId, id.replace("key_", "").padEnd(64, "0")]
      )
    await issue(member, "key_00000000000000a1")
    await issue(admin, "key_00000000000000a2")
    await issue(owner, "key_00000000000000a3")
    expect((await admin.call("DELETE", `/v1/orgs/${orgId}/members/${member.cfId}`)).status).toBe(200)
    expect((await admin.call("POST", `/v1/orgs/${orgId}/leave`)).status).toBe(200)
    const statuses = await query("SELECT id, status FROM api_keys WHERE account_id = $1::bigint ORDER BY id", [accountId])
    expect(statuses).toEqual([
      { id: "key_00000000000000a1", status: "revoked" },
      { id: "key_00000000000000a2", status: "revoked" },
      { id: "key_00000000000000a3", status: "active" }
    ])
  })

  it("lets a member leave, never the owner", async () => {
    const { owner, other, orgId } = await team()
    expect((await other.call("POST", `/v1/orgs/${orgId}/leave`)).body).toEqual({ left: orgId })
    expect((await other.call("GET", "/v1/orgs")).body.data).toEqual([])
    const refused = await owner.call("POST", `/v1/orgs/${orgId}/leave`)
    expect([refused.status, refused.body.error.code]).toEqual([409, "conflict"])
  })

  it("lets only the owner delete it, and only once every other member is gone", async () => {
    const { owner, admin, member, other, orgId } = await team()
    refusedFor(await admin.call("DELETE", `/v1/orgs/${orgId}`), "owner", "admin")
    refusedFor(await member.call("DELETE", `/v1/orgs/${orgId}`), "owner", "member")
    expect((await owner.call("DELETE", `/v1/orgs/${orgId}`)).status).toBe(409)
    for (const user of [member, other, admin]) expect((await owner.call("DELETE", `/v1/orgs/${orgId}/members/${user.cfId}`)).status).toBe(200)
    expect((await owner.call("DELETE", `/v1/orgs/${orgId}`)).body).toEqual({ deleted: orgId })
    expect((await owner.call("GET", `/v1/orgs/${orgId}`)).status).toBe(404)
    expect((await owner.call("GET", "/v1/orgs")).body.data).toEqual([])
  })
})

describe("the active context", () => {
  it("switches into an organization the caller belongs to and back to personal; another's is 404", async () => {
    const { member, orgId } = await team()
    const into = await member.call("POST", "/v1/orgs/context", { orgId })
    expect(into.body).toEqual({ type: "organization", orgId, name: "Acme", role: "member" })
    const stranger = await newUser("outsider")
    expect((await stranger.call("POST", "/v1/orgs/context", { orgId })).status).toBe(404)
    expect((await member.call("POST", "/v1/orgs/context", { orgId: null })).body).toEqual({ type: "personal" })
  })

  it("makes the session act on the organization's account, with the role's rights; funding stays personal", async () => {
    const { owner, admin, member, orgId } = await team()
    const [{ account_id: orgAccount }] = await query("SELECT account_id::text FROM organizations WHERE id = $1", [orgId])
    await query("UPDATE accounts SET daily_limit_wei = 777 WHERE id = $1::bigint", [orgAccount])
    const personalFunding = (await member.call("GET", "/v1/account/funding")).body
    expect(personalFunding.accountRef, JSON.stringify(personalFunding)).toMatch(/^0x[0-9a-f]{64}$/)
    for (const user of [admin, member]) await user.call("POST", "/v1/orgs/context", { orgId })
    // /v1/me names the context; /v1/account is the organization's.
    expect((await member.call("GET", "/v1/me")).body.active_context).toEqual({ type: "organization", org_id: orgId, name: "Acme", role: "member" })
    expect((await member.call("GET", "/v1/account")).body.limits.dailyWei).toBe("777")
    // Members cannot issue keys or set limits there; Admins can, and the key spends the organization's account.
    refusedFor(await member.call("POST", "/v1/keys", { label: "nope" }), "admin", "member")
    refusedFor(await member.call("PUT", "/v1/account/limits", { dailyWei: "5" }), "admin", "member")
    const issued = await admin.call("POST", "/v1/keys", { label: "team key" })
    expect(issued.status, JSON.stringify(issued.body)).toBe(201)
    const [key] = await query("SELECT account_id::text, issued_by_cf_id, status FROM api_keys WHERE id = $1", [issued.body.key.id])
    expect(key).toEqual({ account_id: orgAccount, issued_by_cf_id: admin.cfId, status: "active" })
    expect((await member.call("GET", "/v1/keys")).body.data.map((k: any) => k.id)).toEqual([issued.body.key.id])
    expect((await admin.call("PUT", "/v1/account/limits", { dailyWei: "1000" })).status).toBe(200)
    // Funding always acts on the personal account.
    expect((await member.call("GET", "/v1/account/funding")).body).toEqual(personalFunding)
    // The admin removed: its key on the organization is revoked at once, and its session is personal again.
    expect((await owner.call("DELETE", `/v1/orgs/${orgId}/members/${admin.cfId}`)).status).toBe(200)
    expect((await query("SELECT status FROM api_keys WHERE id = $1", [issued.body.key.id]))[0].status).toBe("revoked")
    expect((await admin.call("GET", "/v1/me")).body.active_context).toEqual({ type: "personal" })
    expect((await admin.call("GET", "/v1/account")).body.limits.dailyWei).toBeNull()
  })

  it("falls back to personal when the membership ends", async () => {
    const { admin, member, orgId } = await team()
    await member.call("POST", "/v1/orgs/context", { orgId })
    expect((await admin.call("DELETE", `/v1/orgs/${orgId}/members/${member.cfId}`)).status).toBe(200)
    const [row] = await query("SELECT active_account_id FROM identities WHERE cf_id = $1", [member.cfId])
    expect(row.active_account_id).toBeNull()
  })
})

describe("invitations", () => {
  // The link opens the console's invitation page (web/console/orgs/InvitationPage.tsx), the route the service serves.
  const tokenIn = async (to: string) => {
    for (let i = 0; i < 100; i++) {
      const mail = [...srv.mailbox.delivered].reverse().find((m) => m.to.includes(to))
      const token = mail === undefined ? undefined : /\/console\/invitations\/(cfi_[A-Za-z0-9_-]{43})/.exec(mail.raw.replace(/=\r?\n/g, ""))?.[1]
      if (token !== undefined) return token
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`no invitation mailed to ${to}`)
  }
  const page = async (token: string) => {
    const answer = await srv.client.call("GET", `/v1/invitations/${token}`)
    return { status: answer.status, body: answer.body }
  }

  it("mails a one-time link; only the invited confirmed address accepts it, once, and enters the organization", async () => {
    const owner = await newUser("inviter")
    const orgId = (await owner.call("POST", "/v1/orgs", { name: "Invitees" })).body.id
    const invitee = await newUser("invitee")
    const invited = await owner.call("POST", `/v1/orgs/${orgId}/invitations`, { email: invitee.email.toUpperCase(), role: "member" })
    expect(invited.status, JSON.stringify(invited.body)).toBe(201)
    expect(invited.body).toMatchObject({ email: invitee.email, role: "member", state: "pending" })
    const [stored] = await query("SELECT token_hash FROM organization_invitations WHERE id = $1", [invited.body.id])
    const token = await tokenIn(invitee.email)
    // Only the token's SHA-256 is stored.
    expect(stored.token_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(stored.token_hash).not.toContain(token)
    expect((await page(token)).body).toMatchObject({ state: "pending", organization: "Invitees", role: "member" })
    const someoneElse = await newUser("gatecrasher")
    const refused = await someoneElse.call("POST", "/v1/invitations/accept", { token })
    expect([refused.status, refused.body.error.code]).toEqual([403, "forbidden"])
    const accepted = await invitee.call("POST", "/v1/invitations/accept", { token })
    expect(accepted.body).toEqual({ type: "organization", orgId, name: "Invitees", role: "member" })
    expect((await owner.call("GET", `/v1/orgs/${orgId}/members`)).body.data.map((m: any) => m.cfId)).toEqual([owner.cfId, invitee.cfId])
    expect((await page(token)).body).toEqual({ state: "accepted" })
    // Reopened by the member it admitted, signed in, it leads into the organization; anyone else sees only the state.
    expect((await invitee.call("GET", `/v1/invitations/${token}`)).body).toEqual({ state: "accepted", enter: { orgId, name: "Invitees" } })
    expect((await someoneElse.call("GET", `/v1/invitations/${token}`)).body).toEqual({ state: "accepted" })
    const again = await invitee.call("POST", "/v1/invitations/accept", { token })
    expect([again.status, again.body.error.code]).toEqual([409, "invitation_already_accepted"])
    const revokeAccepted = await owner.call("POST", `/v1/orgs/${orgId}/invitations/${invited.body.id}/revoke`)
    expect([revokeAccepted.status, revokeAccepted.body.error.code]).toEqual([409, "conflict"])
    // Once they left, the link shows only its state to them too.
    expect((await invitee.call("POST", `/v1/orgs/${orgId}/leave`)).status).toBe(200)
    expect((await invitee.call("GET", `/v1/invitations/${token}`)).body).toEqual({ state: "accepted" })
  })

  it("admits exactly one of two accepts sent at once", async () => {
    const owner = await newUser("racer-owner")
    const orgId = (await owner.call("POST", "/v1/orgs", { name: "Race" })).body.id
    const invitee = await newUser("racer")
    await owner.call("POST", `/v1/orgs/${orgId}/invitations`, { email: invitee.email, role: "member" })
    const token = await tokenIn(invitee.email)
    const answers = await Promise.all([1, 2, 3].map(() => invitee.call("POST", "/v1/invitations/accept", { token })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409])
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.error.code === "invitation_already_accepted")).toBe(true)
    expect(await query("SELECT count(*)::int AS n FROM organization_members m JOIN organizations o USING (account_id) WHERE o.id = $1", [orgId])).toEqual([{ n: 2 }])
  })

  it("resend mails a new link and kills the old; revoke keeps the page readable but never acceptable", async () => {
    const owner = await newUser("resender")
    const orgId = (await owner.call("POST", "/v1/orgs", { name: "Resends" })).body.id
    const invitee = await newUser("resent")
    const invited = (await owner.call("POST", `/v1/orgs/${orgId}/invitations`, { email: invitee.email, role: "admin" })).body
    const first = await tokenIn(invitee.email)
    const resent = await owner.call("POST", `/v1/orgs/${orgId}/invitations/${invited.id}/resend`)
    expect(resent.body.state).toBe("pending")
    let second = await tokenIn(invitee.email)
    for (let i = 0; i < 50 && second === first; i++) second = await tokenIn(invitee.email)
    expect(second).not.toBe(first)
    expect((await page(first)).status).toBe(404)
    expect((await invitee.call("POST", "/v1/invitations/accept", { token: first })).status).toBe(404)
    expect((await owner.call("POST", `/v1/orgs/${orgId}/invitations/${invited.id}/revoke`)).body.state).toBe("revoked")
    expect((await page(second)).body).toEqual({ state: "revoked" })
    const refused = await invitee.call("POST", "/v1/invitations/accept", { token: second })
    expect([refused.status, refused.body.error.code]).toEqual([409, "invitation_revoked"])
  })

  it("expires after 7 days; re-inviting the address replaces the expired invitation with a new link", async () => {
    const owner = await newUser("expirer")
    const orgId = (await owner.call("POST", "/v1/orgs", { name: "Expiry" })).body.id
    const invitee = await newUser("late")
    const invited = (await owner.call("POST", `/v1/orgs/${orgId}/invitations`, { email: invitee.email, role: "member" })).body
    expect(Date.parse(invited.expiresAt) - Date.parse(invited.createdAt)).toBe(7 * 24 * 3600 * 1000)
    const token = await tokenIn(invitee.email)
    const duplicate = await owner.call("POST", `/v1/orgs/${orgId}/invitations`, { email: invitee.email, role: "member" })
    expect([duplicate.status, duplicate.body.error.code]).toEqual([409, "conflict"])
    await query("UPDATE organization_invitations SET created_at = now() - interval '8 days', expires_at = now() - interval '1 day' WHERE id = $1", [invited.id])
    expect((await page(token)).body).toEqual({ state: "expired" })
    const refused = await invitee.call("POST", "/v1/invitations/accept", { token })
    expect([refused.status, refused.body.error.code]).toEqual([409, "invitation_expired"])
    const replaced = await owner.call("POST", `/v1/orgs/${orgId}/invitations`, { email: invitee.email, role: "member" })
    expect([replaced.status, replaced.body.id, replaced.body.state]).toEqual([201, invited.id, "pending"])
    let fresh = await tokenIn(invitee.email)
    for (let i = 0; i < 50 && fresh === token; i++) fresh = await tokenIn(invitee.email)
    expect((await invitee.call("POST", "/v1/invitations/accept", { token: fresh })).status).toBe(200)
  })

  it("lets Admins invite Members and only the Owner invite Admins; Members can neither invite nor see invitations", async () => {
    const { admin, member, orgId } = await team()
    refusedFor(await admin.call("POST", `/v1/orgs/${orgId}/invitations`, { email: "someone@example.com", role: "admin" }), "owner", "admin")
    expect((await admin.call("POST", `/v1/orgs/${orgId}/invitations`, { email: "someone@example.com", role: "member" })).status).toBe(201)
    refusedFor(await member.call("POST", `/v1/orgs/${orgId}/invitations`, { email: "other@example.com", role: "member" }), "admin", "member")
    refusedFor(await member.call("GET", `/v1/orgs/${orgId}/invitations`), "admin", "member")
    expect((await admin.call("GET", `/v1/orgs/${orgId}/invitations`)).body.data.map((i: any) => i.email)).toEqual(["someone@example.com"])
    const owner = await admin.call("POST", `/v1/orgs/${orgId}/invitations`, { email: "boss@example.com", role: "owner" })
    expect(owner.status).toBe(422)
  })

  it("holds at most 50 pending invitations per organization", async () => {
    const owner = await newUser("popular")
    const orgId = (await owner.call("POST", "/v1/orgs", { name: "Crowd" })).body.id
    await query(
      `INSERT INTO organization_invitations (id, account_id, email, role, token_hash, invited_by_cf_id, expires_at)
       SELECT 'inv_' || lpad(to_hex(g), 16, '0'), o.account_id, 'guest' || g || '@example.com', 'member', lpad(to_hex(g), 64, 'a'), $2, now() + interval '7 days'
       FROM organizations o, generate_series(1, 50) g WHERE o.id = $1`,
      [orgId, owner.cfId]
    )
    const refused = await owner.call("POST", `/v1/orgs/${orgId}/invitations`, { email: "guest51@example.com", role: "member" })
    expect([refused.status, refused.body.error.code]).toEqual([409, "conflict"])
    await query("UPDATE organization_invitations SET expires_at = now() - interval '1 second' WHERE email = 'guest1@example.com'")
    expect((await owner.call("POST", `/v1/orgs/${orgId}/invitations`, { email: "guest51@example.com", role: "member" })).status).toBe(201)
  })
})
