/**
 * Signed-in users and organizations for the organization suites (pools, transfers, connected apps): each user signs
 * in with a fresh wallet from an address of its own; members are admitted in the database (invitations have their own
 * suite), so a test sets up a team in a few statements.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { expect } from "vitest"
import { makeClient, signInByWallet } from "./accounts.ts"
import { MAINTAINER_TOKEN } from "./exchangeServer.ts"

export type Answer = { status: number; body: any }

export interface TeamUser {
  readonly cfId: string
  readonly call: (method: string, path: string, body?: unknown) => Promise<Answer>
}

/** A user acting through its session cookie from `ip`. */
export const asUser = (baseUrl: string, cfId: string, cookie: string, ip: string): TeamUser => ({
  cfId,
  call: async (method, path, body) => {
    const answer = await makeClient(baseUrl).call(method, path, body, { cookie, ip })
    return { status: answer.status, body: answer.body }
  }
})

/** A maker of new wallet users on `baseUrl`, each from `<ipPrefix>.<n>`; `credits` are granted by the operator route. */
export const walletUsers = (baseUrl: string, ipPrefix: string) => {
  let count = 0
  return async (credits = 0n): Promise<TeamUser> => {
    const ip = `${ipPrefix}.${++count}`
    const { cookie, me } = await signInByWallet(makeClient(baseUrl), privateKeyToAccount(generatePrivateKey()), ip)
    if (credits > 0n) await grantCredits(baseUrl, me.cf_id, credits)
    return asUser(baseUrl, me.cf_id, cookie, ip)
  }
}

/** An operator's grant of `amountWei` to a CF ID's personal account or an organization's (by its id). */
export const grantCredits = async (baseUrl: string, who: string, amountWei: bigint) => {
  const granted = await makeClient(baseUrl).call("POST", `/v1/admin/accounts/${who}/credits`, { amountWei: amountWei.toString() }, {
    headers: { authorization: `Bearer ${MAINTAINER_TOKEN}` }
  })
  expect(granted.status, JSON.stringify(granted.body)).toBe(200)
  return granted.body
}

type Query = (text: string, values?: ReadonlyArray<unknown>) => Promise<Array<any>>

/** A new organization owned by `owner`, with `admin` and `member` admitted in the database. */
export const makeTeam = async (query: Query, owner: TeamUser, admin: TeamUser, member: TeamUser, name: string) => {
  const created = await owner.call("POST", "/v1/orgs", { name })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const orgId = created.body.id as string
  for (const [user, role] of [[admin, "admin"], [member, "member"]] as const) {
    await query(
      "INSERT INTO organization_members (account_id, cf_id, role) SELECT account_id, $2, $3 FROM organizations WHERE id = $1",
      [orgId, user.cfId, role]
    )
  }
  return orgId
}

/** The 403 a role too low answers (SPEC "Organization rules"). */
export const refusedFor = (answer: Answer, minimumRole: string, actualRole: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(403)
  expect(answer.body.error).toMatchObject({ code: "org_role_required", details: { minimumRole, actualRole } })
}
