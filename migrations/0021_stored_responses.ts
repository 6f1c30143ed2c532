/**
 * Stored responses (DESIGN.md section 10, "Agents' dialects"): `POST /v1/responses` with `store` (the default) keeps
 * the Response as rendered to the client and the input items of that request for 30 days, under the paying account,
 * for `GET`/`DELETE /v1/responses/{id}`, `GET .../input_items` and `previous_response_id`; a job purges them after.
 *  - `request_id` is the request's bill (`generations.id`); no foreign key: the bill may be written after the response.
 *  - `previous_response_id` has no foreign key either: the response it continues may be deleted or purged first, and a
 *    conversation read stops at the missing link.
 *  - The response and its input items are JSON held as text, written and read whole: jsonb would refuse what JSON and
 *    the vendors take (a `\u0000` escape, a lone surrogate), and a response a client was told is stored must be.
 *  - Every read is by primary key with the account as a filter on that one row, so the account needs no index of its
 *    own; the purge reads the expiry index.
 * The bills' inbound formats gain `responses`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE stored_responses (
      id text PRIMARY KEY CHECK (id ~ '^resp_[0-9a-f]+$'),
      account_id bigint NOT NULL REFERENCES accounts (id),
      request_id text NOT NULL CHECK (request_id ~ '^gen_[0-9a-f]{24}$'),
      previous_response_id text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
      response text NOT NULL,
      input_items text NOT NULL
    )
  `
  yield* sql`CREATE INDEX stored_responses_expiry ON stored_responses (expires_at)`
  yield* sql`ALTER TABLE generations DROP CONSTRAINT generations_inbound_format_check`
  yield* sql`
    ALTER TABLE generations ADD CONSTRAINT generations_inbound_format_check
      CHECK (inbound_format IN ('chat', 'messages', 'responses'))
  `
})
