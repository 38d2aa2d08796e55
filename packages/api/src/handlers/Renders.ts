import { RenderService } from "@pic2video/cluster/services/RenderService"
import type { OpenedBlob } from "@pic2video/cluster/storage/BlobStore"
import { Admitted } from "@pic2video/domain/api/Annotations"
import { Api } from "@pic2video/domain/api/Api"
import * as Requests from "@pic2video/domain/Requests"
import { Effect } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { caller, idempotency, payload } from "../Admitted.ts"

/** streamed from the store (local directory or object store); 503 when it cannot be reached */
const sendVideo = (file: { readonly blob: OpenedBlob; readonly contentType: string; readonly filename: string }) =>
  HttpServerResponse.stream(file.blob.stream, {
    contentType: file.contentType,
    contentLength: file.blob.size,
    headers: {
      "content-disposition": `attachment; filename="${file.filename}"`,
      "cache-control": "private, no-store",
      ...(file.blob.etag === undefined ? {} : { etag: file.blob.etag }),
      ...(file.blob.lastModified === undefined ? {} : { "last-modified": file.blob.lastModified.toUTCString() })
    }
  })

export const layer = HttpApiBuilder.group(Api, "renders", (handlers) =>
  Effect.gen(function*() {
    const renders = yield* RenderService
    return handlers
      // the body was read once by admission; decoded here (contract §4.8)
      .handleRaw("createRender", ({ headers }) =>
        Effect.flatMap(
          Effect.all([caller, payload(Requests.CreateRenderBody), idempotency(headers["idempotency-key"])]),
          ([c, body, idempotency]) => renders.create(c, body, idempotency)
        ))
      // the poll: admission read the render with the key (ReadsRenderWithKey, one round trip)
      .handle("getRender", ({ params }) => Effect.flatMap(Admitted, (a) => renders.answer(params.id, a.render)))
      .handle("downloadRender", ({ params }) =>
        Effect.flatMap(caller, (c) => Effect.map(renders.download(c.workspaceId, params.id), sendVideo)))
      .handle("getUsage", () =>
        Effect.flatMap(caller, (c) => renders.usage(c.workspaceId)))
  }))
