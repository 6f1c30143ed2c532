/**
 * App grants (issue 12 item 5): a connected app's token acts in the context (personal or organization account) it was
 * issued for. Only the token's SHA-256 is stored. Unlike API keys there is no cache across replicas (every call looks
 * the grant up), so no revision sequence.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE app_grants (
      id text PRIMARY KEY CHECK (id ~ '^app_[0-9a-f]{16}$'),
      account_id bigint NOT NULL REFERENCES accounts (id),
      issued_by_cf_id text NOT NULL REFERENCES identities (cf_id),
      app_name text NOT NULL CHECK (char_length(app_name) BETWEEN 1 AND 100),
      -- Reading is always held; acting implies it.
      scopes text[] NOT NULL CHECK (scopes <@ ARRAY['account:read', 'account:act']::text[] AND 'account:read' = ANY (scopes)),
      token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      token_prefix text NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'frozen', 'revoked')),
      created_at timestamptz NOT NULL DEFAULT now(),
      frozen_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz,
      CHECK ((status = 'frozen') = (frozen_at IS NOT NULL)),
      CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
    )
  `
  yield* sql`CREATE INDEX app_grants_account ON app_grants (account_id, created_at)`
  // Removal from an organization revokes the member's live grants there.
  yield* sql`CREATE INDEX app_grants_issuer ON app_grants (account_id, issued_by_cf_id) WHERE status <> 'revoked'`
  // A revoked grant stays a record: nothing about it may change again (SPEC: a new grant issues a new token).
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION app_grants_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'app_grants rows are never deleted' USING ERRCODE = 'restrict_violation';
      END IF;
      IF OLD.status = 'revoked' THEN
        RAISE EXCEPTION 'app grant % is revoked and cannot change', OLD.id USING ERRCODE = 'restrict_violation';
      END IF;
      RETURN NEW;
    END
    $$
  `)
  yield* sql`CREATE TRIGGER app_grants_guard BEFORE UPDATE OR DELETE ON app_grants FOR EACH ROW EXECUTE FUNCTION app_grants_guard()`
})
