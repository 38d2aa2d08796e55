import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A completed render's poster (a JPEG of one frame, stored beside the video and deleted with it;
 * renders completed before it have none), and the portal's "Render selected" batches: which renders
 * one form post created, one per photo, or why a photo's was refused. Both stay out of the API's
 * render document; a batch is the portal's own record, not the render's metadata (which is the
 * user's, echoed by the API).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE renders ADD COLUMN poster_blob_key text`
  yield* sql`ALTER TABLE renders ADD CONSTRAINT renders_poster_completed CHECK (poster_blob_key IS NULL OR status = 'completed')`
  yield* sql`
    CREATE TABLE portal_batches (
      workspace_id text NOT NULL REFERENCES workspaces (id),
      id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, id)
    )`
  yield* sql`
    CREATE TABLE portal_batch_renders (
      workspace_id text NOT NULL,
      batch_id uuid NOT NULL,
      media_id uuid NOT NULL REFERENCES media (id),
      position integer NOT NULL,
      render_id text REFERENCES renders (id),
      error_code text,
      error_message text,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, batch_id, media_id),
      FOREIGN KEY (workspace_id, batch_id) REFERENCES portal_batches (workspace_id, id),
      CHECK ((render_id IS NULL) = (error_code IS NOT NULL))
    )`
})
