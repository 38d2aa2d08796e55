import { Context, DateTime, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { RenderRow } from "./RendersRepo.ts"
import { operation } from "./Repository.ts"

/**
 * The portal's "Render selected" batches: one form post, one render per photo. The batch is the
 * portal's own record (the renders list filters by it); the renders themselves are ordinary renders,
 * and nothing of the batch shows in the API's render document. Every read is scoped to a workspace.
 */

/** A batch id is a UUID the form carries, so a form sent twice is the same batch. */
export const isBatchId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)

/** One photo of a batch: the render it made, or why none was made. */
const BatchItem = Schema.Struct({
  media_id: Schema.String,
  position: Schema.Number,
  render_id: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(Schema.String),
  error_message: Schema.NullOr(Schema.String)
})
interface BatchItem extends Schema.Schema.Type<typeof BatchItem> {}

export const Batch = Schema.Struct({ id: Schema.String, created_at: Schema.Date })
export interface Batch extends Schema.Schema.Type<typeof Batch> {}

export type Outcome = { readonly renderId: string } | { readonly code: string; readonly message: string }

const Scope = Schema.Struct({ workspaceId: Schema.String, batchId: Schema.String })

export class PortalBatchesRepo extends Context.Service<PortalBatchesRepo>()("pic2video/PortalBatchesRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertBatch = SqlSchema.void({
      Request: Schema.Struct({ ...Scope.fields, now: Schema.Date }),
      execute: (r) =>
        sql`INSERT INTO portal_batches ${sql.insert({ workspace_id: r.workspaceId, id: r.batchId, created_at: r.now })}
          ON CONFLICT (workspace_id, id) DO NOTHING`
    })
    const upsertItem = SqlSchema.void({
      Request: Schema.Struct({
        ...Scope.fields,
        item: BatchItem,
        now: Schema.Date
      }),
      execute: ({ batchId, item, now, workspaceId }) =>
        sql`
          INSERT INTO portal_batch_renders ${
          sql.insert({
            workspace_id: workspaceId,
            batch_id: batchId,
            media_id: item.media_id,
            position: item.position,
            render_id: item.render_id,
            error_code: item.error_code,
            error_message: item.error_message,
            updated_at: now
          })
        }
          ON CONFLICT (workspace_id, batch_id, media_id) DO UPDATE SET
            render_id = coalesce(EXCLUDED.render_id, portal_batch_renders.render_id),
            error_code = CASE WHEN coalesce(EXCLUDED.render_id, portal_batch_renders.render_id) IS NULL THEN EXCLUDED.error_code END,
            error_message = CASE WHEN coalesce(EXCLUDED.render_id, portal_batch_renders.render_id) IS NULL THEN EXCLUDED.error_message END,
            updated_at = EXCLUDED.updated_at`
    })
    const selectBatch = SqlSchema.findOneOption({
      Request: Scope,
      Result: Batch,
      execute: (r) =>
        sql`SELECT id::text, created_at FROM portal_batches WHERE workspace_id = ${r.workspaceId} AND id = ${r.batchId}::uuid`
    })
    const selectItems = SqlSchema.findAll({
      Request: Scope,
      Result: BatchItem,
      execute: (r) =>
        sql`
          SELECT media_id::text, position, render_id, error_code, error_message FROM portal_batch_renders
          WHERE workspace_id = ${r.workspaceId} AND batch_id = ${r.batchId}::uuid ORDER BY position, media_id`
    })
    const selectRenders = SqlSchema.findAll({
      Request: Scope,
      Result: RenderRow,
      execute: (r) =>
        sql`
          SELECT r.* FROM portal_batch_renders b JOIN renders r ON r.id = b.render_id AND r.workspace_id = b.workspace_id
          WHERE b.workspace_id = ${r.workspaceId} AND b.batch_id = ${r.batchId}::uuid ORDER BY b.position, b.media_id`
    })

    return {
      /** Starts the batch, or finds it started (the same form sent again). */
      open: (workspaceId: string, batchId: string) =>
        DateTime.nowAsDate.pipe(
          Effect.flatMap((now) => insertBatch({ workspaceId, batchId, now })),
          operation("PortalBatchesRepo.open")
        ),
      /**
       * What one photo's create came to. A render, once recorded, is kept: a later refusal of the
       * same photo (the form sent again while the first was still creating) does not hide it.
       */
      record: (workspaceId: string, batchId: string, mediaId: string, position: number, outcome: Outcome) =>
        DateTime.nowAsDate.pipe(
          Effect.flatMap((now) =>
            upsertItem({
              workspaceId,
              batchId,
              now,
              item: {
                media_id: mediaId,
                position,
                render_id: "renderId" in outcome ? outcome.renderId : null,
                error_code: "code" in outcome ? outcome.code : null,
                error_message: "message" in outcome ? outcome.message : null
              }
            })
          ),
          operation("PortalBatchesRepo.record")
        ),
      /** The workspace's batch and its photos in the form's order; undefined for an unknown or foreign id. */
      find: (workspaceId: string, batchId: string) =>
        Effect.gen(function*() {
          if (!isBatchId(batchId)) return undefined
          const scope = { workspaceId, batchId }
          const batch = yield* selectBatch(scope)
          if (Option.isNone(batch)) return undefined
          return { batch: batch.value, items: yield* selectItems(scope), renders: yield* selectRenders(scope) }
        }).pipe(operation("PortalBatchesRepo.find"))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
