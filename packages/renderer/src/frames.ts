import { Effect, Stream } from "effect"
import sharp from "sharp"
import type { BaseImage } from "./ingest.ts"
import { type CameraPath, cameraAt, type CameraWindow, frameTime } from "./motion-path.ts"
import { OUTPUT } from "./output.ts"

/**
 * One video frame: cut an integer region around the camera window, then one sharp `affine` does the
 * zoom *and* the fractional part of the offset with a bicubic interpolator. No step rounds the camera
 * position to whole pixels: whole-pixel crops judder (0.64 px RMS error at 0.5 px/frame, spike §3).
 *
 * sharp applies `extract` before `affine` whatever the call order, and affine's output starts at the
 * region's origin (output X samples input X / k + fx, measured), so the frame is the affine output's
 * top-left 1080x1920, copied row by row.
 */
export interface FrameRegion {
  readonly left: number
  readonly top: number
  readonly width: number
  readonly height: number
  /** Fractional offset of the window inside the region, in base pixels. */
  readonly fx: number
  readonly fy: number
}

/** Bicubic reads 2 pixels beyond the sample; keep that much real context around the window. */
const CONTEXT = 2

const axis = (origin: number, k: number, size: number, limit: number) => {
  const o = Math.min(Math.max(origin, 0), limit - size / k)
  const start = Math.max(0, Math.floor(o) - CONTEXT)
  const length = Math.min(limit - start, Math.ceil(o - start + size / k) + CONTEXT + 1)
  return { start, length, frac: o - start }
}

/** Pure: the integer region and fractional offset that produce this window. */
export const frameRegion = (w: CameraWindow, base: { width: number; height: number }): FrameRegion => {
  const x = axis(w.x0, w.k, OUTPUT.width, base.width)
  const y = axis(w.y0, w.k, OUTPUT.height, base.height)
  return { left: x.start, top: y.start, width: x.length, height: y.length, fx: x.frac, fy: y.frac }
}

const FRAME_BYTES = OUTPUT.width * OUTPUT.height * 3

export const renderFrame = async (base: BaseImage, w: CameraWindow): Promise<Uint8Array> => {
  const r = frameRegion(w, base)
  const { data, info } = await sharp(base.data, { raw: { width: base.width, height: base.height, channels: 3 } })
    .extract({ left: r.left, top: r.top, width: r.width, height: r.height })
    .affine([w.k, 0, 0, w.k], { idx: -r.fx, idy: -r.fy, interpolator: sharp.interpolators.bicubic })
    .raw()
    .toBuffer({ resolveWithObject: true })
  if (info.width < OUTPUT.width || info.height < OUTPUT.height || info.channels !== 3) {
    throw new Error(`affine produced ${info.width}x${info.height}x${info.channels}`)
  }
  if (info.width === OUTPUT.width && info.height === OUTPUT.height) return data
  const frame = new Uint8Array(FRAME_BYTES)
  const row = OUTPUT.width * 3
  for (let y = 0; y < OUTPUT.height; y++) frame.set(data.subarray(y * info.width * 3, y * info.width * 3 + row), y * row)
  return frame
}

/**
 * All frames, in order, with `concurrency` in flight (2 keeps both cores busy next to x264 without
 * piling up 6 MB frames). Pull-based: a frame is made only when ffmpeg's stdin has room.
 */
export const frameStream = <E>(
  base: BaseImage,
  path: CameraPath,
  frames: number,
  concurrency: number,
  onError: (e: unknown) => E
): Stream.Stream<Uint8Array, E> =>
  Stream.range(0, frames - 1).pipe(
    Stream.mapEffect(
      (i) => Effect.tryPromise({ try: () => renderFrame(base, cameraAt(path, frameTime(i, frames))), catch: onError }),
      { concurrency }
    )
  )
