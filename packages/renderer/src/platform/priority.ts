import { getPriority, setPriority } from "node:os"

/**
 * Renders run beside the HTTP API on the same cores; at a lower priority they take only the CPU the
 * API leaves idle, so a busy runner does not stretch request latency (the scheduler still gives
 * them every idle cycle, so an idle API costs renders nothing).
 *
 * Lowers the calling thread's priority by `niceness` (relative, as `nice -n` does for ffmpeg). On
 * Linux the nice value is per thread, so a frame worker lowers only itself; elsewhere it would lower
 * the whole process (the API with it), so it does nothing there. Best effort: a refusal leaves the
 * priority as it was.
 */
export const lowerThreadPriority = (niceness: number): void => {
  if (niceness <= 0 || process.platform !== "linux") return
  try {
    setPriority(Math.min(19, getPriority() + niceness))
  } catch {
    // not permitted or not supported: frames are made at normal priority
  }
}
