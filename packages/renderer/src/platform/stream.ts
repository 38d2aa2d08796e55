import { Effect } from "effect"
import type { Writable } from "node:stream"

/**
 * A frame sink over a Node writable (ffmpeg's stdin): each write waits until the bytes are flushed, so
 * the caller may reuse the buffer. Answers false, without failing, once the reader has gone away: the
 * process's own exit status says what went wrong.
 */
export const flushedWriter = (w: Writable): (bytes: Uint8Array) => Effect.Effect<boolean> => {
  // Without a listener an EPIPE would be thrown as an uncaught 'error' event.
  w.on("error", () => {})
  return (bytes) =>
    Effect.callback<boolean>((resume) => {
      if (w.destroyed || w.writableEnded) return resume(Effect.succeed(false))
      w.write(bytes, (err) => resume(Effect.succeed(!err)))
    })
}

/** Ends the writable (EOF for the reader), once everything written has been flushed. */
export const end = (w: Writable): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (w.destroyed || w.writableEnded) return resume(Effect.void)
    w.end(() => resume(Effect.void))
  })
