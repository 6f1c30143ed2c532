/**
 * Accounts: identity (sign-in, sessions, signed requests), the credit ledger and API keys, composed for the handlers.
 */
import { Layer } from "effect"
import { IdentityLive } from "./Identity.ts"
import { KeysLive } from "./Keys.ts"
import { LedgerLive } from "./Ledger.ts"

export const AccountsLive = KeysLive.pipe(Layer.provideMerge(Layer.mergeAll(IdentityLive, LedgerLive)))
