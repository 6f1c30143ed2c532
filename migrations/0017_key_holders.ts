/**
 * Who holds an organization's API key (issue 12, pools): SPEC lets every member send inference paid from the
 * organization's balance but only Owners and Admins issue keys there, so an Admin issues a key for the member who will
 * use it. The key's holder is the member its spending counts for: their spending pool applies, and the key is revoked
 * when they leave. A key issued for oneself (and every key before this migration) is held by its issuer.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The revoked-key guard refuses any change to a revoked row, so it is set aside for the backfill only.
  yield* sql`ALTER TABLE api_keys DISABLE TRIGGER api_keys_guard`
  yield* sql`ALTER TABLE api_keys ADD COLUMN holder_cf_id text REFERENCES identities (cf_id)`
  yield* sql`UPDATE api_keys SET holder_cf_id = issued_by_cf_id`
  yield* sql`ALTER TABLE api_keys ENABLE TRIGGER api_keys_guard`
  yield* sql`CREATE INDEX api_keys_holder ON api_keys (account_id, holder_cf_id) WHERE status <> 'revoked'`
})
