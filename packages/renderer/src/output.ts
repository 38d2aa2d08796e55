/**
 * The one output format every platform (Reels, TikTok, Shorts) accepts, and the caption safe zone.
 * Shared by caption layout, framing, frame generation and verification so they cannot disagree.
 */
export const OUTPUT = { width: 1080, height: 1920, fps: 30 } as const

/**
 * Where text may go (output pixels). Platforms draw their own UI over the top ~10 % (account line,
 * tabs), the bottom ~20 % (caption, music ticker) and a ~150 px action column on the right.
 */
export const SAFE_BOX = { left: 90, top: 192, right: 930, bottom: 1536 } as const

export interface Box {
  readonly left: number
  readonly top: number
  readonly right: number
  readonly bottom: number
}

export const boxWidth = (b: Box): number => b.right - b.left
export const boxHeight = (b: Box): number => b.bottom - b.top

/**
 * The prepared base is 15 % larger than the output, so the deepest zoom of a cover/contain framing
 * is exactly 1:1: the video never upsamples the base (which was made with lanczos3 from the photo).
 */
export const BASE_OVERSCAN = 1.15
