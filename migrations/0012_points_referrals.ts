/**
 * Points and referrals (issue 12): the append-only points ledger, whose unique keys are the frequency rules of
 * SPEC "Points earning"; referral link clicks; and who referred whom.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // `seq` orders entries for the history's cursor; `id` is SPEC's UUID. `day` is the UTC day the points were earned.
  yield* sql`
    CREATE TABLE points_ledger (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      cf_id text NOT NULL REFERENCES identities (cf_id),
      type text NOT NULL CHECK (type IN ('signup', 'referral', 'referral_welcome', 'daily_login', 'streak_bonus', 'oracle_interaction')),
      amount integer NOT NULL CHECK (amount > 0),
      source text NOT NULL CHECK (char_length(source) BETWEEN 1 AND 300),
      day date NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `
  // The frequency rules: one daily_login per day, one oracle_interaction per model per day, one referral per referred
  // identity, one streak bonus per completion day (the day is in the source) ...
  yield* sql`CREATE UNIQUE INDEX points_ledger_frequency ON points_ledger (cf_id, type, source)`
  // ... and one signup bonus and one welcome per account, whatever their source says.
  yield* sql`
    CREATE UNIQUE INDEX points_ledger_once ON points_ledger (cf_id, type) WHERE type IN ('signup', 'referral_welcome')
  `
  // Totals, streaks and the day's oracle interactions of one identity; the history newest first.
  yield* sql`CREATE INDEX points_ledger_identity_day ON points_ledger (cf_id, type, day)`
  yield* sql`CREATE INDEX points_ledger_identity_seq ON points_ledger (cf_id, seq DESC)`
  yield* sql`CREATE TRIGGER points_ledger_append_only BEFORE UPDATE OR DELETE ON points_ledger FOR EACH ROW EXECUTE FUNCTION forbid_mutation()`
  yield* sql`CREATE TRIGGER points_ledger_no_truncate BEFORE TRUNCATE ON points_ledger FOR EACH STATEMENT EXECUTE FUNCTION forbid_mutation()`

  // The leaderboard reads the reconciled balance, highest first.
  yield* sql`
    CREATE INDEX identities_leaderboard ON identities (points_balance DESC, created_at, cf_id) WHERE points_balance > 0
  `

  // One row per click that was recorded (at most 100 per code per hour). The address is kept only as its SHA-256.
  yield* sql`
    CREATE TABLE referral_clicks (
      id bigserial PRIMARY KEY,
      referral_code text NOT NULL REFERENCES identities (referral_code),
      clicked_at timestamptz NOT NULL DEFAULT now(),
      ip_hash text CHECK (ip_hash ~ '^[0-9a-f]{64}$'),
      user_agent text CHECK (char_length(user_agent) <= 512)
    )
  `
  yield* sql`CREATE INDEX referral_clicks_code ON referral_clicks (referral_code, clicked_at)`

  // A referral is confirmed when the referred CF ID is created: one referrer per identity, never itself.
  yield* sql`
    CREATE TABLE referrals (
      referred_cf_id text PRIMARY KEY REFERENCES identities (cf_id),
      referrer_cf_id text NOT NULL REFERENCES identities (cf_id),
      referral_code text NOT NULL,
      ip_hash text CHECK (ip_hash ~ '^[0-9a-f]{64}$'),
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (referrer_cf_id <> referred_cf_id)
    )
  `
  yield* sql`CREATE INDEX referrals_referrer ON referrals (referrer_cf_id, created_at DESC)`
})
