/**
 * Accounts: identity (sign-in, sessions, signed requests, points and referrals), the credit ledger and API keys,
 * composed for the handlers; credit moves between members and organizations; and the job that reconciles points
 * balances.
 */
import { Layer } from "effect"
import { OrganizationCredits } from "../services/accounts/OrganizationCredits.ts"
import { PointsReconcilerLive } from "../services/accounts/PointsReconciler.ts"
import { IdentityLive } from "./Identity.ts"
import { KeysLive } from "./Keys.ts"
import { LedgerLive } from "./Ledger.ts"

export const AccountsLive = Layer.mergeAll(KeysLive, PointsReconcilerLive, OrganizationCredits.Default).pipe(Layer.provideMerge(Layer.mergeAll(IdentityLive, LedgerLive)))
