import { Worker } from "node:worker_threads"
import type { Detections } from "../classify.ts"

export interface VisionWorkerInit {
  /** A folder holding blazeface.json/.bin and centernet.json/.bin; default: the one in @vladmandic/human. */
  readonly modelDir: string | undefined
  readonly niceness: number
}

export interface VisionRequest {
  readonly id: number
  readonly width: number
  readonly height: number
  /** RGB, width × height × 3 */
  readonly pixels: Uint8Array
}

/** id -1 reports the model load (error set when it failed). */
export interface VisionResponse {
  readonly id: number
  readonly detections?: Detections
  /** Whether the pose model is loaded (a detection without a body may come from a thread with it loaded: poseMatters skipped it). */
  readonly withPose?: boolean
  readonly error?: string
}

/** A photo's detections, and whether the pose model was there to consult (the stored model name says so). */
interface Detected {
  readonly detections: Detections
  readonly withPose: boolean
}

export interface VisionThread {
  /** Resolves when the models are loaded; rejects (for good) when they cannot be. */
  readonly ready: Promise<void>
  readonly detect: (request: Omit<VisionRequest, "id">) => Promise<Detected>
  readonly terminate: () => Promise<void>
}

const ENTRY = new URL("./vision-worker.ts", import.meta.url)

/**
 * One thread holding the models for the life of the process (loading them costs about a second and
 * ~50 MB, so it is done once); requests queue on it in order. A thread that fails or exits rejects
 * everything pending and every later request: the caller falls back and logs.
 */
export const spawnVisionThread = (init: VisionWorkerInit): VisionThread => {
  const worker = new Worker(ENTRY, { workerData: init })
  const pending = new Map<number, { resolve: (d: Detected) => void; reject: (e: Error) => void }>()
  let next = 0
  let broken: Error | undefined
  let readyResolve!: () => void
  let readyReject!: (e: Error) => void
  const ready = new Promise<void>((resolve, reject) => {
    readyResolve = resolve
    readyReject = reject
  })
  ready.catch(() => undefined)
  const failAll = (e: Error) => {
    broken ??= e
    readyReject(broken)
    for (const p of pending.values()) p.reject(broken)
    pending.clear()
    worker.unref()
  }
  worker.on("message", (r: VisionResponse) => {
    if (r.id === -1) {
      if (r.error !== undefined) failAll(new Error(r.error))
      else readyResolve()
      return
    }
    const p = pending.get(r.id)
    if (!p) return
    pending.delete(r.id)
    settle()
    if (r.error !== undefined || r.detections === undefined) p.reject(new Error(r.error ?? "no detections"))
    else p.resolve({ detections: r.detections, withPose: r.withPose === true })
  })
  worker.on("error", failAll)
  worker.on("exit", (code) => failAll(new Error(`vision worker exited (code ${code})`)))
  // The model thread keeps the process alive only while a request is pending, never when idle (set
  // after the listeners: adding a message listener refs the port again).
  worker.unref()
  const settle = () => {
    if (pending.size === 0) worker.unref()
  }
  return {
    ready,
    detect: (request) =>
      new Promise<Detected>((resolve, reject) => {
        if (broken) return reject(broken)
        const id = next++
        pending.set(id, { resolve, reject })
        worker.ref()
        worker.postMessage({ id, ...request } satisfies VisionRequest, [request.pixels.buffer as ArrayBuffer])
      }),
    terminate: () => worker.terminate().then(() => undefined)
  }
}
