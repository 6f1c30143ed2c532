/**
 * The ledger's hot path as DESIGN.md section 10 decided it:
 *  - The reservation commits asynchronously (`synchronous_commit = off` for its own transaction, set from inside the
 *    function so it takes no extra round trip). A hold is exact while PostgreSQL runs; a database crash may drop the
 *    holds of requests in flight, never a charge: settlement does not need its hold.
 *  - Settlements are group-committed: `ledger_settle_batch` applies many in one statement (one transaction, one WAL
 *    flush). It locks every account of the batch once, in id order (as transfers do, so two batches cannot deadlock),
 *    then applies the items in the order given, answering one outcome per item:
 *      settled          charged now (`hold_found` says whether a live or released hold was closed);
 *      already_settled  charged before, by this request id: nothing charged again;
 *      no_hold          no hold and no account given to charge;
 *      no_account       no hold, and the account given does not exist.
 *    A settlement whose hold is gone charges the account, key and spending pool it names, once: the charge's ledger
 *    entry carries the request id, and (kind, reference) is unique.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const RESERVE_ARGS = "bigint, text, numeric, text, numeric, numeric, timestamptz, timestamptz, timestamptz, timestamptz, timestamptz, text"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`ALTER FUNCTION ledger_reserve(${RESERVE_ARGS}) RENAME TO ledger_reserve_checked`)
  yield* sql.unsafe(`
    CREATE FUNCTION ledger_reserve(
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
    $$
  `)

  // p_items: a JSON array of {request_id, charge (a decimal string), account_id, api_key_id, member}; the last three
  // are what a settlement whose hold is gone charges (account_id null: such an item answers no_hold).
  yield* sql.unsafe(`
    CREATE FUNCTION ledger_settle_batch(p_items jsonb, p_at timestamptz)
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
    $$
  `)
  // One settlement function: the single settlement is a batch of one.
  yield* sql.unsafe(`DROP FUNCTION ledger_settle(text, numeric, timestamptz)`)
})
