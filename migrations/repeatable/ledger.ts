/**
 * The ledger's plpgsql functions in force, in one place: what a reservation, a settlement and a release do in the
 * database. Migrations 0010, 0014 and 0019 wrote these functions in turn; their latest definitions are here, with
 * the bodies exactly as those migrations left them (same text, same indentation), so a database migrated before this
 * file existed holds byte-for-byte the same source.
 *
 * Applied by the repeatable migration "ledger" (services/platform/Migrations.ts): after the numbered migrations, the
 * service runs this text when its sha256 differs from the one recorded in `repeatable_migrations`, in one
 * transaction under the numbered migrator's lock. To change a rule, edit this text; the next start applies it. The
 * numbered migrations stay as they are (history is append-only).
 *
 * Editing rules (test/ledger-functions.test.ts checks them):
 *  - Raise `ledgerRevision` with every change of the text. A database takes a text only over an older revision (an
 *    older build restarting beside newer ones during a rolling deploy leaves the newer functions in force), and a
 *    start finding the same revision recorded with a different text fails: the text changed without its revision.
 *  - Every statement is CREATE OR REPLACE, so applying the text again is harmless. A change of a function's
 *    argument types or result columns cannot replace it in place: put `DROP FUNCTION IF EXISTS name(old types);`
 *    before its CREATE. A function taken out of this text must be dropped here too: the database's `ledger_*`
 *    functions are exactly the ones defined here.
 *  - The outcomes a function answers (its `'name'::text` literals) are the lists in
 *    domain/accounts/ledgerOutcomes.ts, which the repository decodes them with.
 *  - Times come from the caller (its Clock), never from now(): the windows and stamps are the service's.
 */
/** The text's revision: raise it with every change below. */
export const ledgerRevision = 1

export const ledgerFunctions = `
    -- ledger_reserve_checked: the reservation and its checks, in one statement under the account row lock (so
    -- concurrent requests of one account, or of one organization and its pools, queue and cannot overshoot).
    -- outcome: reserved | no_account | duplicate | insufficient | key_daily | key_monthly | pool_daily | pool_weekly |
    -- pool_monthly | account_daily | account_weekly | account_monthly. Checks run narrowest first: the key's caps,
    -- the pool of p_member (the CF ID that issued the key or grant, in an organization), the account's; the first
    -- cap exceeded is reported: charges in the window plus live holds, plus this amount, above the limit (up to it
    -- exactly is allowed). Answers the pool's id and name, so a refusal can name the pool. Every statement inside
    -- takes a fresh snapshot (READ COMMITTED), so the sums read after the account lock see every charge committed
    -- before it.
    CREATE OR REPLACE FUNCTION ledger_reserve_checked(
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
    $$;

    -- ledger_reserve: what the service calls. ledger_reserve_checked in a transaction that commits asynchronously
    -- (synchronous_commit off): a hold is exact while PostgreSQL runs; a crash may drop the holds of requests in
    -- flight, never a charge (settlement does not need its hold). Its outcomes are ledger_reserve_checked's; capped
    -- says whether any budget besides the balance applied.
    CREATE OR REPLACE FUNCTION ledger_reserve(
      p_account bigint, p_request text, p_amount numeric, p_key text, p_key_daily numeric, p_key_monthly numeric,
      p_day timestamptz, p_week timestamptz, p_month timestamptz, p_at timestamptz, p_expires timestamptz, p_member text
    ) RETURNS TABLE (outcome text, balance_wei numeric, reserved_wei numeric, hold_id bigint, pool_id text, pool_name text,
      capped boolean)
    LANGUAGE plpgsql AS $$
    BEGIN
      -- Local to the transaction the reservation runs in (its own, on the hot path): its commit does not wait for
      -- the WAL flush. Set in the body, not as a function SET clause, which would be undone before the commit.
      PERFORM set_config('synchronous_commit', 'off', true);
      -- capped: whether any budget besides the balance applied (a key cap, a pool, an account cap), so a replica
      -- knows when the balance alone says how much room is left.
      RETURN QUERY SELECT r.outcome, r.balance_wei, r.reserved_wei, r.hold_id, r.pool_id, r.pool_name,
        p_key_daily IS NOT NULL OR p_key_monthly IS NOT NULL OR r.pool_id IS NOT NULL OR EXISTS (
          SELECT 1 FROM accounts a WHERE a.id = p_account
            AND (a.daily_limit_wei IS NOT NULL OR a.weekly_limit_wei IS NOT NULL OR a.monthly_limit_wei IS NOT NULL))
        FROM ledger_reserve_checked(p_account, p_request, p_amount, p_key, p_key_daily, p_key_monthly,
          p_day, p_week, p_month, p_at, p_expires, p_member) r;
    END
    $$;

    -- ledger_settle_batch: many settlements in one statement (one transaction, one WAL flush). Locks every account of
    -- the batch once, in id order (as transfers do, so two batches cannot deadlock), then applies the items in the
    -- order given, answering one outcome per item:
    --   settled          charged now (hold_found says whether a live or released hold was closed);
    --   already_settled  charged before, by this request id: nothing charged again;
    --   no_hold          no hold and no account given to charge;
    --   no_account       no hold, and the account given does not exist.
    -- A released hold (the sweeper's, after a long request) is still charged: the work was done. A settlement whose
    -- hold is gone charges the account, key and spending pool it names, once: the charge's ledger entry carries the
    -- request id, and (kind, reference) is unique. A zero charge closes the hold without an entry.
    -- p_items: a JSON array of {request_id, charge (a decimal string), account_id, api_key_id, member}.
    CREATE OR REPLACE FUNCTION ledger_settle_batch(p_items jsonb, p_at timestamptz)
    RETURNS TABLE (request_id text, outcome text, hold_found boolean, charged_wei numeric, balance_wei numeric, account_id bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      i integer;
      item jsonb;
      r text;
      charge numeric;
      owner bigint;
      h holds%ROWTYPE;
      prior numeric;
      pool text;
      new_balance numeric;
      owners bigint[];
    BEGIN
      -- Each item's owner by its hold (an index lookup per item, whatever the planner thinks of the array's size;
      -- a join could scan every hold ever made), else the account it names; then all of them locked in id order.
      owners := ARRAY(
        SELECT COALESCE((SELECT hh.account_id FROM holds hh WHERE hh.request_id = x->>'request_id'), (x->>'account_id')::bigint)
          FROM jsonb_array_elements(p_items) x);
      PERFORM 1 FROM accounts a WHERE a.id = ANY (owners) ORDER BY a.id FOR UPDATE;
      FOR i IN 0 .. jsonb_array_length(p_items) - 1 LOOP
        item := p_items->i;
        r := item->>'request_id';
        charge := (item->>'charge')::numeric;
        IF charge < 0 THEN
          RAISE EXCEPTION 'a charge cannot be negative (%: %)', r, charge;
        END IF;
        SELECT * INTO h FROM holds WHERE holds.request_id = r FOR UPDATE;
        IF FOUND THEN
          IF h.settled_at IS NOT NULL THEN
            RETURN QUERY SELECT r, 'already_settled'::text, true, h.charged_wei, a.balance_wei, h.account_id
              FROM accounts a WHERE a.id = h.account_id;
            CONTINUE;
          END IF;
          UPDATE accounts
            SET balance_wei = accounts.balance_wei - charge,
                reserved_wei = accounts.reserved_wei - CASE WHEN h.released_at IS NULL THEN h.amount_wei ELSE 0 END
            WHERE id = h.account_id
            RETURNING accounts.balance_wei INTO new_balance;
          IF charge <> 0 THEN
            INSERT INTO ledger_entries (account_id, kind, amount_wei, balance_after_wei, reference, api_key_id, pool_id, note, created_at)
              VALUES (h.account_id, 'charge', -charge, new_balance, r, h.api_key_id, h.pool_id, NULL, p_at);
          END IF;
          UPDATE holds SET settled_at = p_at, charged_wei = charge WHERE id = h.id;
          RETURN QUERY SELECT r, 'settled'::text, true, charge, new_balance, h.account_id;
          CONTINUE;
        END IF;
        owner := (item->>'account_id')::bigint;
        IF owner IS NULL THEN
          RETURN QUERY SELECT r, 'no_hold'::text, false, NULL::numeric, NULL::numeric, NULL::bigint;
          CONTINUE;
        END IF;
        SELECT -e.amount_wei INTO prior FROM ledger_entries e WHERE e.kind = 'charge' AND e.reference = r;
        IF FOUND THEN
          RETURN QUERY SELECT r, 'already_settled'::text, false, prior, a.balance_wei, owner FROM accounts a WHERE a.id = owner;
          CONTINUE;
        END IF;
        pool := NULL;
        IF item->>'member' IS NOT NULL THEN
          SELECT m.pool_id INTO pool FROM spending_pool_members m JOIN spending_pools sp ON sp.id = m.pool_id
            WHERE m.account_id = owner AND m.cf_id = item->>'member' AND sp.deleted_at IS NULL;
        END IF;
        UPDATE accounts SET balance_wei = accounts.balance_wei - charge WHERE id = owner
          RETURNING accounts.balance_wei INTO new_balance;
        IF NOT FOUND THEN
          RETURN QUERY SELECT r, 'no_account'::text, false, NULL::numeric, NULL::numeric, owner;
          CONTINUE;
        END IF;
        IF charge <> 0 THEN
          INSERT INTO ledger_entries (account_id, kind, amount_wei, balance_after_wei, reference, api_key_id, pool_id, note, created_at)
            VALUES (owner, 'charge', -charge, new_balance, r, item->>'api_key_id', pool, NULL, p_at);
        END IF;
        RETURN QUERY SELECT r, 'settled'::text, false, charge, new_balance, owner;
      END LOOP;
    END
    $$;

    -- ledger_release: gives a live hold back without charging. outcome: released | not_live | no_hold.
    CREATE OR REPLACE FUNCTION ledger_release(p_request text, p_at timestamptz)
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
    $$;
`
