/**
 * Foundation: the guard that makes ledgers append-only, and the record of background job runs that the
 * scan, chain sync and publication jobs share (one replica at a time, see services/platform/Jobs.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Ledgers and price history are never rewritten: attach this trigger BEFORE UPDATE OR DELETE.
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION forbid_mutation() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'restrict_violation';
    END
    $$
  `)
  yield* sql`
    CREATE TABLE job_runs (
      id bigserial PRIMARY KEY,
      job text NOT NULL CHECK (job ~ '^[a-z][a-z0-9_.-]{0,63}$'),
      instance_id text NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      outcome text CHECK (outcome IN ('succeeded', 'failed')),
      summary text,
      CHECK ((finished_at IS NULL) = (outcome IS NULL))
    )
  `
  yield* sql`CREATE INDEX job_runs_job_started ON job_runs (job, started_at DESC)`
})
