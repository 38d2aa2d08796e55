import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import sharp from "sharp"

/** The real photos committed beside this file's folder. */
export const REAL = {
  astronaut: new URL("../fixtures/astronaut.png", import.meta.url).pathname,
  chelsea: new URL("../fixtures/chelsea.png", import.meta.url).pathname,
  coffee: new URL("../fixtures/coffee.png", import.meta.url).pathname,
  rocket: new URL("../fixtures/rocket.jpg", import.meta.url).pathname,
  hubble: new URL("../fixtures/hubble_deep_field.jpg", import.meta.url).pathname
} as const

export type SyntheticName =
  | "tiny"
  | "huge"
  | "exifRotated"
  | "alphaPng"
  | "animatedGif"
  | "greyJpeg"
  | "webp"
  | "portrait"
  | "panorama"
  | "corrupt"

/**
 * Every awkward input kind, made from the real photos with sharp (nothing generated is committed).
 * Returns a path per kind inside a fresh temp directory.
 */
export const makeSynthetic = async (): Promise<Record<SyntheticName, string>> => {
  const dir = mkdtempSync(join(tmpdir(), "p2v-fixtures-"))
  const p = (name: string) => join(dir, name)
  const rocket = readFileSync(REAL.rocket)
  const hubble = readFileSync(REAL.hubble)
  await sharp(REAL.astronaut).resize(64, 64).png().toFile(p("tiny.png"))
  // 24 MP: exercises shrink-on-load and the memory path of a phone photo.
  await sharp(hubble).resize(6000, 4000, { fit: "fill" }).jpeg({ quality: 85 }).toFile(p("huge.jpg"))
  // Stored landscape 640x427 with Orientation=6: displayed as a 427x640 portrait.
  await sharp(rocket).withMetadata({ orientation: 6 }).jpeg().toFile(p("exif6.jpg"))
  // Transparent surround: the coffee cup cut out by a radial alpha.
  const { width = 600, height = 400 } = await sharp(REAL.coffee).metadata()
  const mask = Buffer.from(
    `<svg width="${width}" height="${height}"><ellipse cx="${width / 2}" cy="${height / 2}" rx="${width * 0.35}" ry="${
      height * 0.42
    }" fill="#fff"/></svg>`
  )
  const alpha = await sharp(mask).extractChannel(0).raw().toBuffer()
  const rgb = await sharp(REAL.coffee).removeAlpha().raw().toBuffer()
  const rgba = Buffer.alloc(width * height * 4)
  for (let i = 0; i < width * height; i++) {
    rgb.copy(rgba, i * 4, i * 3, i * 3 + 3)
    rgba[i * 4 + 3] = alpha[i]
  }
  await sharp(rgba, { raw: { width, height, channels: 4 } }).png().toFile(p("alpha.png"))
  // 3-frame animated GIF (first frame is what renders).
  const frames = await Promise.all(
    [0, 60, 120].map((hue) => sharp(REAL.chelsea).modulate({ hue }).resize(300, 200).ensureAlpha().raw().toBuffer())
  )
  await sharp(Buffer.concat(frames), { raw: { width: 300, height: 600, channels: 4, pageHeight: 200 } as never })
    .gif({ loop: 0 })
    .toFile(p("anim.gif"))
  await sharp(rocket).toColourspace("b-w").jpeg().toFile(p("grey.jpg"))
  await sharp(REAL.coffee).webp({ quality: 80 }).toFile(p("coffee.webp"))
  await sharp(hubble).resize(900, 1600, { fit: "cover" }).jpeg().toFile(p("portrait.jpg"))
  await sharp(hubble).resize(3000, 1400, { fit: "fill" }).jpeg().toFile(p("panorama.jpg"))
  // A JPEG cut off after its header: the API stored it, but it no longer decodes.
  writeFileSync(p("corrupt.jpg"), rocket.subarray(0, 600))
  return {
    tiny: p("tiny.png"),
    huge: p("huge.jpg"),
    exifRotated: p("exif6.jpg"),
    alphaPng: p("alpha.png"),
    animatedGif: p("anim.gif"),
    greyJpeg: p("grey.jpg"),
    webp: p("coffee.webp"),
    portrait: p("portrait.jpg"),
    panorama: p("panorama.jpg"),
    corrupt: p("corrupt.jpg")
  }
}

/** Bounding box of the pixels whose alpha is above `threshold`, or undefined if none is. */
export const alphaBox = async (png: Uint8Array, threshold = 0) => {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  let left = Infinity
  let top = Infinity
  let right = -Infinity
  let bottom = -Infinity
  for (let y = 0; y < info.height; y++) {
    for (let x = 0; x < info.width; x++) {
      if (data[(y * info.width + x) * 4 + 3] > threshold) {
        if (x < left) left = x
        if (x > right) right = x
        if (y < top) top = y
        if (y > bottom) bottom = y
      }
    }
  }
  return right < 0
    ? undefined
    : { left, top, right: right + 1, bottom: bottom + 1, width: info.width, height: info.height }
}
