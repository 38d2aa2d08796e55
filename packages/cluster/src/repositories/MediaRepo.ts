import { type Cursor, Ids, Requests } from "@pic2video/domain"
import { Context, DateTime, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/**
 * The workspace's photo library as rows (`media`), with the storage budget it draws on
 * (`workspaces.storage_used_bytes`) and what the vision model saw in each photo (migration 0005).
 * The budget check and the insert are one statement pair in one transaction, so concurrent uploads
 * never exceed it; archiving gives the bytes back in the same way.
 */
const Timestamp = Schema.Date

/** What the vision model saw (media/MediaInference.ts); never in the public document. */
export const Inferred = Schema.Struct({
  image_class: Schema.Literals(Requests.imageClasses),
  confidence: Schema.Number,
  subject: Schema.NullOr(
    Schema.Struct({ x: Schema.Number, y: Schema.Number, width: Schema.Number, height: Schema.Number })
  ),
  model: Schema.String
})
export interface Inferred extends Schema.Schema.Type<typeof Inferred> {}

/** Why the model could not look at a photo. */
const InferenceFailed = Schema.Struct({ error: Schema.String })

export const MediaRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  created_at: Timestamp,
  label: Schema.String,
  tags: Schema.Array(Schema.String),
  width: Schema.NullOr(Schema.Number),
  height: Schema.NullOr(Schema.Number),
  mime_type: Schema.String,
  file_size_bytes: Schema.Number,
  blob_key: Schema.String,
  source_ref: Schema.NullOr(Schema.String),
  archived_at: Schema.NullOr(Timestamp),
  inference_status: Schema.Literals(["pending", "done", "failed"]),
  inference: Schema.NullOr(Schema.Union([Inferred, InferenceFailed])),
  inferred_at: Schema.NullOr(Timestamp)
})
export interface MediaRow extends Schema.Schema.Type<typeof MediaRow> {}

/** What the vision model's columns of a row hold. */
export const InferenceRow = MediaRow.mapFields(Struct.pick(["inference_status", "inference", "inferred_at"]))
export interface InferenceRow extends Schema.Schema.Type<typeof InferenceRow> {}

/** A photo entering the library: the row as inserted, and the bytes it takes from the budget. */
const NewMedia = Schema.Struct({
  id: Schema.String,
  workspaceId: Schema.String,
  label: Schema.String,
  tags: Schema.Array(Schema.String),
  width: Schema.Number,
  height: Schema.Number,
  mimeType: Schema.String,
  sizeBytes: Schema.Number,
  blobKey: Schema.String,
  /** the drive file id, for imports (unique per workspace) */
  sourceRef: Schema.NullOr(Schema.String)
})
interface NewMedia extends Schema.Schema.Type<typeof NewMedia> {}

type Added =
  | { readonly _tag: "Inserted"; readonly row: MediaRow }
  /** the workspace's storage budget cannot hold it: nothing was written */
  | { readonly _tag: "OverBudget" }
  /** this drive file is already in the workspace's library: nothing was written */
  | { readonly _tag: "Duplicate" }

const Owned = Schema.Struct({ workspaceId: Schema.String, id: Schema.String })

export class MediaRepo extends Context.Service<MediaRepo>()("pic2video/MediaRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const reserve = SqlSchema.findAll({
      Request: Schema.Struct({ workspaceId: Schema.String, bytes: Schema.Number }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (r) =>
        sql`
          UPDATE workspaces SET storage_used_bytes = storage_used_bytes + ${r.bytes}
          WHERE id = ${r.workspaceId} AND storage_used_bytes + ${r.bytes} <= storage_budget_bytes
          RETURNING id`
    })
    const insert = SqlSchema.findOneOption({
      Request: Schema.Struct({ media: NewMedia, now: Timestamp }),
      Result: MediaRow,
      execute: ({ media: m, now }) =>
        sql`
          INSERT INTO media ${
          sql.insert({
            id: m.id,
            workspace_id: m.workspaceId,
            created_at: now,
            label: m.label,
            tags: [...m.tags],
            width: m.width,
            height: m.height,
            mime_type: m.mimeType,
            file_size_bytes: m.sizeBytes,
            blob_key: m.blobKey,
            source_ref: m.sourceRef
          })
        }
          ON CONFLICT (workspace_id, source_ref) WHERE source_ref IS NOT NULL DO NOTHING
          RETURNING *`
    })
    const selectOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: MediaRow,
      execute: (r) =>
        sql`SELECT * FROM media WHERE id = ${r.id} AND workspace_id = ${r.workspaceId} AND archived_at IS NULL`
    })
    const selectById = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: MediaRow,
      execute: (id) => sql`SELECT * FROM media WHERE id = ${id}`
    })
    const selectKey = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ blob_key: Schema.String }),
      execute: (id) => sql`SELECT blob_key FROM media WHERE id = ${id}`
    })
    const selectInference = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: InferenceRow,
      execute: (id) => sql`SELECT inference_status, inference, inferred_at FROM media WHERE id = ${id}`
    })
    const selectPage = SqlSchema.findAll({
      Request: Schema.Struct({
        workspaceId: Schema.String,
        limit: Schema.Number,
        before: Schema.NullOr(Schema.Struct({ createdAt: Timestamp, id: Schema.String }))
      }),
      Result: MediaRow,
      execute: (r) =>
        r.before === null
          ? sql`
              SELECT * FROM media WHERE workspace_id = ${r.workspaceId} AND archived_at IS NULL
              ORDER BY created_at DESC, id DESC LIMIT ${r.limit}`
          : sql`
              SELECT * FROM media WHERE workspace_id = ${r.workspaceId} AND archived_at IS NULL
                AND (created_at, id) < (${r.before.createdAt}, ${r.before.id}::uuid)
              ORDER BY created_at DESC, id DESC LIMIT ${r.limit}`
    })
    const markArchived = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, now: Timestamp }),
      Result: MediaRow,
      execute: (r) =>
        sql`UPDATE media SET archived_at = ${r.now} WHERE id = ${r.id} AND archived_at IS NULL RETURNING *`
    })
    const release = SqlSchema.void({
      Request: Schema.Struct({ workspaceId: Schema.String, bytes: Schema.Number }),
      execute: (r) =>
        sql`UPDATE workspaces SET storage_used_bytes = greatest(0, storage_used_bytes - ${r.bytes}) WHERE id = ${r.workspaceId}`
    })
    const writeInference = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        status: Schema.Literals(["done", "failed"]),
        inference: Schema.Union([Inferred, InferenceFailed]),
        now: Timestamp
      }),
      execute: (r) =>
        sql`UPDATE media SET inference_status = ${r.status}, inference = ${JSON.stringify(r.inference)}::jsonb,
          inferred_at = ${r.now} WHERE id = ${r.id}`
    })

    /** Reserves the bytes and inserts the row, both or neither. */
    const add = (media: NewMedia) =>
      Effect.gen(function*() {
        const now = yield* DateTime.nowAsDate
        return yield* sql.withTransaction(Effect.gen(function*() {
          const reserved = yield* reserve({ workspaceId: media.workspaceId, bytes: media.sizeBytes })
          if (reserved.length === 0) return { _tag: "OverBudget" } satisfies Added
          const row = yield* insert({ media, now })
          // a duplicate rolls the reservation back
          if (Option.isNone(row)) return yield* Effect.fail({ _tag: "Duplicate" } as const)
          return { _tag: "Inserted", row: row.value } satisfies Added
        }))
      }).pipe(
        Effect.catchTag("Duplicate", (duplicate) => Effect.succeed<Added>(duplicate)),
        operation("MediaRepo.add")
      )

    /** Any photo by id, archived or not; undefined for an id that is not a media id. */
    const byId = (id: string) =>
      Ids.isMediaId(id)
        ? selectById(id).pipe(Effect.map(Option.getOrUndefined), operation("MediaRepo.byId"))
        : Effect.succeed(undefined)

    return {
      add,
      /** A workspace's own, non-archived photo; anything else (a malformed id too) is undefined. */
      find: (workspaceId: string, id: string) =>
        Ids.isMediaId(id)
          ? selectOwned({ workspaceId, id }).pipe(Effect.map(Option.getOrUndefined), operation("MediaRepo.find"))
          : Effect.succeed(undefined),
      byId,
      /** Where a photo's original is stored, archived or not. */
      storedKey: (id: string) =>
        selectKey(id).pipe(Effect.map((row) => Option.getOrUndefined(row)?.blob_key), operation("MediaRepo.storedKey")),
      /** A page newest first, after the cursor's position; one row more than `limit` when there are more. */
      page: (workspaceId: string, limit: number, cursor: Cursor.Position | undefined) =>
        selectPage({
          workspaceId,
          limit,
          before: cursor === undefined ? null : { createdAt: new Date(cursor.createdAt), id: cursor.id }
        }).pipe(operation("MediaRepo.page")),
      /** Hides the photo and gives its bytes back to the budget; the row as it is after (undefined: no such media). */
      archive: (id: string) =>
        Effect.gen(function*() {
          const now = yield* DateTime.nowAsDate
          return yield* sql.withTransaction(Effect.gen(function*() {
            const archived = yield* markArchived({ id, now })
            if (Option.isNone(archived)) return Option.getOrUndefined(yield* selectById(id))
            yield* release({ workspaceId: archived.value.workspace_id, bytes: archived.value.file_size_bytes })
            return archived.value
          }))
        }).pipe(operation("MediaRepo.archive")),
      /** The vision model's columns; undefined for an unknown or malformed id. */
      inference: (id: string) =>
        Ids.isMediaId(id)
          ? selectInference(id).pipe(Effect.map(Option.getOrUndefined), operation("MediaRepo.inference"))
          : Effect.succeed(undefined),
      /** Stores what the model saw, or why it could not look. */
      storeInference: (id: string, inference: Inferred | typeof InferenceFailed.Type) =>
        DateTime.nowAsDate.pipe(
          Effect.flatMap((now) =>
            writeInference({ id, status: "error" in inference ? "failed" : "done", inference, now })
          ),
          operation("MediaRepo.storeInference")
        )
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
