import { MediaService } from "@pic2video/cluster/services/MediaService"
import { Api, UploadPayload } from "@pic2video/domain/api/Api"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { caller, payload } from "../Admitted.ts"

const sendPreview = (preview: { readonly bytes: Uint8Array; readonly contentType: string }) =>
  HttpServerResponse.uint8Array(preview.bytes, {
    contentType: preview.contentType,
    headers: { "cache-control": "private, no-store" }
  })

export const layer = HttpApiBuilder.group(Api, "media", (handlers) =>
  Effect.gen(function*() {
    const media = yield* MediaService
    return handlers
      .handle("listMedia", ({ query }) => Effect.flatMap(caller, (c) => media.list(c.workspaceId, query)))
      // the parts were read once by admission (UploadBody.ts); decoded here (contract §4.8)
      .handleRaw("uploadMedia", () =>
        Effect.flatMap(Effect.all([caller, payload(UploadPayload)]), ([c, payload]) =>
          media.upload(c.workspaceId, {
            source: "api",
            path: payload.file.path,
            filename: payload.file.name,
            contentType: payload.file.contentType,
            label: payload.label,
            tags: payload.tags
          })))
      .handle("previewMedia", ({ params }) =>
        Effect.flatMap(caller, (c) =>
          Effect.map(media.preview(c.workspaceId, params.id), sendPreview)))
  }))
