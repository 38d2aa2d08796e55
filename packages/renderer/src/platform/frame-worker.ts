/**
 * Worker-thread entry: one render's base raster in WebAssembly memory; on request it writes a frame into
 * one of the shared frame slots. Frame generation is pure CPU: in a worker it leaves the process's event
 * loop (HTTP, cluster messages) free.
 */
import { parentPort, workerData } from "node:worker_threads"
import { compileResampler, makeResampler } from "../resample.ts"
import type { BaseMessage, FrameDone, FrameRequest, WorkerInit } from "./frame-workers.ts"
import { lowerThreadPriority } from "./priority.ts"

const port = parentPort!
const init = workerData as WorkerInit
lowerThreadPriority(init.niceness)
const format = init.format
const slots = init.slots.map((s) => new Uint8Array(s))
const module = compileResampler()
let render: ((w: FrameRequest["window"], into: Uint8Array) => void) | undefined

// The first message is the base (not workerData, which the worker keeps for its whole life): a yuv420p
// resampler turns it into planes at once and lets it go.
port.on("message", (message: FrameRequest | BaseMessage) => {
  if ("base" in message) {
    const resampler = format.pixFmt === "yuv420p"
      ? makeResampler(module, message.base, format.overlay, "yuv420p")
      : makeResampler(module, message.base)
    render = format.pixFmt === "yuv420p" ? resampler.renderYuv : resampler.render
    return
  }
  const request = message
  let done: FrameDone
  try {
    if (!render) throw new Error("frame requested before the base")
    render(request.window, slots[request.slot])
    done = { id: request.id }
  } catch (e) {
    done = { id: request.id, error: e instanceof Error ? e.message : String(e) }
  }
  port.postMessage(done)
})
