import { Effect } from "effect"
import { type CaptionLayout, effectMargin, layoutCaption, MIN_FONT_PX, toMarkup } from "./caption-layout.ts"
import { clipTo, composeOverlay, renderText, type RgbaImage, withEffects } from "./caption-raster.ts"
import { type CaptionSpec, type ImageClass, resolveCaption } from "./CaptionSpec.ts"
import { CaptionPrepError } from "./errors.ts"
import { fontCoverage, fontFor, formatCodePoint, missingGlyphs } from "./fonts.ts"
import { planFraming, type SubjectBox } from "./framing.ts"
import { type Box, boxHeight, boxWidth, OUTPUT } from "./output.ts"

export interface CaptionPhoto {
  readonly width: number
  readonly height: number
  readonly imageClass?: ImageClass | undefined
  /** The inferred subject (displayed pixels), as `renderVideo` gets it: framing depends on it. */
  readonly subject?: SubjectBox | null | undefined
}

const MAX_FIT_ATTEMPTS = 8

/**
 * A caption that fails for what it says (characters no font has, text that cannot fit) fails the same
 * way every time: the 502 would invite a retry (the spec's advice for `caption_prep_failed`), so the
 * message says the caption must change (docs/contract.md H5).
 */
const asSent = "This caption cannot be composited as sent; retrying it unchanged fails the same way"

const failed = (reason: CaptionPrepError["reason"], message: string) => new CaptionPrepError({ reason, message })

const tryRaster = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({
    try: f,
    catch: (e) => failed("render_failed", `${what}: ${e instanceof Error ? e.message : String(e)}`)
  })

interface Fitted {
  readonly sizePx: number
  readonly images: ReadonlyArray<RgbaImage>
  readonly margin: number
}

/**
 * Largest size ≤ the nominal one at which every block fits its region (all blocks share one size).
 * Wrapped text grows with the square of the size, so each retry shrinks by the square root of the
 * area overshoot; two or three renders settle even a 500-character caption.
 */
const fit = (layout: CaptionLayout) =>
  Effect.gen(function*() {
    const font = fontFor(layout.style, layout.bold)
    let size = layout.sizePx
    for (let attempt = 0; attempt < MAX_FIT_ATTEMPTS; attempt++) {
      const margin = effectMargin(layout, size, layout.sizePx)
      const images = yield* Effect.forEach(layout.blocks, (b) =>
        tryRaster("text", () =>
          renderText({
            markup: toMarkup(b.text, layout.color),
            font: font.description,
            fontfile: font.file,
            sizePx: size,
            wrapWidth: boxWidth(b.region) - 2 * margin
          })))
      let ratio = 1
      let heightBound = true
      layout.blocks.forEach((b, i) => {
        const rh = (boxHeight(b.region) - 2 * margin) / images[i].height
        const rw = (boxWidth(b.region) - 2 * margin) / images[i].width
        if (Math.min(rh, rw) < ratio) {
          ratio = Math.min(rh, rw)
          heightBound = rh <= rw
        }
      })
      if (ratio >= 1) return { sizePx: size, images, margin } satisfies Fitted
      const next = Math.floor(size * (heightBound ? Math.sqrt(ratio) : ratio) * 0.98)
      size = Math.min(size - 1, next)
      if (size < MIN_FONT_PX) break
    }
    return yield* failed(
      "does_not_fit",
      `it does not fit the safe zone at a readable size. ${asSent}: shorten the quote, or choose a smaller text_size`
    )
  })

const place = (img: RgbaImage, region: Box, valign: "top" | "middle" | "bottom") => {
  const left = Math.round(region.left + (boxWidth(region) - img.width) / 2)
  const top = valign === "top"
    ? region.top
    : valign === "bottom"
    ? region.bottom - img.height
    : Math.round(region.top + (boxHeight(region) - img.height) / 2)
  return clipTo(img, left, top, region)
}

/**
 * Request caption fields → a transparent 1080x1920 PNG, or null for a deliberate no-caption render
 * (`quote` empty or absent). `photo` lets a contain-blur framing put the caption in the band under
 * the photo; it uses the same pure `planFraming` the render uses.
 */
export const prepareCaption = (
  spec: CaptionSpec,
  photo?: CaptionPhoto
): Effect.Effect<Uint8Array | null, CaptionPrepError> =>
  Effect.gen(function*() {
    const caption = resolveCaption(spec)
    if (caption.quote.trim() === "") return null
    const framing = photo ? planFraming(photo, photo.imageClass, true, photo.subject) : undefined
    const layout = layoutCaption(caption, framing)

    const coverage = yield* fontCoverage
    const missing = missingGlyphs(layout.blocks.map((b) => b.text).join(""), coverage.set)
    if (missing.length > 0) {
      return yield* failed(
        "unsupported_script",
        `no installed font can draw ${missing.slice(0, 8).map(formatCodePoint).join(", ")}` +
          `${
            missing.length > 8 ? ` and ${missing.length - 8} more` : ""
          }. ${asSent}: remove or replace those characters` +
          ` (an operator can install fonts that have them, see scripts/setup.mjs)`
      )
    }

    const fitted = yield* fit(layout)
    const scale = fitted.sizePx / layout.sizePx
    const layers = yield* Effect.forEach(layout.blocks, (b, i) =>
      tryRaster("effects", () =>
        withEffects(fitted.images[i], {
          margin: fitted.margin,
          outlinePx: Math.round(layout.outlinePx * scale),
          shadow: { ...layout.shadow, sigma: layout.shadow.sigma * scale, dy: Math.round(layout.shadow.dy * scale) },
          halo: { ...layout.halo, sigma: layout.halo.sigma * scale }
        })).pipe(Effect.map((img) =>
          place(img, b.region, b.valign)
        )))
    return yield* tryRaster("overlay", () =>
      composeOverlay(
        OUTPUT,
        layers.filter((l): l is NonNullable<typeof l> => l !== undefined)
      ))
  }).pipe(Effect.withSpan("prepareCaption"))
