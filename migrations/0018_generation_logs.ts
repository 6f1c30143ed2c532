/**
 * The console's request log and activity read the stored bills of one account newest first, paged by keyset on
 * (created_at, id), filtered by key, and summed per UTC day over up to 92 days.
 *  - The token counts the activity sums leave the usage document for columns of their own (generated, so settlement
 *    writes nothing more), so the sums never parse JSON.
 *  - The account index gains the id (a page and a cursor's row comparison read in index order, no sort) and carries
 *    what the activity sums, so a day's figures come from the index alone (an index-only scan, no heap row read).
 *    It replaces the account index of 0009: keeping both would cost every settlement a second write.
 *  - The key filter gets an index in the same order. The model filter rides the account index (a page of a model's
 *    requests is found among the newest few hundred).
 * Adding stored columns rewrites the table once.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE generations
      ADD COLUMN input_tokens bigint GENERATED ALWAYS AS ((usage->>'freshInput')::bigint) STORED,
      ADD COLUMN output_tokens bigint GENERATED ALWAYS AS ((usage->>'output')::bigint) STORED,
      ADD COLUMN reasoning_tokens bigint GENERATED ALWAYS AS ((usage->>'reasoning')::bigint) STORED
  `
  yield* sql`
    CREATE INDEX generations_account_recent ON generations (account_id, created_at DESC, id DESC)
      INCLUDE (model_used, api_key_id, charge_wei, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
        cache_write_5m_tokens, cache_write_1h_tokens)
  `
  yield* sql`DROP INDEX generations_account`
  yield* sql`CREATE INDEX generations_account_key ON generations (account_id, api_key_id, created_at DESC, id DESC)`
})
