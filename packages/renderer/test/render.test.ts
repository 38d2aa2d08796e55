import { afterAll, beforeAll, expect, layer } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { getPriority, tmpdir } from "node:os"
import { join } from "node:path"
import { prepareCaption } from "../src/caption.ts"
import { photoSize } from "../src/ingest.ts"
import { type RenderJob, renderVideo } from "../src/pipeline.ts"
import { probeVideo } from "../src/probe.ts"
import { Renderer } from "../src/Renderer.ts"
import { makeSynthetic, REAL, type SyntheticName } from "./support/fixtures.ts"

let synthetic: Record<SyntheticName, string>
let out: string
beforeAll(async () => {
  synthetic = await makeSynthetic()
  out = mkdtempSync(join(tmpdir(), "p2v-render-test-"))
}, 60_000)
afterAll(() => rmSync(out, { recursive: true, force: true }))

const sha256 = (p: string) => createHash("sha256").update(readFileSync(p)).digest("hex")
const ffmpegChildren = () => {
  try {
    return execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" })
      .split("\n")
      .filter((l) => /ffmpeg/.test(l))
  } catch {
    return [] // ps exits 1 when there are no children at all
  }
}
// it.effect runs on the TestClock; waiting for a real process needs real time.
const realSleep = (ms: number) => Effect.promise(() => new Promise((r) => setTimeout(r, ms)))
const renderTemps = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`p2v-render-${process.pid}-`))

const render = (job: Omit<RenderJob, "outPath" | "overlay"> & { quote?: string; name: string }) =>
  Effect.gen(function*() {
    const size = yield* photoSize(job.photo)
    const overlay = yield* prepareCaption({ quote: job.quote ?? "" }, { ...size, imageClass: job.imageClass })
    const outPath = join(out, `${job.name}.mp4`)
    const result = yield* renderVideo({ ...job, overlay, outPath })
    return { result, outPath }
  })

layer(Renderer.layer())("renderVideo", (it) => {
  it.effect(
    "a full-length render probes as a deliverable Reels/TikTok/Shorts file",
    () =>
      Effect.gen(function*() {
        const calls = yield* Ref.make<Array<[number, number]>>([])
        const { result, outPath } = yield* render({
          name: "full",
          photo: REAL.hubble,
          quote: "The universe is under no obligation to make sense to you.",
          seconds: 8,
          onProgress: (done, total) => Ref.update(calls, (c): Array<[number, number]> => [...c, [done, total]])
        })
        expect(result).toEqual({
          duration_sec: expect.closeTo(8, 1),
          width: 1080,
          height: 1920,
          byte_size: statSync(outPath).size,
          content_type: "video/mp4"
        })
        const p = yield* probeVideo(outPath)
        expect(Math.abs(p.durationSec - 8)).toBeLessThanOrEqual(1 / 30)
        expect(p.video).toMatchObject({
          codec: "h264",
          profile: "High",
          level: 40,
          width: 1080,
          height: 1920,
          pixFmt: "yuv420p",
          fps: 30,
          frames: 240,
          colorSpace: "bt709",
          colorPrimaries: "bt709",
          colorTransfer: "bt709",
          colorRange: "tv"
        })
        expect(p.audio).toEqual({ codec: "aac", sampleRate: 48000, channels: 2 })
        expect(p.moovBeforeMdat).toBe(true)
        const progress = yield* Ref.get(calls)
        expect(progress.length).toBeGreaterThan(2)
        expect(progress.at(-1)).toEqual([240, 240])
        expect(progress.every(([d], i) => i === 0 || d >= progress[i - 1][0])).toBe(true)
      }),
    180_000
  )

  const kinds: Array<[SyntheticName | "chelsea" | "astronaut", string | undefined]> = [
    ["tiny", "person"],
    ["huge", "landscape_nature"],
    ["exifRotated", undefined],
    ["alphaPng", "product_object"],
    ["animatedGif", "other"],
    ["greyJpeg", undefined],
    ["webp", "product_object"],
    ["portrait", "person"],
    ["panorama", "landscape_nature"],
    ["chelsea", undefined],
    ["astronaut", "person"]
  ]
  for (const [kind, imageClass] of kinds) {
    it.effect(
      `renders ${kind}`,
      () =>
        Effect.gen(function*() {
          const photo = kind === "chelsea" ? REAL.chelsea : kind === "astronaut" ? REAL.astronaut : synthetic[kind]
          const { result, outPath } = yield* render({
            name: kind,
            photo,
            quote: `${kind} ✨`,
            imageClass: imageClass as RenderJob["imageClass"],
            seconds: 1
          })
          expect(result.width).toBe(1080)
          const p = yield* probeVideo(outPath)
          expect(p.video?.frames).toBe(30)
          expect(p.video?.width).toBe(1080)
          expect(p.video?.height).toBe(1920)
        }),
      60_000
    )
  }

  it.effect(
    "the same inputs give byte-identical output",
    () =>
      Effect.gen(function*() {
        const job = { photo: REAL.rocket, quote: "Same bytes twice", seconds: 1, renderPrompt: "slow pan right" }
        const a = yield* render({ ...job, name: "det-a" })
        const b = yield* render({ ...job, name: "det-b" })
        expect(sha256(a.outPath)).toBe(sha256(b.outPath))
      }),
    60_000
  )

  it.effect(
    "interruption mid-render kills ffmpeg and leaves no temp or partial file",
    () =>
      Effect.gen(function*() {
        const tempsBefore = renderTemps()
        const started = yield* Ref.make(0)
        const outPath = join(out, "interrupted.mp4")
        const fiber = yield* renderVideo({
          photo: REAL.hubble,
          overlay: null,
          seconds: 8,
          outPath,
          onProgress: (done) => Ref.set(started, done)
        }).pipe(Effect.forkChild)
        // Wait until ffmpeg is really encoding.
        while ((yield* Ref.get(started)) < 5) yield* realSleep(100)
        expect(ffmpegChildren().length).toBe(1)
        yield* Fiber.interrupt(fiber)
        expect(ffmpegChildren()).toEqual([])
        expect(readdirSync(out).filter((n) => n.includes("interrupted"))).toEqual([])
        expect(renderTemps()).toEqual(tempsBefore)
      }),
    60_000
  )

  it.effect.runIf(process.platform === "linux")(
    "ffmpeg and the frame workers run at the renderer's lowered priority, the process itself does not",
    () =>
      Effect.gen(function*() {
        const renderer = yield* Renderer
        expect(renderer.niceness).toBe(10)
        const started = yield* Ref.make(0)
        const fiber = yield* renderVideo({
          photo: REAL.hubble,
          overlay: null,
          seconds: 8,
          outPath: join(out, "lowered.mp4"),
          onProgress: (done) => Ref.set(started, done)
        }).pipe(Effect.forkChild)
        while ((yield* Ref.get(started)) < 5) yield* realSleep(100)
        const ffmpegNice = execFileSync("ps", ["-o", "ni=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" })
          .split("\n").filter((l) => /ffmpeg/.test(l)).map((l) => Number(l.trim().split(/\s+/)[0]))
        // /proc/self/task/<tid>/stat: field 19 is the nice value (fields counted after the comm)
        const threadNice = readdirSync("/proc/self/task").flatMap((tid) => {
          try {
            const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
            return [{ tid: Number(tid), nice: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]) }]
          } catch {
            return [] // the thread ended meanwhile
          }
        })
        yield* Fiber.interrupt(fiber)
        // relative to the process's own priority, as `nice -n` is (a CI runner may itself be niced)
        const own = getPriority()
        const lowered = Math.min(19, own + 10)
        expect(ffmpegNice).toEqual([lowered])
        expect(threadNice.filter((t) => t.nice === lowered).length).toBeGreaterThanOrEqual(renderer.frameConcurrency)
        expect(threadNice.find((t) => t.tid === process.pid)?.nice).toBe(own)
      }),
    60_000
  )

  it.effect("a photo that no longer decodes is a typed PhotoRejected", () =>
    Effect.gen(function*() {
      const err = yield* Effect.flip(
        renderVideo({ photo: synthetic.corrupt, overlay: null, seconds: 1, outPath: join(out, "corrupt.mp4") })
      )
      expect(err._tag).toBe("PhotoRejected")
      const missing = yield* Effect.flip(
        renderVideo({ photo: join(out, "nope.jpg"), overlay: null, seconds: 1, outPath: join(out, "nope.mp4") })
      )
      expect(missing._tag).toBe("PhotoRejected")
      expect(readdirSync(out).filter((n) => n.includes("corrupt") || n.includes("nope"))).toEqual([])
    }))
})
