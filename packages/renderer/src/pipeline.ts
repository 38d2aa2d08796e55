import { Effect, Queue, Stream } from "effect"
import { join } from "node:path"
import type { Writable } from "node:stream"
import type { ImageClass } from "./CaptionSpec.ts"
import { type PhotoRejected, RenderFailed } from "./errors.ts"
import { encodeCommand } from "./ffmpeg-args.ts"
import { runFfmpeg } from "./ffmpeg-process.ts"
import { writeFrames } from "./frames.ts"
import { planFraming, type SubjectBox } from "./framing.ts"
import { photoSize, prepareBase } from "./ingest.ts"
import { planMotion } from "./motion-path.ts"
import { combineMotionWords } from "./motion-words.ts"
import { OUTPUT } from "./output.ts"
import { stream as platformStream, temp } from "./platform/index.ts"
import { probeVideo } from "./probe.ts"
import { Renderer } from "./Renderer.ts"
import { verifyProbe } from "./verify.ts"

export interface RenderJob {
  /** Path to the original stored photo bytes. */
  readonly photo: string
  /** The PNG from prepareCaption, or null for no caption. */
  readonly overlay: Uint8Array | null
  readonly imageClass?: ImageClass | undefined
  /** The inferred subject (see `framingInputs`); the caption must have been made with the same. */
  readonly subject?: SubjectBox | null | undefined
  readonly subPrompt?: string | undefined
  readonly renderPrompt?: string | undefined
  readonly seconds: number
  readonly outPath: string
  readonly onProgress?: ((framesDone: number, framesTotal: number) => Effect.Effect<void>) | undefined
}

export interface RenderResult {
  readonly duration_sec: number
  readonly width: number
  readonly height: number
  readonly byte_size: number
  readonly content_type: "video/mp4"
}

const ioFailed = (what: string) => (e: unknown) =>
  new RenderFailed({ stage: "io", message: `${what}: ${e instanceof Error ? e.message : String(e)}` })

/**
 * Photo + overlay → a verified MP4 at `outPath`. Stages: measure → frame → plan motion → prepare base
 * → stream frames into ffmpeg (caption burned in there) → probe and verify → rename into place.
 * Interrupting it (timeout, cancel) kills ffmpeg and removes every temp file; `outPath` is written
 * only once the file passed verification.
 */
export const renderVideo = (job: RenderJob): Effect.Effect<RenderResult, PhotoRejected | RenderFailed, Renderer> =>
  Effect.scoped(
    Effect.gen(function* () {
      const renderer = yield* Renderer
      const total = Math.round(job.seconds * OUTPUT.fps)
      if (!(total >= 1)) return yield* new RenderFailed({ stage: "frames", message: `bad length ${job.seconds}s` })

      const size = yield* photoSize(job.photo)
      const framing = planFraming(size, job.imageClass, job.overlay !== null, job.subject)
      const path = planMotion(framing, combineMotionWords(job.renderPrompt, job.subPrompt), job.seconds)
      yield* Effect.annotateCurrentSpan({ framing: framing.kind, width: size.width, height: size.height })
      const base = yield* prepareBase(job.photo, framing)

      const dir = yield* temp.tempDir("p2v-render-").pipe(Effect.mapError(ioFailed("temp dir")))
      let overlayPath: string | undefined
      if (job.overlay) {
        overlayPath = join(dir, "overlay.png")
        yield* temp.writeBytes(overlayPath, job.overlay).pipe(Effect.mapError(ioFailed("overlay")))
      }
      const partial = yield* temp.partialFile(job.outPath)

      // Frames go straight from the worker threads' buffers into ffmpeg's stdin.
      const feed = (stdin: Writable) =>
        writeFrames(base, path, total, { count: renderer.frameConcurrency, niceness: renderer.niceness }, platformStream.flushedWriter(stdin), (e) =>
          new RenderFailed({ stage: "frames", message: e instanceof Error ? e.message : String(e) })
        ).pipe(Effect.zipRight(platformStream.end(stdin)))

      // ffmpeg reports progress from a callback; a sliding queue hands the latest count to the caller.
      const progress = yield* Queue.sliding<number>(1)
      const onProgress = job.onProgress
      if (onProgress) {
        yield* Stream.fromQueue(progress).pipe(
          Stream.changes,
          Stream.runForEach((n) => onProgress(Math.min(n, total), total)),
          Effect.forkScoped
        )
      }

      const cmd = encodeCommand({ frames: total, overlayPath, outPath: partial, settings: renderer.encode })
      yield* runFfmpeg(renderer.ffmpeg.path, cmd, { feed, onFrames: (n) => Queue.unsafeOffer(progress, n), niceness: renderer.niceness }).pipe(
        Effect.withSpan("encode")
      )

      const probe = yield* probeVideo(partial).pipe(
        Effect.mapError((e) => new RenderFailed({ stage: "verify", message: e.message }))
      )
      const problems = verifyProbe(probe, total / OUTPUT.fps)
      if (problems.length > 0) {
        return yield* new RenderFailed({ stage: "verify", message: `output rejected: ${problems.join("; ")}` })
      }
      yield* temp.moveInto(partial, job.outPath).pipe(Effect.mapError(ioFailed("move into place")))
      if (onProgress) yield* onProgress(total, total)
      return {
        duration_sec: probe.durationSec,
        width: OUTPUT.width,
        height: OUTPUT.height,
        byte_size: probe.byteSize,
        content_type: "video/mp4"
      } satisfies RenderResult
    })
  ).pipe(Effect.withSpan("renderVideo"))
