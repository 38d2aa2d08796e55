import { readFileSync } from "node:fs"
import type { CameraWindow } from "./motion-path.ts"
import { OUTPUT } from "./output.ts"
import { type AxisWeights, axisWeights, WEIGHT_ONE } from "./resample-weights.ts"
import { basePlanes, chromaOrigin, type PreparedOverlay, YUV_FRAME_BYTES } from "./yuv.ts"

/**
 * One video frame from the prepared base: a vertical then a horizontal convolution pass (weights from
 * resample-weights.ts) in WebAssembly SIMD, about 20× cheaper than a generic affine with the same
 * kernel. Synchronous and CPU-bound: the renderer runs it in worker threads (frame-worker.ts).
 */
export interface Raster {
  readonly data: Uint8Array
  readonly width: number
  readonly height: number
}

interface Exports {
  readonly memory: WebAssembly.Memory
  readonly heapBase: () => number
  readonly vertical: (...args: Array<number>) => void
  readonly horizontal: (...args: Array<number>) => void
  readonly horizontal4: (...args: Array<number>) => void
  readonly horizontal5: (...args: Array<number>) => void
  readonly blend: (frame: number, colour: number, keep: number, bytes: number) => void
  readonly hplane: (...args: Array<number>) => void
}

export const WASM_URL = new URL("./resample.wasm", import.meta.url)

export const compileResampler = (): WebAssembly.Module => new WebAssembly.Module(readFileSync(WASM_URL))

/** Slack after buffers the SIMD loads read past (16-byte loads, 8-byte pair loads, 4-byte stores). */
const SLACK = 64
const align = (n: number) => (n + 15) & ~15

export const FRAME_BYTES = OUTPUT.width * OUTPUT.height * 3

interface Resampler {
  /** Writes the frame for this camera window, packed RGB24, into `into` (FRAME_BYTES long). */
  readonly render: (w: CameraWindow, into: Uint8Array) => void
  /**
   * The same frame as planar yuv420p (BT.709, limited range) with the caption (if any) burned in, into
   * `into` (YUV_FRAME_BYTES long): what ffmpeg encodes as it is. Resampled from the base's own Y, Cb,
   * Cr planes (`basePlanes`, made on first use): the same convolution per plane, chroma at half size.
   */
  readonly renderYuv: (w: CameraWindow, into: Uint8Array) => void
}

/**
 * The weights of one frame. Columns are padded to what the horizontal passes take: four taps at zoom 1,
 * six (five real) while shrinking up to 1.25x, else an even count for the general pass.
 */
export const frameWeights = (w: CameraWindow, base: { width: number; height: number }) => {
  const step = 1 / w.k
  return {
    rows: axisWeights(OUTPUT.height, w.y0, step, base.height),
    cols: axisWeights(OUTPUT.width, w.x0, step, base.width, 2, step === 1 ? 4 : 6)
  }
}

/**
 * Where one resampling pass keeps its tables and intermediate rows, from `at` on: the vertical pass's
 * first rows and weights, the horizontal pass's first columns and weights (`hWeightBytes` per tap:
 * 8 for RGB pairs, 2 for a plane), then the rows between the passes.
 */
const scratchLayout = (at: number, rows: AxisWeights, cols: AxisWeights, hWeightBytes: number) => {
  const vFirst = at
  const vWeights = align(vFirst + rows.count * 4)
  const hFirst = align(vWeights + rows.count * rows.taps * 16)
  const hWeights = align(hFirst + cols.count * 4)
  const inter = align(hWeights + cols.count * cols.taps * hWeightBytes)
  return { vFirst, vWeights, hFirst, hWeights, inter }
}

/**
 * `only: "yuv420p"` (the frame workers): the planes are made and placed at once, and neither the RGB
 * base nor the planes' JS copies are kept (12 MB of a 1242x2208 base, for the whole render); `render`
 * then fails.
 */
export const makeResampler = (
  module: WebAssembly.Module,
  base: Raster,
  overlay: PreparedOverlay | null = null,
  only?: "yuv420p"
): Resampler => {
  const wasm = new WebAssembly.Instance(module, {}).exports as unknown as Exports
  let top = align(wasm.heapBase())
  const ensure = (end: number) => {
    const have = wasm.memory.buffer.byteLength
    if (end > have) wasm.memory.grow(Math.ceil((end - have) / 65536))
  }
  /** Copies bytes to the next free place in WebAssembly memory (with slack after them); answers where. */
  const reserve = (byteLength: number): number => {
    const at = top
    top = align(at + byteLength + SLACK)
    ensure(top)
    return at
  }
  const place = (bytes: Uint8Array): number => {
    const at = reserve(bytes.byteLength)
    new Uint8Array(wasm.memory.buffer, at, bytes.byteLength).set(bytes)
    return at
  }
  const put = (at: number, a: Int32Array | Int16Array) =>
    new Uint8Array(wasm.memory.buffer, at, a.byteLength).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength))

  // Static data (the RGB base, or the planes and the caption, placed on first use), then from `top` on
  // the scratch every frame reuses.
  let rgbAt: number | undefined
  type Size = { readonly width: number; readonly height: number }
  let planar: {
    y: number
    u: number
    v: number
    sizes: Record<"y" | "u" | "v", Size>
    out: number
    overlay: Record<"y" | "yKeep" | "u" | "v" | "cKeep", number> | undefined
  } | undefined
  const baseStride = base.width * 3
  const baseSize: Size = { width: base.width, height: base.height }
  let source: Raster | undefined = base

  const placePlanes = (from: Raster) => {
    const planes = basePlanes(from)
    const size = (p: Size): Size => ({ width: p.width, height: p.height })
    const y = place(planes.y.data)
    const u = place(planes.u.data)
    const v = place(planes.v.data)
    const o = overlay
      ? {
        y: place(overlay.y.colour),
        yKeep: place(overlay.y.keep),
        u: place(overlay.u),
        v: place(overlay.v),
        cKeep: place(overlay.chromaKeep)
      }
      : undefined
    const out = reserve(YUV_FRAME_BYTES)
    return { y, u, v, sizes: { y: size(planes.y), u: size(planes.u), v: size(planes.v) }, out, overlay: o }
  }
  if (only === "yuv420p") {
    planar = placePlanes(base)
    source = undefined
  }

  /** Makes the RGB frame in WebAssembly memory; answers where it starts (FRAME_BYTES + SLACK there). */
  const resample = (w: CameraWindow): number => {
    if (rgbAt === undefined) {
      if (!source) throw new Error("this resampler makes yuv420p frames only")
      rgbAt = place(source.data)
    }
    const baseAt = rgbAt
    const { rows, cols } = frameWeights(w, baseSize)
    // The vertical pass only needs the columns the horizontal pass will read.
    const colLo = cols.first[0]
    const colHi = Math.min(baseSize.width, cols.first[OUTPUT.width - 1] + cols.span)
    const rowBytes = align((colHi - colLo) * 3)
    const interStride = rowBytes + 16
    const { vFirst, vWeights, hFirst, hWeights, inter } = scratchLayout(top, rows, cols, 8)
    const out = align(inter + interStride * OUTPUT.height + SLACK)
    ensure(out + FRAME_BYTES + SLACK)

    put(hFirst, shifted(cols.first, colLo))
    put(hWeights, pairVectors(cols))
    let src = inter
    let srcStride = interStride
    if (onRowGrid(w, baseSize.height)) {
      // Zoom 1 on whole rows (a pan): the vertical pass would be a copy, so read the base directly.
      src = baseAt + w.y0 * baseStride + colLo * 3
      srcStride = baseStride
    } else {
      put(vFirst, rows.first)
      put(vWeights, splat8(rows))
      wasm.vertical(
        baseAt + colLo * 3,
        baseStride,
        inter,
        interStride,
        rowBytes,
        OUTPUT.height,
        vFirst,
        vWeights,
        rows.taps
      )
    }
    if (cols.taps === 4) {
      wasm.horizontal4(src, srcStride, out, OUTPUT.width * 3, OUTPUT.width, OUTPUT.height, hFirst, hWeights)
    } else if (cols.taps === 6 && cols.span <= 5) {
      wasm.horizontal5(src, srcStride, out, OUTPUT.width * 3, OUTPUT.width, OUTPUT.height, hFirst, hWeights)
    } else {
      wasm.horizontal(
        src,
        srcStride,
        out,
        OUTPUT.width * 3,
        OUTPUT.width,
        OUTPUT.height,
        hFirst,
        hWeights,
        cols.taps / 2
      )
    }
    return out
  }

  /** One plane of the frame: vertical pass (skipped on the row grid at zoom 1), then the plane's horizontal pass. */
  const planePass = (
    planeAt: number,
    plane: { width: number },
    rows: AxisWeights,
    cols: AxisWeights,
    outAt: number,
    scratch: number
  ) => {
    const colLo = cols.first[0]
    const colHi = Math.min(plane.width, cols.first[cols.count - 1] + cols.span)
    const rowBytes = align(colHi - colLo)
    const interStride = rowBytes + 16
    const { vFirst, vWeights, hFirst, hWeights, inter } = scratchLayout(scratch, rows, cols, 2)
    ensure(inter + interStride * rows.count + SLACK)
    put(hFirst, shifted(cols.first, colLo))
    put(hWeights, cols.weights)
    let src = inter
    let srcStride = interStride
    const copied = copiedRows(rows)
    if (copied !== undefined) {
      src = planeAt + copied * plane.width + colLo
      srcStride = plane.width
    } else {
      put(vFirst, rows.first)
      put(vWeights, splat8(rows))
      wasm.vertical(planeAt + colLo, plane.width, inter, interStride, rowBytes, rows.count, vFirst, vWeights, rows.taps)
    }
    wasm.hplane(src, srcStride, outAt, cols.count, cols.count, rows.count, hFirst, hWeights, cols.taps / 8)
  }

  return {
    render: (w, into) => {
      const out = resample(w) // first: it may grow (and so replace) the memory's buffer
      into.set(new Uint8Array(wasm.memory.buffer, out, FRAME_BYTES))
    },
    renderYuv: (w, into) => {
      planar ??= placePlanes(source!)
      const p = planar
      const lumaBytes = OUTPUT.width * OUTPUT.height
      const outU = p.out + lumaBytes
      const outV = outU + lumaBytes / 4
      const { rows, cols } = planeWeights(w, p.sizes.y, OUTPUT.width, OUTPUT.height, w.x0, w.y0)
      planePass(p.y, p.sizes.y, rows, cols, p.out, top)
      const c = planeWeights(
        w,
        p.sizes.u,
        OUTPUT.width / 2,
        OUTPUT.height / 2,
        chromaOrigin(w.x0, w.k),
        chromaOrigin(w.y0, w.k)
      )
      planePass(p.u, p.sizes.u, c.rows, c.cols, outU, top)
      planePass(p.v, p.sizes.v, c.rows, c.cols, outV, top)
      if (overlay && p.overlay) {
        const lumaBand = overlay.rows * OUTPUT.width
        wasm.blend(p.out + overlay.top * OUTPUT.width, p.overlay.y, p.overlay.yKeep, lumaBand)
        const chromaAt = (overlay.top / 2) * (OUTPUT.width / 2)
        wasm.blend(outU + chromaAt, p.overlay.u, p.overlay.cKeep, lumaBand / 4)
        wasm.blend(outV + chromaAt, p.overlay.v, p.overlay.cKeep, lumaBand / 4)
      }
      into.set(new Uint8Array(wasm.memory.buffer, p.out, YUV_FRAME_BYTES))
    }
  }
}

/**
 * The weights of one plane of a yuv420p frame: `width` x `height` output samples from a plane whose
 * first sample is at (x0, y0) in that plane's pixels; taps padded to whole groups of eight for `hplane`.
 */
export const planeWeights = (
  w: CameraWindow,
  plane: { width: number; height: number },
  width: number,
  height: number,
  x0: number,
  y0: number
) => {
  const step = 1 / w.k
  return {
    rows: axisWeights(height, y0, step, plane.height),
    cols: axisWeights(width, x0, step, plane.width, 8, 8)
  }
}

/**
 * When every output row is one source row at weight one, consecutive (zoom 1 on the row grid: a pan),
 * the vertical pass would be a copy: answers the first source row, else undefined.
 */
const copiedRows = (rows: AxisWeights): number | undefined => {
  let start = -1
  for (let i = 0; i < rows.count; i++) {
    let source = -1
    for (let t = 0; t < rows.taps; t++) {
      const v = rows.weights[i * rows.taps + t]
      if (v === 0) continue
      if (v !== WEIGHT_ONE || source >= 0) return undefined
      source = rows.first[i] + t
    }
    if (i === 0) start = source
    else if (source !== start + i) return undefined
  }
  return start
}

const onRowGrid = (w: CameraWindow, height: number) =>
  w.k === 1 && Number.isInteger(w.y0) && w.y0 >= 0 && w.y0 + OUTPUT.height <= height

const shifted = (first: Int32Array, by: number) => first.map((f) => f - by)

/** Vertical weights as the pass reads them: each weight repeated over eight i16 lanes. */
const splat8 = (a: AxisWeights): Int16Array => {
  const v = new Int16Array(a.weights.length * 8)
  for (let i = 0; i < a.weights.length; i++) v.fill(a.weights[i], i * 8, i * 8 + 8)
  return v
}

/** Horizontal weights as the pass reads them: per tap pair [w0 w1 w0 w1 w0 w1 0 0]. */
const pairVectors = (a: AxisWeights): Int16Array => {
  const v = new Int16Array(a.weights.length * 4)
  for (let p = 0; p < a.weights.length / 2; p++) {
    const w0 = a.weights[2 * p]
    const w1 = a.weights[2 * p + 1]
    v.set([w0, w1, w0, w1, w0, w1, 0, 0], p * 8)
  }
  return v
}
