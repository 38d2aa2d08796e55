/**
 * `npm run bench:render` — one run over a fixed set of photos, printing per 8 s render:
 *   render  wall time of renderVideo (decode, base prep, frame generation, encode, probe, verify)
 *   floor   the same ffmpeg command (caption overlay, BT.709 conversion, x264 at the same settings)
 *           fed the same 240 raw rgb24 frames from memory: the encoder alone, no generation
 *   x264    libx264 alone at the same settings on the same frames pre-converted to yuv420p
 *   ratio   render / floor (target ≤ 2.0 at the default preset)
 *   zoompan the naive whole-pixel ffmpeg zoompan pipeline on the same base, for comparison
 * It also saves frames 0/120/239 of each render as PNG (paths printed) to look at.
 * Timings on a shared 2-core VM drift with load: compare within one run.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Writable } from "node:stream"
import sharp from "sharp"
import { prepareCaption } from "../src/caption.ts"
import { encodeCommand, type FfmpegCommand } from "../src/ffmpeg-args.ts"
import { runFfmpeg } from "../src/ffmpeg-process.ts"
import { writeFrames } from "../src/frames.ts"
import { planFraming } from "../src/framing.ts"
import { photoSize, prepareBase } from "../src/ingest.ts"
import { planMotion } from "../src/motion-path.ts"
import { renderVideo } from "../src/pipeline.ts"
import { flushedWriter } from "../src/platform/stream.ts"
import { Renderer } from "../src/Renderer.ts"

const SECONDS = 8
const FRAMES = SECONDS * 30
const fixture = (name: string) => new URL(`../test/fixtures/${name}`, import.meta.url).pathname
const outDir = process.env.BENCH_OUT ?? join(tmpdir(), "p2v-bench")

const timed = <A, E, R>(e: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const t0 = performance.now()
    const a = yield* e
    return [a, (performance.now() - t0) / 1000] as const
  })

const makeInputs = Effect.promise(async () => {
  mkdirSync(outDir, { recursive: true })
  const hubble = fixture("hubble_deep_field.jpg")
  const portrait = join(outDir, "in_portrait_900x1600.jpg")
  const panorama = join(outDir, "in_panorama_3000x1400.jpg")
  await sharp(hubble).resize(900, 1600, { fit: "cover" }).jpeg({ quality: 92 }).toFile(portrait)
  await sharp(hubble).resize(3000, 1400, { fit: "fill" }).jpeg({ quality: 92 }).toFile(panorama)
  return [
    { name: "hubble (contain-blur)", photo: hubble, imageClass: undefined },
    { name: "portrait (cover)", photo: portrait, imageClass: "person" as const },
    { name: "panorama (pan)", photo: panorama, imageClass: "landscape_nature" as const },
    { name: "rocket (contain-blur)", photo: fixture("rocket.jpg"), imageClass: undefined }
  ]
})

/** The naive pipeline: ffmpeg zoompan on the same prepared base (whole-pixel crop per frame). */
const zoompanCommand = (basePng: string, overlayPath: string, outPath: string, settings: Renderer["Type"]["encode"]): FfmpegCommand => {
  const c = encodeCommand({ frames: FRAMES, overlayPath, outPath, settings })
  const z = `1+0.15*(1-cos(PI*on/${FRAMES - 1}))/2`
  const zoompan = `zoompan=z='${z}':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=${FRAMES}:s=1080x1920:fps=30`
  return {
    ...c,
    inputs: [{ source: basePng, options: [] }, ...c.inputs.slice(1)],
    complexFilter: c.complexFilter.replace("[0:v]format=gbrp", `[0:v]${zoompan},format=gbrp`)
  }
}

const program = Effect.gen(function* () {
  const renderer = yield* Renderer
  const inputs = yield* makeInputs
  const rows: Array<string> = []
  for (const input of inputs) {
    const size = yield* photoSize(input.photo)
    const overlay = (yield* prepareCaption(
      { quote: "The universe is under no obligation to make sense to you." },
      { ...size, imageClass: input.imageClass }
    ))!
    const overlayPath = join(outDir, "overlay.png")
    writeFileSync(overlayPath, overlay)
    const stem = input.name.split(" ")[0]
    const outPath = join(outDir, `${stem}.mp4`)

    const [, renderWall] = yield* timed(
      renderVideo({ photo: input.photo, overlay, imageClass: input.imageClass, seconds: SECONDS, outPath })
    )

    // Same frames, generated up front (not timed), then only the encode is timed.
    const framing = planFraming(size, input.imageClass, true)
    const base = yield* prepareBase(input.photo, framing)
    const path = planMotion(framing, { move: undefined, speed: undefined }, SECONDS)
    const frames: Array<Uint8Array> = []
    yield* writeFrames(base, path, FRAMES, { count: renderer.frameConcurrency, niceness: 0 }, (f) => Effect.sync(() => frames.push(f.slice()) > 0), (e) => e)
    // The same stdin writer the renderer uses, fed from memory.
    const fromMemory = (bufs: ReadonlyArray<Uint8Array>) => (stdin: Writable) =>
      Effect.forEach(bufs, flushedWriter(stdin), { discard: true }).pipe(Effect.zipRight(Effect.sync(() => stdin.end())))
    const [, floorWall] = yield* timed(
      runFfmpeg(renderer.ffmpeg.path, encodeCommand({ frames: FRAMES, overlayPath, outPath: join(outDir, "floor.mp4"), settings: renderer.encode }), { feed: fromMemory(frames), niceness: renderer.niceness })
    )
    // x264 alone: the same frames already in yuv420p (converted before timing).
    const yuvPath = join(outDir, "frames.yuv")
    execFileSync(
      renderer.ffmpeg.path,
      ["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", "1080x1920", "-i", "pipe:0",
        "-vf", "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p", "-f", "rawvideo", yuvPath],
      { input: Buffer.concat(frames), maxBuffer: 1024 }
    )
    const yuv = readFileSync(yuvPath)
    const frameBytes = 1080 * 1920 * 1.5
    const yuvFrames = Array.from({ length: FRAMES }, (_, i) => yuv.subarray(i * frameBytes, (i + 1) * frameBytes))
    const [, x264Wall] = yield* timed(
      runFfmpeg(
        renderer.ffmpeg.path,
        encodeCommand({ frames: FRAMES, overlayPath: undefined, outPath: join(outDir, "x264.mp4"), settings: renderer.encode, inputPixFmt: "yuv420p" }),
        { feed: fromMemory(yuvFrames), niceness: renderer.niceness }
      )
    )
    rmSync(yuvPath, { force: true })
    const basePng = join(outDir, "base.png")
    yield* Effect.promise(() =>
      sharp(Buffer.from(base.data.buffer, base.data.byteOffset, base.data.byteLength), { raw: { width: base.width, height: base.height, channels: 3 } }).png({ compressionLevel: 1 }).toFile(basePng)
    )
    const [, zoompanWall] =
      framing.kind === "pan"
        ? [undefined, Number.NaN]
        : yield* timed(runFfmpeg(renderer.ffmpeg.path, zoompanCommand(basePng, overlayPath, join(outDir, `${stem}_zoompan.mp4`), renderer.encode), { niceness: renderer.niceness }))

    for (const n of [0, 120, 239]) {
      execFileSync(renderer.ffmpeg.path, ["-v", "error", "-y", "-i", outPath, "-vf", `select=eq(n\\,${n})`, "-frames:v", "1", join(outDir, `${stem}_f${n}.png`)])
    }
    rows.push(
      [input.name.padEnd(22), renderWall.toFixed(2).padStart(7), floorWall.toFixed(2).padStart(7), x264Wall.toFixed(2).padStart(7),
        (renderWall / floorWall).toFixed(2).padStart(6), (renderWall / x264Wall).toFixed(2).padStart(8),
        Number.isNaN(zoompanWall) ? "    n/a" : zoompanWall.toFixed(2).padStart(7)].join(" ")
    )
    console.log(rows.at(-1))
  }
  console.log(`\nffmpeg ${renderer.ffmpeg.version} (${renderer.ffmpeg.source}), preset ${renderer.encode.preset}, crf ${renderer.encode.crf}, ${FRAMES} frames, 1080x1920@30`)
  console.log(`${"photo".padEnd(22)}  render   floor    x264  ratio  ratio264 zoompan   (seconds; ratio = render/floor)`)
  for (const r of rows) console.log(r)
  console.log(`\nframes and videos in ${outDir}`)
})

NodeRuntime.runMain(program.pipe(Effect.provide(Renderer.layerFromEnv)))
