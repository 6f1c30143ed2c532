/**
 * Revisions of the index and their anchoring: the manifest each one publishes, its state on the way to the
 * chain, the reconstitution log written when one is confirmed, and what the chain sync last saw.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE chain_deployments (
      chain_id integer NOT NULL,
      registry_address text NOT NULL CHECK (registry_address ~ '^0x[0-9a-f]{40}$'),
      implementation_address text,
      deployed_block bigint,
      deployed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, registry_address)
    )
  `
  yield* sql`
    CREATE TABLE revisions (
      id bigserial PRIMARY KEY,
      revision_version integer NOT NULL CHECK (revision_version >= 1),
      methodology_version integer NOT NULL CHECK (methodology_version >= 1),
      scu_usd18 numeric(78, 0) NOT NULL CHECK (scu_usd18 > 0),
      content_hash text NOT NULL CHECK (content_hash ~ '^0x[0-9a-f]{64}$'),
      metadata_hash text NOT NULL CHECK (metadata_hash ~ '^0x[0-9a-f]{64}$'),
      manifest_jcs text,
      basket_changes jsonb NOT NULL DEFAULT '[]'::jsonb,
      summary text NOT NULL DEFAULT '',
      status text NOT NULL CHECK (status IN ('PENDING', 'BROADCAST', 'CONFIRMED', 'DISCARDED')),
      requires_approval boolean NOT NULL DEFAULT false,
      approved_at timestamptz,
      intended_at timestamptz,
      tx_hash text CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
      broadcast_at timestamptz,
      published_block bigint,
      published_at timestamptz,
      confirmed_at timestamptz,
      failure_reason text,
      failure_message text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (status <> 'CONFIRMED' OR (tx_hash IS NOT NULL AND published_at IS NOT NULL AND confirmed_at IS NOT NULL))
    )
  `
  // A discarded draft gives its number back: numbers are unique among the revisions that are not discarded.
  yield* sql`CREATE UNIQUE INDEX revisions_live_version ON revisions (revision_version) WHERE status <> 'DISCARDED'`
  yield* sql`CREATE UNIQUE INDEX revisions_live_metadata ON revisions (metadata_hash) WHERE status <> 'DISCARDED'`
  yield* sql`CREATE INDEX revisions_published_at ON revisions (published_at, revision_version) WHERE status = 'CONFIRMED'`
  // A revision's content never changes once recorded: only its progress towards the chain does.
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION revisions_content_is_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.id IS DISTINCT FROM OLD.id
        OR NEW.revision_version IS DISTINCT FROM OLD.revision_version
        OR NEW.methodology_version IS DISTINCT FROM OLD.methodology_version
        OR NEW.scu_usd18 IS DISTINCT FROM OLD.scu_usd18
        OR NEW.content_hash IS DISTINCT FROM OLD.content_hash
        OR NEW.metadata_hash IS DISTINCT FROM OLD.metadata_hash
        OR (OLD.manifest_jcs IS NOT NULL AND NEW.manifest_jcs IS DISTINCT FROM OLD.manifest_jcs)
        OR (OLD.status IN ('CONFIRMED', 'DISCARDED') AND NEW.status <> OLD.status) THEN
        RAISE EXCEPTION 'revision % content is immutable', OLD.revision_version USING ERRCODE = 'restrict_violation';
      END IF;
      RETURN NEW;
    END
    $$
  `)
  yield* sql`CREATE TRIGGER revisions_immutable BEFORE UPDATE ON revisions FOR EACH ROW EXECUTE FUNCTION revisions_content_is_immutable()`
  yield* sql`CREATE TRIGGER revisions_no_delete BEFORE DELETE ON revisions FOR EACH ROW EXECUTE FUNCTION forbid_mutation()`
  yield* sql`
    CREATE TABLE reconstitution_log (
      id bigserial PRIMARY KEY,
      revision_version integer NOT NULL UNIQUE,
      previous_version integer,
      published_at timestamptz NOT NULL,
      methodology_version integer NOT NULL,
      summary text NOT NULL,
      scu_before_usd18 numeric(78, 0),
      scu_after_usd18 numeric(78, 0) NOT NULL,
      changes jsonb NOT NULL,
      tx_hash text NOT NULL
    )
  `
  yield* sql`CREATE TRIGGER reconstitution_log_append_only BEFORE UPDATE OR DELETE ON reconstitution_log FOR EACH ROW EXECUTE FUNCTION forbid_mutation()`
  yield* sql`
    CREATE TABLE chain_sync (
      id integer PRIMARY KEY CHECK (id = 1),
      chain_id integer NOT NULL,
      registry_address text NOT NULL,
      last_sync_at timestamptz,
      last_block bigint,
      last_revision_version integer,
      last_error text,
      last_error_at timestamptz
    )
  `
})
