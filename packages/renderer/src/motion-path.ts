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
interface CameraKey {
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
const clampKey = (f: Pick<Framing, "base" | "anchorOut" | "kMin" | "kMax">, key: CameraKey): CameraKey => {
  const k = clamp(key.k, f.kMin, f.kMax)
  const { x: ox, y: oy } = f.anchorOut
  return {
    k,
    ax: clamp(key.ax, ox / k, f.base.width - (OUTPUT.width - ox) / k),
    ay: clamp(key.ay, oy / k, f.base.height - (OUTPUT.height - oy) / k)
  }
}

/** Defaults for `cover` without a subject and `pan` (contain-blur has its own: `letterboxMotion`). */
const defaultMove = (f: Framing): MotionMove => {
  if (f.kind === "pan") return "pan-right"
  switch (f.imageClass) {
    case "landscape_nature":
      return "zoom-out"
    case "interior_space":
      return "pan-right"
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

/**
 * True when the subject is inside its zone, give or take `tolerance` output px, in every frame
 * (sampled finely; the path is smooth).
 */
export const subjectStaysInZone = (f: Framing, p: CameraPath, samples = 48, tolerance = 0.5): boolean => {
  if (!f.subject) return true
  const { rect, zone } = f.subject
  for (let i = 0; i <= samples; i++) {
    const w = windowAt(p, i / samples)
    const l = (rect.left - w.x0) * w.k
    const t = (rect.top - w.y0) * w.k
    const r = (rect.left + rect.width - w.x0) * w.k
    const b = (rect.top + rect.height - w.y0) * w.k
    const out = Math.max(zone.left - l, zone.top - t, r - zone.right, b - zone.bottom)
    if (out > tolerance) return false
  }
  return true
}

/**
 * True when the photo's own pixels stay above `photoBottomMax` (the caption box, less half a pixel) in
 * every frame (sampled finely; the path is smooth). Framings without that limit always pass.
 */
const photoStaysAboveCaption = (f: Framing, p: CameraPath, samples = 48): boolean => {
  if (f.photoBottomMax === undefined) return true
  const bottom = f.photoRect.top + f.photoRect.height
  for (let i = 0; i <= samples; i++) {
    const w = windowAt(p, i / samples)
    if ((bottom - w.y0) * w.k > f.photoBottomMax - 0.5) return false
  }
  return true
}

/**
 * Every limit the framing sets holds in every frame: the subject in its zone, the photo above the
 * caption. Planned with no tolerance at 48 samples, so the frames between samples keep half a pixel
 * in hand (a frame's check allows 0.5 px; with that tolerance here, a tiny subject at its zone's edge
 * came out 4e-6 px past it between samples).
 */
const pathFits = (f: Framing, p: CameraPath): boolean => subjectStaysInZone(f, p, 48, 0) && photoStaysAboveCaption(f, p)

/**
 * Shrinks the move toward the widest view (where the framing put the subject in its zone and the
 * photo above the caption) until both hold for the whole clip; at worst the camera holds the widest view.
 */
const keepSubject = (f: Framing, p: CameraPath, wide: CameraKey): CameraPath => {
  if (pathFits(f, p)) return p
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
    if (pathFits(f, scaled(mid))) lo = mid
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
  let move = words.move ??
    (cls === "landscape_nature" ? "pan-right" : cls === "interior_space" ? "pan-left" : "zoom-in")
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

/** Share of the letterbox's zoom range (kMin → 1:1, 15 %) a move uses, by pace. */
const LETTERBOX_AMPLITUDE: Record<MotionSpeed, number> = { slow: 0.6, normal: 0.85, fast: 1 }

/**
 * Moves over a letterboxed photo (`contain-blur`), per class, toward the subject when there is one
 * (else toward the upper middle of the photo for people and figurines, the centre for the rest):
 * - person: a slow push-in on the face; the face keeps its height (unless the caption limit holds the
 *   camera low: then it rises) and drifts halfway to the middle.
 * - doll_figurine: the same push-in with a rise: it starts a little in with the camera low on the
 *   figure (its head high in the frame) and rises to the head as it closes in.
 * - product_object: the camera glides in from the side (the object starts pushed out toward its own
 *   side) while zooming, and settles with the object in the middle.
 * - interior_space: a turn that opens up: from close in at one side to a wider view on the other.
 * - landscape_nature: a lateral drift across the photo close in, easing slightly out.
 * - other: a push-in toward its subject (or the centre), which drifts halfway to the middle.
 * The room is small (15 % of zoom, ±81 base px sideways at 1:1), so every default uses most of it.
 * Camera words choose the move and speed. Every key is clamped inside the base and its anchor kept
 * low enough that the photo's lower edge stays above the caption; a key whose frame still breaks a
 * limit is brought toward the widest view on its own (a drift that would start with a subject at the
 * edge pushed out of its zone starts nearer the widest view instead), and the whole path is then
 * shrunk toward the widest view until the subject stays in its zone and the photo above the caption
 * in every frame.
 */
const letterboxMotion = (f: Framing, words: MotionWords): CameraPath => {
  const cls = f.imageClass
  const r = f.photoRect
  const cx = r.left + r.width / 2
  const cy = r.top + r.height / 2
  const s = f.subject?.rect
  const faceHigh = cls === "person" || cls === "doll_figurine"
  // The point the camera moves toward (base px); a figurine's box is the whole figure: aim at its head.
  const tx = s ? s.left + s.width / 2 : cx
  const ty = s
    ? (cls === "doll_figurine" ? s.top + s.height * 0.3 : s.top + s.height / 2)
    : faceHigh
    ? r.top + r.height * 0.35
    : cy
  const { x: ox, y: oy } = f.anchorOut
  const bottom = r.top + r.height
  /** Clamp inside the base, then keep the anchor low enough for the photo's edge to clear the caption. */
  const fit = (key: CameraKey): CameraKey => {
    const c = clampKey(f, key)
    if (f.photoBottomMax === undefined) return c
    const ayMin = bottom - (f.photoBottomMax - 1 - oy) / c.k
    return c.ay >= ayMin ? c : clampKey(f, { ...c, ay: ayMin })
  }
  const wide = clampKey(f, { k: f.kMin, ax: cx, ay: cy })
  // Where the target shows at the widest view.
  const px = ox + f.kMin * (tx - wide.ax)
  const py = oy + f.kMin * (ty - wide.ay)
  /** The key at zoom k that shows the target at output (qx, qy). */
  const about = (k: number, qx: number, qy: number) => fit({ k, ax: tx - (qx - ox) / k, ay: ty - (qy - oy) / k })
  const zoom = (share: number) => f.kMin * Math.pow(f.kMax / f.kMin, Math.min(1, Math.max(0, share)))
  /** Half the sideways room at zoom k (base px either side of the centre). */
  const room = (k: number) => Math.max(0, (f.base.width - OUTPUT.width / k) / 2)
  /** A key whose own frame breaks a limit is first brought toward the widest view on its own. */
  const held = (key: CameraKey) =>
    keepSubject(f, { base: f.base, anchorOut: f.anchorOut, from: key, to: key }, wide).from
  const path = (from: CameraKey, to: CameraKey): CameraPath =>
    keepSubject(f, { base: f.base, anchorOut: f.anchorOut, from: held(fit(from)), to: held(fit(to)) }, wide)
  const speed = words.speed ?? (faceHigh ? "slow" : "normal")
  const amp = LETTERBOX_AMPLITUDE[speed]
  // Toward the subject's side; without one (or dead centre) the class's own direction.
  const side = (fallback: 1 | -1): 1 | -1 => (Math.abs(tx - cx) < 8 ? fallback : tx > cx ? 1 : -1)
  const mid = (a: number, b: number, t: number) => a + (b - a) * t
  const pushIn = (share: number, toMiddle: number, rise = 0) => about(zoom(share), mid(px, ox, toMiddle), py - rise)

  const move = words.move
  if (move === undefined) {
    switch (cls) {
      case "person":
        return path(wide, pushIn(amp, 0.5))
      case "doll_figurine":
        // The camera starts a little in and low (the head higher in the frame) and rises to the head.
        return path(pushIn(0.3 * amp, 0.25, 80 * amp), pushIn(amp, 0.5))
      case "product_object": {
        // Starts close in with the camera to the far side of the object (as far as the base allows).
        const dir = side(1)
        const kA = zoom(0.75 * amp)
        const kB = zoom(amp)
        return path({ k: kA, ax: cx - dir * room(kA), ay: mid(cy, ty, 0.3) }, about(kB, ox, mid(py, oy, 0.3)))
      }
      case "interior_space": {
        const dir = side(-1)
        const kA = zoom(amp)
        const kB = zoom(0.25 * amp)
        return path({ k: kA, ax: cx - dir * room(kA), ay: cy }, { k: kB, ax: cx + dir * room(kB), ay: cy })
      }
      case "landscape_nature": {
        const dir = side(1)
        const kA = zoom(amp)
        const kB = zoom(0.75 * amp)
        const ay = mid(cy, ty, 0.5)
        return path({ k: kA, ax: cx - dir * room(kA), ay }, { k: kB, ax: cx + dir * room(kB), ay })
      }
      default:
        return path(wide, about(zoom(amp), mid(px, ox, 0.5), mid(py, oy, 0.5)))
    }
  }
  switch (move) {
    case "still":
      return path(wide, wide)
    case "zoom-in":
    case "zoom-out": {
      const deep = pushIn(amp, 0.5)
      return move === "zoom-in" ? path(wide, deep) : path(deep, wide)
    }
    case "pan-left":
    case "pan-right": {
      // Sideways at the deepest zoom (the most room), centred on the target as far as the room allows.
      const k = f.kMax
      const travel = 2 * room(k) * amp
      const at = clamp(tx, cx - room(k) + travel / 2, cx + room(k) - travel / 2)
      const sign = move === "pan-right" ? 1 : -1
      const ay = mid(cy, ty, 0.5)
      return path({ k, ax: at - (sign * travel) / 2, ay }, { k, ax: at + (sign * travel) / 2, ay })
    }
    case "pan-up":
    case "pan-down": {
      // Up and down at the deepest zoom: the base's edges and the caption bound the travel.
      const k = f.kMax
      const hi = fit({ k, ax: tx, ay: Infinity }).ay
      const lo = fit({ k, ax: tx, ay: -Infinity }).ay
      const travel = (hi - lo) * amp
      const at = clamp(ty, lo + travel / 2, hi - travel / 2)
      const sign = move === "pan-down" ? 1 : -1
      return path({ k, ax: tx, ay: at - (sign * travel) / 2 }, { k, ax: tx, ay: at + (sign * travel) / 2 })
    }
  }
}

export const planMotion = (f: Framing, words: MotionWords, seconds: number): CameraPath => {
  if (f.kind === "contain-blur") return letterboxMotion(f, words)
  if (f.subject) return subjectMotion({ ...f, subject: f.subject }, words)
  const amp = AMPLITUDE[words.speed ?? "normal"]
  let move = words.move ?? defaultMove(f)
  // A pan framing is exactly 1:1 in height: zooming is impossible, only sideways travel is.
  if (f.kind === "pan" && (move === "zoom-in" || move === "zoom-out" || move === "pan-up" || move === "pan-down")) {
    move = "pan-right"
  }

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
      const towardFace = f.imageClass === "person" || f.imageClass === "doll_figurine"
      const drift = f.imageClass === "other" ? { x: 40, y: -30 } : { x: 0, y: 0 }
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
      const mid = horizontal
        ? clamp(cx, lo.ax + travel / 2, hi.ax - travel / 2)
        : clamp(cy, lo.ay + travel / 2, hi.ay - travel / 2)
      // "pan right": the camera moves right, so the window goes from the left to the right.
      const sign = move === "pan-right" || move === "pan-down" ? 1 : -1
      const a = mid - (sign * travel) / 2
      const b = mid + (sign * travel) / 2
      return horizontal ? path(key(k, a, cy), key(k, b, cy)) : path(key(k, cx, a), key(k, cx, b))
    }
  }
}

/** Camera window at time t ∈ [0, 1] (eased, log-linear zoom). */
export const cameraAt = (p: CameraPath, t: number): CameraWindow => windowAt(p, easeInOut(t))

/** Frame i of n: the first frame is t = 0 and the last t = 1, so the move lands exactly on its key. */
export const frameTime = (i: number, n: number): number => (n <= 1 ? 0 : i / (n - 1))
