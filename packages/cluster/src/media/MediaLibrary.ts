import { Cursor, Errors, Ids } from "@pic2video/domain"
import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import * as WorkMetrics from "../metrics/WorkMetrics.ts"
import * as Media from "../repositories/MediaRepo.ts"
import { MediaRepo } from "../repositories/MediaRepo.ts"
import { BlobStore } from "../storage/BlobStore.ts"
import * as MediaInference from "./MediaInference.ts"
import * as Photos from "./Photos.ts"

/**
 * The workspace's photo library. `ingest` is the one upload path: a direct upload and every file of
 * a drive import go through it, so both are sniffed, decoded and budgeted the same way.
 */
export type MediaRow = Media.MediaRow

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

interface Incoming {
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
    const repo = yield* MediaRepo
    const blobs = yield* BlobStore
    const photo = yield* Photos.inspect(incoming.path, incoming)
    const id = Ids.newMediaId()
    const blobKey = `media/${incoming.workspaceId}/${id}`
    yield* blobs.putFile(blobKey, incoming.path).pipe(
      Effect.withSpan("media.store", { attributes: { "p2v.blob.bytes": photo.sizeBytes } }, {
        captureStackTrace: false
      })
    )
    // the budget check and the insert are one transaction: concurrent uploads never exceed it
    const added = yield* repo.add({
      id,
      workspaceId: incoming.workspaceId,
      label: incoming.label,
      tags: incoming.tags,
      width: photo.width,
      height: photo.height,
      mimeType: photo.mimeType,
      sizeBytes: photo.sizeBytes,
      blobKey,
      sourceRef: incoming.sourceRef ?? null
    })
    if (added._tag !== "Inserted") {
      yield* blobs.remove(blobKey)
      return yield* Effect.fail(
        added._tag === "OverBudget"
          ? Errors.fail("quota_exceeded", "the workspace's storage budget cannot hold this file")
          : Errors.fail("validation_failed", "this drive file is already in the library")
      )
    }
    WorkMetrics.mediaUploaded[incoming.source].unsafeUpdate(1, [])
    // the vision model looks at the photo after the upload has answered (MediaInference.ts)
    yield* MediaInference.inferInBackground(added.row.id, blobKey)
    return added.row
  }).pipe(
    Effect.withSpan("MediaLibrary.ingest", { attributes: { "p2v.media.source": incoming.source } }, {
      captureStackTrace: false
    })
  )

/** A workspace's own, non-archived photo; anything else is indistinguishable from unknown. */
export const find = (workspaceId: string, id: string) => Effect.flatMap(MediaRepo, (repo) => repo.find(workspaceId, id))

export const get = (workspaceId: string, id: string) =>
  Effect.flatMap(
    find(workspaceId, id),
    (m) =>
      m === undefined ? Effect.fail(Errors.fail("unknown_media", `no media ${id} in this library`)) : Effect.succeed(m)
  )

export const list = (workspaceId: string, limit: number, cursor: Cursor.Position | undefined) =>
  Effect.gen(function*() {
    const rows = yield* (yield* MediaRepo).page(workspaceId, limit + 1, cursor)
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    const hasMore = rows.length > limit
    return {
      rows: page,
      hasMore,
      nextCursor: hasMore && last !== undefined
        ? Cursor.encodeCursor({ createdAt: last.created_at.toISOString(), id: last.id })
        : null
    }
  })

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
    if (!Ids.isMediaId(id)) return yield* Effect.fail(Errors.fail("unknown_media", `no media ${id}`))
    const row = yield* (yield* MediaRepo).archive(id)
    if (row === undefined) return yield* Effect.fail(Errors.fail("unknown_media", `no media ${id}`))
    return row
  })

export const publicBaseUrl = Effect.map(AppConfig, (c) => c.publicBaseUrl)
