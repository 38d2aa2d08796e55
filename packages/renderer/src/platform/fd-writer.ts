/**
 * Worker-thread entry for `stream.threadWriter`: writes each frame it is sent (a view of a shared
 * frame slot, so nothing is copied on the way) to ffmpeg's stdin by file descriptor, in the order
 * sent, and answers once all of it is written. The descriptor is non-blocking (libuv made it): a full
 * pipe answers EAGAIN, and the thread sleeps a millisecond and goes on.
 */
import * as fs from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { lowerThreadPriority } from "./priority.ts"

export interface WriterInit {
  readonly fd: number
  readonly niceness: number
}

export interface WriteRequest {
  readonly id: number
  readonly frame: Uint8Array
}

/** `written` false: the reader has gone away (EPIPE and the like); the process's exit says why. */
export interface WriteDone {
  readonly id: number
  readonly written: boolean
}

const port = parentPort!
const init = workerData as WriterInit
lowerThreadPriority(init.niceness)
const nap = new Int32Array(new SharedArrayBuffer(4))

const writeAll = (frame: Uint8Array): boolean => {
  let offset = 0
  while (offset < frame.byteLength) {
    try {
      offset += fs.writeSync(init.fd, frame, offset, frame.byteLength - offset)
    } catch (e) {
      if ((e as { code?: string }).code !== "EAGAIN") return false
      Atomics.wait(nap, 0, 0, 1)
    }
  }
  return true
}

port.on("message", ({ id, frame }: WriteRequest) => {
  port.postMessage({ id, written: writeAll(frame) } satisfies WriteDone)
})
