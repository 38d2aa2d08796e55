import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { prop } from "../../../test/support/prop.ts"
import { ImageClass } from "../src/CaptionSpec.ts"
import { type Framing, planFraming, type SubjectBox } from "../src/framing.ts"
import { cameraAt, type CameraPath, frameTime, planMotion, subjectStaysInZone } from "../src/motion-path.ts"
import { combineMotionWords } from "../src/motion-words.ts"
import { OUTPUT, SAFE_BOX } from "../src/output.ts"

// Letterboxed (contain-blur) photos as the vision model saw them: coffee (product, the cup), Grace
// Hopper (person, the face), a footballer (person, a small face left of centre), and no subject.
const coffee = { size: { width: 600, height: 400 }, subject: { x: 166, y: 22, width: 245, height: 240 } }
const hopper = { size: { width: 512, height: 600 }, subject: { x: 128, y: 101, width: 282, height: 282 } }
const footballer = { size: { width: 548, height: 342 }, subject: { x: 211, y: 82, width: 65, height: 65 } }
const plain = { size: { width: 640, height: 480 }, subject: null }
const photos = { coffee, hopper, footballer, plain }
const classes = ImageClass.literals
const noWords = combineMotionWords(undefined, undefined)

const letterbox = (
  p: { size: { width: number; height: number }; subject: SubjectBox | null },
  cls: ImageClass,
  caption = true
) => {
  const f = planFraming(p.size, cls, caption, p.subject)
  expect(f.kind).toBe("contain-blur")
  return f
}

/** Largest difference between two paths' windows (base px) over the clip. */
const pathDistance = (a: CameraPath, b: CameraPath) => {
  let d = 0
  for (let i = 0; i <= 40; i++) {
    const u = cameraAt(a, i / 40)
    const v = cameraAt(b, i / 40)
    d = Math.max(
      d,
      Math.abs(u.x0 - v.x0),
      Math.abs(u.y0 - v.y0),
      Math.abs(u.x0 + OUTPUT.width / u.k - (v.x0 + OUTPUT.width / v.k)),
      Math.abs(u.y0 + OUTPUT.height / u.k - (v.y0 + OUTPUT.height / v.k))
    )
  }
  return d
}

/** The photo's lowest edge in output px, frame by frame. */
const photoBottoms = (f: Framing, p: CameraPath, n = 240) =>
  Array.from({ length: n }, (_, i) => {
    const w = cameraAt(p, frameTime(i, n))
    return (f.photoRect.top + f.photoRect.height - w.y0) * w.k
  })

describe("letterbox framing keeps the subject", () => {
  it("in base pixels inside the photo, with a zone the widest view satisfies, above the caption box", () => {
    for (const [name, p] of Object.entries(photos)) {
      if (!p.subject) continue
      for (const cls of classes) {
        const f = letterbox(p, cls)
        const s = f.subject!
        expect(s, name).toBeDefined()
        expect(s.rect.left).toBeGreaterThanOrEqual(f.photoRect.left)
        expect(s.rect.top).toBeGreaterThanOrEqual(f.photoRect.top)
        expect(s.rect.left + s.rect.width).toBeLessThanOrEqual(f.photoRect.left + f.photoRect.width + 1e-9)
        expect(s.rect.top + s.rect.height).toBeLessThanOrEqual(f.photoRect.top + f.photoRect.height + 1e-9)
        expect(s.zone.bottom).toBeLessThan(f.captionBox.top)
        expect(s.zone.left).toBeLessThanOrEqual(SAFE_BOX.left)
        expect(s.zone.right).toBeGreaterThanOrEqual(SAFE_BOX.right)
        // the photo keeps the 40 px gap above the caption box that the centred push-in kept
        expect(f.photoBottomMax).toBe(f.captionBox.top - 40)
        // The still camera (the widest view) is the fallback every move shrinks toward: it must fit.
        expect(subjectStaysInZone(f, planMotion(f, combineMotionWords("still", undefined), 8), 10)).toBe(true)
      }
    }
    // The face's box maps to the face's place in the base.
    const f = letterbox(hopper, "person")
    const scale = f.photoRect.width / hopper.size.width
    expect(f.subject!.rect.left).toBeCloseTo(f.photoRect.left + hopper.subject.x * scale, 6)
    expect(f.subject!.rect.width).toBeCloseTo(hopper.subject.width * scale, 6)
    // No caption: no band to keep clear, and the subject's zone is the safe box.
    const plainCaption = letterbox(coffee, "product_object", false)
    expect(plainCaption.photoBottomMax).toBeUndefined()
    expect(plainCaption.subject!.zone).toEqual(SAFE_BOX)
  })
})

describe("letterbox motion per class", () => {
  it("differs pairwise between the six classes (with a subject and without)", () => {
    for (const [name, p] of Object.entries(photos)) {
      const paths = classes.map((cls) => [cls, planMotion(letterbox(p, cls), noWords, 8)] as const)
      for (let i = 0; i < paths.length; i++) {
        for (let j = i + 1; j < paths.length; j++) {
          const d = pathDistance(paths[i][1], paths[j][1])
          expect(d, `${name}: ${paths[i][0]} vs ${paths[j][0]}`).toBeGreaterThan(25)
        }
      }
    }
  })

  it("each class moves as named: push-ins zoom in, the interior opens up, the landscape drifts sideways", () => {
    for (const p of Object.values(photos)) {
      const m = Object.fromEntries(classes.map((cls) => [cls, planMotion(letterbox(p, cls), noWords, 8)]))
      for (const cls of ["person", "doll_figurine", "product_object", "other"] as const) {
        expect(m[cls].to.k, cls).toBeGreaterThan(m[cls].from.k * 1.02)
      }
      // person and figurine are slower than "other" (less of the zoom range over the same clip)
      expect(m.person.to.k).toBeLessThan(m.other.to.k)
      expect(m.doll_figurine.to.k).toBeLessThan(m.other.to.k)
      expect(m.interior_space.to.k).toBeLessThan(m.interior_space.from.k * 0.95)
      expect(Math.abs(m.interior_space.to.ax - m.interior_space.from.ax)).toBeGreaterThan(50)
      expect(Math.abs(m.landscape_nature.to.ax - m.landscape_nature.from.ax)).toBeGreaterThan(80)
      expect(Math.abs(Math.log(m.landscape_nature.to.k / m.landscape_nature.from.k))).toBeLessThan(0.05)
      expect(Math.abs(m.product_object.to.ax - m.product_object.from.ax)).toBeGreaterThan(30)
      // the camera rises along the figurine as it pushes in: its point goes up the photo
      expect(m.doll_figurine.from.ay - m.doll_figurine.to.ay).toBeGreaterThan(m.person.from.ay - m.person.to.ay + 20)
    }
    // Without a subject, people and figurines push in toward the upper middle of the photo; "other" at its centre.
    const f = letterbox(plain, "person")
    const person = planMotion(f, noWords, 8)
    const other = planMotion(letterbox(plain, "other"), noWords, 8)
    const fixedPointY = (p: CameraPath) => {
      // The base row shown at the same output row at both ends of a zoom (the push-in's fixed point).
      const a = cameraAt(p, 0)
      const b = cameraAt(p, 1)
      return (b.y0 * b.k - a.y0 * a.k) / (b.k - a.k)
    }
    const cy = f.photoRect.top + f.photoRect.height / 2
    expect(fixedPointY(person)).toBeLessThan(cy - 0.1 * f.photoRect.height)
    expect(Math.abs(fixedPointY(other) - cy)).toBeLessThan(1)
  })

  it("ends closer to the subject than it starts, for every class, and a push-in makes the subject larger", () => {
    const boxes: ReadonlyArray<SubjectBox> = [
      coffee.subject,
      { x: 40, y: 60, width: 120, height: 120 }, // upper left
      { x: 420, y: 200, width: 140, height: 150 }, // lower right
      { x: 380, y: 30, width: 90, height: 100 } // upper right
    ]
    for (const subject of boxes) {
      for (const cls of classes) {
        const f = letterbox({ size: coffee.size, subject }, cls)
        const r = f.subject!.rect
        const tx = r.left + r.width / 2
        const ty = r.top + r.height / 2
        const p = planMotion(f, noWords, 8)
        const dist = (k: { ax: number; ay: number }) => Math.hypot(k.ax - tx, k.ay - ty)
        expect(dist(p.to), `${cls} ${JSON.stringify(subject)}`).toBeLessThan(dist(p.from) - 5)
        if (cls !== "interior_space" && cls !== "landscape_nature") {
          expect(p.to.k, `${cls} ${JSON.stringify(subject)}`).toBeGreaterThan(p.from.k)
        }
      }
    }
  })

  it("camera words still choose the move and the speed, over every class", () => {
    for (const p of [coffee, footballer, plain]) {
      for (const cls of classes) {
        const f = letterbox(p, cls)
        const plan = (words: string) => planMotion(f, combineMotionWords(words, undefined), 8)
        const still = plan("keep it still")
        expect(still.from).toEqual(still.to)
        expect(plan("zoom out").from.k).toBeGreaterThan(plan("zoom out").to.k * 1.05)
        expect(plan("zoom in").to.k).toBeGreaterThan(plan("zoom in").from.k * 1.05)
        expect(plan("pan left").to.ax).toBeLessThan(plan("pan left").from.ax - 40)
        expect(plan("pan right").to.ax).toBeGreaterThan(plan("pan right").from.ax + 40)
        expect(plan("tilt down").to.ay).toBeGreaterThan(plan("tilt down").from.ay + 40)
        expect(plan("pan up").to.ay).toBeLessThan(plan("pan up").from.ay)
        // speed: a fast move covers more than a slow one, whatever the class's own pace
        const span = (q: CameraPath) => Math.log(q.to.k / q.from.k)
        expect(span(plan("fast zoom in"))).toBeGreaterThan(span(plan("slow zoom in")) + 0.02)
        expect(pathDistance(plan("fast"), plan("slow")), cls).toBeGreaterThan(5)
        // words beat the class: "pan right" replaces the class's own move
        expect(plan("pan right")).not.toEqual(planMotion(f, noWords, 8))
      }
    }
  })
})

describe("letterbox motion invariants", () => {
  const moves = ["", "zoom in", "zoom out", "pan left", "pan right", "pan up", "pan down", "still"]
  const speeds = ["", "slow", "fast"]

  prop(
    "no frame leaves the base, the photo never enters the caption box, the subject stays in its zone",
    [
      FastCheck.double({ min: 0.81, max: 3.2, noNaN: true }),
      FastCheck.integer({ min: 120, max: 1270 }),
      FastCheck.constantFrom(...classes),
      FastCheck.constantFrom(...moves),
      FastCheck.constantFrom(...speeds),
      FastCheck.boolean(),
      FastCheck.option(
        FastCheck.tuple(
          FastCheck.double({ min: 0, max: 0.95, noNaN: true }),
          FastCheck.double({ min: 0, max: 0.95, noNaN: true }),
          FastCheck.double({ min: 0.03, max: 1, noNaN: true }),
          FastCheck.double({ min: 0.03, max: 1, noNaN: true })
        ),
        { nil: null }
      )
    ],
    ([aspect, height, cls, move, speed, caption, box]) => {
      const photo = { width: Math.max(1, Math.round(height * aspect)), height }
      const subject = box && {
        x: box[0] * photo.width,
        y: box[1] * photo.height,
        width: Math.min(1 - box[0], box[2]) * photo.width,
        height: Math.min(1 - box[1], box[3]) * photo.height
      }
      const f = planFraming(photo, cls, caption, subject)
      if (f.kind !== "contain-blur") return // a subject that fits a 9:16 crop is covered (vision.test.ts)
      if (subject) expect(f.subject).toBeDefined()
      const p = planMotion(f, combineMotionWords(`${speed} ${move}`, undefined), 8)
      const eps = 1e-6
      for (let i = 0; i < 240; i++) {
        const w = cameraAt(p, frameTime(i, 240))
        expect(w.k).toBeLessThanOrEqual(1 + eps)
        expect(w.x0).toBeGreaterThanOrEqual(-eps)
        expect(w.y0).toBeGreaterThanOrEqual(-eps)
        expect(w.x0 + OUTPUT.width / w.k).toBeLessThanOrEqual(f.base.width + eps)
        expect(w.y0 + OUTPUT.height / w.k).toBeLessThanOrEqual(f.base.height + eps)
      }
      if (caption) expect(Math.max(...photoBottoms(f, p))).toBeLessThanOrEqual(f.photoBottomMax!)
      // Without a caption there is no limit, and the photo's lower edge may go anywhere in the base.
      if (!caption) expect(f.photoBottomMax).toBeUndefined()
      expect(subjectStaysInZone(f, p, 240)).toBe(true)
    },
    { fastCheck: { numRuns: 600 } }
  )

  it("moves smoothly: from rest to rest, with no jump and no jerk", () => {
    for (const p of Object.values(photos)) {
      for (const cls of classes) {
        const path = planMotion(letterbox(p, cls), noWords, 8)
        const ws = Array.from({ length: 240 }, (_, i) => cameraAt(path, frameTime(i, 240)))
        // per frame, signed: window left, top, width (base px)
        const v = (
          i: number
        ) => [ws[i + 1].x0 - ws[i].x0, ws[i + 1].y0 - ws[i].y0, OUTPUT.width / ws[i + 1].k - OUTPUT.width / ws[i].k]
        const steps = Array.from({ length: 239 }, (_, i) => v(i))
        for (const c of [0, 1, 2]) {
          expect(Math.abs(steps[0][c]), cls).toBeLessThan(0.05)
          expect(Math.abs(steps[238][c]), cls).toBeLessThan(0.05)
          expect(Math.max(...steps.map((s) => Math.abs(s[c]))), cls).toBeLessThan(2)
          // acceleration stays tiny: the speed changes by < 0.03 px per frame from frame to frame
          for (let i = 1; i < 239; i++) expect(Math.abs(steps[i][c] - steps[i - 1][c]), cls).toBeLessThan(0.03)
        }
      }
    }
  })
})
