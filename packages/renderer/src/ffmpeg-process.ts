import { Deferred, Effect, Exit } from "effect"
import ffmpeg from "fluent-ffmpeg"
import type { ChildProcess } from "node:child_process"
import type { Writable } from "node:stream"
import { RenderFailed } from "./errors.ts"
import type { FfmpegCommand } from "./ffmpeg-args.ts"

/**
 * The only module that touches fluent-ffmpeg (archived upstream: keep it replaceable). It builds and
 * runs the command; we own the lifecycle: interrupting the effect SIGKILLs ffmpeg and waits until the
 * process is really gone, and a failure carries the tail of ffmpeg's stderr.
 */
interface RunOptions {
  /**
   * Writes ffmpeg's stdin (for a "pipe:0" input) once the process is up; runs beside it. If it fails,
   * ffmpeg is killed and its error is the result.
   */
  readonly feed?: (stdin: Writable) => Effect.Effect<void, RenderFailed>
  /** Frames ffmpeg reports as encoded so far (from its progress lines). */
  readonly onFrames?: (frames: number) => void
  /** Run ffmpeg (every thread of it) at this nice value through `nice`; 0 or absent: unchanged. */
  readonly niceness?: number
}

const STDERR_LINES = 30
const FRAME_LINE = /^frame=\s*(\d+)/

// fluent keeps the child in an undocumented field; it is the only way to wait for its exit.
const childOf = (c: ffmpeg.FfmpegCommand): ChildProcess | undefined =>
  (c as unknown as { ffmpegProc?: ChildProcess }).ffmpegProc

const killAndWait = (c: ffmpeg.FfmpegCommand): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const child = childOf(c)
    if (!child || child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    child.kill("SIGKILL")
  }).pipe(Effect.timeout("5 seconds"), Effect.ignore)

const tail = (stderr: string | null | undefined): string =>
  (stderr ?? "").trim().split("\n").slice(-STDERR_LINES).join("\n")

export const runFfmpeg = (
  binary: string,
  cmd: FfmpegCommand,
  opts: RunOptions = {}
): Effect.Effect<void, RenderFailed> =>
  Effect.gen(function*() {
    const feed = opts.feed
    const readsStdin = cmd.inputs.some((i) => i.source === "pipe:0")
    if (readsStdin !== (feed !== undefined)) {
      return yield* Effect.die(new Error("ffmpeg reads stdin exactly when a feed is given"))
    }
    const started = yield* Deferred.make<Writable>()
    const run = spawn(binary, cmd, opts, (stdin) => Deferred.doneUnsafe(started, Exit.succeed(stdin)))
    if (!feed) return yield* run
    yield* Effect.all([run, Effect.flatMap(Deferred.await(started), feed)], { concurrency: 2, discard: true })
  })

const spawn = (
  binary: string,
  cmd: FfmpegCommand,
  { niceness = 0, onFrames }: RunOptions,
  onStart: (stdin: Writable) => void
): Effect.Effect<void, RenderFailed> =>
  Effect.callback<void, RenderFailed>((resume) => {
    // fluent keeps the last `stdoutLines` lines of stdout and of stderr; the error tail comes from there.
    // With a niceness it runs `nice -n N ffmpeg …`, which execs ffmpeg in place (same pid to kill).
    const c = ffmpeg({ stdoutLines: STDERR_LINES, niceness })
    c.setFfmpegPath(binary)
    for (const input of cmd.inputs) {
      c.input(input.source)
      c.inputOptions([...input.options])
    }
    c.complexFilter(cmd.complexFilter)
    c.outputOptions([...cmd.outputOptions])
    c.output(cmd.output)
    c.on("start", () => {
      const stdin = childOf(c)?.stdin
      if (stdin) onStart(stdin)
    })
    if (onFrames) {
      // Parsed from stderr ourselves: a "progress" listener makes fluent run ffprobe on input 0, which
      // for pipe:0 would wait on stdin forever.
      c.on("stderr", (line: string) => {
        const frames = FRAME_LINE.exec(line)
        if (frames) onFrames(Number(frames[1]))
      })
    }
    c.on("end", () => resume(Effect.void))
    c.on("error", (err: Error, _stdout: string | null, stderr: string | null) =>
      resume(Effect.fail(new RenderFailed({ stage: "encode", message: err.message, stderrTail: tail(stderr) }))))
    c.run()
    return killAndWait(c)
  })
