/**
 * On-chain funding (issue 9): which account a deposit reference credits, how far the deposit watcher has scanned,
 * and deposits to a reference no account owns (recorded, never credited).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE funding_account_refs (
      account_ref text PRIMARY KEY CHECK (account_ref ~ '^0x[0-9a-f]{64}$'),
      account_id bigint NOT NULL UNIQUE REFERENCES accounts (id),
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE funding_scan_state (
      treasury text PRIMARY KEY CHECK (treasury ~ '^0x[0-9a-f]{40}$'),
      next_block numeric(78, 0) NOT NULL CHECK (next_block >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE funding_unmatched_deposits (
      tx_hash text NOT NULL,
      log_index integer NOT NULL,
      account_ref text NOT NULL,
      from_address text NOT NULL,
      amount_wei numeric(78, 0) NOT NULL,
      block_number numeric(78, 0) NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tx_hash, log_index)
    )
  `
})
