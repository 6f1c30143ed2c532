/**
 * Accounts: identity (sign-in, sessions, signed requests, points and referrals), the credit ledger and API keys,
 * composed for the handlers; what an identity manages on its active account (keys, caps); credit moves between members and organizations; and the job that reconciles points
 * balances.
 */
import { Layer } from "effect"
import { AccountAdmin } from "../services/accounts/AccountAdmin.ts"
import { OrganizationCredits } from "../services/accounts/OrganizationCredits.ts"
import { PointsReconcilerLive } from "../services/accounts/PointsReconciler.ts"
import { IdentityLive } from "./Identity.ts"
import { KeysLive } from "./Keys.ts"
import { LedgerLive } from "./Ledger.ts"
import { whenRole } from "./Roles.ts"

// The reconciliation runs on a replica that runs the jobs role (SERVICE_ROLES).
export const AccountsLive = Layer.mergeAll(whenRole("jobs", PointsReconcilerLive), OrganizationCredits.Default, AccountAdmin.Default).pipe(
  Layer.provideMerge(KeysLive),
  Layer.provideMerge(Layer.mergeAll(IdentityLive, LedgerLive))
)
