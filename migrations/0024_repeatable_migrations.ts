/**
 * Repeatable migrations: SQL kept in one file and applied again whenever its text changes (the ledger's functions,
 * migrations/repeatable/ledger.ts). The numbered migrations stay the append-only history; this table records, per
 * repeatable migration, the revision and sha256 of the text last applied and when (services/platform/Migrations.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE repeatable_migrations (
      name text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9_]*$'),
      revision integer NOT NULL CHECK (revision > 0),
      sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      applied_at timestamptz NOT NULL
    )
  `
})
