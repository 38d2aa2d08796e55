/**
 * One render in its own process, for `bench/render.ts`: the parent samples this process's and its
 * ffmpeg child's memory from /proc while it runs. Argument: JSON {photo, overlay (a PNG path or null),
 * imageClass, seconds, outPath}; the poster goes beside outPath as NAME.poster.jpg. Prints one line `RESULT {wallMs, timings, hwmKb, rssBeforeKb, cpuMs,
 * renderCpuMs}`: this process's
 * own peak resident memory (VmHWM: main thread and frame worker threads, not ffmpeg; getrusage's maxrss
 * would still hold the forking parent's, which it inherits through exec), its RSS just before the render
 * (module loading, fonts: what a long-running service holds anyway) and CPU time (all threads), in all
 * and during the render only.
 */
import { tuneMemory } from "@pic2video/server/ProcessMemory"
import { readFileSync } from "node:fs"
import type { ImageClass } from "../src/CaptionSpec.ts"
import type { RenderTimings } from "../src/pipeline.ts"

// As the service's runner starts (packages/server/src/bin/runner.ts): before anything is loaded, re-execute
// with jemalloc and V8's small young generation, so the bench measures the process renders run in.
tuneMemory()
// Only what a render needs: NodeRuntime alone, not @effect/platform-node's index (its HTTP, socket,
// worker and cluster modules cost ~50 MB of RSS that the render path never uses).
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { Effect, References } = await import("effect")
const { renderVideo } = await import("../src/pipeline.ts")
const { Renderer } = await import("../src/Renderer.ts")

const job = JSON.parse(process.argv[2]) as {
  photo: string
  overlay: string | null
  imageClass?: ImageClass
  seconds: number
  outPath: string
}

const program = Effect.gen(function*() {
  let timings: RenderTimings | undefined
  const overlay = job.overlay === null ? null : new Uint8Array(readFileSync(job.overlay))
  const status = () => readFileSync("/proc/self/status", "utf8")
  const rssBeforeKb = Number(/^VmRSS:\s+(\d+)/m.exec(status())?.[1] ?? 0)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  // with a poster, as the service renders
  const posterPath = job.outPath.replace(/\.mp4$/, ".poster.jpg")
  yield* renderVideo({
    photo: job.photo,
    overlay,
    imageClass: job.imageClass,
    seconds: job.seconds,
    outPath: job.outPath,
    posterPath,
    onTimings: (t) => (timings = t)
  })
  const wallMs = performance.now() - t0
  const hwmKb = Number(/^VmHWM:\s+(\d+)/m.exec(status())?.[1] ?? 0)
  const cpu = process.cpuUsage()
  const during = process.cpuUsage(cpu0)
  console.log(
    `RESULT ${
      JSON.stringify({
        wallMs,
        timings,
        hwmKb,
        rssBeforeKb,
        cpuMs: (cpu.user + cpu.system) / 1000,
        renderCpuMs: (during.user + during.system) / 1000
      })
    }`
  )
})

NodeRuntime.runMain(
  program.pipe(Effect.provide(Renderer.layerFromEnv), Effect.provideService(References.MinimumLogLevel, "Warn"))
)
