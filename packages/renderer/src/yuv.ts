import { OUTPUT } from "./output.ts"

/**
 * Frames reach ffmpeg already in limited-range BT.709 yuv420p with the caption burnt in, rather than
 * as RGB for ffmpeg to caption and convert: the base is converted once per
 * render (`basePlanes`), each frame is resampled plane by plane (`hplane` in assembly/resample.ts, half
 * the work of RGB) and the caption blended per plane (`blend`), so ffmpeg only encodes and the pipe
 * carries half the bytes. This file holds the pure parts and a plain reference of the blend.
 */
export const YUV_FRAME_BYTES = (OUTPUT.width * OUTPUT.height * 3) / 2

/** The chroma planes' size for a luma plane of this size (2x2 blocks, the last one cut at an odd edge). */
export const chromaSize = (width: number, height: number) => ({
  width: Math.ceil(width / 2),
  height: Math.ceil(height / 2)
})

/**
 * The caption overlay as the blend reads it, per plane: only the band of rows where it has any alpha
 * (rounded out to whole 2x2 blocks), each byte of the plane paired with the caption's premultiplied
 * value (v·a/255, rounded) and what is kept of the frame (255 − a). Chroma is blended at chroma
 * resolution with the 2x2 block's mean alpha, as ffmpeg's yuv420 overlay does; luma, where the text's
 * edges are, at full resolution. Every array carries a 16-byte identity tail (0, keep 255).
 */
export interface PreparedOverlay {
  /** First output row of the band (even). */
  readonly top: number
  /** Luma rows of the band (even). */
  readonly rows: number
  readonly y: { readonly colour: Uint8Array; readonly keep: Uint8Array }
  readonly u: Uint8Array
  readonly v: Uint8Array
  readonly chromaKeep: Uint8Array
}

const OVERLAY_TAIL = 16

// BT.709 limited range, as floats (the overlay is prepared once per render).
const lumaOf = (r: number, g: number, b: number) => 16 + (219 / 255) * (0.2126 * r + 0.7152 * g + 0.0722 * b)
const cbOf = (r: number, g: number, b: number) => 128 + (224 / 255) * (-0.1146 * r - 0.3854 * g + 0.5 * b)
const crOf = (r: number, g: number, b: number) => 128 + (224 / 255) * (0.5 * r - 0.4542 * g - 0.0458 * b)

/** From the overlay's straight-alpha RGBA pixels (OUTPUT size); null when it is fully transparent. */
export const prepareOverlay = (rgba: Uint8Array): PreparedOverlay | null => {
  const { width, height } = OUTPUT
  if (rgba.length !== width * height * 4) throw new Error(`overlay must be ${width}x${height} RGBA`)
  let first = -1
  let last = -1
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (rgba[(y * width + x) * 4 + 3] !== 0) {
        if (first < 0) first = y
        last = y
        break
      }
    }
  }
  if (first < 0) return null
  const top = first & ~1
  const rows = ((last + 2) & ~1) - top
  const identity = (n: number) => ({
    colour: new Uint8Array(n + OVERLAY_TAIL),
    keep: new Uint8Array(n + OVERLAY_TAIL).fill(255)
  })
  const y = identity(rows * width)
  const cw = width / 2
  const u = new Uint8Array((rows / 2) * cw + OVERLAY_TAIL)
  const v = new Uint8Array((rows / 2) * cw + OVERLAY_TAIL)
  const chromaKeep = new Uint8Array((rows / 2) * cw + OVERLAY_TAIL).fill(255)
  for (let row = 0; row < rows; row++) {
    for (let x = 0; x < width; x++) {
      const p = ((top + row) * width + x) * 4
      const a = rgba[p + 3]
      y.colour[row * width + x] = Math.round((lumaOf(rgba[p], rgba[p + 1], rgba[p + 2]) * a) / 255)
      y.keep[row * width + x] = 255 - a
    }
  }
  for (let row = 0; row < rows; row += 2) {
    for (let x = 0; x < width; x += 2) {
      let a = 0
      let cb = 0
      let cr = 0
      for (const [dx, dy] of [[0, 0], [1, 0], [0, 1], [1, 1]]) {
        const p = ((top + row + dy) * width + x + dx) * 4
        const ai = rgba[p + 3]
        a += ai
        cb += cbOf(rgba[p], rgba[p + 1], rgba[p + 2]) * ai
        cr += crOf(rgba[p], rgba[p + 1], rgba[p + 2]) * ai
      }
      const at = (row / 2) * cw + x / 2
      u[at] = Math.round(cb / 4 / 255)
      v[at] = Math.round(cr / 4 / 255)
      chromaKeep[at] = 255 - Math.round(a / 4)
    }
  }
  return { top, rows, y, u, v, chromaKeep }
}

// BT.709 limited range in fixed point: luma Q15 of R·2^7 (rounded products, as WebAssembly's
// q15mulr), chroma Q14 of a 2x2 sum (so Q16 of the mean). Red: Y 63, Cb 102, Cr 240 (tested).
const Y_COEF = [5983, 20127, 2032] as const
const U_COEF = [-1649, -5547, 7196] as const
const V_COEF = [7196, -6537, -659] as const

const q15mulr = (a: number, b: number) => Math.max(-32768, Math.min(32767, (a * b + 0x4000) >> 15))
const u8 = (v: number) => Math.max(0, Math.min(255, v))

/** One 8-bit plane. */
export interface Plane {
  readonly data: Uint8Array
  readonly width: number
  readonly height: number
}

/**
 * The base raster (packed RGB) as BT.709 limited-range planes, once per render: luma per pixel, chroma
 * from the mean of each 2x2 block (an odd last row or column is its own neighbour). Resampling these
 * planes is linear, as the conversion is, so it matches converting resampled RGB (to rounding), at half
 * the work: a third of the bytes for luma, a twelfth each for the chroma planes.
 */
export const basePlanes = (
  base: { data: Uint8Array; width: number; height: number }
): { y: Plane; u: Plane; v: Plane } => {
  const { width, height, data } = base
  const c = chromaSize(width, height)
  const y = new Uint8Array(width * height)
  const u = new Uint8Array(c.width * c.height)
  const v = new Uint8Array(c.width * c.height)
  for (let i = 0, p = 0; i < y.length; i++, p += 3) {
    y[i] = u8(
      ((16 << 7) + 64 + q15mulr(data[p] << 7, Y_COEF[0]) + q15mulr(data[p + 1] << 7, Y_COEF[1]) +
        q15mulr(data[p + 2] << 7, Y_COEF[2])) >> 7
    )
  }
  const row = width * 3
  for (let cy = 0; cy < c.height; cy++) {
    const r0 = 2 * cy * row
    const r1 = Math.min(2 * cy + 1, height - 1) * row
    for (let cx = 0; cx < c.width; cx++) {
      const x0 = 2 * cx * 3
      const x1 = Math.min(2 * cx + 1, width - 1) * 3
      let su = (128 << 16) + (1 << 15)
      let sv = su
      for (let k = 0; k < 3; k++) {
        const sum = data[r0 + x0 + k] + data[r0 + x1 + k] + data[r1 + x0 + k] + data[r1 + x1 + k]
        su += sum * U_COEF[k]
        sv += sum * V_COEF[k]
      }
      u[cy * c.width + cx] = u8(su >> 16)
      v[cy * c.width + cx] = u8(sv >> 16)
    }
  }
  return { y: { data: y, width, height }, u: { data: u, ...c }, v: { data: v, ...c } }
}

/**
 * Where output chroma sample i of one axis takes its colour from, in chroma-plane coordinates: it covers
 * output luma pixels 2i and 2i + 1 (centre 2i + 0.5), which the camera puts at base x0 + (2i + 0.5)/k;
 * chroma-plane pixel c covers base pixels 2c and 2c + 1 (centre 2c + 0.5).
 */
export const chromaOrigin = (origin: number, k: number): number => origin / 2 - 0.25 + 0.25 / k

/** Plain reference of `blend` over one plane's band: out = colour + (plane · keep) / 255, rounded. */
export const blendReference = (
  plane: Uint8Array,
  at: number,
  colour: Uint8Array,
  keep: Uint8Array,
  bytes: number
): void => {
  for (let i = 0; i < bytes; i++) {
    const t = plane[at + i] * keep[i] + 128
    plane[at + i] = u8(colour[i] + ((t + (t >> 8)) >> 8))
  }
}
