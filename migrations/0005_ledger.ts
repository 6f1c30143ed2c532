/**
 * The credit ledger (issue 9): accounts' balances, append-only ledger entries, holds, spending caps.
 * Extends the `accounts` table of 0004_identity; services/accounts/Ledger.ts is the only writer of these columns.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // numeric(78,0): every uint256 fits. The balance may go negative (a charge above its hold); reserved never does.
  yield* sql`
    ALTER TABLE accounts
      ADD COLUMN balance_wei numeric(78, 0) NOT NULL DEFAULT 0,
      ADD COLUMN reserved_wei numeric(78, 0) NOT NULL DEFAULT 0 CHECK (reserved_wei >= 0),
      ADD COLUMN daily_limit_wei numeric(78, 0) CHECK (daily_limit_wei > 0),
      ADD COLUMN weekly_limit_wei numeric(78, 0) CHECK (weekly_limit_wei > 0),
      ADD COLUMN monthly_limit_wei numeric(78, 0) CHECK (monthly_limit_wei > 0)
  `
  yield* sql`
    CREATE TABLE ledger_entries (
      id bigserial PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES accounts (id),
      kind text NOT NULL CHECK (kind IN ('grant', 'deposit', 'withdrawal', 'withdrawal_refund', 'charge', 'adjustment')),
      amount_wei numeric(78, 0) NOT NULL CHECK (amount_wei <> 0),
      balance_after_wei numeric(78, 0) NOT NULL,
      reference text CHECK (length(reference) BETWEEN 1 AND 200),
      api_key_id text,
      note text CHECK (length(note) <= 500),
      created_at timestamptz NOT NULL DEFAULT now(),
      -- Credits add, debits subtract; an adjustment goes either way.
      CHECK (CASE kind
        WHEN 'grant' THEN amount_wei > 0
        WHEN 'deposit' THEN amount_wei > 0
        WHEN 'withdrawal_refund' THEN amount_wei > 0
        WHEN 'withdrawal' THEN amount_wei < 0
        WHEN 'charge' THEN amount_wei < 0
        ELSE true END),
      CHECK (kind NOT IN ('deposit', 'withdrawal', 'withdrawal_refund', 'charge') OR reference IS NOT NULL),
      CHECK (api_key_id IS NULL OR kind = 'charge')
    )
  `
  // The idempotency key: a deposit's txHash:logIndex, a charge's request id, a withdrawal's id is recorded once.
  yield* sql`CREATE UNIQUE INDEX ledger_entries_reference ON ledger_entries (kind, reference) WHERE reference IS NOT NULL`
  yield* sql`CREATE INDEX ledger_entries_account ON ledger_entries (account_id, id DESC)`
  // Cap windows sum an account's (or a key's) charges since a UTC instant.
  yield* sql`CREATE INDEX ledger_entries_account_charges ON ledger_entries (account_id, created_at) WHERE kind = 'charge'`
  yield* sql`
    CREATE INDEX ledger_entries_key_charges ON ledger_entries (api_key_id, created_at)
    WHERE kind = 'charge' AND api_key_id IS NOT NULL
  `
  yield* sql`CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION forbid_mutation()`

  yield* sql`
    CREATE TABLE holds (
      id bigserial PRIMARY KEY,
      request_id text NOT NULL UNIQUE CHECK (length(request_id) BETWEEN 1 AND 200),
      account_id bigint NOT NULL REFERENCES accounts (id),
      api_key_id text,
      amount_wei numeric(78, 0) NOT NULL CHECK (amount_wei > 0),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
      released_at timestamptz,
      settled_at timestamptz,
      charged_wei numeric(78, 0) CHECK (charged_wei >= 0),
      CHECK ((settled_at IS NULL) = (charged_wei IS NULL))
    )
  `
  // A live hold is neither released nor settled; the sweeper looks them up by expiry, the key caps by key.
  yield* sql`CREATE INDEX holds_live_expiry ON holds (expires_at) WHERE released_at IS NULL AND settled_at IS NULL`
  yield* sql`
    CREATE INDEX holds_live_key ON holds (api_key_id)
    WHERE released_at IS NULL AND settled_at IS NULL AND api_key_id IS NOT NULL
  `
  yield* sql`CREATE INDEX holds_account ON holds (account_id)`
  // Holds change state (released, settled) but are never removed: they are the audit trail of every reservation.
  yield* sql`CREATE TRIGGER holds_never_deleted BEFORE DELETE ON holds FOR EACH ROW EXECUTE FUNCTION forbid_mutation()`
})
