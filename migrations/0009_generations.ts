/**
 * The exchange's bills (issue 10): one row per inference request, written in the settlement's transaction. It keeps
 * what priced the bill (each leg's tokens, rate, provenance mark and the component whose rate was used, the context
 * tier, markup, peg, the latest confirmed revision's metadataHash) and how the request was routed (model requested
 * and used, provider, every attempt), so each bill can be traced to the attested prices. The cache columns feed the
 * cumulative counters of /v1/usage.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE generations (
      id text PRIMARY KEY CHECK (id ~ '^gen_[0-9a-f]{24}$'),
      account_id bigint NOT NULL REFERENCES accounts (id),
      api_key_id text,
      inbound_format text NOT NULL CHECK (inbound_format IN ('chat', 'messages')),
      stream boolean NOT NULL,
      status text NOT NULL CHECK (status IN ('completed', 'interrupted')),
      model_requested text NOT NULL,
      model_used text NOT NULL,
      provider text NOT NULL,
      upstream_key text NOT NULL,
      chooser text,
      usage jsonb NOT NULL,
      bill jsonb NOT NULL,
      attempts jsonb NOT NULL,
      hold_wei numeric(78, 0) NOT NULL CHECK (hold_wei >= 0),
      charge_wei numeric(78, 0) NOT NULL CHECK (charge_wei >= 0),
      cache_read_tokens bigint NOT NULL DEFAULT 0,
      cache_write_5m_tokens bigint NOT NULL DEFAULT 0,
      cache_write_1h_tokens bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      settled_at timestamptz NOT NULL DEFAULT now()
    )
  `
  yield* sql`CREATE INDEX generations_account ON generations (account_id, created_at DESC)`
})
