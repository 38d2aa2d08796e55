import { Effect, type Scope } from "effect"
import process from "node:process"
import { Worker } from "node:worker_threads"
import type { CameraWindow } from "../motion-path.ts"
import { FRAME_BYTES, type Raster } from "../resample.ts"
import { type PreparedOverlay, YUV_FRAME_BYTES } from "../yuv.ts"

/**
 * What a frame slot holds: packed RGB24 as resampled, or the renderer's form, the caption burned in
 * and converted to planar yuv420p (BT.709, limited range) — what ffmpeg encodes as it is.
 */
export type FrameFormat = { readonly pixFmt: "rgb24" } | {
  readonly pixFmt: "yuv420p"
  readonly overlay: PreparedOverlay | null
}

const frameBytes = (f: FrameFormat): number => (f.pixFmt === "rgb24" ? FRAME_BYTES : YUV_FRAME_BYTES)

export interface WorkerInit {
  readonly format: FrameFormat
  readonly slots: ReadonlyArray<SharedArrayBuffer>
  /** How much the thread lowers its priority (0: unchanged); see `lowerThreadPriority`. */
  readonly niceness: number
}

/** The worker's first message. */
export interface BaseMessage {
  readonly base: Raster
}

export interface FrameRequest {
  readonly id: number
  readonly window: CameraWindow
  readonly slot: number
}

export interface FrameDone {
  readonly id: number
  readonly error?: string
}

interface FrameWorkers {
  /**
   * Frame buffers shared with the workers, allocated once per render: fresh 6 MB buffers per frame cost
   * page faults in the worker and full garbage collections in the main thread (measured).
   */
  readonly slots: ReadonlyArray<Uint8Array>
  /** Writes frame `id` for this window into `slot`; requests are spread over the workers by id. */
  readonly render: (id: number, window: CameraWindow, slot: number) => Promise<void>
}

interface Pending {
  readonly resolve: () => void
  readonly reject: (error: Error) => void
}

const ENTRY = new URL("./frame-worker.ts", import.meta.url)

/**
 * A frame worker's V8 heap is small (the pixels are in WebAssembly memory and the shared slots), but
 * each frame leaves ~0.5 MB of weight tables behind, and with V8's defaults the old generation grew
 * by ~60 MB over an 8 s render before collecting. Capped, it collects as it goes: the render's
 * process stayed ~70 MB lower with 32/4 MB, ~8 MB lower still with 16/2 (measured; the worker's live
 * heap is a few MB, the base arrives as an ArrayBuffer outside it).
 */
const FRAME_WORKER_HEAP = process.versions.deno === undefined
  ? { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 }
  : undefined
// Not under Deno: its worker carries Deno's Node compatibility layer in the same heap (~70 MB), which
// such a cap kills (fatal out of memory, the whole process with it).

const spawn = (init: WorkerInit, base: Raster) => {
  const worker = new Worker(ENTRY, { workerData: init, resourceLimits: FRAME_WORKER_HEAP })
  worker.postMessage({ base } satisfies BaseMessage)
  const pending = new Map<number, Pending>()
  let broken: Error | undefined
  const failAll = (e: Error) => {
    broken ??= e
    for (const p of pending.values()) p.reject(e)
    pending.clear()
  }
  worker.on("message", (done: FrameDone) => {
    const p = pending.get(done.id)
    if (!p) return
    pending.delete(done.id)
    if (done.error !== undefined) p.reject(new Error(done.error))
    else p.resolve()
  })
  worker.on("error", failAll)
  worker.on("exit", (code) => failAll(new Error(`frame worker exited (code ${code})`)))
  return {
    worker,
    render: (request: FrameRequest) =>
      new Promise<void>((resolve, reject) => {
        if (broken) return reject(broken)
        pending.set(request.id, { resolve, reject })
        worker.postMessage(request)
      })
  }
}

/**
 * `workers` threads, each holding its own copy of the base, and `slots` shared frame buffers, for the
 * life of the scope: closing it (render done, failed, canceled or timed out) terminates the threads,
 * whatever they were doing.
 */
export const frameWorkers = (
  base: Raster,
  format: FrameFormat,
  workers: { readonly count: number; readonly niceness: number },
  slots: number
): Effect.Effect<FrameWorkers, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const shared = Array.from({ length: slots }, () => new SharedArrayBuffer(frameBytes(format)))
      const init: WorkerInit = { format, slots: shared, niceness: workers.niceness }
      return { shared, threads: Array.from({ length: Math.max(1, workers.count) }, () => spawn(init, base)) }
    }),
    ({ threads }) => Effect.promise(() => Promise.all(threads.map((t) => t.worker.terminate())))
  ).pipe(
    Effect.map(({ shared, threads }) => ({
      slots: shared.map((s) => new Uint8Array(s)),
      render: (id, window, slot) => threads[id % threads.length].render({ id, window, slot })
    }))
  )
