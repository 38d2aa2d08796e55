import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The account portal's sign-in: single-use links the operator issues, and the browser sessions they
 * start. Only keyed hashes of link tokens and session ids are stored, so a copy of the database
 * signs nobody in. `oauth_states.return_to` remembers that a drive consent began in the portal.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE portal_links (
      token_hash bytea PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`
  yield* sql`
    CREATE TABLE portal_sessions (
      id_hash bytea PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES workspaces (id),
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      ended_at timestamptz
    )`
  yield* sql`CREATE INDEX portal_sessions_workspace ON portal_sessions (workspace_id)`
  yield* sql`ALTER TABLE oauth_states ADD COLUMN return_to text`
})
