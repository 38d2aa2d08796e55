import type { OpenedBlob } from "@pic2video/cluster/BlobStore"
import { RenderService } from "@pic2video/cluster/services/RenderService"
import { Admitted } from "@pic2video/domain/api/Annotations"
import { Api } from "@pic2video/domain/api/Api"
import * as Requests from "@pic2video/domain/Requests"
import { Effect, Option } from "effect"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { currentIdempotency } from "../Idempotency.ts"
import { payer, payload, Principal } from "../Principal.ts"

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
      // the body was read once by the pipeline; decoded here (contract §4.8)
      .handleRaw("createRender", ({ headers }) =>
        Effect.orDie(Effect.flatMap(
          Effect.all([payer, payload(Requests.CreateRenderBody), currentIdempotency(headers["idempotency-key"])]),
          ([p, body, idempotency]) => renders.create(p, body, idempotency)
        )))
      // the poll: the pipeline read the render with the key (ReadsRenderWithKey, one round trip)
      .handle("getRender", ({ params }) =>
        Effect.orDie(Effect.flatMap(Admitted, (a) =>
          Option.match(a.render, {
            onSome: (read) => renders.answer(params.id, read),
            onNone: () => Effect.die(new Error("getRender ran without the render read with the key"))
          }))))
      .handle("downloadRender", ({ params }) =>
        Effect.orDie(
          Effect.flatMap(Principal, (p) => Effect.map(renders.download(p.workspaceId, params.id), sendVideo))
        ))
      .handle("getUsage", () => Effect.orDie(Effect.flatMap(Principal, (p) => renders.usage(p.workspaceId))))
  }))
