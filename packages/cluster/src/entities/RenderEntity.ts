import { RenderState } from "@pic2video/domain"
import { Renderer, type RenderResult, renderVideo } from "@pic2video/renderer"
import { framingInputs } from "@pic2video/vision"
import {
  Cause,
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Layer,
  Metric,
  Schedule,
  Schema,
  Semaphore
} from "effect"
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import * as fs from "node:fs/promises"
import { AppConfig } from "../config/AppConfig.ts"
import * as MediaInference from "../media/MediaInference.ts"
import * as WorkMetrics from "../metrics/WorkMetrics.ts"
import { MediaRepo } from "../repositories/MediaRepo.ts"
import { RendersRepo } from "../repositories/RendersRepo.ts"
import * as RenderTransitions from "../services/RenderTransitions.ts"
import { BlobStore, type Unavailable as StoreUnavailable } from "../storage/BlobStore.ts"

/**
 * One entity per render. `Start` is persisted: it is stored before delivery and redelivered until
 * a reply is stored, so a render whose runner crashes (or drains on SIGTERM) runs again on the
 * runner that takes its shard over; deterministic output makes a rerun harmless. The entity owns
 * the render's transitions; every one is written to the renders table.
 */
export const RenderEntity = Entity.make("Render", [
  Rpc.make("Start", {
    payload: { renderId: Schema.String },
    success: Schema.String, // the terminal status
    primaryKey: () => "start"
  })
    .annotate(ClusterSchema.Persisted, true)
    // the sender never waits; an interrupt must never be stored as the reply
    .annotate(ClusterSchema.Uninterruptible, "client")
])

/** Renders this runner executes at once (RENDER_CONCURRENCY); the rest wait their turn queued. */
class RenderSlots extends Context.Service<RenderSlots, Semaphore.Semaphore>()("pic2video/RenderSlots") {}

export const layerSlots = Layer.effect(
  RenderSlots,
  Effect.flatMap(AppConfig, (c) => Semaphore.make(c.renderConcurrency))
)

class Canceled extends Schema.TaggedError<Canceled>()("Canceled", {}) {}

const progressEveryMillis = 500

/**
 * An object store that is briefly unreachable is waited out (about 30 s: 1, 2, 4, 8, 16 s); one
 * still down after that fails the render, refunded, rather than holding its slot.
 */
const storeRetry = Schedule.max([Schedule.exponential("1 second"), Schedule.recurs(5)])
const patiently = <A, R>(effect: Effect.Effect<A, StoreUnavailable, R>) => Effect.retry(effect, storeRetry)

const endFailed = (renderId: string, message: string) =>
  RenderTransitions.endUnsuccessfully(renderId, "render_failed", message)

/** Where a render's finished files are stored: the video and, beside it, its poster. */
export const outputKeys = (renderId: string) => ({
  video: `renders/${renderId}.mp4`,
  poster: `renders/${renderId}.poster.jpg`
})

/**
 * Removes a render's stored files, the poster with the video: every place that deletes a render's
 * video comes here (today one: a render that ended, canceled, while its files were being stored).
 */
const removeOutputs = (keys: { readonly video: string; readonly poster: string | null }) =>
  Effect.flatMap(
    BlobStore,
    (blobs) =>
      Effect.all([blobs.remove(keys.video), keys.poster === null ? Effect.void : blobs.remove(keys.poster)], {
        discard: true
      })
  )

/**
 * Stores a finished render's video and poster (local files) and completes the render with them.
 * False, and neither kept, when the render is no longer processing (canceled meanwhile). A store
 * still unreachable after the retries fails (the caller fails the render, refunded) with neither kept.
 */
export const storeOutputs = (
  renderId: string,
  result: RenderResult,
  files: { readonly video: string; readonly poster: string }
) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore
    const named = outputKeys(renderId)
    const keys = { video: named.video, poster: result.poster === undefined ? null : named.poster }
    const stored = Effect.gen(function*() {
      yield* patiently(blobs.putFile(keys.video, files.video))
      if (keys.poster !== null) yield* patiently(blobs.putFile(keys.poster, files.poster))
    })
    yield* stored.pipe(Effect.tapError(() => removeOutputs(keys)))
    const completed = yield* RenderTransitions.complete(renderId, {
      blobKey: keys.video,
      contentType: result.content_type,
      width: result.width,
      height: result.height,
      byteSize: result.byte_size,
      durationSec: result.duration_sec,
      posterBlobKey: keys.poster
    })
    if (!completed) yield* removeOutputs(keys)
    return completed
  })

/** Runs one render to a terminal state; never fails (a fault ends the render as failed and refunded). */
const runRender = (renderId: string) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const blobs = yield* BlobStore
    const slots = yield* RenderSlots
    const renders = yield* RendersRepo
    const initial = yield* renders.byId(renderId)
    if (initial === undefined) return "missing"
    if (RenderState.isTerminal(initial.status)) return initial.status

    // delivered here (first, or after a runner left), before it waits for a slot
    yield* Effect.logInfo(`render ${renderId} received`)
    const deadline = initial.created_at.getTime() + config.renderTimeoutSeconds * 1000
    const fail = (code: "render_failed" | "render_timeout" | "render_rejected", message: string) =>
      Effect.as(RenderTransitions.endUnsuccessfully(renderId, code, message), "failed")

    return yield* slots.withPermits(1)(Effect.scoped(Effect.gen(function*() {
      const row = yield* RenderTransitions.markProcessing(renderId)
      if (row === undefined) return (yield* renders.byId(renderId))?.status ?? "missing"
      // from here to the end of this attempt: active, and timed (p2v_render_processing_seconds)
      const started = yield* Clock.currentTimeMillis
      yield* Metric.modify(WorkMetrics.runnerRendersActive.metric, 1)
      yield* Effect.addFinalizer((exit) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          yield* Metric.modify(WorkMetrics.runnerRendersActive.metric, -1)
          // an attempt interrupted by a shard move or shutdown ends nothing: it runs again elsewhere
          if (!(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause))) {
            yield* Metric.update(WorkMetrics.renderProcessingSeconds.metric, (now - started) / 1000)
          }
        })
      )
      // which runner ran which attempt, for operators (and the join/leave test) to read
      yield* Effect.logInfo(`render ${renderId} processing, attempt ${row.attempts}`)
      const remaining = deadline - (yield* Clock.currentTimeMillis)
      if (remaining <= 0) return yield* fail("render_timeout", "the render exceeded its time budget")

      const photoKey = yield* (yield* MediaRepo).storedKey(row.media_id)
      const photo = photoKey === undefined ? undefined : yield* patiently(blobs.localPath(photoKey))
      if (photo === undefined) return yield* fail("render_rejected", "the stored photo is no longer available")
      const overlay = row.caption_blob_key === null
        ? null
        : (yield* patiently(blobs.getBytes(row.caption_blob_key))) ?? null
      const outPath = yield* blobs.tempPath(".mp4")
      const posterPath = yield* blobs.tempPath(".jpg")
      const dropTemps = Effect.promise(() =>
        Promise.all([fs.rm(outPath, { force: true }), fs.rm(posterPath, { force: true })])
      )

      let lastWrite = 0
      // progress runs in the renderer's own fiber, where a failure would be dropped: cancellation
      // is signalled here and raced against the render instead
      const canceled = yield* Deferred.make<never, Canceled>()
      const onProgress = (done: number, total: number) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (now - lastWrite < progressEveryMillis && done < total) return
          lastWrite = now
          // a render canceled meanwhile is no longer processing: stop work at once
          if (!(yield* RenderTransitions.recordProgress(renderId, RenderState.percentOf(done, total)))) {
            yield* Deferred.fail(canceled, new Canceled())
          }
        }).pipe(
          // twice a second for the whole render: the trace keeps its stages, not these writes
          Effect.withTracerEnabled(false),
          Effect.provideService(RendersRepo, renders)
        )

      const { request } = row
      // framed from the inference as it stood when the render was created, as its caption was
      const framing = framingInputs(request.image_class, yield* MediaInference.asOf(row.media_id, row.created_at))
      const outcome = yield* renderVideo({
        photo,
        overlay,
        ...framing,
        subPrompt: request.sub_prompt,
        renderPrompt: request.render_prompt,
        seconds: config.renderSeconds,
        outPath,
        posterPath,
        onProgress
      }).pipe(
        Effect.raceFirst(Deferred.await(canceled)),
        Effect.timeoutOrElse({
          duration: Duration.millis(remaining),
          orElse: () => Effect.fail({ _tag: "Timeout" as const })
        }),
        Effect.result
      )
      if (outcome._tag === "Failure") {
        yield* dropTemps
        const e = outcome.failure
        switch (e._tag) {
          case "Canceled":
            return "canceled"
          case "Timeout":
            return yield* fail("render_timeout", "the render exceeded its time budget")
          case "PhotoRejected":
            return yield* fail("render_rejected", "the stored photo can no longer be decoded")
          default:
            yield* Effect.logWarning(`render ${renderId} failed`, e)
            return yield* fail("render_failed", "generation ran but produced no usable video")
        }
      }
      const completed = yield* storeOutputs(renderId, outcome.success, { video: outPath, poster: posterPath }).pipe(
        Effect.ensuring(dropTemps),
        Effect.withSpan("render.upload", { attributes: { "p2v.blob.bytes": outcome.success.byte_size } }, {
          captureStackTrace: false
        })
      )
      return completed ? "completed" : (yield* renders.byId(renderId))?.status ?? "missing"
    })))
  }).pipe(
    Effect.catchTag("ApiFailure", (e) =>
      Effect.logError(`render ${renderId}: ${e.message}`).pipe(
        Effect.andThen(endFailed(renderId, "the stored files could not be reached")),
        Effect.as("failed")
      )),
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause) // shutdown or shard move: the persisted Start is redelivered
        : Effect.logError(`render ${renderId} faulted`, cause).pipe(
          Effect.andThen(endFailed(renderId, "generation ran but produced no usable video")),
          Effect.as("failed")
        )
    )
  )

export const layer = RenderEntity.toLayer(
  Effect.gen(function*() {
    const context = yield* Effect.context<AppConfig | BlobStore | RenderSlots | RendersRepo | MediaRepo | Renderer>()
    return RenderEntity.of({
      Start: ({ payload }) => runRender(payload.renderId).pipe(Effect.provideContext(context))
    })
  }),
  { maxIdleTime: "1 minute" }
)
