/**
 * API keys (issue 9): only the SHA-256 of a key is stored. Every change takes a new value from one sequence, so a
 * replica's key cache can ask "anything newer than what I hold?" with one indexed query.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SEQUENCE api_key_revision_seq`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY CHECK (id ~ '^key_[0-9a-f]{16}$'),
      account_id bigint NOT NULL REFERENCES accounts (id),
      issued_by_cf_id text REFERENCES identities (cf_id),
      key_hash text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
      key_prefix text NOT NULL,
      label text CHECK (char_length(label) <= 100),
      daily_limit_wei numeric(78,0) CHECK (daily_limit_wei > 0),
      monthly_limit_wei numeric(78,0) CHECK (monthly_limit_wei > 0),
      allowed_models jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(allowed_models) = 'array' AND jsonb_array_length(allowed_models) <= 50),
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'frozen', 'revoked')),
      frozen_by text CHECK (frozen_by IN ('owner', 'admin')),
      created_at timestamptz NOT NULL DEFAULT now(),
      frozen_at timestamptz,
      revoked_at timestamptz,
      revision bigint NOT NULL DEFAULT nextval('api_key_revision_seq'),
      CHECK ((status = 'frozen') = (frozen_by IS NOT NULL)),
      CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
    )
  `
  yield* sql`CREATE INDEX api_keys_account ON api_keys (account_id, created_at)`
  yield* sql`CREATE INDEX api_keys_revision ON api_keys (revision)`
  // A revoked key stays a record: nothing about it may change again.
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION api_keys_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'api_keys rows are never deleted' USING ERRCODE = 'restrict_violation';
      END IF;
      IF OLD.status = 'revoked' THEN
        RAISE EXCEPTION 'api key % is revoked and cannot change', OLD.id USING ERRCODE = 'restrict_violation';
      END IF;
      NEW.revision := nextval('api_key_revision_seq');
      RETURN NEW;
    END
    $$
  `)
  yield* sql`CREATE TRIGGER api_keys_guard BEFORE UPDATE OR DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION api_keys_guard()`
})
