import type { Framing } from "./framing.ts"
import type { MotionMove, MotionSpeed, MotionWords } from "./motion-words.ts"
import { OUTPUT } from "./output.ts"

/**
 * The camera: a zoom `k` (output px per base px) about a base point `a` that is shown at the fixed
 * output point `framing.anchorOut`. The window's top-left is `a - anchorOut / k`.
 *
 * Keys are clamped inside the base, and between keys we interpolate log k and `a` linearly in an
 * eased time. The window's left edge `ax - ox/k` is then concave and its right edge convex in that
 * time, so if both keys are inside the base every frame is too (no black edges, by construction).
 */
export interface CameraKey {
  readonly k: number
  readonly ax: number
  readonly ay: number
}

export interface CameraPath {
  readonly base: { readonly width: number; readonly height: number }
  readonly anchorOut: { readonly x: number; readonly y: number }
  readonly from: CameraKey
  readonly to: CameraKey
}

/** The window of one frame in base pixels: output pixel (u, v) shows base point (x0 + u/k, y0 + v/k). */
export interface CameraWindow {
  readonly x0: number
  readonly y0: number
  readonly k: number
}

/** Share of the available travel a move uses. */
const AMPLITUDE: Record<MotionSpeed, number> = { slow: 0.45, normal: 0.8, fast: 1 }
/** A pan across a wide photo travels at most this many base px per second (on average). */
const PAN_PX_PER_SECOND = 150

export const easeInOut = (t: number): number => (1 - Math.cos(Math.PI * Math.min(1, Math.max(0, t)))) / 2

const clamp = (v: number, lo: number, hi: number) => (lo > hi ? (lo + hi) / 2 : Math.min(hi, Math.max(lo, v)))

/** Move a key so its window lies inside the base. */
export const clampKey = (f: Pick<Framing, "base" | "anchorOut" | "kMin" | "kMax">, key: CameraKey): CameraKey => {
  const k = clamp(key.k, f.kMin, f.kMax)
  const { x: ox, y: oy } = f.anchorOut
  return {
    k,
    ax: clamp(key.ax, ox / k, f.base.width - (OUTPUT.width - ox) / k),
    ay: clamp(key.ay, oy / k, f.base.height - (OUTPUT.height - oy) / k)
  }
}

const defaultMove = (f: Framing): MotionMove => {
  if (f.kind === "pan") return "pan-right"
  switch (f.imageClass) {
    case "landscape_nature":
      return "zoom-out"
    case "interior_space":
      return f.kind === "cover" ? "pan-right" : "zoom-in"
    default:
      return "zoom-in"
  }
}

/** Where the camera is at eased time e of a path (the frame at that time is `cameraAt`). */
const windowAt = (p: CameraPath, e: number): CameraWindow => {
  const k = Math.exp(Math.log(p.from.k) + (Math.log(p.to.k) - Math.log(p.from.k)) * e)
  const ax = p.from.ax + (p.to.ax - p.from.ax) * e
  const ay = p.from.ay + (p.to.ay - p.from.ay) * e
  return { k, x0: ax - p.anchorOut.x / k, y0: ay - p.anchorOut.y / k }
}

/** True when the subject is inside its zone in every frame (sampled finely; the path is smooth). */
export const subjectStaysInZone = (f: Framing, p: CameraPath, samples = 48): boolean => {
  if (!f.subject) return true
  const { rect, zone } = f.subject
  for (let i = 0; i <= samples; i++) {
    const w = windowAt(p, i / samples)
    const l = (rect.left - w.x0) * w.k
    const t = (rect.top - w.y0) * w.k
    const r = (rect.left + rect.width - w.x0) * w.k
    const b = (rect.top + rect.height - w.y0) * w.k
    if (l < zone.left - 0.5 || t < zone.top - 0.5 || r > zone.right + 0.5 || b > zone.bottom + 0.5) return false
  }
  return true
}

/**
 * Shrinks the move toward the widest view (where the framing put the subject in its zone) until the
 * subject stays in its zone for the whole clip; at worst the camera holds the widest view.
 */
const keepSubject = (f: Framing, p: CameraPath, wide: CameraKey): CameraPath => {
  if (subjectStaysInZone(f, p)) return p
  const lerp = (key: CameraKey, lambda: number): CameraKey =>
    clampKey(f, {
      k: Math.exp(Math.log(wide.k) + (Math.log(key.k) - Math.log(wide.k)) * lambda),
      ax: wide.ax + (key.ax - wide.ax) * lambda,
      ay: wide.ay + (key.ay - wide.ay) * lambda
    })
  const scaled = (lambda: number): CameraPath => ({ ...p, from: lerp(p.from, lambda), to: lerp(p.to, lambda) })
  let lo = 0
  let hi = 1
  for (let i = 0; i < 12; i++) {
    const mid = (lo + hi) / 2
    if (subjectStaysInZone(f, scaled(mid))) lo = mid
    else hi = mid
  }
  return scaled(lo)
}

/**
 * Moves over a subject framing, per class: a slow push-in about a face (it stays where it is and
 * grows); a figurine the same with a gentle rise; a product approached from the side (the camera
 * glides in and settles on the object); interiors turn (a pan that also opens up, like a slow orbit);
 * anything else pushes in on its subject.
 */
const subjectMotion = (f: Framing & { subject: NonNullable<Framing["subject"]> }, words: MotionWords): CameraPath => {
  const r = f.subject.rect
  const sx = r.left + r.width / 2
  const sy = r.top + r.height / 2
  const wide = clampKey(f, { k: f.kMin, ax: f.base.width / 2, ay: f.base.height / 2 })
  // Natural output place of the subject's centre at the widest view.
  const px = f.anchorOut.x + f.kMin * (sx - wide.ax)
  const py = f.anchorOut.y + f.kMin * (sy - wide.ay)
  /** The key at zoom k that shows the subject's centre at output (ox, oy). */
  const about = (k: number, ox: number, oy: number) =>
    clampKey(f, { k, ax: sx - (ox - f.anchorOut.x) / k, ay: sy - (oy - f.anchorOut.y) / k })
  const path = (from: CameraKey, to: CameraKey): CameraPath => ({ base: f.base, anchorOut: f.anchorOut, from, to })
  const cls = f.imageClass
  const speed = words.speed ?? (cls === "person" || cls === "doll_figurine" ? "slow" : "normal")
  const amp = AMPLITUDE[speed]
  const kDeep = f.kMin * Math.pow(f.kMax / f.kMin, Math.max(amp, 0.6))
  let move = words.move ?? (cls === "landscape_nature" ? "pan-right" : cls === "interior_space" ? "pan-left" : "zoom-in")
  if (move === "pan-up" || move === "pan-down") move = "zoom-in"
  switch (move) {
    case "still":
      return path(wide, wide)
    case "zoom-in":
    case "zoom-out": {
      let from = wide
      let to = about(kDeep, px, py)
      if (cls === "doll_figurine") to = about(kDeep, px, py - 40 * amp)
      if (cls === "product_object") from = clampKey(f, { ...wide, ax: wide.ax - 70 * amp })
      if (move === "zoom-out") [from, to] = [to, from]
      return keepSubject(f, path(from, to), wide)
    }
    case "pan-left":
    case "pan-right": {
      // A sideways travel at a middle zoom, ending on the subject; interiors also open up as they turn.
      const sign = move === "pan-right" ? 1 : -1
      // At the deepest zoom the window has the most room to travel; the drift passes over the subject.
      const kMid = f.kMin * Math.pow(f.kMax / f.kMin, cls === "interior_space" ? 0.7 : 1)
      const travel = 160 * amp
      const over = about(cls === "interior_space" ? f.kMin * 1.02 : kMid, px, py)
      const end = clampKey(f, { ...over, ax: over.ax + (sign * travel) / 3 })
      const start = clampKey(f, { k: kMid, ax: over.ax - sign * travel, ay: over.ay })
      return keepSubject(f, path(start, end), wide)
    }
  }
}

export const planMotion = (f: Framing, words: MotionWords, seconds: number): CameraPath => {
  if (f.subject) return subjectMotion({ ...f, subject: f.subject }, words)
  const amp = AMPLITUDE[words.speed ?? "normal"]
  let move = words.move ?? defaultMove(f)
  // A pan framing is exactly 1:1 in height: zooming is impossible, only sideways travel is.
  if (f.kind === "pan" && (move === "zoom-in" || move === "zoom-out" || move === "pan-up" || move === "pan-down")) {
    move = "pan-right"
  }
  // contain-blur keeps the photo's vertical place fixed so the caption band stays clear.
  if (f.kind === "contain-blur" && (move === "pan-up" || move === "pan-down")) move = "zoom-in"

  const cx = f.photoRect.left + f.photoRect.width / 2
  const cy = f.photoRect.top + f.photoRect.height / 2
  const kDeep = f.kMin * Math.pow(f.kMax / f.kMin, amp)
  const key = (k: number, ax: number, ay: number) => clampKey(f, { k, ax, ay })
  const path = (from: CameraKey, to: CameraKey): CameraPath => ({ base: f.base, anchorOut: f.anchorOut, from, to })

  switch (move) {
    case "still":
      return path(key(f.kMin, cx, cy), key(f.kMin, cx, cy))
    case "zoom-in":
    case "zoom-out": {
      // People and figurines: drift toward the upper part of the frame, where faces usually are.
      const towardFace = f.kind === "cover" && (f.imageClass === "person" || f.imageClass === "doll_figurine")
      const drift = f.kind === "cover" && f.imageClass === "other" ? { x: 40, y: -30 } : { x: 0, y: 0 }
      const deep = key(kDeep, cx + drift.x, towardFace ? f.base.height * 0.4 : cy + drift.y)
      const wide = key(f.kMin, cx, cy)
      return move === "zoom-in" ? path(wide, deep) : path(deep, wide)
    }
    case "pan-left":
    case "pan-right":
    case "pan-up":
    case "pan-down": {
      const horizontal = move === "pan-left" || move === "pan-right"
      const k = f.kind === "pan" ? 1 : f.kMax
      const lo = clampKey(f, { k, ax: -Infinity, ay: -Infinity })
      const hi = clampKey(f, { k, ax: Infinity, ay: Infinity })
      const span = horizontal ? hi.ax - lo.ax : hi.ay - lo.ay
      const maxTravel = f.kind === "pan" ? PAN_PX_PER_SECOND * seconds : span
      const travel = Math.min(span, maxTravel) * amp
      const mid = horizontal ? clamp(cx, lo.ax + travel / 2, hi.ax - travel / 2) : clamp(cy, lo.ay + travel / 2, hi.ay - travel / 2)
      // "pan right": the camera moves right, so the window goes from the left to the right.
      const sign = move === "pan-right" || move === "pan-down" ? 1 : -1
      const a = mid - (sign * travel) / 2
      const b = mid + (sign * travel) / 2
      return horizontal ? path(key(k, a, cy), key(k, b, cy)) : path(key(k, cx, a), key(k, cx, b))
    }
  }
}

/** Camera window at time t ∈ [0, 1] (eased, log-linear zoom). */
export const cameraAt = (p: CameraPath, t: number): CameraWindow => {
  const e = easeInOut(t)
  const k = Math.exp(Math.log(p.from.k) + (Math.log(p.to.k) - Math.log(p.from.k)) * e)
  const ax = p.from.ax + (p.to.ax - p.from.ax) * e
  const ay = p.from.ay + (p.to.ay - p.from.ay) * e
  return { k, x0: ax - p.anchorOut.x / k, y0: ay - p.anchorOut.y / k }
}

/** Frame i of n: the first frame is t = 0 and the last t = 1, so the move lands exactly on its key. */
export const frameTime = (i: number, n: number): number => (n <= 1 ? 0 : i / (n - 1))
