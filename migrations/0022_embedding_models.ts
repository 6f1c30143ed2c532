/**
 * Embedding models on the price cards (DESIGN.md section 10, "Agents' dialects"): a model of kind `embedding` is
 * priced per input token only, so its price rows simply have no `output` component (price_components holds one row
 * per number that exists; nothing there changes), and its card says what its vectors are. Those traits are columns of
 * `models`, written from the card like every other described field: the default output size, the sizes a request may
 * name (a list, or any size up to a maximum) and the inputs one request may carry. Only an embedding model has them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE models ADD COLUMN dimensions integer CHECK (dimensions > 0)`
  yield* sql`ALTER TABLE models ADD COLUMN dimension_options integer[] CHECK (0 < ALL (dimension_options))`
  yield* sql`ALTER TABLE models ADD COLUMN flexible_dimensions boolean NOT NULL DEFAULT false`
  yield* sql`ALTER TABLE models ADD COLUMN max_dimensions integer CHECK (max_dimensions > 0)`
  yield* sql`ALTER TABLE models ADD COLUMN max_batch_inputs integer CHECK (max_batch_inputs > 0)`
  // Only an embedding model carries traits, and never a list of sizes together with "any size". That an embedding model
  // states its dimensions is the card check's rule, not the table's: a row written before this migration has none.
  yield* sql`
    ALTER TABLE models ADD CONSTRAINT models_embedding_traits CHECK (
      CASE WHEN kind = 'embedding'
        THEN NOT (flexible_dimensions AND dimension_options IS NOT NULL)
        ELSE dimensions IS NULL AND dimension_options IS NULL AND NOT flexible_dimensions
          AND max_dimensions IS NULL AND max_batch_inputs IS NULL
      END
    )
  `
})
