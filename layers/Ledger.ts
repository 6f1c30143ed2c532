/**
 * The credit ledger (issue 9): balances, holds, caps.
 */
import { Layer } from "effect"

export const LedgerLive = Layer.empty
