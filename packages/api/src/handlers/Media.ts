import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import * as MediaLibrary from "@pic2video/cluster/MediaLibrary"
import { Cursor, Errors, Ids, Requests } from "@pic2video/domain"
import { Effect, Either, Schema } from "effect"
import { Api } from "../Api.ts"
import { Principal } from "../Principal.ts"

const invalid = (message: string) => Effect.fail(Errors.fail("validation_failed", message))

const decodeLimit = Schema.decodeUnknownEither(Requests.ListLimit)
const decodeLabel = Schema.decodeUnknownEither(Requests.UploadLabel)
const decodeTag = Schema.decodeUnknownEither(Requests.UploadTag)

export const layer = HttpApiBuilder.group(Api, "media", (handlers) =>
  Effect.gen(function*() {
    const baseUrl = yield* MediaLibrary.publicBaseUrl
    return handlers
      .handle("listMedia", ({ urlParams }) =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const limit = urlParams.limit === undefined ? Either.right(Requests.defaultListLimit) : decodeLimit(urlParams.limit)
          if (Either.isLeft(limit)) return yield* invalid("limit: must be an integer from 1 to 100")
          const cursor = urlParams.cursor === undefined ? undefined : Cursor.decodeCursor(urlParams.cursor)
          if (urlParams.cursor !== undefined && (cursor === undefined || !Ids.isMediaId(cursor.id))) return yield* invalid("cursor: not a cursor this endpoint returned")
          const page = yield* MediaLibrary.list(workspaceId, limit.right, cursor)
          return {
            object: "list" as const,
            data: page.rows.map((m) => MediaLibrary.toDocument(m, baseUrl)),
            has_more: page.hasMore,
            next_cursor: page.nextCursor
          }
        }))
      .handle("uploadMedia", ({ payload }) =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const label = payload.label ?? ""
          const tags = payload.tags ?? []
          if (Either.isLeft(decodeLabel(label))) return yield* invalid("label: must be at most 200 characters, without U+0000")
          if (tags.length > Requests.maxTags) return yield* invalid("tags: at most 20 tags")
          if (tags.some((t) => Either.isLeft(decodeTag(t)))) return yield* invalid("tags: each tag must be 1 to 50 characters, without U+0000")
          const row = yield* MediaLibrary.ingest({
            workspaceId,
            path: payload.file.path,
            filename: payload.file.name,
            contentType: payload.file.contentType,
            label,
            tags
          })
          return MediaLibrary.toDocument(row, baseUrl, { justUploaded: true })
        }))
      .handle("previewMedia", ({ path }) =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const media = yield* MediaLibrary.get(workspaceId, path.id)
          const preview = yield* MediaLibrary.previewOf(media)
          return HttpServerResponse.uint8Array(preview.bytes, {
            contentType: preview.contentType,
            headers: { "cache-control": "private, no-store" }
          })
        }))
  }))
