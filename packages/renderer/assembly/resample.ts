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
 * The caption, burned into one plane of the frame over `bytes` bytes from `frame` (a band of whole
 * rows): out = colour + (frame · keep) / 255, where `colour` is the overlay's premultiplied value
 * (v·a/255, rounded) and `keep` is 255 − a, both laid out like the plane. 16 bytes per step; the caller
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

/**
 * The horizontal pass over one 8-bit plane (Y, or a chroma plane): destination pixel x = Σ_t w[x][t] ·
 * source pixel (first[x] + t), taps padded to `groups` × 8 (one 8-byte load and one dot product per
 * group). Four pixels per step, their four partial sums folded together with two shuffles; `width`
 * a multiple of 4. Reads up to 8 bytes from each pixel's first tap on.
 */
export function hplane(
  src: usize, srcStride: i32, dst: usize, dstStride: i32, width: i32, rows: i32,
  first: usize, weights: usize, groups: i32
): void {
  const round = i32x4.splat(ROUND)
  const pixelBytes = <usize>(groups << 4)
  for (let y = 0; y < rows; y++) {
    const s = src + <usize>(y * srcStride)
    const d = dst + <usize>(y * dstStride)
    let w = weights
    let f = first
    for (let x = 0; x < width; x += 4) {
      let p0 = s + <usize>load<i32>(f)
      let p1 = s + <usize>load<i32>(f, 4)
      let p2 = s + <usize>load<i32>(f, 8)
      let p3 = s + <usize>load<i32>(f, 12)
      let w0 = w
      let d0 = i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v128.load64_zero(p0)), v128.load(w0))
      let d1 = i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v128.load64_zero(p1)), v128.load(w0 + pixelBytes))
      let d2 = i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v128.load64_zero(p2)), v128.load(w0 + 2 * pixelBytes))
      let d3 = i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v128.load64_zero(p3)), v128.load(w0 + 3 * pixelBytes))
      for (let g = 1; g < groups; g++) {
        p0 += 8
        p1 += 8
        p2 += 8
        p3 += 8
        w0 += 16
        d0 = i32x4.add(d0, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v128.load64_zero(p0)), v128.load(w0)))
        d1 = i32x4.add(d1, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v128.load64_zero(p1)), v128.load(w0 + pixelBytes)))
        d2 = i32x4.add(d2, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v128.load64_zero(p2)), v128.load(w0 + 2 * pixelBytes)))
        d3 = i32x4.add(d3, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(v128.load64_zero(p3)), v128.load(w0 + 3 * pixelBytes)))
      }
      // [d0 d1 d2 d3] each summed over its four lanes.
      const a = i32x4.add(i32x4.shuffle(d0, d1, 0, 4, 1, 5), i32x4.shuffle(d0, d1, 2, 6, 3, 7))
      const b = i32x4.add(i32x4.shuffle(d2, d3, 0, 4, 1, 5), i32x4.shuffle(d2, d3, 2, 6, 3, 7))
      const r = i32x4.shr_s(i32x4.add(round, i32x4.add(i32x4.shuffle(a, b, 0, 1, 4, 5), i32x4.shuffle(a, b, 2, 3, 6, 7))), SHIFT)
      const n16 = i16x8.narrow_i32x4_s(r, r)
      v128.store32_lane(d + <usize>x, i8x16.narrow_i16x8_u(n16, n16), 0)
      w += pixelBytes << 2
      f += 16
    }
  }
}
