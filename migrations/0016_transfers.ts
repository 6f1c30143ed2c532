/**
 * Transfers between a member's personal account and an organization's (issue 12): SPEC sends funding to the personal
 * account and bills an organization's requests to the organization's balance, so credit must be able to move between
 * the two. A transfer is two entries with one reference, `transfer_out` (a debit) on one account and `transfer_in`
 * (a credit) on the other, written in one transaction by services/accounts/Ledger.ts.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check`
  yield* sql`
    ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check CHECK (kind IN
      ('grant', 'deposit', 'withdrawal', 'withdrawal_refund', 'charge', 'adjustment', 'transfer_in', 'transfer_out'))
  `
  yield* sql`
    ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_transfer_sign CHECK (CASE kind
      WHEN 'transfer_in' THEN amount_wei > 0 AND reference IS NOT NULL
      WHEN 'transfer_out' THEN amount_wei < 0 AND reference IS NOT NULL
      ELSE true END)
  `
})
