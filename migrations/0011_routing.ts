/**
 * The `auto` routing state (issue 11, DESIGN.md section 10 "Routing"): the operator's ordered preference list and the
 * conversation pins (conversation_id -> the model and upstream key that served it, released after an hour idle or
 * when the conversation's routing_bias changes).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // One row per entry; the list is replaced whole (PUT /v1/admin/routing/auto), so positions are 0..n-1.
  yield* sql`
    CREATE TABLE routing_auto_list (
      position integer PRIMARY KEY CHECK (position >= 0 AND position < 64),
      model_key text NOT NULL UNIQUE CHECK (length(model_key) BETWEEN 3 AND 200),
      updated_at timestamptz NOT NULL
    )
  `
  yield* sql`
    CREATE TABLE conversation_pins (
      account_id bigint NOT NULL REFERENCES accounts (id),
      conversation_id text NOT NULL CHECK (length(conversation_id) BETWEEN 1 AND 200),
      model_key text NOT NULL,
      provider text NOT NULL,
      upstream_key text NOT NULL,
      routing_bias text CHECK (routing_bias IN ('cheaper', 'balanced', 'better')),
      last_used_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, conversation_id)
    )
  `
  yield* sql`CREATE INDEX conversation_pins_idle ON conversation_pins (last_used_at)`
})
