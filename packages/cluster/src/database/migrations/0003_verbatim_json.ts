import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A replayed response and an echoed `metadata` are the client's own document, key order included:
 * `json` keeps the text as written, where `jsonb` reorders keys.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE idempotency_records ALTER COLUMN response TYPE json USING response::json`
  yield* sql`ALTER TABLE renders ALTER COLUMN metadata TYPE json USING metadata::json`
})
