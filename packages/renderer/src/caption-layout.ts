import { normaliseLineBreaks } from "@pic2video/domain/Text"
import type { CaptionStyle, ResolvedCaption, TextColor, TextSize } from "./CaptionSpec.ts"
import type { Framing } from "./framing.ts"
import { type Box, boxHeight, SAFE_BOX } from "./output.ts"

/** Em size in px (at 1080 wide) per style and step; measured readable on a phone. */
const TEXT_SIZES: Record<CaptionStyle, Record<TextSize, number>> = {
  quote: { tiny: 38, smallest: 46, smaller: 56, default: 68, larger: 84 },
  meme: { tiny: 56, smallest: 66, smaller: 78, default: 92, larger: 110 }
}

const TEXT_COLORS: Record<TextColor, string> = {
  white: "#FFFFFF",
  yellow: "#FFD60A",
  "pastel-yellow": "#FFF2A8"
}

/** Below this the caption is unreadable on a phone: fail instead (500 characters fit at ~40 px). */
export const MIN_FONT_PX = 20

/** One block of text and the region it must stay in; `valign` says which edge it hugs. */
interface CaptionBlock {
  readonly text: string
  readonly region: Box
  readonly valign: "top" | "middle" | "bottom"
}

export interface CaptionLayout {
  readonly blocks: ReadonlyArray<CaptionBlock>
  readonly style: CaptionStyle
  /** Heavier face (quote); for meme, whose font has one weight, a thicker outline. */
  readonly bold: boolean
  readonly sizePx: number
  readonly color: string
  /** Outline radius in px (0 = none); meme always has one. */
  readonly outlinePx: number
  /** The soft drop shadow that every caption has (depth on any photo). */
  readonly shadow: { readonly sigma: number; readonly dy: number; readonly opacity: number }
  /**
   * A tight dark halo hugging the glyphs (no offset), so light text stays readable on a near-white
   * sky where the soft shadow alone fades to nothing; `opacity` 0 = none (an outline already covers it).
   */
  readonly halo: Halo
}

interface Halo {
  /** Blur of the glyph alpha, px. */
  readonly sigma: number
  /** The blurred alpha is multiplied by this and clipped: a rounded dilation by about one sigma. */
  readonly gain: number
  readonly opacity: number
}

const OPENING_QUOTES = /^[\s]*["“„«‘'‚‹「『〝]/u
const CLOSING_QUOTES = /["”»’'›」』〞][\s]*$/u

/** Typographic quotes, unless the writer already put some; straight ones become curly. */
export const addQuotes = (text: string): string => {
  const t = text.trim()
  if (/^".*"$/su.test(t) && t.length >= 2) return `“${t.slice(1, -1)}”`
  if (OPENING_QUOTES.test(t) || CLOSING_QUOTES.test(t)) return t
  return `“${t}”`
}

/**
 * Meme text goes top and bottom. An explicit line break (or " | ") chooses the split; otherwise a
 * caption of four or more words is split at the word boundary nearest its middle.
 */
export const splitMeme = (text: string): readonly [string, string] => {
  const t = text.trim()
  const explicit = t.match(/^(.*?)\s*(?:\n|\s\|\s)\s*(.*)$/su)
  if (explicit) return [explicit[1].trim(), explicit[2].trim()]
  const words = t.split(/\s+/u)
  if (words.length < 4) return [t, ""]
  let best = 1
  let bestDist = Infinity
  let pos = 0
  for (let i = 1; i < words.length; i++) {
    pos += words[i - 1].length + 1
    const d = Math.abs(pos - t.length / 2)
    if (d < bestDist) {
      bestDist = d
      best = i
    }
  }
  return [words.slice(0, best).join(" "), words.slice(best).join(" ")]
}

/**
 * Halo (see `CaptionLayout.halo`): sigma as a share of the em size, gain, opacity. Chosen by eye
 * over a near-white sky, the Hubble deep field and a coffee cup among 0.045–0.07 / 3–4 / 0.55–0.8:
 * less left thin serifs faint on the sky, more read as an outline on mid-tone photos.
 */
const HALO_SIGMA = 0.06
const HALO_GAIN = 3
const HALO_OPACITY = 0.7

/** The region budget of a meme block: 40 % of the safe height, at the top or bottom of the box. */
const MEME_SHARE = 0.4

export const layoutCaption = (c: ResolvedCaption, framing: Framing | undefined): CaptionLayout => {
  const box = framing?.captionBox ?? SAFE_BOX
  const sizePx = TEXT_SIZES[c.style][c.size]
  const color = TEXT_COLORS[c.color]
  const shadow = { sigma: Math.max(2, sizePx * 0.07), dy: Math.round(sizePx * 0.05), opacity: 0.6 }
  const halo = (outlinePx: number): Halo => ({
    sigma: HALO_SIGMA * sizePx,
    gain: HALO_GAIN,
    opacity: outlinePx > 0 ? 0 : HALO_OPACITY
  })
  const normalised = normaliseLineBreaks(c.quote.normalize("NFC"))

  if (c.style === "meme") {
    const [top, bottom] = splitMeme(normalised.toLocaleUpperCase())
    const budget = Math.round(boxHeight(SAFE_BOX) * MEME_SHARE)
    // With contain-blur the bottom text sits in the band under the photo (it ends where the box does).
    const topRegion: Box = { ...SAFE_BOX, bottom: SAFE_BOX.top + budget }
    const bottomRegion: Box = { ...box, top: Math.max(box.top, box.bottom - budget) }
    const blocks: Array<CaptionBlock> = []
    if (top) blocks.push({ text: top, region: topRegion, valign: "top" })
    if (bottom) blocks.push({ text: bottom, region: bottomRegion, valign: "bottom" })
    const outlinePx = Math.round(sizePx * (c.bold || c.outline ? 0.085 : 0.06))
    return { blocks, style: c.style, bold: c.bold, sizePx, color, outlinePx, shadow, halo: halo(outlinePx) }
  }

  const outlinePx = c.outline ? Math.max(3, Math.round(sizePx * 0.07)) : 0
  return {
    blocks: [{ text: addQuotes(normalised), region: box, valign: "middle" }],
    style: c.style,
    bold: c.bold,
    sizePx,
    color,
    outlinePx,
    shadow,
    halo: halo(outlinePx)
  }
}

/** Pango markup for one block (the text is escaped; colour is an attribute so emoji keep theirs). */
export const toMarkup = (text: string, color: string): string =>
  `<span foreground="${color}">${text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")}</span>`

/** Space the outline, shadow and halo need around the glyphs, so they too stay inside the region. */
export const effectMargin = (
  l: Pick<CaptionLayout, "outlinePx" | "shadow" | "halo">,
  sizePx: number,
  nominalPx: number
): number => {
  const scale = sizePx / nominalPx
  const halo = l.halo.opacity > 0 ? l.halo.sigma * 3 : 0
  return Math.ceil((l.outlinePx * 1.3 + Math.max(l.shadow.sigma * 2.5 + l.shadow.dy, halo)) * scale) + 2
}
