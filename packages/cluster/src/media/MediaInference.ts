import type { ImageClass } from "@pic2video/domain/Requests"
import { Vision } from "@pic2video/vision"
import { Clock, Effect, Result } from "effect"
import { type InferenceRow, MediaRepo } from "../repositories/MediaRepo.ts"
import { BlobStore } from "../storage/BlobStore.ts"

/**
 * What the vision model saw in a library photo, stored with the media (migration 0005). It runs once,
 * off the request path, right after the photo enters the library (upload or import: `MediaLibrary.ingest`,
 * the one path), and a render made later reads it. It never fails the upload or the render: a model
 * that cannot load or a photo it cannot read leaves `failed` (logged), and the render falls back to
 * the default class with no subject.
 */
export type { Inferred } from "../repositories/MediaRepo.ts"

/** Infers and stores; never fails. */
const inferAndStore = (mediaId: string, blobKey: string) =>
  Effect.gen(function*() {
    const repo = yield* MediaRepo
    const vision = yield* Vision
    const blobs = yield* BlobStore
    const path = yield* blobs.localPath(blobKey)
    const outcome = path === undefined
      ? Result.fail(new Error("the stored photo is missing"))
      : yield* Effect.result(vision.infer(path))
    if (Result.isFailure(outcome)) {
      yield* Effect.logWarning(
        `vision: media ${mediaId} not classified (falls back to the default class): ${outcome.failure.message}`
      )
      yield* repo.storeInference(mediaId, { error: outcome.failure.message })
      return
    }
    const r = outcome.success
    yield* repo.storeInference(mediaId, {
      image_class: r.image_class,
      confidence: r.confidence,
      subject: r.subject,
      model: r.model
    })
    yield* Effect.logDebug(`vision: media ${mediaId} is ${r.image_class} (${r.confidence}) in ${r.millis} ms`)
  }).pipe(
    Effect.catchCause((cause) => Effect.logWarning(`vision: media ${mediaId} inference not stored`, cause)),
    Effect.withSpan("media.classify", undefined, { captureStackTrace: false })
  )

/** Starts `inferAndStore` detached from the request that stored the photo: the upload answers at once. */
export const inferInBackground = (mediaId: string, blobKey: string) =>
  Effect.asVoid(Effect.forkDetach(inferAndStore(mediaId, blobKey)))

const done = (row: Pick<InferenceRow, "inference_status" | "inference"> | undefined) =>
  row !== undefined && row.inference_status === "done" && row.inference !== null && "image_class" in row.inference
    ? row.inference
    : null

/** The class a photo was seen as, read off its row: null while the model has not looked, or when it could not. */
export const seenAs = (m: Pick<InferenceRow, "inference_status" | "inference">): ImageClass | null =>
  done(m)?.image_class ?? null

/** For the operator: the stored inference, or null while pending or after a failure. */
export const stored = (mediaId: string) =>
  Effect.map(Effect.flatMap(MediaRepo, (repo) => repo.inference(mediaId)), done)

/** How long a render made right after an upload waits for that photo's inference. */
const settleMillis = 3000
const pollMillis = 100

/**
 * For a new render: the inference, waiting a moment if the photo was uploaded just before (the
 * caption's place depends on the framing, which depends on the subject, so it is decided here once).
 */
export const settled = (mediaId: string) =>
  Effect.gen(function*() {
    const repo = yield* MediaRepo
    const until = (yield* Clock.currentTimeMillis) + settleMillis
    while (true) {
      const row = yield* repo.inference(mediaId)
      if (
        row === undefined || row.inference_status !== "pending" || (yield* Clock.currentTimeMillis) >= until
      ) return done(row)
      yield* Effect.sleep(pollMillis)
    }
  })

/**
 * For a render being run: the inference as it stood when the render was created, so the framing
 * matches the caption made then (an inference stored later is not used by that render).
 */
export const asOf = (mediaId: string, createdAt: Date) =>
  Effect.map(
    Effect.flatMap(MediaRepo, (repo) => repo.inference(mediaId)),
    (row) => row?.inferred_at != null && row.inferred_at.getTime() <= createdAt.getTime() ? done(row) : null
  )
