import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import * as ApiKeyEntity from "@pic2video/cluster/ApiKeyEntity"
import { BlobStore } from "@pic2video/cluster/BlobStore"
import * as MediaLibrary from "@pic2video/cluster/MediaLibrary"
import { RenderEntity } from "@pic2video/cluster/RenderEntity"
import * as Renders from "@pic2video/cluster/Renders"
import { Errors, Ids, type Requests, SpendCap } from "@pic2video/domain"
import { prepareCaption } from "@pic2video/renderer"
import { Effect, FiberRef, Option } from "effect"
import { Api } from "../Api.ts"
import { CurrentRecord } from "../Idempotency.ts"
import { Principal } from "../Principal.ts"
import { SqlClient } from "@effect/sql"

const entityTimeout = "13 seconds"
/**
 * The charge must commit within this, or not at all; we wait a little longer before concluding.
 * Generous: a burst of creates on one key queues on the key's row lock, and a failover takes ~10 s.
 */
const chargeBudgetMillis = 12_000

const notFound = (id: string) => Errors.fail("render_not_found", `no render ${id} for this account`)

export const layer = HttpApiBuilder.group(Api, "renders", (handlers) =>
  Effect.gen(function*() {
    const baseUrl = yield* MediaLibrary.publicBaseUrl
    const keys = yield* ApiKeyEntity.ApiKeyEntity.client
    const renders = yield* RenderEntity.client
    const sql = yield* SqlClient.SqlClient

    /** decisions §4.9: lookups (404), then charges (402), then the caption (502), then side effects. */
    const create = (payload: Requests.CreateRenderBody, idempotencyKey: string | undefined) =>
      Effect.gen(function*() {
        const principal = yield* Principal
        const media = yield* MediaLibrary.get(principal.workspaceId, payload.media_id)

        // a cheap look before the caption work; the charge transaction decides for real
        const [key] = yield* sql<{ spend_cap_24h: number | null }>`SELECT spend_cap_24h FROM api_keys WHERE id = ${principal.keyId}`.pipe(Effect.orDie)
        const cap = key?.spend_cap_24h ?? null
        if (cap !== null && (yield* Renders.chargedInLast24h(principal.keyId, new Date())) >= cap) {
          return yield* Effect.fail(Errors.fail("spend_cap_reached", "this key's 24-hour spend cap is used up"))
        }
        const usage = yield* Renders.usage(principal.workspaceId)
        if (!SpendCap.allowanceLeft(usage.included, usage.used)) {
          return yield* Effect.fail(Errors.fail("quota_exceeded", usage.included === 0
            ? "the plan includes no renders"
            : "the billing cycle's render allowance is used up"))
        }

        const renderId = Ids.newRenderId()
        const overlay = yield* prepareCaption(payload, {
          width: media.width ?? 1080,
          height: media.height ?? 1920,
          imageClass: payload.image_class
        }).pipe(Effect.mapError((e) => Errors.fail("caption_prep_failed", `the caption could not be composited: ${e.message}`)))
        const blobs = yield* BlobStore
        const captionBlobKey = overlay === null ? null : `captions/${renderId}.png`
        if (overlay !== null && captionBlobKey !== null) yield* blobs.putBytes(captionBlobKey, overlay)

        const { metadata, ...request } = payload
        const deadline = Date.now() + chargeBudgetMillis
        const unavailable = Errors.fail("service_unavailable", "the service is briefly unavailable; retry", { retryAfter: 2 })
        // Timed out or unreachable: the entity cannot commit past the deadline, so after it the
        // renders table tells for certain whether this render was charged.
        const settle = Effect.gen(function*() {
          yield* Effect.sleep(Math.max(0, deadline + 500 - Date.now()))
          const row = yield* Renders.byId(renderId)
          return row === undefined ? yield* Effect.fail(unavailable) : { renderId, charged: true }
        })
        const charged = yield* keys(principal.keyId).Charge({
          renderId,
          workspaceId: principal.workspaceId,
          mediaId: media.id,
          spendCap: cap,
          request,
          metadata: metadata ?? {},
          idempotencyKey: idempotencyKey ?? null,
          idempotencyRecordId: Option.getOrNull(yield* FiberRef.get(CurrentRecord)),
          captionBlobKey,
          deadline
        }).pipe(
          Effect.timeout(entityTimeout),
          Effect.catchTags({
            ChargeRefused: (e) => e.code === "service_unavailable" ? settle : Effect.fail(Errors.fail(e.code, e.message)),
            TimeoutException: () => settle
          }),
          Effect.catchIf((e): e is Exclude<typeof e, Errors.ApiFailure> => !(e instanceof Errors.ApiFailure), () => settle),
          Effect.tapError(() => captionBlobKey === null ? Effect.void : blobs.remove(captionBlobKey))
        )
        if (!charged.charged && captionBlobKey !== null) yield* blobs.remove(captionBlobKey)
        // charged: from here on the answer is 202 whatever happens; the sweeper resends a lost Start
        yield* renders(charged.renderId).Start({ renderId: charged.renderId }, { discard: true }).pipe(
          Effect.timeout(entityTimeout),
          Effect.catchAllCause((cause) => Effect.logWarning("Start not sent; the sweeper will resend it", cause))
        )
        return { object: "render" as const, id: charged.renderId, status: "queued" as const }
      })

    return handlers
      .handle("createRender", ({ headers, payload }) => create(payload, headers["idempotency-key"]))
      .handle("getRender", ({ path }) =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const row = Ids.isRenderId(path.id) ? yield* Renders.find(workspaceId, path.id) : undefined
          if (row === undefined) return yield* Effect.fail(notFound(path.id))
          return Renders.toDocument(row, baseUrl)
        }))
      .handle("downloadRender", ({ path }) =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const row = Ids.isRenderId(path.id) ? yield* Renders.find(workspaceId, path.id) : undefined
          if (row === undefined) return yield* Effect.fail(notFound(path.id))
          const unavailable = Errors.fail("asset_unavailable", row.status === "completed"
            ? "the finished file is not available"
            : `the render is ${row.status}; the file is available once it is completed`)
          if (row.status !== "completed" || row.asset_blob_key === null) return yield* Effect.fail(unavailable)
          const file = yield* (yield* BlobStore).localPath(row.asset_blob_key)
          if (file === undefined) return yield* Effect.fail(unavailable)
          return yield* HttpServerResponse.file(file, {
            contentType: "video/mp4",
            headers: {
              "content-disposition": `attachment; filename="${row.id}.mp4"`,
              "cache-control": "private, no-store"
            }
          }).pipe(Effect.orDie)
        }))
      .handle("getUsage", () =>
        Effect.gen(function*() {
          const { workspaceId } = yield* Principal
          const usage = yield* Renders.usage(workspaceId)
          return {
            object: "usage" as const,
            cycle_start: usage.cycleStart.toISOString(),
            aesthetic_quotes: { used: usage.used, included: usage.included }
          }
        }))
  }))

