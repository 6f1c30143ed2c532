/**
 * Withdrawals (issue 9): one row per withdrawal, written in the transaction that debits the ledger, so a withdrawal
 * whose confirmation is still pending is known after a restart and the deposit watcher can settle it: confirmed once
 * the treasury paid it, refunded once it provably never can (reverted, or its relayer nonce went to another
 * transaction). `raw_tx` is the signed transaction, recorded before it is sent, so it can be sent again if a node
 * forgot it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE funding_withdrawals (
      id text PRIMARY KEY CHECK (id ~ '^wd_[0-9a-f]{24}$'),
      seq bigserial NOT NULL UNIQUE,
      account_id bigint NOT NULL REFERENCES accounts (id),
      to_address text NOT NULL CHECK (to_address ~ '^0x[0-9a-f]{40}$'),
      amount_wei numeric(78, 0) NOT NULL CHECK (amount_wei > 0),
      withdrawal_ref text NOT NULL UNIQUE CHECK (withdrawal_ref ~ '^0x[0-9a-f]{64}$'),
      status text NOT NULL CHECK (status IN ('sending', 'pending', 'confirmed', 'refunded')),
      tx_hash text CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
      nonce numeric(78, 0),
      raw_tx text,
      failure_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (status = 'sending' OR status = 'refunded' OR (tx_hash IS NOT NULL AND nonce IS NOT NULL))
    )
  `
  yield* sql`CREATE INDEX funding_withdrawals_account ON funding_withdrawals (account_id, seq DESC)`
  yield* sql`CREATE INDEX funding_withdrawals_open ON funding_withdrawals (status) WHERE status IN ('sending', 'pending')`
})
