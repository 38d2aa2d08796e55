/**
 * Worker-thread entry: one render's base raster in WebAssembly memory; on request it writes a frame into
 * one of the shared frame slots. Frame generation is pure CPU: in a worker it leaves the process's event
 * loop (HTTP, cluster messages) free.
 */
import { parentPort, workerData } from "node:worker_threads"
import { compileResampler, makeResampler } from "../resample.ts"
import type { FrameDone, FrameRequest, WorkerInit } from "./frame-workers.ts"
import { lowerThreadPriority } from "./priority.ts"

const port = parentPort!
const init = workerData as WorkerInit
lowerThreadPriority(init.niceness)
const format = init.format
const resampler = makeResampler(compileResampler(), init.base, format.pixFmt === "yuv420p" ? format.overlay : null)
const slots = init.slots.map((s) => new Uint8Array(s))
const render = format.pixFmt === "yuv420p" ? resampler.renderYuv : resampler.render

port.on("message", (request: FrameRequest) => {
  let done: FrameDone
  try {
    render(request.window, slots[request.slot])
    done = { id: request.id }
  } catch (e) {
    done = { id: request.id, error: e instanceof Error ? e.message : String(e) }
  }
  port.postMessage(done)
})
