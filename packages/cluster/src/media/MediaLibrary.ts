import { SqlClient } from "@effect/sql"
import { Cursor, Errors, Ids } from "@pic2video/domain"
import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { BlobStore } from "../storage/BlobStore.ts"
import * as WorkMetrics from "../metrics/WorkMetrics.ts"
import * as MediaInference from "./MediaInference.ts"
import * as Photos from "./Photos.ts"

/**
 * The workspace's photo library. `ingest` is the one upload path: a direct upload and every file of
 * a drive import go through it, so both are sniffed, decoded and budgeted the same way.
 */
export interface MediaRow {
  readonly id: string
  readonly workspace_id: string
  readonly created_at: Date
  readonly label: string
  readonly tags: ReadonlyArray<string>
  readonly width: number | null
  readonly height: number | null
  readonly mime_type: string
  readonly file_size_bytes: number
  readonly blob_key: string
  readonly source_ref: string | null
  readonly archived_at: Date | null
  /** What the vision model saw (MediaInference.ts, migration 0005); never in the public document. */
  readonly inference_status: "pending" | "done" | "failed"
  readonly inference: MediaInference.Inferred | { readonly error: string } | null
  readonly inferred_at: Date | null
}

export const toDocument = (m: MediaRow, publicBaseUrl: string, opts?: { readonly justUploaded?: boolean }) => ({
  object: "media" as const,
  id: m.id,
  created_at: m.created_at.toISOString(),
  label: m.label,
  tags: [...m.tags],
  // the 201 body has width/height null, as documented; the list shows them
  width: opts?.justUploaded ? null : m.width,
  height: opts?.justUploaded ? null : m.height,
  mime_type: m.mime_type,
  file_size_bytes: m.file_size_bytes,
  preview_url: `${publicBaseUrl}/api/v1/media/${m.id}/preview`,
  preview_expires_at: null
})

export interface Incoming {
  /** how the photo came in: counted by source (`p2v_media_uploaded_total`) once stored */
  readonly source: WorkMetrics.MediaSource
  readonly workspaceId: string
  /** a local file holding the bytes; it is moved into the store when accepted */
  readonly path: string
  readonly filename?: string
  readonly contentType?: string
  readonly label: string
  readonly tags: ReadonlyArray<string>
  /** the drive file id, for imports (deduplicated per workspace) */
  readonly sourceRef?: string
}

export const ingest = (incoming: Incoming) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const blobs = yield* BlobStore
    const photo = yield* Photos.inspect(incoming.path, incoming)
    const id = Ids.newMediaId()
    const blobKey = `media/${incoming.workspaceId}/${id}`
    yield* blobs.putFile(blobKey, incoming.path).pipe(
      Effect.withSpan("media.store", { attributes: { "p2v.blob.bytes": photo.sizeBytes }, captureStackTrace: false })
    )
    // the budget check and the insert are one transaction: concurrent uploads never exceed it
    const inserted = yield* sql.withTransaction(
      Effect.gen(function*() {
        const reserved = yield* sql`
          UPDATE workspaces SET storage_used_bytes = storage_used_bytes + ${photo.sizeBytes}
          WHERE id = ${incoming.workspaceId} AND storage_used_bytes + ${photo.sizeBytes} <= storage_budget_bytes
          RETURNING id`
        if (reserved.length === 0) return { _tag: "OverBudget" as const }
        const rows = yield* sql<MediaRow>`
          INSERT INTO media ${sql.insert({
            id,
            workspace_id: incoming.workspaceId,
            created_at: new Date(),
            label: incoming.label,
            tags: [...incoming.tags],
            width: photo.width,
            height: photo.height,
            mime_type: photo.mimeType,
            file_size_bytes: photo.sizeBytes,
            blob_key: blobKey,
            source_ref: incoming.sourceRef ?? null
          })}
          ON CONFLICT (workspace_id, source_ref) WHERE source_ref IS NOT NULL DO NOTHING
          RETURNING *`
        if (rows.length === 0) return yield* Effect.fail({ _tag: "Duplicate" as const })
        return { _tag: "Inserted" as const, row: rows[0] }
      })
    ).pipe(
      Effect.catchTag("Duplicate", () => Effect.succeed({ _tag: "Duplicate" as const })),
      Effect.orDie
    )
    if (inserted._tag !== "Inserted") {
      yield* blobs.remove(blobKey)
      return yield* Effect.fail(
        inserted._tag === "OverBudget"
          ? Errors.fail("quota_exceeded", "the workspace's storage budget cannot hold this file")
          : Errors.fail("validation_failed", "this drive file is already in the library")
      )
    }
    WorkMetrics.mediaUploaded[incoming.source].unsafeUpdate(1, [])
    // the vision model looks at the photo after the upload has answered (MediaInference.ts)
    yield* MediaInference.inferInBackground(inserted.row.id, blobKey)
    return inserted.row
  }).pipe(Effect.withSpan("MediaLibrary.ingest", { attributes: { "p2v.media.source": incoming.source }, captureStackTrace: false }))

/** A workspace's own, non-archived photo; anything else is indistinguishable from unknown. */
export const find = (workspaceId: string, id: string) =>
  Effect.gen(function*() {
    if (!Ids.isMediaId(id)) return undefined
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<MediaRow>`
      SELECT * FROM media WHERE id = ${id} AND workspace_id = ${workspaceId} AND archived_at IS NULL`
    return rows[0]
  }).pipe(Effect.orDie)

/** Where a photo's original is stored, archived or not: a render accepted before an archive still runs. */
export const storedKey = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ blob_key: string }>`SELECT blob_key FROM media WHERE id = ${id}`
    return rows[0]?.blob_key
  }).pipe(Effect.orDie)

export const get = (workspaceId: string, id: string) =>
  Effect.flatMap(find(workspaceId, id), (m) =>
    m === undefined ? Effect.fail(Errors.fail("unknown_media", `no media ${id} in this library`)) : Effect.succeed(m))

export const list = (workspaceId: string, limit: number, cursor: Cursor.Position | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = cursor === undefined
      ? yield* sql<MediaRow>`
          SELECT * FROM media WHERE workspace_id = ${workspaceId} AND archived_at IS NULL
          ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
      : yield* sql<MediaRow>`
          SELECT * FROM media WHERE workspace_id = ${workspaceId} AND archived_at IS NULL
            AND (created_at, id) < (${new Date(cursor.createdAt)}, ${cursor.id}::uuid)
          ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    const hasMore = rows.length > limit
    return {
      rows: page,
      hasMore,
      nextCursor: hasMore && last !== undefined ? Cursor.encodeCursor({ createdAt: last.created_at.toISOString(), id: last.id }) : null
    }
  }).pipe(Effect.orDie)

export const previewOf = (m: MediaRow) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    const path = yield* blobs.localPath(m.blob_key)
    if (path === undefined) return yield* Effect.fail(Errors.fail("unknown_media", `media ${m.id} has no stored file`))
    return yield* Photos.preview(path, m.mime_type)
  })

/** Archiving frees the photo's storage and hides it from the list, previews and new renders. */
export const archive = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (!Ids.isMediaId(id)) return yield* Effect.fail(Errors.fail("unknown_media", `no media ${id}`))
    const rows = yield* sql.withTransaction(Effect.gen(function*() {
      const archived = yield* sql<MediaRow>`
        UPDATE media SET archived_at = ${new Date()} WHERE id = ${id} AND archived_at IS NULL RETURNING *`
      if (archived.length > 0) {
        yield* sql`UPDATE workspaces SET storage_used_bytes = greatest(0, storage_used_bytes - ${archived[0].file_size_bytes})
          WHERE id = ${archived[0].workspace_id}`
        return archived
      }
      return yield* sql<MediaRow>`SELECT * FROM media WHERE id = ${id}`
    })).pipe(Effect.orDie)
    if (rows.length === 0) return yield* Effect.fail(Errors.fail("unknown_media", `no media ${id}`))
    return rows[0]
  })

export const publicBaseUrl = Effect.map(AppConfig, (c) => c.publicBaseUrl)
