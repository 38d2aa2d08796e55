import { MediaService } from "@pic2video/cluster/services/MediaService"
import { Api, UploadPayload } from "@pic2video/domain/api/Api"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { payload, Principal } from "../Principal.ts"

const sendPreview = (preview: { readonly bytes: Uint8Array; readonly contentType: string }) =>
  HttpServerResponse.uint8Array(preview.bytes, {
    contentType: preview.contentType,
    headers: { "cache-control": "private, no-store" }
  })

export const layer = HttpApiBuilder.group(Api, "media", (handlers) =>
  Effect.gen(function*() {
    const media = yield* MediaService
    return handlers
      .handle("listMedia", ({ query }) =>
        Effect.orDie(Effect.flatMap(Principal, (p) => media.list(p.workspaceId, query))))
      // the parts were read once by the pipeline (UploadBody.ts); decoded here (contract §4.8)
      .handleRaw("uploadMedia", () =>
        Effect.orDie(Effect.flatMap(Effect.all([Principal, payload(UploadPayload)]), ([p, payload]) =>
          media.upload(p.workspaceId, {
            source: "api",
            path: payload.file.path,
            filename: payload.file.name,
            contentType: payload.file.contentType,
            label: payload.label,
            tags: payload.tags
          }))))
      .handle("previewMedia", ({ params }) =>
        Effect.orDie(Effect.flatMap(Principal, (p) =>
          Effect.map(media.preview(p.workspaceId, params.id), sendPreview))))
  }))
