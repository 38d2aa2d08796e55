import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** What a running service tells the processes that share its database (the operator CLI). */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE service_settings (
      name text PRIMARY KEY,
      value text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
