import { Effect, Queue, Stream } from "effect"
import type { Writable } from "node:stream"
import type { ImageClass } from "./CaptionSpec.ts"
import { type PhotoRejected, RenderFailed } from "./errors.ts"
import { encodeCommand } from "./ffmpeg-args.ts"
import { runFfmpeg } from "./ffmpeg-process.ts"
import { type FrameStats, writeFrames } from "./frames.ts"
import { planFraming, type SubjectBox } from "./framing.ts"
import { overlayPixels, photoSize, prepareBase } from "./ingest.ts"
import { planMotion } from "./motion-path.ts"
import { combineMotionWords } from "./motion-words.ts"
import { OUTPUT } from "./output.ts"
import * as platformStream from "./platform/stream.ts"
import * as temp from "./platform/temp.ts"
import { posterFrame, type PosterResult, writePoster } from "./poster.ts"
import { probeVideo } from "./probe.ts"
import { Renderer } from "./Renderer.ts"
import { verifyProbe } from "./verify.ts"
import { prepareOverlay } from "./yuv.ts"

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
  /**
   * Where to write the poster, a JPEG of the clip's middle frame (poster.ts); written, like `outPath`,
   * only once the video passed verification. None when absent.
   */
  readonly posterPath?: string | undefined
  readonly onProgress?: ((framesDone: number, framesTotal: number) => Effect.Effect<void>) | undefined
  /** Where the render's wall time went, once it succeeded (the benchmark prints it). */
  readonly onTimings?: ((t: RenderTimings) => void) | undefined
}

/** Milliseconds of wall time per stage of one render. */
export interface RenderTimings {
  /** Measure, decode and prepare the base; decode the caption overlay. */
  readonly prepareMs: number
  /** ffmpeg running, from spawn to exit (frames are made and written meanwhile). */
  readonly encodeMs: number
  /** Within encodeMs: the writer waiting for the frame workers, and for ffmpeg to take the bytes. */
  readonly waitFramesMs: number
  readonly waitSinkMs: number
  /** Within encodeMs: from the last frame written to ffmpeg's exit (the encoder's own tail). */
  readonly tailMs: number
  /** ffprobe and the deliverability check. */
  readonly verifyMs: number
  /** Converting and encoding the poster's frame (0 without a poster). */
  readonly posterMs: number
}

export interface RenderResult {
  readonly duration_sec: number
  readonly width: number
  readonly height: number
  readonly byte_size: number
  readonly content_type: "video/mp4"
  /** The poster written to `posterPath`, when one was asked for. */
  readonly poster?: PosterResult | undefined
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
    Effect.gen(function*() {
      const renderer = yield* Renderer
      const total = Math.round(job.seconds * OUTPUT.fps)
      if (!(total >= 1)) return yield* new RenderFailed({ stage: "frames", message: `bad length ${job.seconds}s` })

      const t0 = performance.now()
      const size = yield* photoSize(job.photo)
      const framing = planFraming(size, job.imageClass, job.overlay !== null, job.subject)
      const path = planMotion(framing, combineMotionWords(job.renderPrompt, job.subPrompt), job.seconds)
      yield* Effect.annotateCurrentSpan({ framing: framing.kind, width: size.width, height: size.height })
      const base = yield* prepareBase(job.photo, framing)

      // The caption is burned in by the frame workers (with the BT.709 conversion), not by ffmpeg.
      const overlay = job.overlay ? prepareOverlay(yield* overlayPixels(job.overlay)) : null
      const partial = yield* temp.partialFile(job.outPath)
      const t1 = performance.now()
      const stats: FrameStats = { waitFramesMs: 0, waitSinkMs: 0 }
      let fed = t1
      // the poster's frame is copied on its way to ffmpeg (its slot is reused after the write)
      const posterAt = job.posterPath === undefined ? -1 : posterFrame(total)
      let posterBytes: Uint8Array | undefined

      // Frames go straight from the worker threads' buffers into ffmpeg's stdin, as yuv420p: ffmpeg
      // only encodes, and the pipe carries half the bytes of RGB.
      const feed = (stdin: Writable) => {
        const write = platformStream.flushedWriter(stdin)
        let index = 0
        const sink = (frame: Uint8Array) => {
          if (index++ === posterAt) posterBytes = frame.slice()
          return write(frame)
        }
        return writeFrames(
          base,
          path,
          total,
          { count: renderer.frameConcurrency, niceness: renderer.niceness },
          sink,
          (e) => new RenderFailed({ stage: "frames", message: e instanceof Error ? e.message : String(e) }),
          { pixFmt: "yuv420p", overlay },
          stats
        ).pipe(
          Effect.withSpan("frames", {
            attributes: { "p2v.frames": total, "p2v.frame_workers": renderer.frameConcurrency }
          }, { captureStackTrace: false }),
          Effect.andThen(platformStream.end(stdin)),
          Effect.tap(() => Effect.sync(() => (fed = performance.now())))
        )
      }

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

      const cmd = encodeCommand({
        frames: total,
        overlayPath: undefined,
        outPath: partial,
        settings: renderer.encode,
        inputPixFmt: "yuv420p"
      })
      yield* runFfmpeg(renderer.ffmpeg.path, cmd, {
        feed,
        onFrames: (n) => Queue.offerUnsafe(progress, n),
        niceness: renderer.niceness
      }).pipe(
        Effect.withSpan("encode")
      )

      const t2 = performance.now()
      const probe = yield* probeVideo(partial).pipe(
        Effect.mapError((e) => new RenderFailed({ stage: "verify", message: e.message })),
        Effect.withSpan("verify", undefined, { captureStackTrace: false })
      )
      const problems = verifyProbe(probe, total / OUTPUT.fps)
      if (problems.length > 0) {
        return yield* new RenderFailed({ stage: "verify", message: `output rejected: ${problems.join("; ")}` })
      }
      const t3 = performance.now()
      const posterPath = job.posterPath
      let poster: PosterResult | undefined
      if (posterPath !== undefined) {
        if (posterBytes === undefined) {
          return yield* new RenderFailed({ stage: "frames", message: `the poster's frame ${posterAt} was never made` })
        }
        const posterPartial = yield* temp.partialFile(posterPath)
        poster = yield* writePoster(posterBytes, posterAt, posterPartial)
        yield* temp.moveInto(posterPartial, posterPath).pipe(Effect.mapError(ioFailed("move the poster into place")))
      }
      yield* temp.moveInto(partial, job.outPath).pipe(Effect.mapError(ioFailed("move into place")))
      job.onTimings?.({
        prepareMs: t1 - t0,
        encodeMs: t2 - t1,
        ...stats,
        tailMs: t2 - fed,
        verifyMs: t3 - t2,
        posterMs: performance.now() - t3
      })
      if (onProgress) yield* onProgress(total, total)
      return {
        duration_sec: probe.durationSec,
        width: OUTPUT.width,
        height: OUTPUT.height,
        byte_size: probe.byteSize,
        content_type: "video/mp4",
        ...(poster === undefined ? {} : { poster })
      } satisfies RenderResult
    })
  ).pipe(Effect.withSpan("renderVideo"))
