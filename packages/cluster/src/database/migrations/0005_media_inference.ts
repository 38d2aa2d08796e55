import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * What the vision model inferred from a photo (MediaInference.ts): pending until it has looked,
 * then done (class, confidence, subject box, model) or failed (the reason). Never part of the
 * public media document.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE media
      ADD COLUMN inference_status text NOT NULL DEFAULT 'pending' CHECK (inference_status IN ('pending', 'done', 'failed')),
      ADD COLUMN inference jsonb,
      ADD COLUMN inferred_at timestamptz`
})
