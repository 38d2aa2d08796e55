import { Effect } from "effect"
import ffmpeg from "fluent-ffmpeg"
import type { ChildProcess } from "node:child_process"
import type { Readable } from "node:stream"
import { RenderFailed } from "./errors.ts"
import type { FfmpegCommand } from "./ffmpeg-args.ts"

/**
 * The only module that touches fluent-ffmpeg (archived upstream: keep it replaceable). It builds and
 * runs the command; we own the lifecycle: interrupting the effect SIGKILLs ffmpeg and waits until the
 * process is really gone, and a failure carries the tail of ffmpeg's stderr.
 */
export interface RunOptions {
  readonly stdin?: Readable
  /** Frames ffmpeg reports as encoded so far (from its progress lines). */
  readonly onFrames?: (frames: number) => void
}

const STDERR_LINES = 30

// fluent keeps the child in an undocumented field; it is the only way to wait for its exit.
const childOf = (c: ffmpeg.FfmpegCommand): ChildProcess | undefined =>
  (c as unknown as { ffmpegProc?: ChildProcess }).ffmpegProc

const killAndWait = (c: ffmpeg.FfmpegCommand): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const child = childOf(c)
    if (!child || child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  }).pipe(Effect.timeout("5 seconds"), Effect.ignore)

const tail = (stderr: string | null | undefined): string => (stderr ?? "").trim().split("\n").slice(-STDERR_LINES).join("\n")

export const runFfmpeg = (
  binary: string,
  cmd: FfmpegCommand,
  opts: RunOptions = {}
): Effect.Effect<void, RenderFailed> =>
  Effect.async<void, RenderFailed>((resume) => {
    // fluent keeps the last `stdoutLines` lines of stdout and of stderr; the error tail comes from there.
    const c = ffmpeg({ stdoutLines: STDERR_LINES })
    c.setFfmpegPath(binary)
    for (const input of cmd.inputs) {
      if (input.source === "pipe:0") {
        if (!opts.stdin) throw new Error("ffmpeg command reads stdin but no stream was given")
        c.input(opts.stdin)
      } else {
        c.input(input.source)
      }
      c.inputOptions([...input.options])
    }
    c.complexFilter(cmd.complexFilter)
    c.outputOptions([...cmd.outputOptions])
    c.output(cmd.output)
    if (opts.onFrames) {
      const report = opts.onFrames
      c.on("progress", (p: { frames?: number }) => {
        if (typeof p.frames === "number" && Number.isFinite(p.frames)) report(p.frames)
      })
    }
    c.on("end", () => resume(Effect.void))
    c.on("error", (err: Error, _stdout: string | null, stderr: string | null) => {
      // A failing frame producer surfaces here as fluent's "Input stream error"; keep its own error.
      const cause = (err as Error & { inputStreamError?: unknown }).inputStreamError
      resume(
        Effect.fail(
          cause instanceof RenderFailed
            ? cause
            : new RenderFailed({ stage: "encode", message: err.message, stderrTail: tail(stderr) })
        )
      )
    })
    c.run()
    return killAndWait(c)
  })
