/**
 * Where each output pixel of one axis takes its colour from: the first source pixel and Q14 weights of
 * a Catmull-Rom cubic, widened by the downscale factor so shrinking filters instead of aliasing (the
 * same convolution Pillow and libvips' `reduce` use). Pure; the WebAssembly pass only applies it.
 *
 * Output pixel i samples source position `origin + i * step` in pixel-index coordinates (pixel j's
 * centre is at j), so a fractional `origin` moves the picture by a fraction of a pixel: this is where
 * the camera's subpixel position goes, and nothing on the way rounds it.
 */
export const WEIGHT_ONE = 1 << 14

export interface AxisWeights {
  /** Output pixels. */
  readonly count: number
  /** Taps per output pixel, padded (the same for all; unused taps weigh 0). */
  readonly taps: number
  /** Taps that can weigh anything; the padding after them always weighs 0. */
  readonly span: number
  /**
   * First source pixel of each output pixel; `first + span <= sourceSize`. Padding taps may point past
   * the end: they weigh 0, but the pass still reads them, so the caller keeps slack there.
   */
  readonly first: Int32Array
  /** count × taps weights, each row summing to exactly WEIGHT_ONE. */
  readonly weights: Int16Array
}

/** Catmull-Rom (a = -0.5): interpolates exactly at whole pixels, so k = 1 on the grid is a copy. */
export const cubic = (x: number): number => {
  const t = Math.abs(x)
  if (t < 1) return (1.5 * t - 2.5) * t * t + 1
  if (t < 2) return ((-0.5 * t + 2.5) * t - 4) * t + 2
  return 0
}

const SUPPORT = 2

/** Taps an axis needs at this step (before padding): the whole pixels strictly inside the kernel's reach. */
const tapsFor = (step: number): number => Math.ceil(2 * SUPPORT * Math.max(1, step))

/**
 * @param origin source position of output pixel 0's centre
 * @param step source pixels per output pixel (1 / zoom); ≥ 1 shrinks
 * @param sourceSize source pixels on this axis
 * @param multipleOf pad the tap count to a multiple of this (the horizontal pass takes taps in pairs)
 * @param minTaps pad to at least this many taps (the fixed-width horizontal pass reads three pairs)
 */
export const axisWeights = (
  count: number,
  origin: number,
  step: number,
  sourceSize: number,
  multipleOf = 1,
  minTaps = 1
): AxisWeights => {
  const scale = Math.max(1, step)
  const reach = SUPPORT * scale
  const span = Math.min(sourceSize, tapsFor(step))
  const taps = Math.max(minTaps, Math.ceil(span / multipleOf) * multipleOf)
  const first = new Int32Array(count)
  const weights = new Int16Array(count * taps)
  const w = new Float64Array(taps)
  for (let i = 0; i < count; i++) {
    const centre = origin + i * step
    // Whole pixels strictly inside the kernel's reach; beyond the raster's edge the edge pixel repeats.
    const lo = Math.floor(centre - reach) + 1
    const hi = Math.ceil(centre + reach) - 1
    const start = Math.max(0, Math.min(lo, sourceSize - span))
    first[i] = start
    w.fill(0)
    for (let j = lo; j <= hi; j++) {
      const t = Math.min(sourceSize - 1, Math.max(0, j)) - start
      if (t >= 0 && t < span) w[t] += cubic((j - centre) / scale)
    }
    let sum = 0
    for (let t = 0; t < span; t++) sum += w[t]
    // Quantise so every row sums to exactly WEIGHT_ONE: flat areas stay flat, to the last bit.
    let total = 0
    let largest = 0
    const row = i * taps
    for (let t = 0; t < taps; t++) {
      const q = Math.round((w[t] / sum) * WEIGHT_ONE)
      weights[row + t] = q
      total += q
      if (Math.abs(q) > Math.abs(weights[row + largest])) largest = t
    }
    weights[row + largest] += WEIGHT_ONE - total
  }
  return { count, taps, span, first, weights }
}
