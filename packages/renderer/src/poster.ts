import { Effect } from "effect"
import sharp from "sharp"
import { RenderFailed } from "./errors.ts"
import { OUTPUT } from "./output.ts"
import { chromaSize } from "./yuv.ts"

/**
 * The poster: one frame of the clip as a small JPEG (lists' thumbnails, the player's poster image),
 * taken from the frames the pipeline already makes, so nothing decodes the MP4 again.
 */
export const POSTER = { width: 360, height: 640, quality: 80, contentType: "image/jpeg" } as const

/**
 * Which frame the poster shows: the middle one, at eased time 0.5, the camera halfway through its
 * move. The caption is burned into every frame alike (it does not fade in), and the motion planner
 * keeps the subject inside its zone, clear of the caption band, in every frame, so the middle frame
 * shows both, and shows the move under way rather than the still first or last frame.
 */
export const posterFrame = (frames: number): number => Math.max(0, Math.floor((frames - 1) / 2))

export interface PosterResult {
  readonly width: number
  readonly height: number
  readonly byte_size: number
  readonly content_type: typeof POSTER.contentType
  /** The frame shown (0-based) and its time in the clip. */
  readonly frame: number
  readonly time_sec: number
}

// BT.709 limited range back to RGB (the inverse of yuv.ts's conversion), in Q16 fixed point.
const Y_SCALE = Math.round(65536 * (255 / 219))
const R_CR = Math.round(65536 * 1.5748 * (255 / 224))
const G_CB = Math.round(65536 * 0.1873 * (255 / 224))
const G_CR = Math.round(65536 * 0.4681 * (255 / 224))
const B_CB = Math.round(65536 * 1.8556 * (255 / 224))
const u8 = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v)

/**
 * A planar yuv420p frame (BT.709, limited range, as the frame workers write it) as packed RGB24,
 * each pixel with the chroma of its 2x2 block.
 */
export const yuv420pToRgb = (frame: Uint8Array, width: number, height: number): Uint8Array => {
  const c = chromaSize(width, height)
  const uAt = width * height
  const vAt = uAt + c.width * c.height
  if (frame.length < vAt + c.width * c.height) throw new Error(`a ${width}x${height} yuv420p frame needs ${vAt + c.width * c.height} bytes`)
  const rgb = new Uint8Array(width * height * 3)
  for (let y = 0; y < height; y++) {
    const crow = (y >> 1) * c.width
    for (let x = 0; x < width; x++) {
      const l = (frame[y * width + x] - 16) * Y_SCALE + 32768
      const cb = frame[uAt + crow + (x >> 1)] - 128
      const cr = frame[vAt + crow + (x >> 1)] - 128
      const p = (y * width + x) * 3
      rgb[p] = u8((l + R_CR * cr) >> 16)
      rgb[p + 1] = u8((l - G_CB * cb - G_CR * cr) >> 16)
      rgb[p + 2] = u8((l + B_CB * cb) >> 16)
    }
  }
  return rgb
}

/** One output frame (yuv420p, OUTPUT size) → the poster JPEG at `path`. */
export const writePoster = (frame: Uint8Array, index: number, path: string): Effect.Effect<PosterResult, RenderFailed> =>
  Effect.tryPromise({
    try: async () => {
      const rgb = yuv420pToRgb(frame, OUTPUT.width, OUTPUT.height)
      const info = await sharp(rgb, { raw: { width: OUTPUT.width, height: OUTPUT.height, channels: 3 } })
        .resize(POSTER.width, POSTER.height, { kernel: "lanczos3" })
        .jpeg({ quality: POSTER.quality, mozjpeg: true })
        .toFile(path)
      return {
        width: info.width,
        height: info.height,
        byte_size: info.size,
        content_type: POSTER.contentType,
        frame: index,
        time_sec: index / OUTPUT.fps
      } satisfies PosterResult
    },
    catch: (e) => new RenderFailed({ stage: "io", message: `poster: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(Effect.withSpan("poster"))
