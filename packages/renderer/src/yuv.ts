import { OUTPUT } from "./output.ts"

/**
 * What ffmpeg used to do to every frame after the resampler (issue 13, item 4): burn the caption in
 * while still in RGB, then convert to limited-range BT.709 yuv420p. Both now run in the frame workers'
 * WebAssembly (`blend`, `yuv420` in assembly/resample.ts), so ffmpeg only encodes and the pipe carries
 * half the bytes. This file holds the caption's prepared form and a plain reference of the integer
 * arithmetic the WebAssembly promises (the tests compare the two byte for byte).
 */
export const YUV_FRAME_BYTES = (OUTPUT.width * OUTPUT.height * 3) / 2

/**
 * The caption overlay as the blend reads it: only the band of rows where it has any alpha, each byte of
 * the RGB frame paired with the caption's premultiplied colour (c·a/255, rounded) and what is kept of
 * the frame (255 − a). Both arrays carry a 16-byte identity tail (colour 0, keep 255) for the last step.
 */
export interface PreparedOverlay {
  /** First output row of the band. */
  readonly top: number
  readonly rows: number
  readonly colour: Uint8Array
  readonly keep: Uint8Array
}

export const OVERLAY_TAIL = 16

/** From the overlay's straight-alpha RGBA pixels (OUTPUT size); null when it is fully transparent. */
export const prepareOverlay = (rgba: Uint8Array): PreparedOverlay | null => {
  const { width, height } = OUTPUT
  if (rgba.length !== width * height * 4) throw new Error(`overlay must be ${width}x${height} RGBA`)
  let top = -1
  let bottom = -1
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (rgba[(y * width + x) * 4 + 3] !== 0) {
        if (top < 0) top = y
        bottom = y
        break
      }
    }
  }
  if (top < 0) return null
  const rows = bottom - top + 1
  const bytes = rows * width * 3
  const colour = new Uint8Array(bytes + OVERLAY_TAIL)
  const keep = new Uint8Array(bytes + OVERLAY_TAIL).fill(255)
  for (let i = 0, p = top * width * 4; i < bytes; i += 3, p += 4) {
    const a = rgba[p + 3]
    for (let c = 0; c < 3; c++) {
      colour[i + c] = Math.round((rgba[p + c] * a) / 255)
      keep[i + c] = 255 - a
    }
  }
  return { top, rows, colour, keep }
}

// The constants of assembly/resample.ts (see there): luma Q15 (of R·2^7), chroma Q14 of a 2x2 sum.
const Y_COEF = [5983, 20127, 2032] as const
const U_COEF = [-1649, -5547, 7196] as const
const V_COEF = [7196, -6537, -659] as const

const q15mulr = (a: number, b: number) => Math.max(-32768, Math.min(32767, (a * b + 0x4000) >> 15))
const u8 = (v: number) => Math.max(0, Math.min(255, v))

/** Plain reference of `blend`: the band of `frame` (packed RGB24, OUTPUT size) under the caption. */
export const blendReference = (frame: Uint8Array, o: PreparedOverlay): void => {
  const start = o.top * OUTPUT.width * 3
  for (let i = 0; i < o.rows * OUTPUT.width * 3; i++) {
    const t = frame[start + i] * o.keep[i] + 128
    frame[start + i] = u8(o.colour[i] + ((t + (t >> 8)) >> 8))
  }
}

/** Plain reference of `yuv420`: packed RGB24 (OUTPUT size) → Y, U, V planes, one after the other. */
export const yuv420Reference = (rgb: Uint8Array): Uint8Array => {
  const { width, height } = OUTPUT
  const out = new Uint8Array(YUV_FRAME_BYTES)
  const uAt = width * height
  const vAt = uAt + (width / 2) * (height / 2)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * 3
      let acc = (16 << 7) + 64
      for (let c = 0; c < 3; c++) acc += q15mulr(rgb[p + c] << 7, Y_COEF[c])
      out[y * width + x] = u8(acc >> 7)
    }
  }
  for (let y = 0; y < height; y += 2) {
    for (let x = 0; x < width; x += 2) {
      let u = (128 << 16) + (1 << 15)
      let v = u
      for (let c = 0; c < 3; c++) {
        const p = (y * width + x) * 3 + c
        const sum = rgb[p] + rgb[p + 3] + rgb[p + width * 3] + rgb[p + width * 3 + 3]
        u += sum * U_COEF[c]
        v += sum * V_COEF[c]
      }
      const at = (y / 2) * (width / 2) + x / 2
      out[uAt + at] = u8(u >> 16)
      out[vAt + at] = u8(v >> 16)
    }
  }
  return out
}
