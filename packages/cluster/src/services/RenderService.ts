import { type Caller, Errors, Idempotency, Ids, RenderState, type Requests, type Resources } from "@pic2video/domain"
import { POSTER, prepareCaption } from "@pic2video/renderer"
import { framingInputs } from "@pic2video/vision"
import { Clock, Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ApiKeyEntity } from "../entities/ApiKeyEntity.ts"
import { RenderEntity } from "../entities/RenderEntity.ts"
import * as MediaInference from "../media/MediaInference.ts"
import * as MediaLibrary from "../media/MediaLibrary.ts"
import * as WorkMetrics from "../metrics/WorkMetrics.ts"
import { MediaRepo } from "../repositories/MediaRepo.ts"
import { type RenderRow, RendersRepo } from "../repositories/RendersRepo.ts"
import { BlobStore } from "../storage/BlobStore.ts"
import { type ChargeRefused, Charges, type NewRender, resultOf } from "./Charges.ts"
import * as RenderTransitions from "./RenderTransitions.ts"

/** The idempotency of one create: the client's key, and the API's record when there is one. */
export interface CreateIdempotency {
  readonly key: string
  /** the API's idempotency record (scoped to the key); null for a keyless payer, whose key is matched on the renders row */
  readonly recordId: number | null
}

const entityTimeout = "13 seconds"
/**
 * The charge must commit within this, or not at all; we wait a little longer before concluding.
 * Generous: a burst of creates on one key waits on the key's row lock, and a failover takes ~10 s.
 */
const chargeBudgetMillis = 12_000

/**
 * Whether a create sent again under a key asks for the render the key already made: the same body
 * (the stored request and metadata, compared as canonical JSON, as the API's fingerprint does).
 */
const sameCreate = (earlier: RenderRow, body: Requests.CreateRenderBody) => {
  const { metadata, ...request } = body
  const canonical = (value: unknown) => Idempotency.canonicalJson(JSON.parse(JSON.stringify(value)))
  return canonical({ request, metadata: metadata ?? {} }) ===
    canonical({ request: earlier.request, metadata: earlier.metadata })
}

const notFound = (id: string) => Errors.fail("render_not_found", `no render ${id} for this account`)

/** A refused charge as the API and the portal answer it: the one place a `ChargeRefused` becomes a catalogue failure. */
const refused = (e: ChargeRefused) => Errors.fail(e.code, e.message)

/** The API's document of a render (contract §4.9), as the API, the portal and the operator CLI answer it. */
export const renderDocument = (r: RenderRow, publicBaseUrl: string) => ({
  object: "render" as const,
  id: r.id,
  type: "aesthetic_quote" as const,
  status: r.status,
  progress: r.progress,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
  completed_at: r.completed_at?.toISOString() ?? null,
  asset: RenderState.isCompleted(r.status)
    ? {
      url: `${publicBaseUrl}/api/v1/renders/${r.id}/download`,
      expires_at: null,
      content_type: r.asset_content_type,
      width: r.asset_width,
      height: r.asset_height,
      byte_size: r.asset_byte_size,
      duration_sec: r.asset_duration_sec ?? 0
    }
    : null,
  error: r.error_code !== null ? { code: r.error_code, message: r.error_message ?? r.error_code } : null,
  idempotency_key: r.idempotency_key,
  metadata: r.metadata
})

/**
 * Ends a render as canceled and refunds it; a render already terminal stays as it is. The operator
 * CLI's `render cancel` (any workspace) and the service's `cancel` (one workspace) both come here.
 */
export const cancel = (id: string, workspaceId?: string) =>
  Effect.gen(function*() {
    const renders = yield* RendersRepo
    const unknown = workspaceId === undefined ? Errors.fail("render_not_found", `no render ${id}`) : notFound(id)
    if (!Ids.isRenderId(id)) return yield* Effect.fail(unknown)
    const before = workspaceId === undefined ? yield* renders.byId(id) : yield* renders.find(workspaceId, id)
    if (before === undefined) return yield* Effect.fail(unknown)
    // the running render sees it is no longer processing at its next progress step and stops
    const ended = yield* RenderTransitions.endUnsuccessfully(id, "render_canceled", "the render was canceled")
    return ended ?? (yield* renders.byId(id)) ?? before
  })

/**
 * Renders as the API and the portal use them. Every method answers with the catalogue's failures
 * (`Errors.ApiFailure`) and needs nothing further from its caller.
 */
export class RenderService extends Context.Service<RenderService>()("pic2video/RenderService", {
  make: Effect.gen(function*() {
    const { publicBaseUrl } = yield* AppConfig
    const keys = yield* ApiKeyEntity.client
    const entities = yield* RenderEntity.client
    const blobs = yield* BlobStore
    const repo = yield* RendersRepo
    const charges = yield* Charges
    const media = yield* MediaRepo
    const withMedia = Effect.provideService(MediaRepo, media)

    /**
     * The payer's charge, through the key's entity when there is a key, else directly; creates of
     * one payer serialise on its row lock in the charge transaction (Charges.ts). Timed out or
     * unreachable: nothing commits past the deadline, so after it the renders table tells for
     * certain whether this render was charged.
     */
    const charge = (input: NewRender) => {
      const unavailable = Errors.fail("service_unavailable", "the service is briefly unavailable; retry", {
        retryAfter: 2
      })
      const settle = Effect.gen(function*() {
        yield* Effect.sleep(Math.max(0, input.deadline + 500 - (yield* Clock.currentTimeMillis)))
        const row = yield* repo.byId(input.id)
        return row === undefined ? yield* Effect.fail(unavailable) : { renderId: input.id, charged: true }
      })
      const { payer } = input
      const attempt = payer.keyId !== null
        ? keys(payer.keyId).Charge(input)
        : Effect.map(charges.charge(input), resultOf)
      return attempt.pipe(
        Effect.timeout(entityTimeout),
        // the rule's refusal stands; anything else (timeout, the entity unreachable, a late or failed
        // commit) is settled by the row
        Effect.catch((e) =>
          e._tag === "ChargeRefused" && e.code !== "service_unavailable" ? Effect.fail(refused(e)) : settle
        )
      )
    }

    /**
     * contract §4.9: lookups (404), then charges (402), then the caption (502), then side effects.
     * Answers the creation document once charged, whatever happens to the Start after it.
     */
    const create = (payer: Caller.Caller, body: Requests.CreateRenderBody, idempotency: CreateIdempotency | null) =>
      Effect.gen(function*() {
        const photo = yield* withMedia(MediaLibrary.get(payer.workspaceId, body.media_id))
        // a keyless payer has no idempotency record to replay from: a form sent again finds its render
        // before the early refusal could refuse it (the charge transaction decides exactly)
        const earlier = payer.keyId === null && idempotency !== null
          ? yield* repo.findKeyless(payer.workspaceId, idempotency.key)
          : undefined
        if (earlier !== undefined) {
          // the same key with another body is refused, as the API refuses it (contract §4.6)
          if (!sameCreate(earlier, body)) {
            return yield* Effect.fail(
              Errors.fail("idempotency_conflict", "this Idempotency-Key was used with a different body")
            )
          }
          return { object: "render" as const, id: earlier.id, status: "queued" as const }
        }
        // a cheap look before the caption work; the charge transaction decides for real
        const refusal = yield* charges.refusal(payer)
        if (refusal !== undefined) return yield* Effect.fail(refused(refusal))

        const renderId = Ids.newRenderId()
        // the render frames the photo from the same inference (MediaInference.asOf), so the caption fits it
        const framing = framingInputs(body.image_class, yield* withMedia(MediaInference.settled(photo.id)))
        const overlay = yield* prepareCaption(body, {
          width: photo.width ?? 1080,
          height: photo.height ?? 1920,
          ...framing
        }).pipe(
          Effect.mapError((e) =>
            Errors.fail("caption_prep_failed", `the caption could not be composited: ${e.message}`)
          )
        )
        const captionBlobKey = overlay === null ? null : `captions/${renderId}.png`
        if (overlay !== null && captionBlobKey !== null) yield* blobs.putBytes(captionBlobKey, overlay)

        const { metadata, ...request } = body
        const charged = yield* charge({
          id: renderId,
          payer,
          mediaId: photo.id,
          request,
          metadata: metadata ?? {},
          idempotencyKey: idempotency?.key ?? null,
          idempotencyRecordId: idempotency?.recordId ?? null,
          captionBlobKey,
          deadline: (yield* Clock.currentTimeMillis) + chargeBudgetMillis
        }).pipe(Effect.tapError(() => captionBlobKey === null ? Effect.void : blobs.remove(captionBlobKey)))
        if (!charged.charged && captionBlobKey !== null) yield* blobs.remove(captionBlobKey)
        // with the runner's "received" and "processing" lines, a render's way through the cluster
        if (charged.charged) yield* Effect.logInfo(`render ${charged.renderId} accepted`)
        // charged: from here on the answer is 202 whatever happens; the sweeper resends a lost Start
        yield* entities(charged.renderId).Start({ renderId: charged.renderId }, { discard: true }).pipe(
          Effect.timeout(entityTimeout),
          Effect.catchCause((cause) => Effect.logWarning("Start not sent; the sweeper will resend it", cause))
        )
        return { object: "render" as const, id: charged.renderId, status: "queued" as const }
      }).pipe(
        Effect.tapError((e) =>
          e.code === "spend_cap_reached"
            ? Effect.sync(() => WorkMetrics.spendCapRefusals.unsafeUpdate(1, []))
            : Effect.void
        )
      )

    /** The workspace's own render as stored, or undefined: a foreign, unknown or malformed id is one answer. */
    const find = (workspaceId: string, id: string) =>
      Ids.isRenderId(id) ? repo.find(workspaceId, id) : Effect.succeed(undefined)

    const row = (workspaceId: string, id: string) =>
      Effect.flatMap(find(workspaceId, id), (r) => r === undefined ? Effect.fail(notFound(id)) : Effect.succeed(r))

    const get = (workspaceId: string, id: string) =>
      Effect.map(row(workspaceId, id), (r) => renderDocument(r, publicBaseUrl))

    /** The API's document of a row already read (the poll reads it with the key: Authentication.ts). */
    const document = (r: RenderRow) => renderDocument(r, publicBaseUrl)

    /** `get`'s answer for a render read with the key: its document, or the same 404 as `get`. */
    const answer = (id: string, read: Resources.Render | undefined) =>
      read === undefined ? Effect.fail(notFound(id)) : Effect.succeed(read)

    /** The finished video's stored key: only a completed render has one. */
    const assetKey = (workspaceId: string, id: string) =>
      Effect.gen(function*() {
        const r = yield* row(workspaceId, id)
        const unavailable = Errors.fail(
          "asset_unavailable",
          RenderState.isCompleted(r.status)
            ? "the finished file is not available"
            : `the render is ${r.status}; the file is available once it is completed`
        )
        if (!RenderState.isCompleted(r.status) || r.asset_blob_key === null) return yield* Effect.fail(unavailable)
        return { key: r.asset_blob_key, filename: `${r.id}.mp4`, unavailable }
      })

    /** The finished video streamed from the store (local directory or object store). */
    const download = (workspaceId: string, id: string) =>
      Effect.gen(function*() {
        const asset = yield* assetKey(workspaceId, id)
        const blob = yield* blobs.open(asset.key)
        if (blob === undefined) return yield* Effect.fail(asset.unavailable)
        return { blob, contentType: "video/mp4", filename: asset.filename }
      })

    /** The finished video as a local file (the portal's player serves byte ranges from it). */
    const downloadFile = (workspaceId: string, id: string) =>
      Effect.gen(function*() {
        const asset = yield* assetKey(workspaceId, id)
        const path = yield* blobs.localPath(asset.key)
        if (path === undefined) return yield* Effect.fail(asset.unavailable)
        return { path, contentType: "video/mp4", filename: asset.filename }
      })

    /**
     * Whether the payer can cover the creates under these idempotency keys, asked once before a batch
     * (the portal's "Render selected"): a key that already made a render will not charge again, so only
     * the others count; then the one charge rule for that many (`SpendCap.chargeRefusalFor`). Each
     * create is still decided on its own. Keyless payers only (a key's creates go through the API).
     */
    const batchRefusal = (payer: Caller.Caller, keys: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const earlier = yield* Effect.forEach(keys, (key) => repo.findKeyless(payer.workspaceId, key))
        const refusal = yield* charges.refusal(payer, earlier.filter((r) => r === undefined).length)
        return refusal === undefined ? undefined : refused(refusal)
      })

    /** A completed render's poster (the portal's thumbnails; the API has none): undefined when it has none. */
    const poster = (workspaceId: string, id: string) =>
      Effect.gen(function*() {
        const r = yield* row(workspaceId, id)
        const blob = r.poster_blob_key === null ? undefined : yield* blobs.open(r.poster_blob_key)
        return blob === undefined ? undefined : { blob, contentType: POSTER.contentType }
      })

    const usage = (workspaceId: string) =>
      Effect.map(repo.usage(workspaceId), (u) => ({
        object: "usage" as const,
        cycle_start: u.cycleStart.toISOString(),
        aesthetic_quotes: { used: u.used, included: u.included }
      }))

    return {
      create,
      get,
      document,
      answer,
      download,
      downloadFile,
      batchRefusal,
      poster,
      usage,
      cancel: (workspaceId: string, id: string) =>
        Effect.map(
          Effect.provideService(cancel(id, workspaceId), RendersRepo, repo),
          (r) => renderDocument(r, publicBaseUrl)
        ),
      // the portal's views, which the API has no endpoint for
      find,
      list: repo.list,
      /** This cycle's allowance and use, and its renders by status. */
      cycle: (workspaceId: string) =>
        Effect.flatMap(
          repo.usage(workspaceId),
          (u) => Effect.map(repo.countByStatus(workspaceId, u.cycleStart), (byStatus) => ({ ...u, byStatus }))
        ),
      /** A key's charged renders in its 24-hour spend window. */
      chargedInWindow: repo.chargedInWindow
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(Charges.layer))
}
