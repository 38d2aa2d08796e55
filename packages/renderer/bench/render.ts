/**
 * `npm run bench:render` — per 8 s render of a fixed set of photos, repeated (BENCH_REPEATS, default 3)
 * and interleaved (render, floor, x264, render, floor, …) so that load on a shared machine hits the
 * columns alike:
 *   render  wall time of renderVideo (decode, base prep, frame generation, encode, probe, verify), in a
 *           child process of its own (bench/render-child.ts) so its memory can be measured
 *   floor   the two-step encoder, for comparison: the same 240 frames as raw rgb24 from
 *           memory into ffmpeg, which burns the caption in, converts to BT.709 yuv420p and runs x264
 *           (same settings): the encode alone, no generation
 *   x264    the renderer's own ffmpeg command (x264 only) fed the same frames already in yuv420p
 *           with the caption burned in, from memory
 *   ratio   render / floor and render / x264 (medians of the per-repeat ratios; targets ≤ 1.2 and ≤ 1.5)
 *   rss     peak resident memory of one render: the largest sum of the render process's VmRSS (main
 *           thread + frame worker threads) and its ffmpeg child's, sampled from /proc every 20 ms;
 *           and the bound VmHWM(node) + VmHWM(ffmpeg, last sample) beside it. The render process
 *           starts as the service's runner does (jemalloc, V8's young generation, the compile cache:
 *           packages/server/src/ProcessMemory.ts) and loads only the render path (bench/render-child.ts)
 *   cpu     CPU seconds (user + system, all threads) of each column: the render's node process during
 *           renderVideo (frame workers; its start-up is left out) + its ffmpeg and ffprobe, from
 *           /proc/self/stat's cutime/cstime of reaped children (less sensitive to other people's load
 *           than wall time; the ratio of CPU seconds is what wall time tends to on two busy cores)
 *   zoompan the naive whole-pixel ffmpeg zoompan pipeline on the same base, once (BENCH_ZOOMPAN=0 skips)
 * Per-stage wall time of the renders (medians): prepare (decode, base, overlay), waiting on frames,
 * waiting on ffmpeg's stdin, the encoder's tail after the last frame, probe + verify, the poster (its
 * frame converted and encoded as JPEG, which the service asks of every render).
 * BENCH_PHOTOS=hubble,portrait picks inputs by name. Frames 0/120/239 of each render are saved as PNG.
 * Timings on a shared 2-core VM drift with load: the load average is printed beside every row.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import type { Writable } from "node:stream"
import sharp from "sharp"
import { prepareCaption } from "../src/caption.ts"
import { encodeCommand, type FfmpegCommand, x264Params } from "../src/ffmpeg-args.ts"
import { runFfmpeg } from "../src/ffmpeg-process.ts"
import { writeFrames } from "../src/frames.ts"
import { planFraming } from "../src/framing.ts"
import { overlayPixels, photoSize, prepareBase } from "../src/ingest.ts"
import { planMotion } from "../src/motion-path.ts"
import type { RenderTimings } from "../src/pipeline.ts"
import { flushedWriter } from "../src/platform/stream.ts"
import { Renderer } from "../src/Renderer.ts"
import { prepareOverlay } from "../src/yuv.ts"

const SECONDS = 8
const FRAMES = SECONDS * 30
const fixture = (name: string) => new URL(`../test/fixtures/${name}`, import.meta.url).pathname
const outDir = process.env.BENCH_OUT ?? join(tmpdir(), "p2v-bench")

const timed = <A, E, R>(e: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
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
const zoompanCommand = (
  basePng: string,
  overlayPath: string,
  outPath: string,
  settings: Renderer["Service"]["encode"]
): FfmpegCommand => {
  const c = encodeCommand({ frames: FRAMES, overlayPath, outPath, settings })
  const z = `1+0.15*(1-cos(PI*on/${FRAMES - 1}))/2`
  const zoompan = `zoompan=z='${z}':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=${FRAMES}:s=1080x1920:fps=30`
  return {
    ...c,
    inputs: [{ source: basePng, options: [] }, ...c.inputs.slice(1)],
    complexFilter: c.complexFilter.replace("[0:v]format=gbrp", `[0:v]${zoompan},format=gbrp`)
  }
}

const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 3))
const ZOOMPAN = process.env.BENCH_ZOOMPAN !== "0"
const PICK = process.env.BENCH_PHOTOS?.split(",").map((s) => s.trim()).filter(Boolean)

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const load = () => loadavg().map((l) => l.toFixed(1)).join("/")

/** VmRSS and VmHWM (kB) of a process, or undefined once it is gone. */
const memOf = (pid: number) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0)
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") }
  } catch {
    return undefined
  }
}
const childrenOf = (pid: number): Array<number> => {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)
    )
  } catch {
    return []
  }
}

/** CPU seconds of this process's reaped children so far (cutime + cstime, /proc/self/stat). */
const childCpu = () => {
  const stat = readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[13]) + Number(fields[14])) / 100 // fields 16, 17; USER_HZ is 100 on Linux
}
const cpuOf = <A, E, R>(e: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const c0 = childCpu()
    const a = yield* e
    return [a, childCpu() - c0] as const
  })

interface ChildRender {
  readonly wallMs: number
  readonly timings: RenderTimings
  readonly hwmKb: number
  /** The node process's own CPU (main + frame workers), ms, in all and during renderVideo only. */
  readonly cpuMs: number
  readonly renderCpuMs: number
  /** The node process's RSS just before the render (kB). */
  readonly rssBeforeKb: number
  /** Largest sampled sum of VmRSS over the render process and its descendants (kB). */
  readonly peakSumKb: number
  /** Largest VmHWM seen of any descendant (ffmpeg) (kB). */
  readonly childHwmKb: number
}

const renderInChild = (job: { photo: string; overlay: string; imageClass: string | undefined; outPath: string }) =>
  Effect.callback<ChildRender, Error>((resume) => {
    const child = spawn(process.execPath, [
      new URL("./render-child.ts", import.meta.url).pathname,
      JSON.stringify({ ...job, seconds: SECONDS })
    ], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    let peakSumKb = 0
    let childHwmKb = 0
    const sample = setInterval(() => {
      if (child.pid === undefined) return
      let sum = memOf(child.pid)?.rss ?? 0
      for (const pid of childrenOf(child.pid)) {
        const m = memOf(pid)
        if (m) {
          sum += m.rss
          childHwmKb = Math.max(childHwmKb, m.hwm)
        }
      }
      peakSumKb = Math.max(peakSumKb, sum)
    }, 20)
    child.on("exit", (code) => {
      clearInterval(sample)
      const line = out.split("\n").find((l) => l.startsWith("RESULT "))
      if (code !== 0 || !line) return resume(Effect.fail(new Error(`render child exited ${code}: ${out.slice(-2000)}`)))
      resume(Effect.succeed({ ...JSON.parse(line.slice(7)), peakSumKb, childHwmKb }))
    })
  })

const program = Effect.gen(function*() {
  const renderer = yield* Renderer
  const inputs = (yield* makeInputs).filter((i) => !PICK || PICK.some((p) => i.name.startsWith(p)))
  const rows: Array<string> = []
  const stageRows: Array<string> = []
  console.log(`load average at start ${load()}; ${REPEATS} repeats per photo, interleaved`)
  for (const input of inputs) {
    const size = yield* photoSize(input.photo)
    const overlayPng = (yield* prepareCaption(
      { quote: "The universe is under no obligation to make sense to you." },
      { ...size, imageClass: input.imageClass }
    ))!
    const overlayPath = join(outDir, "overlay.png")
    writeFileSync(overlayPath, overlayPng)
    const stem = input.name.split(" ")[0]
    const outPath = join(outDir, `${stem}.mp4`)

    // The render's frames, made up front (not timed): rgb24 for the floor, yuv420p + caption for x264.
    const framing = planFraming(size, input.imageClass, true)
    const base = yield* prepareBase(input.photo, framing)
    const path = planMotion(framing, { move: undefined, speed: undefined }, SECONDS)
    const workers = { count: renderer.frameConcurrency, niceness: 0 }
    const rgbFrames: Array<Uint8Array> = []
    yield* writeFrames(base, path, FRAMES, workers, (f) => Effect.sync(() => rgbFrames.push(f.slice()) > 0), (e) => e)
    const overlay = prepareOverlay(yield* overlayPixels(overlayPng))
    const yuvFrames: Array<Uint8Array> = []
    yield* writeFrames(base, path, FRAMES, workers, (f) => Effect.sync(() => yuvFrames.push(f.slice()) > 0), (e) => e, {
      pixFmt: "yuv420p",
      overlay
    })
    // The same stdin writer the renderer uses, fed from memory.
    const fromMemory = (bufs: ReadonlyArray<Uint8Array>) => (stdin: Writable) =>
      Effect.forEach(bufs, flushedWriter(stdin), { discard: true }).pipe(
        Effect.andThen(Effect.sync(() => stdin.end()))
      )

    const reps: Array<
      {
        render: ChildRender
        renderCpu: number
        floor: number
        floorCpu: number
        x264: number
        x264Cpu: number
        load: string
      }
    > = []
    for (let r = 0; r < REPEATS; r++) {
      const [render, renderCpu] = yield* cpuOf(
        renderInChild({ photo: input.photo, overlay: overlayPath, imageClass: input.imageClass, outPath })
      )
      const [[, floor], floorCpu] = yield* cpuOf(timed(
        runFfmpeg(
          renderer.ffmpeg.path,
          encodeCommand({ frames: FRAMES, overlayPath, outPath: join(outDir, "floor.mp4"), settings: renderer.encode }),
          { feed: fromMemory(rgbFrames), niceness: renderer.niceness }
        )
      ))
      const [[, x264], x264Cpu] = yield* cpuOf(timed(
        runFfmpeg(
          renderer.ffmpeg.path,
          encodeCommand({
            frames: FRAMES,
            overlayPath: undefined,
            outPath: join(outDir, "x264.mp4"),
            settings: renderer.encode,
            inputPixFmt: "yuv420p"
          }),
          { feed: fromMemory(yuvFrames), niceness: renderer.niceness }
        )
      ))
      reps.push({ render, renderCpu, floor, floorCpu, x264, x264Cpu, load: load() })
      console.log(
        `  ${stem} #${r + 1}: render ${(render.wallMs / 1000).toFixed(2)} s, floor ${floor.toFixed(2)} s, x264 ${
          x264.toFixed(2)
        } s, ` +
          `ratio ${(render.wallMs / 1000 / floor).toFixed(2)} / ${(render.wallMs / 1000 / x264).toFixed(2)}, ` +
          `cpu render ${(render.renderCpuMs / 1000).toFixed(1)} node (+${
            ((render.cpuMs - render.renderCpuMs) / 1000).toFixed(1)
          } start-up) + ${(renderCpu - render.cpuMs / 1000).toFixed(1)} ffmpeg, floor ${floorCpu.toFixed(1)}, x264 ${
            x264Cpu.toFixed(1)
          }; ` +
          `rss ${(render.peakSumKb / 1024).toFixed(0)} MB (node ${(render.hwmKb / 1024).toFixed(0)}, ${
            (render.rssBeforeKb / 1024).toFixed(0)
          } before the render, + ffmpeg ${(render.childHwmKb / 1024).toFixed(0)}), load ${reps.at(-1)!.load}`
      )
    }
    rgbFrames.length = 0
    yuvFrames.length = 0

    const basePng = join(outDir, "base.png")
    yield* Effect.promise(() =>
      sharp(Buffer.from(base.data.buffer, base.data.byteOffset, base.data.byteLength), {
        raw: { width: base.width, height: base.height, channels: 3 }
      }).png({ compressionLevel: 1 }).toFile(basePng)
    )
    const [, zoompanWall] = framing.kind === "pan" || !ZOOMPAN
      ? [undefined, Number.NaN]
      : yield* timed(
        runFfmpeg(
          renderer.ffmpeg.path,
          zoompanCommand(basePng, overlayPath, join(outDir, `${stem}_zoompan.mp4`), renderer.encode),
          { niceness: renderer.niceness }
        )
      )

    for (const n of [0, 120, 239]) {
      execFileSync(renderer.ffmpeg.path, [
        "-v",
        "error",
        "-y",
        "-i",
        outPath,
        "-vf",
        `select=eq(n\\,${n})`,
        "-frames:v",
        "1",
        join(outDir, `${stem}_f${n}.png`)
      ])
    }
    const m = (f: (r: (typeof reps)[number]) => number) => median(reps.map(f))
    const rssMb = Math.max(...reps.map((r) => r.render.peakSumKb)) / 1024
    const boundMb = Math.max(...reps.map((r) => r.render.hwmKb + r.render.childHwmKb)) / 1024
    rows.push(
      [
        input.name.padEnd(22),
        (m((r) => r.render.wallMs) / 1000).toFixed(2).padStart(7),
        m((r) => r.floor).toFixed(2).padStart(7),
        m((r) => r.x264).toFixed(2).padStart(7),
        m((r) => r.render.wallMs / 1000 / r.floor).toFixed(2).padStart(6),
        m((r) => r.render.wallMs / 1000 / r.x264).toFixed(2).padStart(8),
        `${rssMb.toFixed(0)}/${boundMb.toFixed(0)}`.padStart(8),
        Number.isNaN(zoompanWall) ? "    n/a" : zoompanWall.toFixed(2).padStart(7),
        `${m((r) => r.renderCpu - (r.render.cpuMs - r.render.renderCpuMs) / 1000).toFixed(1)}/${
          m((r) => r.floorCpu).toFixed(1)
        }/${m((r) => r.x264Cpu).toFixed(1)}`.padStart(15),
        `  ${reps.map((r) => r.load.split("/")[0]).join(" ")}`
      ].join(" ")
    )
    const s = (f: (t: RenderTimings) => number) => (m((r) => f(r.render.timings)) / 1000).toFixed(2).padStart(7)
    stageRows.push(
      [
        input.name.padEnd(22),
        s((t) => t.prepareMs),
        s((t) => t.encodeMs),
        s((t) => t.waitFramesMs),
        s((t) => t.waitSinkMs),
        s((t) => t.tailMs),
        s((t) => t.verifyMs),
        s((t) => t.posterMs)
      ].join(" ")
    )
    console.log(rows.at(-1))
  }
  console.log(
    `\nffmpeg ${renderer.ffmpeg.version} (${renderer.ffmpeg.source}), preset ${renderer.encode.preset}, crf ${renderer.encode.crf}, x264 threads ${renderer.encode.threads} (${
      x264Params(renderer.encode)
    }), ${renderer.frameConcurrency} frame workers, ${FRAMES} frames, 1080x1920@30, ${REPEATS} repeats (medians)`
  )
  console.log(
    `${
      "photo".padEnd(22)
    }  render   floor    x264  ratio  ratio264 rss MB   zoompan cpu s r/f/x264  load(1 min) per repeat`
  )
  for (const r of rows) console.log(r)
  console.log(
    `\nstages of the render (medians, s): prepare = decode + base + overlay; encode = ffmpeg running, within it waiting on frames / on ffmpeg's stdin, and the tail after the last frame`
  )
  console.log(`${"photo".padEnd(22)} prepare  encode  wFrames  wSink    tail  verify  poster`)
  for (const r of stageRows) console.log(r)
  console.log(
    `\nrss MB = peak sampled sum (node + ffmpeg) / bound (node VmHWM + ffmpeg VmHWM); load average at end ${load()}`
  )
  console.log(`frames and videos in ${outDir}`)
})

NodeRuntime.runMain(program.pipe(Effect.provide(Renderer.layerFromEnv)))
