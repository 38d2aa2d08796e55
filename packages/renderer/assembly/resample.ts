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
