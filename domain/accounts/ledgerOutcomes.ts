/**
 * The outcomes the ledger's database functions answer (migrations/repeatable/ledger.ts), named once: the repository
 * decodes each function's `outcome` column with these Schemas, and test/ledger-functions.test.ts fails when the SQL's
 * outcome literals differ from these lists.
 */
import { Schema } from "effect"
import { SpendingScope } from "../errors.ts"

/**
 * `ledger_reserve` (through `ledger_reserve_checked`): the hold made, or why not. A cap exceeded answers its scope,
 * as the error table names it (key_daily ... account_monthly).
 */
export const RESERVE_OUTCOMES = ["reserved", "no_account", "duplicate", "insufficient", ...SpendingScope.literals] as const
export const ReserveOutcome = Schema.Literal(...RESERVE_OUTCOMES)
export type ReserveOutcome = typeof ReserveOutcome.Type

/** `ledger_settle_batch`, per item. */
export const SETTLE_OUTCOMES = ["settled", "already_settled", "no_hold", "no_account"] as const
export const SettleOutcome = Schema.Literal(...SETTLE_OUTCOMES)
export type SettleOutcome = typeof SettleOutcome.Type

/** `ledger_release`. */
export const RELEASE_OUTCOMES = ["released", "not_live", "no_hold"] as const
export const ReleaseOutcome = Schema.Literal(...RELEASE_OUTCOMES)
export type ReleaseOutcome = typeof ReleaseOutcome.Type

/**
 * The outcome literals each function of the ledger's SQL writes itself. `ledger_reserve` writes none: it answers
 * `ledger_reserve_checked`'s outcome as it is.
 */
export const LEDGER_FUNCTION_OUTCOMES: Readonly<Record<string, ReadonlyArray<string>>> = {
  ledger_reserve_checked: RESERVE_OUTCOMES,
  ledger_reserve: [],
  ledger_settle_batch: SETTLE_OUTCOMES,
  ledger_release: RELEASE_OUTCOMES
}
