/**
 * Embeddings through the exchange (DESIGN.md section 10, "Agents' dialects"): `POST /v1/embeddings` is billed and
 * stored like a chat request, so the bills' inbound formats gain `embeddings` (an input-only bill: one input leg).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE generations DROP CONSTRAINT generations_inbound_format_check`
  yield* sql`
    ALTER TABLE generations ADD CONSTRAINT generations_inbound_format_check
      CHECK (inbound_format IN ('chat', 'messages', 'responses', 'embeddings'))
  `
})
