/**
 * Where each price was read, and when: a price row records the day its source page was read (`checked_at`), and a
 * single number read on another page than its row's records that page and day itself. Both are null on rows written
 * before sources were recorded, and on numbers that share their row's source. The tables stay append-only.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE price_rows ADD COLUMN checked_at timestamptz`
  yield* sql`ALTER TABLE price_components ADD COLUMN source_url text`
  yield* sql`ALTER TABLE price_components ADD COLUMN checked_at timestamptz`
  yield* sql`
    ALTER TABLE price_components ADD CONSTRAINT price_components_source_with_date
      CHECK ((source_url IS NULL) = (checked_at IS NULL))
  `
})
