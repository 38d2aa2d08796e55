// Separable convolution resampling of 8-bit RGB rasters in WebAssembly SIMD (AssemblyScript source of
// ../src/resample.wasm; `npm run build:wasm` rebuilds it and a test checks the two agree).
//
// Weights are Q14 fixed point and are computed in TypeScript (src/resample-weights.ts); this file only
// multiplies and adds, so the same inputs give the same bytes on every machine. Integer arithmetic, no
// rounding of positions: the subpixel camera offset lives entirely in the weights.

const SHIFT: i32 = 14
const ROUND: i32 = 1 << (SHIFT - 1)

/** Static data ends here; the caller lays out its buffers from this address up. */
export function heapBase(): usize {
  return __heap_base
}

/**
 * Vertical pass: destination row y = Σ_t w[y][t] · source row (first[y] + t), over `rowBytes` bytes per
 * row (a multiple of 16). `weights` holds, per row and tap, the weight splatted over eight i16 lanes.
 */
export function vertical(
  src: usize, srcStride: i32, dst: usize, dstStride: i32, rowBytes: i32, rows: i32,
  first: usize, weights: usize, taps: i32
): void {
  const round = i32x4.splat(ROUND)
  for (let y = 0; y < rows; y++) {
    const top = src + <usize>(load<i32>(first + (<usize>y << 2)) * srcStride)
    const w0 = weights + <usize>(y * taps) * 16
    const d = dst + <usize>(y * dstStride)
    for (let x = 0; x < rowBytes; x += 16) {
      let a0 = round
      let a1 = round
      let a2 = round
      let a3 = round
      let p = top + <usize>x
      let w = w0
      for (let t = 0; t < taps; t++) {
        const wt = v128.load(w)
        const v = v128.load(p)
        const lo = i16x8.extend_low_i8x16_u(v)
        const hi = i16x8.extend_high_i8x16_u(v)
        a0 = i32x4.add(a0, i32x4.extmul_low_i16x8_s(lo, wt))
        a1 = i32x4.add(a1, i32x4.extmul_high_i16x8_s(lo, wt))
        a2 = i32x4.add(a2, i32x4.extmul_low_i16x8_s(hi, wt))
        a3 = i32x4.add(a3, i32x4.extmul_high_i16x8_s(hi, wt))
        p += <usize>srcStride
        w += 16
      }
      const lo16 = i16x8.narrow_i32x4_s(i32x4.shr_s(a0, SHIFT), i32x4.shr_s(a1, SHIFT))
      const hi16 = i16x8.narrow_i32x4_s(i32x4.shr_s(a2, SHIFT), i32x4.shr_s(a3, SHIFT))
      v128.store(d + <usize>x, i8x16.narrow_i16x8_u(lo16, hi16))
    }
  }
}

/**
 * Horizontal pass over RGB pixels: destination pixel x = Σ_t w[x][t] · source pixel (first[x] + t).
 * Taps go in pairs: one 8-byte load holds two neighbours, a swizzle spreads them to
 * [R0 R1 G0 G1 B0 B1 0 0] and one dot product with [w0 w1 w0 w1 w0 w1 0 0] adds both taps to R, G, B.
 * Each pixel is stored as 4 bytes (the 4th is overwritten by the next pixel), so rows need 1 byte of slack.
 */
export function horizontal(
  src: usize, srcStride: i32, dst: usize, dstStride: i32, width: i32, rows: i32,
  first: usize, weights: usize, pairs: i32
): void {
  const spread = i8x16(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1)
  const round = i32x4.splat(ROUND)
  for (let y = 0; y < rows; y++) {
    const s = src + <usize>(y * srcStride)
    const d = dst + <usize>(y * dstStride)
    let w = weights
    for (let x = 0; x < width; x++) {
      let acc = round
      let p = s + <usize>(load<i32>(first + (<usize>x << 2)) * 3)
      for (let q = 0; q < pairs; q++) {
        const v = i8x16.swizzle(v128.load64_zero(p), spread)
        acc = i32x4.add(acc, i32x4.dot_i16x8_s(v, v128.load(w)))
        p += 6
        w += 16
      }
      const r = i32x4.shr_s(acc, SHIFT)
      const n16 = i16x8.narrow_i32x4_s(r, r)
      v128.store32_lane(d + <usize>(x * 3), i8x16.narrow_i16x8_u(n16, n16), 0)
    }
  }
}

/**
 * The horizontal pass for the usual case, zoom steps up to 1.25 source pixels per output pixel: at most
 * five real taps (three pairs, the sixth weighing 0), so one 16-byte load holds every tap of a pixel.
 * Four pixels per step, packed into 12 bytes with one store.
 */
export function horizontal5(
  src: usize, srcStride: i32, dst: usize, dstStride: i32, width: i32, rows: i32,
  first: usize, weights: usize
): void {
  const s01 = i8x16(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1)
  const s23 = i8x16(6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1)
  const s45 = i8x16(12, -1, 15, -1, 13, -1, 15, -1, 14, -1, 15, -1, -1, -1, -1, -1)
  const pack = i8x16(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1)
  const round = i32x4.splat(ROUND)
  for (let y = 0; y < rows; y++) {
    const s = src + <usize>(y * srcStride)
    const d = dst + <usize>(y * dstStride)
    let w = weights
    let f = first
    for (let x = 0; x < width; x += 4) {
      const v0 = v128.load(s + <usize>(load<i32>(f) * 3))
      const v1 = v128.load(s + <usize>(load<i32>(f, 4) * 3))
      const v2 = v128.load(s + <usize>(load<i32>(f, 8) * 3))
      const v3 = v128.load(s + <usize>(load<i32>(f, 12) * 3))
      let a0 = i32x4.add(round, i32x4.dot_i16x8_s(i8x16.swizzle(v0, s01), v128.load(w)))
      a0 = i32x4.add(a0, i32x4.dot_i16x8_s(i8x16.swizzle(v0, s23), v128.load(w, 16)))
      a0 = i32x4.add(a0, i32x4.dot_i16x8_s(i8x16.swizzle(v0, s45), v128.load(w, 32)))
      let a1 = i32x4.add(round, i32x4.dot_i16x8_s(i8x16.swizzle(v1, s01), v128.load(w, 48)))
      a1 = i32x4.add(a1, i32x4.dot_i16x8_s(i8x16.swizzle(v1, s23), v128.load(w, 64)))
      a1 = i32x4.add(a1, i32x4.dot_i16x8_s(i8x16.swizzle(v1, s45), v128.load(w, 80)))
      let a2 = i32x4.add(round, i32x4.dot_i16x8_s(i8x16.swizzle(v2, s01), v128.load(w, 96)))
      a2 = i32x4.add(a2, i32x4.dot_i16x8_s(i8x16.swizzle(v2, s23), v128.load(w, 112)))
      a2 = i32x4.add(a2, i32x4.dot_i16x8_s(i8x16.swizzle(v2, s45), v128.load(w, 128)))
      let a3 = i32x4.add(round, i32x4.dot_i16x8_s(i8x16.swizzle(v3, s01), v128.load(w, 144)))
      a3 = i32x4.add(a3, i32x4.dot_i16x8_s(i8x16.swizzle(v3, s23), v128.load(w, 160)))
      a3 = i32x4.add(a3, i32x4.dot_i16x8_s(i8x16.swizzle(v3, s45), v128.load(w, 176)))
      const lo = i16x8.narrow_i32x4_s(i32x4.shr_s(a0, SHIFT), i32x4.shr_s(a1, SHIFT))
      const hi = i16x8.narrow_i32x4_s(i32x4.shr_s(a2, SHIFT), i32x4.shr_s(a3, SHIFT))
      v128.store(d + <usize>(x * 3), i8x16.swizzle(i8x16.narrow_i16x8_u(lo, hi), pack))
      w += 192
      f += 16
    }
  }
}

/** The horizontal pass at zoom 1 (pans, the end of a zoom in): four taps, two pairs, else as horizontal5. */
export function horizontal4(
  src: usize, srcStride: i32, dst: usize, dstStride: i32, width: i32, rows: i32,
  first: usize, weights: usize
): void {
  const s01 = i8x16(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1)
  const s23 = i8x16(6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1)
  const pack = i8x16(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1)
  const round = i32x4.splat(ROUND)
  for (let y = 0; y < rows; y++) {
    const s = src + <usize>(y * srcStride)
    const d = dst + <usize>(y * dstStride)
    let w = weights
    let f = first
    for (let x = 0; x < width; x += 4) {
      const v0 = v128.load(s + <usize>(load<i32>(f) * 3))
      const v1 = v128.load(s + <usize>(load<i32>(f, 4) * 3))
      const v2 = v128.load(s + <usize>(load<i32>(f, 8) * 3))
      const v3 = v128.load(s + <usize>(load<i32>(f, 12) * 3))
      let a0 = i32x4.add(round, i32x4.dot_i16x8_s(i8x16.swizzle(v0, s01), v128.load(w)))
      a0 = i32x4.add(a0, i32x4.dot_i16x8_s(i8x16.swizzle(v0, s23), v128.load(w, 16)))
      let a1 = i32x4.add(round, i32x4.dot_i16x8_s(i8x16.swizzle(v1, s01), v128.load(w, 32)))
      a1 = i32x4.add(a1, i32x4.dot_i16x8_s(i8x16.swizzle(v1, s23), v128.load(w, 48)))
      let a2 = i32x4.add(round, i32x4.dot_i16x8_s(i8x16.swizzle(v2, s01), v128.load(w, 64)))
      a2 = i32x4.add(a2, i32x4.dot_i16x8_s(i8x16.swizzle(v2, s23), v128.load(w, 80)))
      let a3 = i32x4.add(round, i32x4.dot_i16x8_s(i8x16.swizzle(v3, s01), v128.load(w, 96)))
      a3 = i32x4.add(a3, i32x4.dot_i16x8_s(i8x16.swizzle(v3, s23), v128.load(w, 112)))
      const lo = i16x8.narrow_i32x4_s(i32x4.shr_s(a0, SHIFT), i32x4.shr_s(a1, SHIFT))
      const hi = i16x8.narrow_i32x4_s(i32x4.shr_s(a2, SHIFT), i32x4.shr_s(a3, SHIFT))
      v128.store(d + <usize>(x * 3), i8x16.swizzle(i8x16.narrow_i16x8_u(lo, hi), pack))
      w += 128
      f += 16
    }
  }
}

/**
 * The caption, burned into the RGB frame over `bytes` bytes from `frame` (a band of whole rows):
 * out = colour + (frame · keep) / 255, where `colour` is the overlay's premultiplied colour (c·a/255,
 * rounded) and `keep` is 255 − a, both laid out like the frame's bytes. 16 bytes per step; the caller
 * pads both overlay arrays with an identity tail (colour 0, keep 255), which leaves bytes unchanged.
 */
export function blend(frame: usize, colour: usize, keep: usize, bytes: i32): void {
  const r128 = i16x8.splat(128)
  for (let i = 0; i < bytes; i += 16) {
    const p = frame + <usize>i
    const f = v128.load(p)
    const k = v128.load(keep + <usize>i)
    const c = v128.load(colour + <usize>i)
    // frame · keep ≤ 255 · 255 fits u16; (t + (t >> 8)) >> 8 with t = x + 128 is x / 255 rounded.
    let lo = i16x8.add(i16x8.mul(i16x8.extend_low_i8x16_u(f), i16x8.extend_low_i8x16_u(k)), r128)
    let hi = i16x8.add(i16x8.mul(i16x8.extend_high_i8x16_u(f), i16x8.extend_high_i8x16_u(k)), r128)
    lo = i16x8.shr_u(i16x8.add(lo, i16x8.shr_u(lo, 8)), 8)
    hi = i16x8.shr_u(i16x8.add(hi, i16x8.shr_u(hi, 8)), 8)
    lo = i16x8.add(lo, i16x8.extend_low_i8x16_u(c))
    hi = i16x8.add(hi, i16x8.extend_high_i8x16_u(c))
    v128.store(p, i8x16.narrow_i16x8_u(lo, hi))
  }
}

// BT.709, limited range, in Q15 (luma) and Q14 of a 2x2 sum (chroma, so Q16 of the mean):
//   Y  = 16  + 219/255 · ( 0.2126 R + 0.7152 G + 0.0722 B)
//   Cb = 128 + 224/255 · (−0.1146 R − 0.3854 G + 0.5    B)
//   Cr = 128 + 224/255 · ( 0.5    R − 0.4542 G − 0.0458 B)
// src/yuv.ts holds the same constants and a plain reference the tests compare against.
const YR: i16 = 5983
const YG: i16 = 20127
const YB: i16 = 2032
const UR: i32 = -1649
const UG: i32 = -5547
const UB: i32 = 7196
const VR: i32 = 7196
const VG: i32 = -6537
const VB: i32 = -659

/**
 * Packed RGB24 → planar yuv420p (BT.709, limited range): luma per pixel, chroma from the mean of each
 * 2x2 block (centre-sited). 8 pixels of two rows per step; `width` a multiple of 8, `height` even;
 * reads up to 8 bytes past a row's last pixel.
 */
export function yuv420(src: usize, stride: i32, width: i32, height: i32, yPlane: usize, uPlane: usize, vPlane: usize): void {
  // Bytes of 8 packed pixels → their R, G, B as u16 lanes (the -1 lanes read as zero: a free extend).
  const r0 = i8x16(0, -1, 3, -1, 6, -1, 9, -1, 12, -1, 15, -1, -1, -1, -1, -1)
  const r1 = i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, -1, 5, -1)
  const g0 = i8x16(1, -1, 4, -1, 7, -1, 10, -1, 13, -1, -1, -1, -1, -1, -1, -1)
  const g1 = i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, -1, 3, -1, 6, -1)
  const b0 = i8x16(2, -1, 5, -1, 8, -1, 11, -1, 14, -1, -1, -1, -1, -1, -1, -1)
  const b1 = i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, -1, 4, -1, 7, -1)
  const yr = i16x8.splat(YR)
  const yg = i16x8.splat(YG)
  const yb = i16x8.splat(YB)
  const yOff = i16x8.splat((16 << 7) + 64)
  const cOff = i32x4.splat((128 << 16) + (1 << 15))
  const cw = width >> 1
  for (let y = 0; y < height; y += 2) {
    const s0 = src + <usize>(y * stride)
    const s1 = s0 + <usize>stride
    const d0 = yPlane + <usize>(y * width)
    const d1 = d0 + <usize>width
    const cu = uPlane + <usize>((y >> 1) * cw)
    const cv = vPlane + <usize>((y >> 1) * cw)
    for (let x = 0; x < width; x += 8) {
      const a0 = v128.load(s0 + <usize>(x * 3))
      const a1 = v128.load(s0 + <usize>(x * 3 + 16))
      const b0v = v128.load(s1 + <usize>(x * 3))
      const b1v = v128.load(s1 + <usize>(x * 3 + 16))
      const ra = v128.or(i8x16.swizzle(a0, r0), i8x16.swizzle(a1, r1))
      const ga = v128.or(i8x16.swizzle(a0, g0), i8x16.swizzle(a1, g1))
      const ba = v128.or(i8x16.swizzle(a0, b0), i8x16.swizzle(a1, b1))
      const rb = v128.or(i8x16.swizzle(b0v, r0), i8x16.swizzle(b1v, r1))
      const gb = v128.or(i8x16.swizzle(b0v, g0), i8x16.swizzle(b1v, g1))
      const bb = v128.or(i8x16.swizzle(b0v, b0), i8x16.swizzle(b1v, b1))
      v128.store64_lane(d0 + <usize>x, luma8(ra, ga, ba, yr, yg, yb, yOff), 0)
      v128.store64_lane(d1 + <usize>x, luma8(rb, gb, bb, yr, yg, yb, yOff), 0)
      // 2x2 sums (≤ 1020) of each channel: add the rows, then neighbouring lanes.
      const rs = i32x4.extadd_pairwise_i16x8_u(i16x8.add(ra, rb))
      const gs = i32x4.extadd_pairwise_i16x8_u(i16x8.add(ga, gb))
      const bs = i32x4.extadd_pairwise_i16x8_u(i16x8.add(ba, bb))
      const u = i32x4.shr_s(i32x4.add(cOff, i32x4.add(i32x4.mul(rs, i32x4.splat(UR)), i32x4.add(i32x4.mul(gs, i32x4.splat(UG)), i32x4.mul(bs, i32x4.splat(UB))))), 16)
      const v = i32x4.shr_s(i32x4.add(cOff, i32x4.add(i32x4.mul(rs, i32x4.splat(VR)), i32x4.add(i32x4.mul(gs, i32x4.splat(VG)), i32x4.mul(bs, i32x4.splat(VB))))), 16)
      const u8 = i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_s(u, u), i16x8.splat(0))
      const v8 = i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_s(v, v), i16x8.splat(0))
      v128.store32_lane(cu + <usize>(x >> 1), u8, 0)
      v128.store32_lane(cv + <usize>(x >> 1), v8, 0)
    }
  }
}

/** Eight luma bytes (in the low half) from eight pixels' R, G, B u16 lanes: Q15 products of R·2^7. */
// @ts-ignore: decorator
@inline
function luma8(r: v128, g: v128, b: v128, yr: v128, yg: v128, yb: v128, yOff: v128): v128 {
  let acc = i16x8.add(yOff, i16x8.q15mulr_sat_s(i16x8.shl(r, 7), yr))
  acc = i16x8.add(acc, i16x8.q15mulr_sat_s(i16x8.shl(g, 7), yg))
  acc = i16x8.add(acc, i16x8.q15mulr_sat_s(i16x8.shl(b, 7), yb))
  const y = i16x8.shr_s(acc, 7)
  return i8x16.narrow_i16x8_u(y, y)
}
