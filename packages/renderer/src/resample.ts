import { readFileSync } from "node:fs"
import type { CameraWindow } from "./motion-path.ts"
import { OUTPUT } from "./output.ts"
import { type AxisWeights, axisWeights } from "./resample-weights.ts"
import { type PreparedOverlay, YUV_FRAME_BYTES } from "./yuv.ts"

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
  readonly yuv420: (...args: Array<number>) => void
}

export const WASM_URL = new URL("./resample.wasm", import.meta.url)

export const compileResampler = (): WebAssembly.Module => new WebAssembly.Module(readFileSync(WASM_URL))

/** Slack after buffers the SIMD loads read past (16-byte loads, 8-byte pair loads, 4-byte stores). */
const SLACK = 64
const align = (n: number) => (n + 15) & ~15

export const FRAME_BYTES = OUTPUT.width * OUTPUT.height * 3

export interface Resampler {
  /** Writes the frame for this camera window, packed RGB24, into `into` (FRAME_BYTES long). */
  readonly render: (w: CameraWindow, into: Uint8Array) => void
  /**
   * The same frame with the caption (if any) burned in, converted to planar yuv420p (BT.709, limited
   * range), into `into` (YUV_FRAME_BYTES long): what ffmpeg encodes as it is.
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

export const makeResampler = (module: WebAssembly.Module, base: Raster, overlay: PreparedOverlay | null = null): Resampler => {
  const wasm = new WebAssembly.Instance(module, {}).exports as unknown as Exports
  const baseAt = align(wasm.heapBase())
  const baseStride = base.width * 3
  const colourAt = align(baseAt + base.data.byteLength + SLACK)
  const keepAt = align(colourAt + (overlay?.colour.byteLength ?? 0))
  const scratchAt = align(keepAt + (overlay?.keep.byteLength ?? 0))
  const ensure = (end: number) => {
    const have = wasm.memory.buffer.byteLength
    if (end > have) wasm.memory.grow(Math.ceil((end - have) / 65536))
  }
  ensure(scratchAt)
  new Uint8Array(wasm.memory.buffer, baseAt, base.data.byteLength).set(base.data)
  if (overlay) {
    new Uint8Array(wasm.memory.buffer, colourAt, overlay.colour.byteLength).set(overlay.colour)
    new Uint8Array(wasm.memory.buffer, keepAt, overlay.keep.byteLength).set(overlay.keep)
  }

  const put = (at: number, a: Int32Array | Int16Array) =>
    new Uint8Array(wasm.memory.buffer, at, a.byteLength).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength))

  /** Makes the RGB frame in WebAssembly memory; answers where it starts (FRAME_BYTES + SLACK there). */
  const resample = (w: CameraWindow): number => {
    const { rows, cols } = frameWeights(w, base)
    // The vertical pass only needs the columns the horizontal pass will read.
    const colLo = cols.first[0]
    const colHi = Math.min(base.width, cols.first[OUTPUT.width - 1] + cols.span)
    const rowBytes = align((colHi - colLo) * 3)
    const interStride = rowBytes + 16
    const vFirst = scratchAt
    const vWeights = align(vFirst + rows.count * 4)
    const hFirst = align(vWeights + rows.count * rows.taps * 16)
    const hWeights = align(hFirst + cols.count * 4)
    const inter = align(hWeights + cols.count * cols.taps * 8)
    const out = align(inter + interStride * OUTPUT.height + SLACK)
    ensure(out + FRAME_BYTES + SLACK)

    put(hFirst, shifted(cols.first, colLo))
    put(hWeights, pairVectors(cols))
    let src = inter
    let srcStride = interStride
    if (onRowGrid(w, base.height)) {
      // Zoom 1 on whole rows (a pan): the vertical pass would be a copy, so read the base directly.
      src = baseAt + w.y0 * baseStride + colLo * 3
      srcStride = baseStride
    } else {
      put(vFirst, rows.first)
      put(vWeights, splat8(rows))
      wasm.vertical(baseAt + colLo * 3, baseStride, inter, interStride, rowBytes, OUTPUT.height, vFirst, vWeights, rows.taps)
    }
    if (cols.taps === 4) {
      wasm.horizontal4(src, srcStride, out, OUTPUT.width * 3, OUTPUT.width, OUTPUT.height, hFirst, hWeights)
    } else if (cols.taps === 6 && cols.span <= 5) {
      wasm.horizontal5(src, srcStride, out, OUTPUT.width * 3, OUTPUT.width, OUTPUT.height, hFirst, hWeights)
    } else {
      wasm.horizontal(src, srcStride, out, OUTPUT.width * 3, OUTPUT.width, OUTPUT.height, hFirst, hWeights, cols.taps / 2)
    }
    return out
  }

  return {
    render: (w, into) => {
      const out = resample(w) // first: it may grow (and so replace) the memory's buffer
      into.set(new Uint8Array(wasm.memory.buffer, out, FRAME_BYTES))
    },
    renderYuv: (w, into) => {
      const rgb = resample(w)
      if (overlay) {
        const bytes = overlay.rows * OUTPUT.width * 3
        wasm.blend(rgb + overlay.top * OUTPUT.width * 3, colourAt, keepAt, bytes)
      }
      const yuv = align(rgb + FRAME_BYTES + SLACK)
      const lumaBytes = OUTPUT.width * OUTPUT.height
      ensure(yuv + YUV_FRAME_BYTES + SLACK)
      wasm.yuv420(rgb, OUTPUT.width * 3, OUTPUT.width, OUTPUT.height, yuv, yuv + lumaBytes, yuv + lumaBytes + lumaBytes / 4)
      into.set(new Uint8Array(wasm.memory.buffer, yuv, YUV_FRAME_BYTES))
    }
  }
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
