/**
 * Accounts: identity (sign-in, sessions, signed requests) and the credit ledger, composed for the handlers.
 */
import { Layer } from "effect"
import { IdentityLive } from "./Identity.ts"
import { LedgerLive } from "./Ledger.ts"

export const AccountsLive = Layer.mergeAll(IdentityLive, LedgerLive)
