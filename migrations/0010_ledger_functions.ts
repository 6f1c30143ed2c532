/**
 * The ledger's request-path writes as functions (issue 10, bench:exchange): a reservation, a settlement and a release
 * each become ONE statement, so a request pays one round trip for each and the account row stays locked only while
 * the database runs the function, not across several round trips from the service. The functions keep the order of
 * locks the service used (the account row, then the hold) and the rules of services/accounts/Ledger.ts, which is
 * still their only caller. Every statement inside a function takes a fresh snapshot (READ COMMITTED), so the cap
 * sums read after the account lock see every charge committed before it.
 *
 * Times come from the caller (its Clock), never from now(): the windows and stamps are the service's.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  // outcome: reserved | no_account | duplicate | insufficient | key_daily | key_monthly | account_daily |
  // account_weekly | account_monthly. Caps are checked key first, then the account's, and the first one exceeded is
  // reported: charges in the window plus live holds, plus this amount, above the limit (up to it exactly is allowed).
  yield* sql.unsafe(`
    CREATE FUNCTION ledger_reserve(
      p_account bigint, p_request text, p_amount numeric, p_key text, p_key_daily numeric, p_key_monthly numeric,
      p_day timestamptz, p_week timestamptz, p_month timestamptz, p_at timestamptz, p_expires timestamptz
    ) RETURNS TABLE (outcome text, balance_wei numeric, reserved_wei numeric, hold_id bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      a accounts%ROWTYPE;
      key_day numeric := 0;
      key_month numeric := 0;
      key_live numeric := 0;
      acc_day numeric := 0;
      acc_week numeric := 0;
      acc_month numeric := 0;
      new_hold bigint;
    BEGIN
      SELECT * INTO a FROM accounts WHERE id = p_account FOR UPDATE;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'no_account'::text, NULL::numeric, NULL::numeric, NULL::bigint;
        RETURN;
      END IF;
      IF EXISTS (SELECT 1 FROM holds h WHERE h.request_id = p_request) THEN
        RETURN QUERY SELECT 'duplicate'::text, a.balance_wei, a.reserved_wei, NULL::bigint;
        RETURN;
      END IF;
      IF a.balance_wei - a.reserved_wei < p_amount THEN
        RETURN QUERY SELECT 'insufficient'::text, a.balance_wei, a.reserved_wei, NULL::bigint;
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
          RETURN QUERY SELECT 'key_daily'::text, a.balance_wei, a.reserved_wei, NULL::bigint;
          RETURN;
        END IF;
        IF p_key_monthly IS NOT NULL AND key_month + key_live + p_amount > p_key_monthly THEN
          RETURN QUERY SELECT 'key_monthly'::text, a.balance_wei, a.reserved_wei, NULL::bigint;
          RETURN;
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
          RETURN QUERY SELECT 'account_daily'::text, a.balance_wei, a.reserved_wei, NULL::bigint;
          RETURN;
        END IF;
        IF a.weekly_limit_wei IS NOT NULL AND acc_week + a.reserved_wei + p_amount > a.weekly_limit_wei THEN
          RETURN QUERY SELECT 'account_weekly'::text, a.balance_wei, a.reserved_wei, NULL::bigint;
          RETURN;
        END IF;
        IF a.monthly_limit_wei IS NOT NULL AND acc_month + a.reserved_wei + p_amount > a.monthly_limit_wei THEN
          RETURN QUERY SELECT 'account_monthly'::text, a.balance_wei, a.reserved_wei, NULL::bigint;
          RETURN;
        END IF;
      END IF;
      INSERT INTO holds (request_id, account_id, api_key_id, amount_wei, created_at, expires_at)
        VALUES (p_request, p_account, p_key, p_amount, p_at, p_expires)
        RETURNING id INTO new_hold;
      UPDATE accounts SET reserved_wei = accounts.reserved_wei + p_amount WHERE id = p_account;
      RETURN QUERY SELECT 'reserved'::text, a.balance_wei, a.reserved_wei + p_amount, new_hold;
    END
    $$
  `)

  // outcome: settled | already_settled | no_hold. A released hold (the sweeper's, after a long request) is still
  // charged: the work was done. A zero charge closes the hold without an entry (entries are never zero).
  yield* sql.unsafe(`
    CREATE FUNCTION ledger_settle(p_request text, p_charge numeric, p_at timestamptz)
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
        INSERT INTO ledger_entries (account_id, kind, amount_wei, balance_after_wei, reference, api_key_id, note, created_at)
          VALUES (owner, 'charge', -p_charge, new_balance, p_request, h.api_key_id, NULL, p_at);
      END IF;
      UPDATE holds SET settled_at = p_at, charged_wei = p_charge WHERE id = h.id;
      RETURN QUERY SELECT 'settled'::text, p_charge, new_balance, owner;
    END
    $$
  `)

  // outcome: released | not_live | no_hold.
  yield* sql.unsafe(`
    CREATE FUNCTION ledger_release(p_request text, p_at timestamptz)
    RETURNS TABLE (outcome text)
    LANGUAGE plpgsql AS $$
    DECLARE
      owner bigint;
      h holds%ROWTYPE;
    BEGIN
      SELECT holds.account_id INTO owner FROM holds WHERE holds.request_id = p_request;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'no_hold'::text;
        RETURN;
      END IF;
      PERFORM 1 FROM accounts WHERE id = owner FOR UPDATE;
      SELECT * INTO h FROM holds WHERE holds.request_id = p_request FOR UPDATE;
      IF h.released_at IS NOT NULL OR h.settled_at IS NOT NULL THEN
        RETURN QUERY SELECT 'not_live'::text;
        RETURN;
      END IF;
      UPDATE holds SET released_at = p_at WHERE id = h.id;
      UPDATE accounts SET reserved_wei = accounts.reserved_wei - h.amount_wei WHERE id = owner;
      RETURN QUERY SELECT 'released'::text;
    END
    $$
  `)
})
