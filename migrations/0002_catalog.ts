/**
 * The catalog: providers, families and models as the price cards declare them, and every price the
 * cards ever stated, as append-only temporal rows. A price change is a new row; nothing is overwritten.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE price_scans (
      id bigserial PRIMARY KEY,
      started_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      trigger text NOT NULL CHECK (trigger IN ('schedule', 'cli', 'boot', 'admin', 'test')),
      sources jsonb NOT NULL DEFAULT '[]'::jsonb,
      changes jsonb NOT NULL DEFAULT '[]'::jsonb,
      basket jsonb,
      outcome text CHECK (outcome IN ('succeeded', 'partial', 'failed'))
    )
  `
  yield* sql`
    CREATE TABLE providers (
      key text PRIMARY KEY,
      name text NOT NULL,
      vendor_slug text NOT NULL UNIQUE,
      pricing_url text NOT NULL,
      source text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE families (
      key text PRIMARY KEY,
      provider_key text NOT NULL REFERENCES providers (key),
      name text NOT NULL,
      description text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`
    CREATE TABLE models (
      id text PRIMARY KEY,
      provider_key text NOT NULL REFERENCES providers (key),
      family_key text NOT NULL REFERENCES families (key),
      display_name text NOT NULL,
      sdk_id text NOT NULL,
      released_at timestamptz NOT NULL,
      availability text NOT NULL CHECK (availability IN ('ga', 'preview')),
      kind text NOT NULL CHECK (kind IN ('text', 'embedding', 'image', 'audio', 'video', 'moderation', 'other')),
      reasoning boolean NOT NULL,
      max_input_tokens integer CHECK (max_input_tokens > 0),
      retired_at timestamptz,
      deleted_at timestamptz,
      first_seen_scan bigint NOT NULL REFERENCES price_scans (id),
      last_seen_scan bigint NOT NULL REFERENCES price_scans (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX models_family ON models (family_key)`
  yield* sql`
    CREATE TABLE price_rows (
      id bigserial PRIMARY KEY,
      model_id text NOT NULL REFERENCES models (id),
      effective_from timestamptz NOT NULL,
      observed_at timestamptz NOT NULL DEFAULT now(),
      scan_id bigint NOT NULL REFERENCES price_scans (id),
      source_url text NOT NULL,
      note text,
      fingerprint text NOT NULL
    )
  `
  // "The price of m at t" and "the catalog now" both read the newest row per model at or before an instant.
  yield* sql`CREATE INDEX price_rows_model_time ON price_rows (model_id, effective_from DESC, observed_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE price_components (
      price_row_id bigint NOT NULL REFERENCES price_rows (id),
      component text NOT NULL
        CHECK (component IN ('input', 'output', 'cached_input', 'cache_write_5m', 'cache_write_1h', 'reasoning_output')),
      usd18 numeric(78, 0) NOT NULL CHECK (usd18 >= 0),
      provenance text NOT NULL CHECK (provenance IN ('verified', 'inferred', 'promotional')),
      derived_from text,
      promotion_until timestamptz,
      regular_usd18 numeric(78, 0) CHECK (regular_usd18 >= 0),
      PRIMARY KEY (price_row_id, component),
      CHECK (provenance <> 'inferred' OR derived_from IS NOT NULL)
    )
  `
  yield* sql`
    CREATE TABLE price_tiers (
      price_row_id bigint NOT NULL REFERENCES price_rows (id),
      from_input_tokens integer NOT NULL CHECK (from_input_tokens > 0),
      input_usd18 numeric(78, 0) NOT NULL CHECK (input_usd18 >= 0),
      output_usd18 numeric(78, 0) NOT NULL CHECK (output_usd18 >= 0),
      input_provenance text NOT NULL CHECK (input_provenance IN ('verified', 'inferred', 'promotional')),
      output_provenance text NOT NULL CHECK (output_provenance IN ('verified', 'inferred', 'promotional')),
      input_derived_from text,
      output_derived_from text,
      PRIMARY KEY (price_row_id, from_input_tokens)
    )
  `
  for (const table of ["price_rows", "price_components", "price_tiers"]) {
    yield* sql.unsafe(
      `CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION forbid_mutation()`
    )
  }
  yield* sql`
    CREATE TABLE family_decisions (
      id text PRIMARY KEY,
      decided_on date NOT NULL,
      subject text NOT NULL,
      effect text NOT NULL CHECK (effect IN ('note', 'exclude', 'prefer')),
      model_id text,
      ruling text NOT NULL,
      rationale text NOT NULL,
      valid_from timestamptz,
      valid_until timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `
})
