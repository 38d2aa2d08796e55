import { Cursor, Errors, Ids, Requests } from "@pic2video/domain"
import { Vision } from "@pic2video/vision"
import { Context, Effect, Layer, Result, Schema } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import * as MediaLibrary from "../media/MediaLibrary.ts"
import { MediaRepo } from "../repositories/MediaRepo.ts"
import { BlobStore } from "../storage/BlobStore.ts"

const invalid = (message: string) => Effect.fail(Errors.fail("validation_failed", message))

const decodeLimit = Schema.decodeUnknownResult(Requests.ListLimit)
const decodeLabel = Schema.decodeUnknownResult(Requests.UploadLabel)
const decodeTag = Schema.decodeUnknownResult(Requests.UploadTag)

/** An upload as the HTTP layer (or the portal) received it: a local file and its form fields. */
export interface Upload {
  /** where it came in (the `p2v_media_uploaded_total` label) */
  readonly source: "api" | "portal"
  readonly path: string
  readonly filename?: string
  readonly contentType?: string
  readonly label?: string
  readonly tags?: ReadonlyArray<string>
}

/** The workspace's photo library as the API and the portal use it; answers are documents. */
export class MediaService extends Context.Service<MediaService>()("pic2video/MediaService", {
  make: Effect.gen(function*() {
    const { publicBaseUrl } = yield* AppConfig
    const repo = yield* MediaRepo
    const blobs = yield* BlobStore
    const vision = yield* Vision
    const withStore = <A, E>(e: Effect.Effect<A, E, MediaRepo | BlobStore | Vision>) =>
      e.pipe(
        Effect.provideService(MediaRepo, repo),
        Effect.provideService(BlobStore, blobs),
        Effect.provideService(Vision, vision)
      )

    /** A page, newest first; `limit` and `cursor` as sent in the query string. */
    const list = (workspaceId: string, query: { readonly limit?: string; readonly cursor?: string }) =>
      Effect.gen(function*() {
        const limit = query.limit === undefined ? Result.succeed(Requests.defaultListLimit) : decodeLimit(query.limit)
        if (Result.isFailure(limit)) return yield* invalid("limit: must be an integer from 1 to 100")
        const cursor = query.cursor === undefined ? undefined : Cursor.decodeCursor(query.cursor)
        if (query.cursor !== undefined && (cursor === undefined || !Ids.isMediaId(cursor.id))) {
          return yield* invalid("cursor: not a cursor this endpoint returned")
        }
        const page = yield* withStore(MediaLibrary.list(workspaceId, limit.success, cursor))
        return {
          object: "list" as const,
          data: page.rows.map((m) => MediaLibrary.toDocument(m, publicBaseUrl)),
          has_more: page.hasMore,
          next_cursor: page.nextCursor
        }
      })

    /** The one upload path (`MediaLibrary.ingest`), after the form fields' own rules. */
    const upload = (workspaceId: string, file: Upload) =>
      Effect.gen(function*() {
        const label = file.label ?? ""
        const tags = file.tags ?? []
        if (Result.isFailure(decodeLabel(label))) {
          return yield* invalid("label: must be at most 200 characters, without U+0000")
        }
        if (tags.length > Requests.maxTags) return yield* invalid(`tags: at most ${Requests.maxTags} tags`)
        if (tags.some((t) => Result.isFailure(decodeTag(t)))) {
          return yield* invalid("tags: each tag must be 1 to 50 characters, without U+0000")
        }
        const row = yield* withStore(MediaLibrary.ingest({
          source: file.source,
          workspaceId,
          path: file.path,
          filename: file.filename,
          contentType: file.contentType,
          label,
          tags
        }))
        return MediaLibrary.toDocument(row, publicBaseUrl, { justUploaded: true })
      })

    /** The preview's bytes and type. */
    const preview = (workspaceId: string, id: string) =>
      withStore(Effect.flatMap(MediaLibrary.get(workspaceId, id), MediaLibrary.previewOf))

    return {
      list,
      upload,
      preview,
      // the portal's views of the library: the rows themselves (what the model saw in each photo too)
      find: repo.find,
      rows: (workspaceId: string, limit: number, cursor: Cursor.Position | undefined) =>
        withStore(MediaLibrary.list(workspaceId, limit, cursor)),
      previewOf: (row: MediaLibrary.MediaRow) => withStore(MediaLibrary.previewOf(row)),
      archive: (id: string) => withStore(MediaLibrary.archive(id))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
