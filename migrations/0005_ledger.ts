/**
 * The credit ledger (issue 9): accounts' balances, append-only ledger entries, holds, spending caps.
 */
import { Effect } from "effect"

export default Effect.void
