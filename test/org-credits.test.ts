/**
 * Credit between members and organizations (docs/decisions.md, "transfers") over real sockets and PostgreSQL: funding
 * lands on the personal account (SPEC "Organization rules"), a member moves credit into the organization, whose keys'
 * requests are then paid from it; the Owner moves what is available back out. Each move is one transaction: two
 * entries with one reference, a short balance refused with nothing moved, concurrent moves never overdraw.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ExchangeFixture, ONE_CREDIT, sdkClients, startExchangeFixture } from "./support/exchangeServer.ts"
import { makeTeam, type TeamUser, walletUsers } from "./support/orgTeam.ts"

let fx: ExchangeFixture
let newUser: ReturnType<typeof walletUsers>

const balances = async (user: TeamUser, orgId: string) => {
  await user.call("POST", "/v1/orgs/context", { orgId: null })
  const personal = (await user.call("GET", "/v1/account")).body.balanceWei as string
  await user.call("POST", "/v1/orgs/context", { orgId })
  const organization = (await user.call("GET", "/v1/account")).body.balanceWei as string
  return { personal: BigInt(personal), organization: BigInt(organization) }
}

/** An owner, an admin and a member (each with 10 personal credits) in a new organization. */
const team = async () => {
  const owner = await newUser(10n * ONE_CREDIT)
  const admin = await newUser(10n * ONE_CREDIT)
  const member = await newUser(10n * ONE_CREDIT)
  return { owner, admin, member, orgId: await makeTeam(fx.query, owner, admin, member, "Credit team") }
}

beforeAll(async () => {
  fx = await startExchangeFixture()
  newUser = walletUsers(fx.baseUrl, "198.51.100")
}, 120_000)

afterAll(async () => {
  await fx?.close()
})

describe("moving credit into an organization", () => {
  it("moves a member's personal credit in, in one transaction of two entries with one reference, and pays the organization's requests from it", async () => {
    const { member, admin, orgId } = await team()
    const moved = await member.call("POST", `/v1/orgs/${orgId}/credits`, { amountWei: (4n * ONE_CREDIT).toString() })
    expect(moved.status, JSON.stringify(moved.body)).toBe(200)
    expect(moved.body).toMatchObject({
      amountWei: (4n * ONE_CREDIT).toString(),
      personalBalanceWei: (6n * ONE_CREDIT).toString(),
      organizationBalanceWei: (4n * ONE_CREDIT).toString()
    })
    expect(moved.body.transferId).toMatch(/^trf_[0-9a-f]{24}$/)
    const entries = await fx.query(
      "SELECT kind, amount_wei::text AS amount, reference FROM ledger_entries WHERE reference = $1 ORDER BY kind",
      [moved.body.transferId]
    )
    expect(entries).toEqual([
      { kind: "transfer_in", amount: (4n * ONE_CREDIT).toString(), reference: moved.body.transferId },
      { kind: "transfer_out", amount: (-4n * ONE_CREDIT).toString(), reference: moved.body.transferId }
    ])
    // The member's ledger shows the move out.
    await member.call("POST", "/v1/orgs/context", { orgId: null })
    expect((await member.call("GET", "/v1/account/ledger")).body.data[0]).toMatchObject({ kind: "transfer_out", amountWei: (-4n * ONE_CREDIT).toString() })

    // A key issued in the organization spends the organization's balance, never the issuer's.
    await admin.call("POST", "/v1/orgs/context", { orgId })
    const key = (await admin.call("POST", "/v1/keys", { label: "team" })).body.secret as string
    const before = await balances(admin, orgId)
    await sdkClients(fx.baseUrl, key).openai.chat.completions.create({ model: "openai/gpt-4.1", messages: [{ role: "user", content: "Hello" }] })
    const after = await balances(admin, orgId)
    expect(after.personal).toBe(before.personal)
    expect(after.organization).toBeLessThan(before.organization)
  })

  it("refuses a move the personal balance cannot cover with 402, moving nothing; of two concurrent moves that together overdraw, one lands", async () => {
    const { member, orgId } = await team()
    const refused = await member.call("POST", `/v1/orgs/${orgId}/credits`, { amountWei: (11n * ONE_CREDIT).toString() })
    expect(refused.status).toBe(402)
    expect(refused.body.error.code).toBe("insufficient_balance")
    expect(await balances(member, orgId)).toEqual({ personal: 10n * ONE_CREDIT, organization: 0n })

    const both = await Promise.all([1, 2].map(() => member.call("POST", `/v1/orgs/${orgId}/credits`, { amountWei: (6n * ONE_CREDIT).toString() })))
    expect(both.map((answer) => answer.status).sort()).toEqual([200, 402])
    expect(await balances(member, orgId)).toEqual({ personal: 4n * ONE_CREDIT, organization: 6n * ONE_CREDIT })
  })

  it("refuses outsiders, bad amounts, and moving credit out to anyone but the Owner", async () => {
    const { owner, admin, member, orgId } = await team()
    const outsider = await newUser(ONE_CREDIT)
    expect((await outsider.call("POST", `/v1/orgs/${orgId}/credits`, { amountWei: "1" })).status).toBe(404)
    const bad = await member.call("POST", `/v1/orgs/${orgId}/credits`, { amountWei: "0" })
    expect(bad.status).toBe(422)
    expect(bad.body.error.issues.map((i: any) => i.param)).toEqual(["amountWei"])

    expect((await member.call("POST", `/v1/orgs/${orgId}/credits`, { amountWei: (3n * ONE_CREDIT).toString() })).status).toBe(200)
    for (const [user, role] of [[member, "member"], [admin, "admin"]] as const) {
      const answer = await user.call("POST", `/v1/orgs/${orgId}/credits/withdraw`, { amountWei: "1" })
      expect(answer.status).toBe(403)
      expect(answer.body.error).toMatchObject({ code: "org_role_required", details: { minimumRole: "owner", actualRole: role } })
    }
    // The Owner takes everything back out, after which (and once the others left) the organization can be deleted.
    expect((await owner.call("POST", `/v1/orgs/${orgId}/credits/withdraw`, { amountWei: (4n * ONE_CREDIT).toString() })).status).toBe(402)
    const out = await owner.call("POST", `/v1/orgs/${orgId}/credits/withdraw`, { amountWei: (3n * ONE_CREDIT).toString() })
    expect(out.status, JSON.stringify(out.body)).toBe(200)
    expect(out.body).toMatchObject({ personalBalanceWei: (13n * ONE_CREDIT).toString(), organizationBalanceWei: "0" })
    await owner.call("DELETE", `/v1/orgs/${orgId}/members/${admin.cfId}`)
    await owner.call("DELETE", `/v1/orgs/${orgId}/members/${member.cfId}`)
    expect((await owner.call("DELETE", `/v1/orgs/${orgId}`)).status).toBe(200)
  })
})
