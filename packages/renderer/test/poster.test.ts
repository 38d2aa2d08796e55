import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import sharp from "sharp"
import { prepareCaption } from "../src/caption.ts"
import { photoSize } from "../src/ingest.ts"
import { renderVideo } from "../src/pipeline.ts"
import { POSTER, posterFrame, yuv420pToRgbHalf } from "../src/poster.ts"
import { Renderer } from "../src/Renderer.ts"
import { basePlanes } from "../src/yuv.ts"
import { REAL } from "./support/fixtures.ts"

let out: string
/** The posters of the four photos, kept for a person to look at (test-results is git-ignored). */
const keep = new URL("../../../test-results/posters/", import.meta.url).pathname
beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), "p2v-poster-test-"))
  mkdirSync(keep, { recursive: true })
})
afterAll(() => rmSync(out, { recursive: true, force: true }))

/** A packed RGB raster as the frame workers' yuv420p frame (the renderer's own forward conversion). */
const asFrame = (rgb: Uint8Array, width: number, height: number) => {
  const planes = basePlanes({ data: rgb, width, height })
  return new Uint8Array([...planes.y.data, ...planes.u.data, ...planes.v.data])
}

describe("yuv420pToRgbHalf", () => {
  it("inverts the frame workers' BT.709 limited-range conversion to within rounding", () => {
    const colours = [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
      [255, 255, 255],
      [0, 0, 0],
      [128, 128, 128],
      [250, 200, 30],
      [12, 80, 160]
    ]
    for (const [r, g, b] of colours) {
      // a 2x2 block of one colour: one chroma sample, four luma samples, one pixel back
      const rgb = new Uint8Array(12).map((_, i) => [r, g, b][i % 3])
      const back = yuv420pToRgbHalf(asFrame(rgb, 2, 2), 2, 2)
      expect([back.width, back.height]).toEqual([1, 1])
      for (let i = 0; i < 3; i++) {
        expect(Math.abs(back.data[i] - rgb[i]), `${[r, g, b]} channel ${i}`).toBeLessThanOrEqual(2)
      }
    }
  })

  it("each pixel is its 2x2 block's mean, an odd last row and column their own neighbours", () => {
    // 3x3 greys: blocks (0,0) of 10, 50, 90, 130 → 70; the odd column, row and corner alone
    const greys = [10, 50, 200, 90, 130, 200, 30, 30, 240]
    const rgb = new Uint8Array(27).map((_, i) => greys[Math.floor(i / 3)])
    const back = yuv420pToRgbHalf(asFrame(rgb, 3, 3), 3, 3)
    expect([back.width, back.height]).toEqual([2, 2])
    const reds = [0, 1, 2, 3].map((p) => back.data[p * 3])
    for (const [got, want] of reds.map((v, i) => [v, [70, 200, 30, 240][i]])) {
      expect(Math.abs(got - want)).toBeLessThanOrEqual(2)
    }
  })

  it("refuses a buffer shorter than a frame", () => {
    expect(() => yuv420pToRgbHalf(new Uint8Array(5), 2, 2)).toThrow(/needs 6 bytes/)
  })

  it("shows the middle frame: the camera halfway through its move", () => {
    expect(posterFrame(30)).toBe(14)
    expect(posterFrame(240)).toBe(119)
    expect(posterFrame(1)).toBe(0)
  })
})

/** Mean absolute difference per channel between two RGB images of one size. */
const meanDiff = (a: Uint8Array, b: Uint8Array) => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i])
  return sum / a.length
}

layer(Renderer.layer())("renderVideo's poster", (it) => {
  const photos = [["astronaut", REAL.astronaut, "person"], ["chelsea", REAL.chelsea, "other"], [
    "coffee",
    REAL.coffee,
    "product_object"
  ], [
    "rocket",
    REAL.rocket,
    "other"
  ]] as const
  for (const [name, photo, imageClass] of photos) {
    it.effect(
      `${name}: a ${POSTER.width}x${POSTER.height} JPEG of the clip's middle frame, caption included`,
      () =>
        Effect.gen(function*() {
          const renderer = yield* Renderer
          const size = yield* photoSize(photo)
          const overlay = yield* prepareCaption({ quote: `The ${name}, at its best` }, { ...size, imageClass })
          const outPath = join(out, `${name}.mp4`)
          const posterPath = join(out, `${name}.jpg`)
          const result = yield* renderVideo({ photo, overlay, imageClass, seconds: 1, outPath, posterPath })
          expect(result.poster).toEqual({
            width: POSTER.width,
            height: POSTER.height,
            byte_size: expect.any(Number),
            content_type: "image/jpeg",
            frame: 14,
            time_sec: 14 / 30
          })
          const meta = yield* Effect.promise(() => sharp(posterPath).metadata())
          expect(meta).toMatchObject({ format: "jpeg", width: POSTER.width, height: POSTER.height })
          expect(result.poster?.byte_size).toBeGreaterThan(5_000)
          copyFileSync(posterPath, join(keep, `${name}.jpg`))

          // the same picture as the MP4's frame 14, decoded by ffmpeg and scaled alike: the poster is
          // that frame (the encoder's loss apart), not another one
          // one frame of the video at the poster's size, as raw RGB
          const frame = (filter: string) =>
            execFileSync(renderer.ffmpeg.path, [
              "-v",
              "error",
              "-i",
              outPath,
              "-vf",
              `${filter}scale=${POSTER.width}:${POSTER.height}:flags=lanczos`,
              "-frames:v",
              "1",
              "-f",
              "rawvideo",
              "-pix_fmt",
              "rgb24",
              "-"
            ], { maxBuffer: 16 * 1024 * 1024 })
          const decoded = frame("select=eq(n\\,14),")
          const poster = yield* Effect.promise(() => sharp(posterPath).removeAlpha().raw().toBuffer())
          const near = meanDiff(poster, decoded)
          // and a frame well away from it (the first) differs more: the camera moves
          const first = frame("")
          expect(near, `${name}: poster vs frame 14`).toBeLessThan(4)
          expect(meanDiff(poster, first), `${name}: poster vs frame 0`).toBeGreaterThan(near)
        }),
      60_000
    )
  }

  it.effect(
    "without a poster path none is made, and no poster file is left after a failed render",
    () =>
      Effect.gen(function*() {
        const outPath = join(out, "plain.mp4")
        const result = yield* renderVideo({ photo: REAL.rocket, overlay: null, seconds: 1, outPath })
        expect(result.poster).toBeUndefined()
        const failed = yield* Effect.flip(renderVideo({
          photo: join(out, "missing.jpg"),
          overlay: null,
          seconds: 1,
          outPath: join(out, "failed.mp4"),
          posterPath: join(out, "failed.jpg")
        }))
        expect(failed._tag).toBe("PhotoRejected")
        expect(existsSync(join(out, "failed.jpg"))).toBe(false)
        expect(readdirSync(out).filter((n) => n.includes("failed"))).toEqual([])
      }),
    60_000
  )
})
