import { Effect } from "effect"
import sharp, { type Sharp } from "sharp"
import { PhotoRejected, RenderFailed } from "./errors.ts"
import type { Framing, PhotoSize } from "./framing.ts"
import { OUTPUT } from "./output.ts"
import type { Raster } from "./resample.ts"

/**
 * Photo bytes → the prepared base raster (RGB, 8-bit) the camera moves over. One decode per render;
 * every frame is then resampled from this buffer.
 */
type BaseImage = Raster

// libvips' operation cache would keep a render's decoded photo and intermediate rasters resident (up
// to 50 MB) for renders that never ask for them again; the service's photo path turns it off too
// (cluster/src/media/Photos.ts). Process-wide, and what a render's peak memory is measured with.
sharp.cache(false)

/** The API refuses larger uploads (contract §5); the limit here is a second guard against bombs. */
const LIMIT_INPUT_PIXELS = 100_000_000

// pages: 1 → an animated GIF/WebP renders from its first frame (contract §5).
const open = (photo: string | Uint8Array) => sharp(photo, { pages: 1, limitInputPixels: LIMIT_INPUT_PIXELS })

const rejected = (e: unknown) =>
  new PhotoRejected({ message: `photo does not decode: ${e instanceof Error ? e.message : String(e)}` })

/** Displayed size (after EXIF orientation), which is what framing must use. */
export const photoSize = (photo: string | Uint8Array): Effect.Effect<PhotoSize, PhotoRejected> =>
  Effect.tryPromise({
    try: async () => {
      const m = await open(photo).metadata()
      const w = m.autoOrient?.width ?? m.width
      const h = m.autoOrient?.height ?? m.height
      if (!w || !h) throw new Error("no dimensions")
      return { width: w, height: h }
    },
    catch: rejected
  })

/** Upright, opaque (alpha flattened onto white), sRGB (greyscale and CMYK become 3 bands). */
const normalised = (photo: string | Uint8Array) =>
  open(photo).rotate().flatten({ background: "#ffffff" }).toColourspace("srgb")

const rawRgb = async (img: Sharp): Promise<BaseImage> => {
  const { data, info } = await img.removeAlpha().raw().toBuffer({ resolveWithObject: true })
  if (info.channels !== 3) throw new Error(`expected 3 channels, got ${info.channels}`)
  return { data, width: info.width, height: info.height }
}

const prepare = async (photo: string | Uint8Array, f: Framing): Promise<BaseImage> => {
  // Decode once to an upright sRGB raster; the framings below resample from it with lanczos3.
  const { data, info } = await normalised(photo).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const src = () => sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
  switch (f.kind) {
    case "cover":
      if (f.crop) {
        // Around the subject: exactly the planned crop, scaled to the base (upscaled when the photo is small).
        const c = f.crop
        const left = Math.max(0, Math.min(info.width - 1, Math.floor(c.left)))
        const top = Math.max(0, Math.min(info.height - 1, Math.floor(c.top)))
        const width = Math.max(1, Math.min(info.width - left, Math.round(c.width)))
        const height = Math.max(1, Math.min(info.height - top, Math.round(c.height)))
        const cropped = await src().extract({ left, top, width, height }).raw().toBuffer()
        return rawRgb(
          sharp(cropped, { raw: { width, height, channels: 3 } }).resize(f.base.width, f.base.height, {
            fit: "fill",
            kernel: "lanczos3"
          })
        )
      }
      return rawRgb(
        src().resize(f.base.width, f.base.height, {
          fit: "cover",
          position: sharp.strategy.attention,
          kernel: "lanczos3"
        })
      )
    case "pan":
      return rawRgb(src().resize(f.base.width, f.base.height, { fit: "fill", kernel: "lanczos3" }))
    case "contain-blur": {
      // Blur a small copy and scale it up: the same look as blurring the full base, a fraction of the cost.
      const small = await src()
        .resize(Math.round(f.base.width / 8), Math.round(f.base.height / 8), { fit: "cover" })
        .blur(6)
        .modulate({ brightness: 0.72 })
        .raw()
        .toBuffer({ resolveWithObject: true })
      const background = await sharp(small.data, {
        raw: { width: small.info.width, height: small.info.height, channels: 3 }
      })
        .resize(f.base.width, f.base.height, { fit: "fill", kernel: "cubic" })
        .raw()
        .toBuffer()
      const fg = await src()
        .resize(f.photoRect.width, f.photoRect.height, { fit: "fill", kernel: "lanczos3" })
        .raw()
        .toBuffer()
      return rawRgb(
        sharp(background, { raw: { width: f.base.width, height: f.base.height, channels: 3 } }).composite([
          {
            input: fg,
            raw: { width: f.photoRect.width, height: f.photoRect.height, channels: 3 },
            left: f.photoRect.left,
            top: f.photoRect.top
          }
        ])
      )
    }
  }
}

export const prepareBase = (photo: string | Uint8Array, framing: Framing): Effect.Effect<BaseImage, PhotoRejected> =>
  Effect.tryPromise({ try: () => prepare(photo, framing), catch: rejected }).pipe(Effect.withSpan("prepareBase"))

/**
 * The caption PNG → straight-alpha RGBA pixels of the output size (placed at the top left, as ffmpeg's
 * overlay placed it; a smaller overlay is padded with transparency, a larger one cut).
 */
export const overlayPixels = (png: Uint8Array): Effect.Effect<Uint8Array, RenderFailed> =>
  Effect.tryPromise({
    try: async () => {
      const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
      if (info.width === OUTPUT.width && info.height === OUTPUT.height && info.channels === 4) {
        return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      }
      const placed = await sharp({
        create: { width: OUTPUT.width, height: OUTPUT.height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } }
      })
        .composite([{
          input: data,
          raw: { width: info.width, height: info.height, channels: info.channels },
          left: 0,
          top: 0
        }])
        .raw()
        .toBuffer()
      return new Uint8Array(placed.buffer, placed.byteOffset, placed.byteLength)
    },
    catch: (e) =>
      new RenderFailed({
        stage: "frames",
        message: `caption overlay does not decode: ${e instanceof Error ? e.message : String(e)}`
      })
  })
