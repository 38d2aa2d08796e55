/**
 * Micro-benchmark of the frame stage alone, on a 1242x2208 base (the cover/contain-blur size), over a
 * slow zoom: the renderer's WebAssembly resampler on one thread, then as the renderer runs it (worker
 * threads into shared buffers), beside the baseline it replaced (one sharp extract + affine per frame,
 * 2 in flight, bicubic and bilinear). Prints ms per frame (wall).
 * `npm exec -- node packages/renderer/bench/frames.ts`
 */
import { Effect } from "effect"
import * as Path from "node:path"
import sharp from "sharp"
import { writeFrames } from "../src/frames.ts"
import type { CameraPath } from "../src/motion-path.ts"
import { compileResampler, FRAME_BYTES, makeResampler } from "../src/resample.ts"

const W = 1242
const H = 2208
const FRAMES = 120
const photo = Path.join(import.meta.dirname, "../test/fixtures/hubble_deep_field.jpg")
const data = await sharp(photo).resize(W, H, { fit: "cover" }).removeAlpha().raw().toBuffer()
const base = { data, width: W, height: H }
const window = (i: number) => {
  const k = 1 / (1.15 - (0.15 * i) / FRAMES)
  return { k, x0: (W - 1080 / k) / 2 + 0.37, y0: (H - 1920 / k) / 2 + 0.61 }
}
const report = (name: string, started: number) =>
  console.log(`${name.padEnd(44)} ${((performance.now() - started) / FRAMES).toFixed(1).padStart(6)} ms/frame`)

console.log(`${FRAMES} frames of 1080x1920 from a ${W}x${H} base, 2 cores`)

const resampler = makeResampler(compileResampler(), base)
const frame = new Uint8Array(FRAME_BYTES)
let started = performance.now()
for (let i = 0; i < FRAMES; i++) resampler.render(window(i), frame)
report("wasm Catmull-Rom, 1 thread", started)

const path: CameraPath = {
  base: { width: W, height: H },
  anchorOut: { x: 540, y: 960 },
  from: { k: 1 / 1.15, ax: W / 2, ay: H / 2 },
  to: { k: 1, ax: W / 2, ay: H / 2 }
}
for (const workers of [1, 2]) {
  started = performance.now()
  await Effect.runPromise(writeFrames(base, path, FRAMES, { count: workers, niceness: 0 }, () => Effect.succeed(true), (e) => e))
  report(`wasm Catmull-Rom, ${workers} worker thread(s)`, started)
}

for (const [name, interpolator] of [["bicubic", sharp.interpolators.bicubic], ["bilinear", sharp.interpolators.bilinear]] as const) {
  started = performance.now()
  const inFlight: Array<Promise<unknown>> = []
  for (let i = 0; i < FRAMES; i++) {
    const w = window(i)
    const left = Math.floor(w.x0)
    const top = Math.floor(w.y0)
    inFlight.push(
      sharp(data, { raw: { width: W, height: H, channels: 3 } })
        .extract({ left, top, width: Math.min(W - left, Math.ceil(1080 / w.k) + 3), height: Math.min(H - top, Math.ceil(1920 / w.k) + 3) })
        .affine([w.k, 0, 0, w.k], { idx: -(w.x0 - left), idy: -(w.y0 - top), interpolator })
        .raw()
        .toBuffer()
    )
    if (inFlight.length >= 2) await inFlight.shift()
  }
  await Promise.all(inFlight)
  report(`baseline: sharp extract + affine ${name}, 2 in flight`, started)
}
