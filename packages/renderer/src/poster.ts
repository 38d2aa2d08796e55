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
 * A planar yuv420p frame (BT.709, limited range, as the frame workers write it) as packed RGB24 at
 * chroma resolution (half each way): each pixel is one 2x2 block, its luma the block's mean, its
 * chroma the block's own sample. A quarter of the work of a full-size conversion, and the poster is a
 * third of the frame's size anyway.
 */
export const yuv420pToRgbHalf = (
  frame: Uint8Array,
  width: number,
  height: number
): { data: Uint8Array; width: number; height: number } => {
  const c = chromaSize(width, height)
  const uAt = width * height
  const vAt = uAt + c.width * c.height
  if (frame.length < vAt + c.width * c.height) {
    throw new Error(`a ${width}x${height} yuv420p frame needs ${vAt + c.width * c.height} bytes`)
  }
  const rgb = new Uint8Array(c.width * c.height * 3)
  for (let cy = 0; cy < c.height; cy++) {
    const r0 = 2 * cy * width
    const r1 = Math.min(2 * cy + 1, height - 1) * width
    for (let cx = 0; cx < c.width; cx++) {
      const x0 = 2 * cx
      const x1 = Math.min(2 * cx + 1, width - 1)
      // the block's luma sum (4 × mean) less 4 × 16, scaled with the mean's /4 folded into the shift
      const l = (frame[r0 + x0] + frame[r0 + x1] + frame[r1 + x0] + frame[r1 + x1] - 64) * Y_SCALE + 131072
      const at = cy * c.width + cx
      const cb = (frame[uAt + at] - 128) * 4
      const cr = (frame[vAt + at] - 128) * 4
      const p = at * 3
      rgb[p] = u8((l + R_CR * cr) >> 18)
      rgb[p + 1] = u8((l - G_CB * cb - G_CR * cr) >> 18)
      rgb[p + 2] = u8((l + B_CB * cb) >> 18)
    }
  }
  return { data: rgb, ...c }
}

/** One output frame (yuv420p, OUTPUT size) → the poster JPEG at `path`. */
export const writePoster = (
  frame: Uint8Array,
  index: number,
  path: string
): Effect.Effect<PosterResult, RenderFailed> =>
  Effect.tryPromise({
    try: async () => {
      const rgb = yuv420pToRgbHalf(frame, OUTPUT.width, OUTPUT.height)
      const info = await sharp(rgb.data, { raw: { width: rgb.width, height: rgb.height, channels: 3 } })
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
