/**
 * Spending pools (issue 12 item 4): named groups of an organization's members with their own daily, weekly and monthly
 * caps. A member is in at most one pool of an organization, so a request counts against exactly one pool (its
 * issuer's). Holds and charges record the pool they counted against, so its windows sum what they held and charged
 * then, even if the member moved since. `ledger_reserve` gains the pool's caps, checked under the same account lock
 * as the others: concurrent requests of one organization queue on its account row, so a pool cannot overshoot.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE spending_pools (
      id text PRIMARY KEY CHECK (id ~ '^pool_[0-9a-f]{16}$'),
      account_id bigint NOT NULL REFERENCES organizations (account_id),
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
      daily_limit_wei numeric(78,0) CHECK (daily_limit_wei > 0),
      weekly_limit_wei numeric(78,0) CHECK (weekly_limit_wei > 0),
      monthly_limit_wei numeric(78,0) CHECK (monthly_limit_wei > 0),
      created_by_cf_id text NOT NULL REFERENCES identities (cf_id),
      created_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz,
      UNIQUE (id, account_id)
    )
  `
  // Names are unique among an organization's live pools, whatever their case.
  yield* sql`CREATE UNIQUE INDEX spending_pools_name ON spending_pools (account_id, lower(name)) WHERE deleted_at IS NULL`
  // One pool per member and organization; leaving the organization (its membership row deleted) leaves the pool too.
  yield* sql`
    CREATE TABLE spending_pool_members (
      account_id bigint NOT NULL,
      cf_id text NOT NULL,
      pool_id text NOT NULL,
      added_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, cf_id),
      FOREIGN KEY (pool_id, account_id) REFERENCES spending_pools (id, account_id),
      FOREIGN KEY (account_id, cf_id) REFERENCES organization_members (account_id, cf_id) ON DELETE CASCADE
    )
  `
  yield* sql`CREATE INDEX spending_pool_members_pool ON spending_pool_members (pool_id)`

  yield* sql`ALTER TABLE holds ADD COLUMN pool_id text`
  yield* sql`CREATE INDEX holds_live_pool ON holds (pool_id) WHERE released_at IS NULL AND settled_at IS NULL AND pool_id IS NOT NULL`
  yield* sql`ALTER TABLE ledger_entries ADD COLUMN pool_id text CHECK (pool_id IS NULL OR kind = 'charge')`
  yield* sql`
    CREATE INDEX ledger_entries_pool_charges ON ledger_entries (pool_id, created_at)
    WHERE kind = 'charge' AND pool_id IS NOT NULL
  `

  // The reservation of migration 0010 with the spender's pool: `p_member` is the CF ID that issued the key (or grant)
  // the request came with. Checks run narrowest first: the key's caps, the pool's, the account's. Besides the outcome
  // it answers the pool's id and name, so a refusal can name the pool.
  yield* sql.unsafe(`DROP FUNCTION ledger_reserve(bigint, text, numeric, text, numeric, numeric, timestamptz, timestamptz, timestamptz, timestamptz, timestamptz)`)
  yield* sql.unsafe(`
    CREATE FUNCTION ledger_reserve(
      p_account bigint, p_request text, p_amount numeric, p_key text, p_key_daily numeric, p_key_monthly numeric,
      p_day timestamptz, p_week timestamptz, p_month timestamptz, p_at timestamptz, p_expires timestamptz, p_member text
    ) RETURNS TABLE (outcome text, balance_wei numeric, reserved_wei numeric, hold_id bigint, pool_id text, pool_name text)
    LANGUAGE plpgsql AS $$
    DECLARE
      a accounts%ROWTYPE;
      p spending_pools%ROWTYPE;
      key_day numeric := 0;
      key_month numeric := 0;
      key_live numeric := 0;
      pool_day numeric := 0;
      pool_week numeric := 0;
      pool_month numeric := 0;
      pool_live numeric := 0;
      acc_day numeric := 0;
      acc_week numeric := 0;
      acc_month numeric := 0;
      new_hold bigint;
    BEGIN
      SELECT * INTO a FROM accounts WHERE id = p_account FOR UPDATE;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'no_account'::text, NULL::numeric, NULL::numeric, NULL::bigint, NULL::text, NULL::text;
        RETURN;
      END IF;
      IF EXISTS (SELECT 1 FROM holds h WHERE h.request_id = p_request) THEN
        RETURN QUERY SELECT 'duplicate'::text, a.balance_wei, a.reserved_wei, NULL::bigint, NULL::text, NULL::text;
        RETURN;
      END IF;
      IF a.balance_wei - a.reserved_wei < p_amount THEN
        RETURN QUERY SELECT 'insufficient'::text, a.balance_wei, a.reserved_wei, NULL::bigint, NULL::text, NULL::text;
        RETURN;
      END IF;
      IF p_key IS NOT NULL AND (p_key_daily IS NOT NULL OR p_key_monthly IS NOT NULL) THEN
        SELECT COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= p_day), 0), COALESCE(-SUM(e.amount_wei), 0)
          INTO key_day, key_month
          FROM ledger_entries e
          WHERE e.api_key_id = p_key AND e.kind = 'charge' AND e.created_at >= LEAST(p_day, p_month);
        SELECT COALESCE(SUM(h.amount_wei), 0) INTO key_live
          FROM holds h WHERE h.api_key_id = p_key AND h.released_at IS NULL AND h.settled_at IS NULL;
        IF p_key_daily IS NOT NULL AND key_day + key_live + p_amount > p_key_daily THEN
          RETURN QUERY SELECT 'key_daily'::text, a.balance_wei, a.reserved_wei, NULL::bigint, NULL::text, NULL::text;
          RETURN;
        END IF;
        IF p_key_monthly IS NOT NULL AND key_month + key_live + p_amount > p_key_monthly THEN
          RETURN QUERY SELECT 'key_monthly'::text, a.balance_wei, a.reserved_wei, NULL::bigint, NULL::text, NULL::text;
          RETURN;
        END IF;
      END IF;
      IF p_member IS NOT NULL AND a.kind = 'organization' THEN
        SELECT sp.* INTO p FROM spending_pool_members m JOIN spending_pools sp ON sp.id = m.pool_id
          WHERE m.account_id = p_account AND m.cf_id = p_member AND sp.deleted_at IS NULL;
        IF FOUND AND (p.daily_limit_wei IS NOT NULL OR p.weekly_limit_wei IS NOT NULL OR p.monthly_limit_wei IS NOT NULL) THEN
          SELECT COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= p_day), 0),
                 COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= p_week), 0),
                 COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= p_month), 0)
            INTO pool_day, pool_week, pool_month
            FROM ledger_entries e
            WHERE e.pool_id = p.id AND e.kind = 'charge' AND e.created_at >= LEAST(p_week, p_month);
          SELECT COALESCE(SUM(h.amount_wei), 0) INTO pool_live
            FROM holds h WHERE h.pool_id = p.id AND h.released_at IS NULL AND h.settled_at IS NULL;
          IF p.daily_limit_wei IS NOT NULL AND pool_day + pool_live + p_amount > p.daily_limit_wei THEN
            RETURN QUERY SELECT 'pool_daily'::text, a.balance_wei, a.reserved_wei, NULL::bigint, p.id, p.name;
            RETURN;
          END IF;
          IF p.weekly_limit_wei IS NOT NULL AND pool_week + pool_live + p_amount > p.weekly_limit_wei THEN
            RETURN QUERY SELECT 'pool_weekly'::text, a.balance_wei, a.reserved_wei, NULL::bigint, p.id, p.name;
            RETURN;
          END IF;
          IF p.monthly_limit_wei IS NOT NULL AND pool_month + pool_live + p_amount > p.monthly_limit_wei THEN
            RETURN QUERY SELECT 'pool_monthly'::text, a.balance_wei, a.reserved_wei, NULL::bigint, p.id, p.name;
            RETURN;
          END IF;
        END IF;
      END IF;
      IF a.daily_limit_wei IS NOT NULL OR a.weekly_limit_wei IS NOT NULL OR a.monthly_limit_wei IS NOT NULL THEN
        -- Every live hold of the account will be charged at or after now, inside the current windows.
        SELECT COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= p_day), 0),
               COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= p_week), 0),
               COALESCE(-SUM(e.amount_wei) FILTER (WHERE e.created_at >= p_month), 0)
          INTO acc_day, acc_week, acc_month
          FROM ledger_entries e
          WHERE e.account_id = p_account AND e.kind = 'charge' AND e.created_at >= LEAST(p_week, p_month);
        IF a.daily_limit_wei IS NOT NULL AND acc_day + a.reserved_wei + p_amount > a.daily_limit_wei THEN
          RETURN QUERY SELECT 'account_daily'::text, a.balance_wei, a.reserved_wei, NULL::bigint, NULL::text, NULL::text;
          RETURN;
        END IF;
        IF a.weekly_limit_wei IS NOT NULL AND acc_week + a.reserved_wei + p_amount > a.weekly_limit_wei THEN
          RETURN QUERY SELECT 'account_weekly'::text, a.balance_wei, a.reserved_wei, NULL::bigint, NULL::text, NULL::text;
          RETURN;
        END IF;
        IF a.monthly_limit_wei IS NOT NULL AND acc_month + a.reserved_wei + p_amount > a.monthly_limit_wei THEN
          RETURN QUERY SELECT 'account_monthly'::text, a.balance_wei, a.reserved_wei, NULL::bigint, NULL::text, NULL::text;
          RETURN;
        END IF;
      END IF;
      INSERT INTO holds (request_id, account_id, api_key_id, pool_id, amount_wei, created_at, expires_at)
        VALUES (p_request, p_account, p_key, p.id, p_amount, p_at, p_expires)
        RETURNING id INTO new_hold;
      UPDATE accounts SET reserved_wei = accounts.reserved_wei + p_amount WHERE id = p_account;
      RETURN QUERY SELECT 'reserved'::text, a.balance_wei, a.reserved_wei + p_amount, new_hold, p.id, p.name;
    END
    $$
  `)

  // The settlement of migration 0010, recording the hold's pool on the charge.
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION ledger_settle(p_request text, p_charge numeric, p_at timestamptz)
    RETURNS TABLE (outcome text, charged_wei numeric, balance_wei numeric, account_id bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      owner bigint;
      h holds%ROWTYPE;
      new_balance numeric;
    BEGIN
      SELECT holds.account_id INTO owner FROM holds WHERE holds.request_id = p_request;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'no_hold'::text, NULL::numeric, NULL::numeric, NULL::bigint;
        RETURN;
      END IF;
      PERFORM 1 FROM accounts WHERE id = owner FOR UPDATE;
      SELECT * INTO h FROM holds WHERE holds.request_id = p_request FOR UPDATE;
      IF h.settled_at IS NOT NULL THEN
        RETURN QUERY SELECT 'already_settled'::text, h.charged_wei, accounts.balance_wei, owner FROM accounts WHERE id = owner;
        RETURN;
      END IF;
      UPDATE accounts
        SET balance_wei = accounts.balance_wei - p_charge,
            reserved_wei = accounts.reserved_wei - CASE WHEN h.released_at IS NULL THEN h.amount_wei ELSE 0 END
        WHERE id = owner
        RETURNING accounts.balance_wei INTO new_balance;
      IF p_charge <> 0 THEN
        INSERT INTO ledger_entries (account_id, kind, amount_wei, balance_after_wei, reference, api_key_id, pool_id, note, created_at)
          VALUES (owner, 'charge', -p_charge, new_balance, p_request, h.api_key_id, h.pool_id, NULL, p_at);
      END IF;
      UPDATE holds SET settled_at = p_at, charged_wei = p_charge WHERE id = h.id;
      RETURN QUERY SELECT 'settled'::text, p_charge, new_balance, owner;
    END
    $$
  `)
})
