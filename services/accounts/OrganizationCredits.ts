/**
 * Credit between a member's personal account and an organization's (docs/decisions.md, "transfers"): funding always
 * lands on the personal account (SPEC "Organization rules") and an organization's requests are paid from its own
 * balance, so a member moves credit in, and the Owner can move what is available back out (an organization is deleted
 * only once it holds nothing). Each move is one ledger transaction (Ledger.transfer).
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { OrgId } from "../../domain/accounts/ids.ts"
import type { Action } from "../../domain/accounts/roles.ts"
import { CurrentIdentity } from "./CurrentIdentity.ts"
import { Ledger } from "./Ledger.ts"
import { Organizations } from "./Organizations.ts"

export interface TransferView {
  readonly transferId: string
  readonly amountWei: bigint
  /** The caller's personal balance after the move. */
  readonly personalBalanceWei: bigint
  readonly organizationBalanceWei: bigint
}

const transferId = () => `trf_${randomBytes(12).toString("hex")}`

export class OrganizationCredits extends Effect.Service<OrganizationCredits>()("OrganizationCredits", {
  effect: Effect.gen(function* () {
    const orgs = yield* Organizations
    const ledger = yield* Ledger

    /** Between the calling identity's personal account and the organization's, in the direction `into` says. */
    const move = (orgId: OrgId, amountWei: bigint, action: Action, into: boolean) =>
      Effect.gen(function* () {
        const { cfId, personalAccountId } = yield* CurrentIdentity
        const m = yield* orgs.authorised(orgId, action, into ? "Moving credit into the organization" : "Moving the organization's credit out")
        const id = transferId()
        const note = into ? `from ${cfId} into ${orgId}` : `from ${orgId} to ${cfId}`
        const [from, to] = into ? [personalAccountId, m.accountId] : [m.accountId, personalAccountId]
        const moved = yield* ledger.transfer(from, to, amountWei, id, note).pipe(
          // Both accounts exist (the membership and the identity say so): a missing one would be a defect.
          Effect.catchTag("NotFound", Effect.die)
        )
        return {
          transferId: id,
          amountWei,
          personalBalanceWei: into ? moved.fromBalanceWei : moved.toBalanceWei,
          organizationBalanceWei: into ? moved.toBalanceWei : moved.fromBalanceWei
        } satisfies TransferView
      })

    return {
      /** Any member moves credit from their personal account into the organization. */
      contribute: Effect.fn("OrganizationCredits.contribute")(function* (orgId: OrgId, amountWei: bigint) {
        return yield* move(orgId, amountWei, "contributeCredits", true)
      }),
      /** The Owner moves the organization's available credit to their personal account. */
      withdraw: Effect.fn("OrganizationCredits.withdraw")(function* (orgId: OrgId, amountWei: bigint) {
        return yield* move(orgId, amountWei, "withdrawOrganizationCredits", false)
      })
    } as const
  })
}) {}
