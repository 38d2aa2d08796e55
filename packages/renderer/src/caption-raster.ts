import sharp from "sharp"

/**
 * Raster helpers for captions (sharp/Pango). Every intermediate is materialised as raw bytes,
 * because sharp runs a pipeline's operations in a fixed order whatever order they are called in.
 */
export interface RgbaImage {
  readonly data: Uint8Array
  readonly width: number
  readonly height: number
}

interface TextRequest {
  readonly markup: string
  readonly font: string
  readonly fontfile: string
  readonly sizePx: number
  readonly wrapWidth: number
}

/** Wrapped, centred text as RGBA. dpi 72 makes Pango's points equal pixels. */
export const renderText = async (r: TextRequest): Promise<RgbaImage> => {
  const { data, info } = await sharp({
    text: {
      text: r.markup,
      font: `${r.font} ${r.sizePx}`,
      fontfile: r.fontfile,
      width: Math.max(1, Math.floor(r.wrapWidth)),
      align: "centre",
      rgba: true,
      // word-char: break between words, and inside a word only when one word is wider than a line.
      wrap: "word-char",
      dpi: 72
    }
  })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height }
}

const blurMask = async (mask: Uint8Array, width: number, height: number, sigma: number): Promise<Uint8Array> =>
  sharp(mask, { raw: { width, height, channels: 1 } })
    .blur(Math.max(0.3, sigma))
    // sharp would hand back 3 channels for a 1-channel raw input; runs after the blur.
    .extractChannel(0)
    .raw()
    .toBuffer()

interface Effects {
  readonly margin: number
  readonly outlinePx: number
  readonly shadow: { readonly sigma: number; readonly dy: number; readonly opacity: number }
  /** Tight dark halo: alpha blurred by `sigma`, times `gain`, clipped, times `opacity` (0 = none). */
  readonly halo: { readonly sigma: number; readonly gain: number; readonly opacity: number }
}

/**
 * Text over a black outline or a tight dark halo, over a soft black shadow, on a canvas `margin` px
 * larger on each side. Pango cannot stroke, so the outline is the blurred alpha pushed through a steep
 * ramp: a rounded dilation by about `outlinePx` (it stays readable on a busy white photo). The halo is
 * the same idea, gentler: a small blur times a gain, so it is dense at the glyph edge and fades over a
 * few px; it darkens a white sky behind thin serifs and is invisible on a dark photo.
 */
export const withEffects = async (text: RgbaImage, fx: Effects): Promise<RgbaImage> => {
  const m = fx.margin
  const width = text.width + 2 * m
  const height = text.height + 2 * m
  const alpha = new Uint8Array(width * height)
  for (let y = 0; y < text.height; y++) {
    for (let x = 0; x < text.width; x++) alpha[(y + m) * width + x + m] = text.data[(y * text.width + x) * 4 + 3]
  }
  const shadow = await blurMask(alpha, width, height, fx.shadow.sigma)
  const outline = fx.outlinePx > 0 ? await blurMask(alpha, width, height, fx.outlinePx / 2) : undefined
  const halo = fx.halo.opacity > 0 ? await blurMask(alpha, width, height, fx.halo.sigma) : undefined
  const haloScale = (fx.halo.gain * fx.halo.opacity) / 255
  const out = new Uint8Array(width * height * 4)
  const dy = fx.shadow.dy
  for (let y = 0; y < height; y++) {
    const sy = y - dy
    for (let x = 0; x < width; x++) {
      const i = y * width + x
      const sa = sy >= 0 && sy < height ? (shadow[sy * width + x] / 255) * fx.shadow.opacity : 0
      const oa = outline ? Math.min(1, Math.max(0, (outline[i] * 40 - 20) / 255)) : 0
      const ha = halo ? Math.min(fx.halo.opacity, halo[i] * haloScale) : 0
      const ba = 1 - (1 - oa) * (1 - sa) * (1 - ha) // black below the text
      const tx = x - m
      const ty = y - m
      let ta = 0
      let r = 0
      let g = 0
      let b = 0
      if (tx >= 0 && ty >= 0 && tx < text.width && ty < text.height) {
        const j = (ty * text.width + tx) * 4
        ta = text.data[j + 3] / 255
        r = text.data[j]
        g = text.data[j + 1]
        b = text.data[j + 2]
      }
      const a = ta + ba * (1 - ta)
      const o = i * 4
      if (a > 0) {
        out[o] = Math.round((r * ta) / a)
        out[o + 1] = Math.round((g * ta) / a)
        out[o + 2] = Math.round((b * ta) / a)
      }
      out[o + 3] = Math.round(a * 255)
    }
  }
  return { data: out, width, height }
}

/** Cut `img` placed at (left, top) down to the part inside `clip` (so nothing leaves the safe zone). */
export const clipTo = (
  img: RgbaImage,
  left: number,
  top: number,
  clip: { left: number; top: number; right: number; bottom: number }
): { image: RgbaImage; left: number; top: number } | undefined => {
  const x0 = Math.max(left, clip.left)
  const y0 = Math.max(top, clip.top)
  const x1 = Math.min(left + img.width, clip.right)
  const y1 = Math.min(top + img.height, clip.bottom)
  if (x1 <= x0 || y1 <= y0) return undefined
  const width = x1 - x0
  const height = y1 - y0
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    const src = ((y + y0 - top) * img.width + (x0 - left)) * 4
    data.set(img.data.subarray(src, src + width * 4), y * width * 4)
  }
  return { image: { data, width, height }, left: x0, top: y0 }
}

/**
 * Zeroed full-frame canvases kept between captions. A fresh 8 MB buffer costs 25 ms or more in page
 * faults on our VMs, more than the PNG encode itself (measured); a canvas is handed back with only
 * the rectangles it was given cleared.
 */
const spareCanvases: Array<Uint8Array> = []
const MAX_SPARE_CANVASES = 2

type Layer = { readonly image: RgbaImage; readonly left: number; readonly top: number }

/** The part of a layer that lands on the canvas, as [x0, y0, x1, y1). */
const onCanvas = (l: Layer, canvas: { width: number; height: number }) =>
  [
    Math.max(0, l.left),
    Math.max(0, l.top),
    Math.min(canvas.width, l.left + l.image.width),
    Math.min(canvas.height, l.top + l.image.height)
  ] as const

/** Straight-alpha "over" of one layer onto the canvas. */
const blend = (out: Uint8Array, canvas: { width: number; height: number }, l: Layer) => {
  const [x0, y0, x1, y1] = onCanvas(l, canvas)
  const src = l.image.data
  for (let cy = y0; cy < y1; cy++) {
    for (let cx = x0; cx < x1; cx++) {
      const s = ((cy - l.top) * l.image.width + (cx - l.left)) * 4
      const sa = src[s + 3]
      if (sa === 0) continue
      const d = (cy * canvas.width + cx) * 4
      const da = out[d + 3]
      if (sa === 255 || da === 0) {
        out[d] = src[s]
        out[d + 1] = src[s + 1]
        out[d + 2] = src[s + 2]
        out[d + 3] = sa
        continue
      }
      const a = sa + (da * (255 - sa)) / 255
      for (let c = 0; c < 3; c++) out[d + c] = Math.round((src[s + c] * sa + (out[d + c] * da * (255 - sa)) / 255) / a)
      out[d + 3] = Math.round(a)
    }
  }
}

/**
 * The transparent full-frame PNG the render burns in: the blocks laid over one another on one raw
 * canvas, encoded once (sharp's create + composite of a full frame took ~50 ms of the create path).
 * Zlib level 3 without adaptive filtering: about level 1's speed, within 15 % of level 6's size.
 */
export const composeOverlay = async (
  canvas: { width: number; height: number },
  layers: ReadonlyArray<Layer>
): Promise<Uint8Array> => {
  const bytes = canvas.width * canvas.height * 4
  const out = (spareCanvases.at(-1)?.length === bytes ? spareCanvases.pop() : undefined) ?? new Uint8Array(bytes)
  try {
    for (const l of layers) blend(out, canvas, l)
    return await sharp(out, { raw: { width: canvas.width, height: canvas.height, channels: 4 } })
      .png({ compressionLevel: 3, adaptiveFiltering: false })
      .toBuffer()
  } finally {
    for (const l of layers) {
      const [x0, y0, x1, y1] = onCanvas(l, canvas)
      for (let y = y0; y < y1; y++) out.fill(0, (y * canvas.width + x0) * 4, (y * canvas.width + x1) * 4)
    }
    if (spareCanvases.length < MAX_SPARE_CANVASES) spareCanvases.push(out)
  }
}
