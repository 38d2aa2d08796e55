import { Effect, type Scope } from "effect"
import type { Writable } from "node:stream"
import { Worker } from "node:worker_threads"
import type { WriteDone, WriteRequest, WriterInit } from "./fd-writer.ts"

/**
 * A frame sink over a Node writable (ffmpeg's stdin): each write waits until the bytes are flushed, so
 * the caller may reuse the buffer. Answers false, without failing, once the reader has gone away: the
 * process's own exit status says what went wrong.
 */
export const flushedWriter = (w: Writable): ((bytes: Uint8Array) => Effect.Effect<boolean>) => {
  // Without a listener an EPIPE would be thrown as an uncaught 'error' event.
  w.on("error", () => {})
  return (bytes) =>
    Effect.async<boolean>((resume) => {
      if (w.destroyed || w.writableEnded) return resume(Effect.succeed(false))
      w.write(bytes, (err) => resume(Effect.succeed(!err)))
    })
}

/** Ends the writable (EOF for the reader), once everything written has been flushed. */
export const end = (w: Writable): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (w.destroyed || w.writableEnded) return resume(Effect.void)
    w.end(() => resume(Effect.void))
  })

/** The descriptor under a Node writable (a child's stdin), where the runtime exposes it. */
const descriptorOf = (w: Writable): number | undefined => {
  const fd = (w as unknown as { _handle?: { fd?: unknown } })._handle?.fd
  return typeof fd === "number" && fd >= 0 ? fd : undefined
}

const WRITER = new URL("./fd-writer.ts", import.meta.url)

/**
 * Like `flushedWriter`, but the bytes are written by a worker thread (at `niceness`, see priority.ts)
 * straight to the writable's descriptor: a render's frames (~3 MB each, tens a second) then never pass
 * through the event loop that answers HTTP requests, where their socket writes took ~16 % of its time
 * while renders ran (bench/api.ts mixed run, profiled). Frames are written whole and in order, each
 * answered once written, so the caller may reuse the buffer as before; `end` closes the writable after
 * the last one. The thread ends with the scope. Undefined where the descriptor is not exposed (Deno):
 * use `flushedWriter` there.
 */
export const threadWriter = (
  w: Writable,
  niceness: number
): Effect.Effect<((frame: Uint8Array) => Effect.Effect<boolean>) | undefined, never, Scope.Scope> => {
  const fd = descriptorOf(w)
  if (fd === undefined) return Effect.succeed(undefined)
  w.on("error", () => {})
  return Effect.acquireRelease(
    Effect.sync(() => {
      const worker = new Worker(WRITER, { workerData: { fd, niceness } satisfies WriterInit })
      const pending = new Map<number, (written: boolean) => void>()
      let gone = false
      const fail = () => {
        gone = true
        for (const resolve of pending.values()) resolve(false)
        pending.clear()
      }
      worker.on("message", ({ id, written }: WriteDone) => {
        pending.get(id)?.(written)
        pending.delete(id)
      })
      worker.on("error", fail)
      worker.on("exit", fail)
      return { worker, pending, gone: () => gone }
    }),
    ({ worker }) => Effect.promise(() => worker.terminate())
  ).pipe(
    Effect.map(({ worker, pending, gone }) => {
      let next = 0
      return (frame: Uint8Array) =>
        Effect.async<boolean>((resume) => {
          if (gone() || w.destroyed || w.writableEnded) return resume(Effect.succeed(false))
          const id = next++
          pending.set(id, (written) => resume(Effect.succeed(written)))
          worker.postMessage({ id, frame } satisfies WriteRequest)
        })
    })
  )
}
