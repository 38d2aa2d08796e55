import { Effect } from "effect"
import { cameraAt, type CameraPath, frameTime } from "./motion-path.ts"
import { type FrameFormat, frameWorkers } from "./platform/frame-workers.ts"
import type { Raster } from "./resample.ts"

/**
 * Where finished frames go, in order. The bytes are only valid until the effect completes (the buffer is
 * then reused), so a sink must finish with them first: write and wait for the flush, or copy. It answers
 * false when the reader has gone away (ffmpeg exited), which stops generation without an error of its own.
 */
type FrameSink<E> = (frame: Uint8Array) => Effect.Effect<boolean, E>

export type { FrameFormat } from "./platform/frame-workers.ts"

/** Where the writing loop spent its time (ms, wall), for the benchmark's per-stage figures. */
export interface FrameStats {
  /** Waiting for the workers to finish the next frame (generation behind the sink). */
  waitFramesMs: number
  /** Waiting for the sink to take a frame (the sink, i.e. the encoder, behind generation). */
  waitSinkMs: number
}

/**
 * Every frame of the clip, in order, into `sink`. Frame i shows the camera window at eased time
 * i / (n - 1); the window's fractional position and zoom go straight into the resampling weights
 * (resample-weights.ts), so nothing on the path rounds to whole pixels (whole-pixel crops judder:
 * 0.64 px RMS at 0.5 px/frame).
 *
 * `workers.count` threads (at `workers.niceness`) make frames ahead into `count + 2` shared buffers:
 * frame i lives in slot i mod slots, and frame i + slots is asked for as soon as the sink is done with
 * frame i, so generation runs ahead of the encoder by at most one buffer per worker and one more, with
 * no allocation per frame.
 */
export const writeFrames = <E, S>(
  base: Raster,
  path: CameraPath,
  frames: number,
  workers: { readonly count: number; readonly niceness: number },
  sink: FrameSink<S>,
  onError: (e: unknown) => E,
  format: FrameFormat = { pixFmt: "rgb24" },
  stats?: FrameStats
): Effect.Effect<void, E | S> =>
  Effect.scoped(
    Effect.gen(function*() {
      // One frame per worker in the making, one being written, one made ahead to absorb bursts.
      const slots = workers.count + 2
      const pool = yield* frameWorkers(base, format, workers, slots)
      const pending: Array<Promise<void>> = []
      const request = (i: number) => {
        const made = pool.render(i, cameraAt(path, frameTime(i, frames)), i % slots)
        // Awaited in order below; until then (or if we stop early) a failure must not go unhandled.
        made.catch(() => {})
        pending[i] = made
      }
      for (let i = 0; i < Math.min(slots, frames); i++) request(i)
      let t = performance.now()
      const lap = (key: keyof FrameStats) => {
        const now = performance.now()
        if (stats) stats[key] += now - t
        t = now
      }
      for (let i = 0; i < frames; i++) {
        const made = pending[i]
        yield* Effect.tryPromise({ try: () => made, catch: onError })
        lap("waitFramesMs")
        delete pending[i]
        if (!(yield* sink(pool.slots[i % slots]))) return
        lap("waitSinkMs")
        if (i + slots < frames) request(i + slots)
      }
    })
  )
