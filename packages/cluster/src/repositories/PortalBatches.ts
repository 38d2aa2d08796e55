import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { RenderRow } from "./Renders.ts"

/**
 * The portal's "Render selected" batches: one form post, one render per photo. The batch is the
 * portal's own record (the renders list filters by it); the renders themselves are ordinary renders,
 * and nothing of the batch shows in the API's render document. Every read is scoped to a workspace.
 */

/** A batch id is a UUID the form carries, so a form sent twice is the same batch. */
export const isBatchId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)

/** One photo of a batch: the render it made, or why none was made. */
export const BatchItem = Schema.Struct({
  media_id: Schema.String,
  position: Schema.Number,
  render_id: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(Schema.String),
  error_message: Schema.NullOr(Schema.String)
})
export interface BatchItem extends Schema.Schema.Type<typeof BatchItem> {}

export const Batch = Schema.Struct({ id: Schema.String, created_at: Schema.DateFromSelf })
export interface Batch extends Schema.Schema.Type<typeof Batch> {}

const decodeBatches = Schema.decodeUnknown(Schema.Array(Batch))
const decodeItems = Schema.decodeUnknown(Schema.Array(BatchItem))
const decodeRenders = Schema.decodeUnknown(Schema.Array(RenderRow))

/** Starts the batch, or finds it started (the same form sent again). */
export const open = (workspaceId: string, batchId: string, now = new Date()) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO portal_batches ${sql.insert({ workspace_id: workspaceId, id: batchId, created_at: now })}
      ON CONFLICT (workspace_id, id) DO NOTHING`
  }).pipe(Effect.orDie)

export type Outcome = { readonly renderId: string } | { readonly code: string; readonly message: string }

/**
 * What one photo's create came to. A render, once recorded, is kept: a later refusal of the same
 * photo (the form sent again while the first was still creating) does not hide it.
 */
export const record = (workspaceId: string, batchId: string, mediaId: string, position: number, outcome: Outcome, now = new Date()) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const renderId = "renderId" in outcome ? outcome.renderId : null
    const code = "code" in outcome ? outcome.code : null
    const message = "message" in outcome ? outcome.message : null
    yield* sql`
      INSERT INTO portal_batch_renders ${
      sql.insert({
        workspace_id: workspaceId,
        batch_id: batchId,
        media_id: mediaId,
        position,
        render_id: renderId,
        error_code: code,
        error_message: message,
        updated_at: now
      })
    }
      ON CONFLICT (workspace_id, batch_id, media_id) DO UPDATE SET
        render_id = coalesce(EXCLUDED.render_id, portal_batch_renders.render_id),
        error_code = CASE WHEN coalesce(EXCLUDED.render_id, portal_batch_renders.render_id) IS NULL THEN EXCLUDED.error_code END,
        error_message = CASE WHEN coalesce(EXCLUDED.render_id, portal_batch_renders.render_id) IS NULL THEN EXCLUDED.error_message END,
        updated_at = EXCLUDED.updated_at`
  }).pipe(Effect.orDie)

/** The workspace's batch and its photos in the form's order; undefined for an unknown or foreign id. */
export const find = (workspaceId: string, batchId: string) =>
  Effect.gen(function*() {
    if (!isBatchId(batchId)) return undefined
    const sql = yield* SqlClient.SqlClient
    const [batch] = yield* decodeBatches(yield* sql`
      SELECT id::text, created_at FROM portal_batches WHERE workspace_id = ${workspaceId} AND id = ${batchId}::uuid`)
    if (batch === undefined) return undefined
    const items = yield* decodeItems(yield* sql`
      SELECT media_id::text, position, render_id, error_code, error_message FROM portal_batch_renders
      WHERE workspace_id = ${workspaceId} AND batch_id = ${batchId}::uuid ORDER BY position, media_id`)
    const renders = yield* decodeRenders(yield* sql`
      SELECT r.* FROM portal_batch_renders b JOIN renders r ON r.id = b.render_id AND r.workspace_id = b.workspace_id
      WHERE b.workspace_id = ${workspaceId} AND b.batch_id = ${batchId}::uuid ORDER BY b.position, b.media_id`)
    return { batch, items, renders }
  }).pipe(Effect.orDie)
