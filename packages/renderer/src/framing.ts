import { DEFAULT_IMAGE_CLASS, type ImageClass } from "./CaptionSpec.ts"
import { BASE_OVERSCAN, type Box, OUTPUT, SAFE_BOX } from "./output.ts"

/**
 * How the photo fills the 9:16 frame. Pure, and shared by `prepareCaption` and `renderVideo` so the
 * caption knows where the photo will be. It depends only on the photo's displayed size, its class,
 * whether there is a caption and the inferred subject: prompts change the motion inside a framing, never the framing itself
 * (the caption is made before the prompts are looked at).
 *
 * - `cover`: portrait photos fill the frame; the crop is anchored by sharp's attention strategy.
 * - `pan`: wide, high-resolution scenes are shown at 1:1 height and the camera travels across them.
 * - `contain-blur`: everything else sits whole on a blurred, darkened copy of itself; with a caption
 *   the photo sits high and the caption goes in the band below it, never over the subject. A subject
 *   is kept here too (`letterboxSubject`), with a zone the letterbox motion keeps it in.
 *
 * With a subject (the vision model's box, `planFraming`'s last argument) a photo that is not portrait
 * is cropped to 9:16 around it and fills the frame (`cover` with `crop`), when the subject fits whole
 * with room for the caption above or below it and the crop needs at most `MAX_COVER_UPSCALE`;
 * otherwise (a panorama, a group spread across the width, a thumbnail) the framings above apply.
 */
export type FramingKind = "cover" | "pan" | "contain-blur"

interface Rect {
  readonly left: number
  readonly top: number
  readonly width: number
  readonly height: number
}

export interface Framing {
  readonly kind: FramingKind
  readonly imageClass: ImageClass
  /** The prepared base raster (base pixels). */
  readonly base: { readonly width: number; readonly height: number }
  /** Where the photo's own (unblurred) pixels sit in the base. */
  readonly photoRect: Rect
  /** Zoom bounds, as output pixels per base pixel. kMax ≤ 1: never upsample the base. */
  readonly kMin: number
  readonly kMax: number
  /** Output point that stays on the photo's centre while zooming (contain-blur keeps its band). */
  readonly anchorOut: { readonly x: number; readonly y: number }
  /** Where a quote caption goes, in output pixels (inside SAFE_BOX). */
  readonly captionBox: Box
  /** cover around a subject: the part of the photo (displayed pixels) that is scaled to the base. */
  readonly crop?: Rect | undefined
  /** The subject in base pixels, and the output region it must stay in for the whole motion. */
  readonly subject?: { readonly rect: Rect; readonly zone: Box } | undefined
  /**
   * contain-blur with a caption: the output y the photo's own pixels stay above in every frame (the
   * caption box's top less its 40 px gap, where the centred push-in's deepest zoom puts the photo's
   * edge). The motion planner holds it; a camera key that moves the anchor above the photo's centre
   * (toward a face in the upper part, say) moves the photo's lower edge down.
   */
  readonly photoBottomMax?: number | undefined
}

export interface PhotoSize {
  readonly width: number
  readonly height: number
}

/** Taller than 4:5 → cover. Cropping a 4:5 photo to 9:16 keeps 70 % of its width. */
const COVER_MAX_ASPECT = 0.8
/** Pan only when the photo is clearly wide and tall enough that 1920 px height is ≤ 1.5× upscale. */
const PAN_MIN_ASPECT = 1.3
const PAN_MIN_HEIGHT = 1280
const PAN_CLASSES: ReadonlySet<ImageClass> = new Set(["landscape_nature", "interior_space", "other"])
/** contain-blur: photo width share of the base (a visible blurred border at the widest view). */
const CONTAIN_WIDTH_SHARE = 0.88
/** Largest photo height at 1:1 zoom, with and without a caption band below it. */
const CONTAIN_MAX_H_CAPTION = 960
const CONTAIN_MAX_H_PLAIN = 1344
/** With a caption the photo's top edge (at the deepest zoom) sits here; the band starts GAP below. */
const CONTAIN_TOP = 150
const CAPTION_GAP = 40

const coverBase = () => ({
  width: Math.round(OUTPUT.width * BASE_OVERSCAN),
  height: Math.round(OUTPUT.height * BASE_OVERSCAN)
})

/** Largest upscale of the cropped region (a 512 px square portrait is 4.3×: soft, but it fills the frame). */
const MAX_COVER_UPSCALE = 5
/** The subject may take at most this share of the crop's width or height (a margin all round). */
const SUBJECT_MAX_SHARE = 0.9
/** A quote band beside the subject must be at least this tall, else the photo is letterboxed. */
const MIN_CAPTION_BAND = 240
const SUBJECT_GAP = 36

/** A subject in the photo's displayed pixels (the vision model's box). */
export interface SubjectBox {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

const clampTo = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v))

/** The 9:16 crop around the subject that fills the frame, or undefined when it does not fit. */
const subjectCover = (photo: PhotoSize, cls: ImageClass, hasCaption: boolean, s: SubjectBox): Framing | undefined => {
  if (![s.x, s.y, s.width, s.height].every(Number.isFinite) || !(s.width > 0 && s.height > 0)) return undefined
  const target = OUTPUT.width / OUTPUT.height
  const tall = photo.width / photo.height <= target
  const cw = tall ? photo.width : photo.height * target
  const ch = tall ? photo.width / target : photo.height
  if (s.width > cw * SUBJECT_MAX_SHARE || s.height > ch * SUBJECT_MAX_SHARE) return undefined
  const base = coverBase()
  if (base.height / ch > MAX_COVER_UPSCALE) return undefined
  // The subject centred across the crop (its free side), clamped to the photo.
  const left = tall ? 0 : clampTo(s.x + s.width / 2 - cw / 2, 0, photo.width - cw)
  const top = tall ? clampTo(s.y + s.height / 2 - ch * 0.42, 0, photo.height - ch) : 0
  const crop = { left, top, width: cw, height: ch }
  const scale = base.width / cw
  const rect = {
    left: (s.x - left) * scale,
    top: (s.y - top) * scale,
    width: s.width * scale,
    height: s.height * scale
  }
  const kMin = OUTPUT.width / base.width
  // At the widest view the whole base is seen: this is where the subject naturally sits.
  const nat = { top: rect.top * kMin, bottom: (rect.top + rect.height) * kMin }
  // Room for the subject to grow when the camera pushes in about it (up to 1:1, kMax / kMin).
  const grow = ((1 / kMin - 1) * (nat.bottom - nat.top)) / 2
  let captionBox: Box = SAFE_BOX
  let zone: Box = { left: 0, top: 0, right: OUTPUT.width, bottom: OUTPUT.height }
  if (hasCaption) {
    // The band's edges are kept inside SAFE_BOX: a subject near the top or bottom of the crop would
    // otherwise start the band above the safe box (or end it below), under the platforms' UI.
    const inSafe = (y: number) => clampTo(y, SAFE_BOX.top, SAFE_BOX.bottom)
    const belowTop = Math.ceil(inSafe(nat.bottom + grow + SUBJECT_GAP))
    const aboveBottom = Math.floor(inSafe(nat.top - grow - SUBJECT_GAP))
    const below = SAFE_BOX.bottom - belowTop
    const above = aboveBottom - SAFE_BOX.top
    if (Math.max(below, above) < MIN_CAPTION_BAND) return undefined
    if (below >= above) {
      captionBox = { ...SAFE_BOX, top: belowTop }
      zone = { ...zone, bottom: captionBox.top - SUBJECT_GAP / 2 }
    } else {
      captionBox = { ...SAFE_BOX, bottom: aboveBottom }
      zone = { ...zone, top: captionBox.bottom + SUBJECT_GAP / 2 }
    }
  }
  return {
    kind: "cover",
    imageClass: cls,
    base,
    photoRect: { left: 0, top: 0, ...base },
    kMin,
    kMax: 1,
    anchorOut: { x: OUTPUT.width / 2, y: OUTPUT.height / 2 },
    captionBox,
    crop,
    subject: { rect, zone }
  }
}

export const planFraming = (
  photo: PhotoSize,
  imageClass: ImageClass | undefined,
  hasCaption: boolean,
  subject?: SubjectBox | null
): Framing => {
  const cls = imageClass ?? DEFAULT_IMAGE_CLASS
  const aspect = photo.width / photo.height
  const centre = { x: OUTPUT.width / 2, y: OUTPUT.height / 2 }

  if (subject) {
    const framed = subjectCover(photo, cls, hasCaption, subject)
    if (framed) return framed
  }

  if (aspect <= COVER_MAX_ASPECT) {
    const base = coverBase()
    return {
      kind: "cover",
      imageClass: cls,
      base,
      photoRect: { left: 0, top: 0, ...base },
      kMin: OUTPUT.width / base.width,
      kMax: 1,
      anchorOut: centre,
      captionBox: SAFE_BOX
    }
  }

  if (aspect >= PAN_MIN_ASPECT && photo.height >= PAN_MIN_HEIGHT && PAN_CLASSES.has(cls)) {
    const base = { width: Math.round(OUTPUT.height * aspect), height: OUTPUT.height }
    return {
      kind: "pan",
      imageClass: cls,
      base,
      photoRect: { left: 0, top: 0, ...base },
      kMin: 1,
      kMax: 1,
      anchorOut: centre,
      captionBox: SAFE_BOX
    }
  }

  const base = coverBase()
  const kMin = OUTPUT.width / base.width
  const maxH = hasCaption ? CONTAIN_MAX_H_CAPTION : CONTAIN_MAX_H_PLAIN
  const width = Math.round(Math.min(base.width * CONTAIN_WIDTH_SHARE, maxH * aspect))
  const height = Math.round(width / aspect)
  // Output y of the photo centre; fixed for the whole zoom (see motion-path anchorOut).
  const yc = hasCaption ? CONTAIN_TOP + height / 2 : OUTPUT.height / 2
  const left = Math.round((base.width - width) / 2)
  const top = Math.round(yc / kMin - height / 2)
  const photoRect = { left, top, width, height }
  const anchorOut = { x: (left + width / 2) * kMin, y: (top + height / 2) * kMin }
  // Deepest zoom is kMax = 1, so the photo's lowest edge over the whole clip is this:
  const photoBottom = anchorOut.y + height / 2
  const captionBox: Box = hasCaption
    ? { ...SAFE_BOX, top: Math.min(Math.ceil(photoBottom + CAPTION_GAP), SAFE_BOX.bottom - 200) }
    : SAFE_BOX
  // The photo's top at the deepest zoom about its centre: the framing's own push-in takes it there.
  const deepTop = anchorOut.y - height / 2
  const kept = subject
    ? letterboxSubject(photo, photoRect, kMin, deepTop, hasCaption ? captionBox : undefined, subject)
    : undefined
  return {
    kind: "contain-blur",
    imageClass: cls,
    base,
    photoRect,
    kMin,
    kMax: 1,
    anchorOut,
    captionBox,
    ...(kept ? { subject: kept } : {}),
    // The gap the centred push-in keeps between photo and caption box: a long quote fills its box.
    ...(hasCaption ? { photoBottomMax: captionBox.top - CAPTION_GAP } : {})
  }
}

/**
 * The subject of a letterboxed photo, in base pixels (inside the photo), and its zone: the platforms'
 * safe box, above the caption box, widened where the widest view (the whole base, where the framing
 * put the subject) already reaches past it, so the motion never takes the subject further into the
 * platforms' UI than the framing did. Upward it may go as high as the photo's own top edge goes in
 * the framing's centred push-in (`deepTop`, 150 px with a caption: 42 px into the top band). A
 * subject wider than the safe box (a cat filling the photo) gets the frame's width: staying in view
 * is then all that can be asked.
 */
const letterboxSubject = (
  photo: PhotoSize,
  photoRect: Rect,
  kMin: number,
  deepTop: number,
  captionBox: Box | undefined,
  s: SubjectBox
): { rect: Rect; zone: Box } | undefined => {
  const sx = photoRect.width / photo.width
  const sy = photoRect.height / photo.height
  const left = clampTo(photoRect.left + s.x * sx, photoRect.left, photoRect.left + photoRect.width)
  const top = clampTo(photoRect.top + s.y * sy, photoRect.top, photoRect.top + photoRect.height)
  const right = clampTo(photoRect.left + (s.x + s.width) * sx, photoRect.left, photoRect.left + photoRect.width)
  const bottom = clampTo(photoRect.top + (s.y + s.height) * sy, photoRect.top, photoRect.top + photoRect.height)
  if (!(right - left >= 1 && bottom - top >= 1)) return undefined
  const rect = { left, top, width: right - left, height: bottom - top }
  // At the widest view the window is the whole base: output = base × kMin.
  const wide = { left: left * kMin, top: top * kMin, right: right * kMin, bottom: bottom * kMin }
  const wideX = wide.right - wide.left > SAFE_BOX.right - SAFE_BOX.left
  const zone: Box = {
    left: wideX ? 0 : Math.min(SAFE_BOX.left, wide.left),
    right: wideX ? OUTPUT.width : Math.max(SAFE_BOX.right, wide.right),
    top: Math.min(SAFE_BOX.top, wide.top, deepTop),
    bottom: captionBox ? captionBox.top - SUBJECT_GAP / 2 : Math.max(SAFE_BOX.bottom, wide.bottom)
  }
  return { rect, zone }
}
