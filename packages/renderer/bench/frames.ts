/**
 * Micro-benchmark of the frame stage alone: one sharp extract + affine per frame on a 1242x2208
 * base, 2 frames in flight as the pipeline runs them, for each interpolator and libvips thread
 * count. Prints ms per frame (wall). `npm exec -- node packages/renderer/bench/frames.ts`
 */
import sharp from "sharp"
import * as Path from "node:path"

const W = 1242
const H = 2208
const photo = Path.join(import.meta.dirname, "../test/fixtures/hubble_deep_field.jpg")
const base = await sharp(photo).resize(W, H, { fit: "cover" }).removeAlpha().raw().toBuffer()
const frames = 60

console.log(`frames: ${frames} per row, 2 in flight, sharp.concurrency() default ${sharp.concurrency()}`)
for (const [name, interpolator] of [["bicubic", sharp.interpolators.bicubic], ["bilinear", sharp.interpolators.bilinear]] as const) {
  for (const threads of [1, 2]) {
    sharp.concurrency(threads)
    const started = performance.now()
    const inFlight: Array<Promise<unknown>> = []
    for (let i = 0; i < frames; i++) {
      const k = 1 / (0.9 + i * 0.001)
      inFlight.push(
        sharp(base, { raw: { width: W, height: H, channels: 3 } })
          .extract({ left: 10, top: 10, width: 1210, height: 2150 })
          .affine([k, 0, 0, k], { idx: -0.37, idy: -0.61, interpolator })
          .raw()
          .toBuffer()
      )
      if (inFlight.length >= 2) await inFlight.shift()
    }
    await Promise.all(inFlight)
    console.log(`${name.padEnd(9)} libvips threads ${threads}: ${((performance.now() - started) / frames).toFixed(1)} ms/frame`)
  }
}
