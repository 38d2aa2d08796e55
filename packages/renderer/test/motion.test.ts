import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { prop } from "../../../test/support/prop.ts"
import { ImageClass } from "../src/CaptionSpec.ts"
import { planFraming } from "../src/framing.ts"
import { cameraAt, easeInOut, frameTime, planMotion } from "../src/motion-path.ts"
import { combineMotionWords, parseMotionWords } from "../src/motion-words.ts"
import { OUTPUT } from "../src/output.ts"

describe("motion words", () => {
  it("recognises plain camera words and ignores the rest", () => {
    expect(parseMotionWords("A slow zoom in on her face, cinematic, 4k")).toEqual({ move: "zoom-in", speed: "slow" })
    expect(parseMotionWords("pan to the left quickly")).toEqual({ move: "pan-left", speed: "fast" })
    expect(parseMotionWords("Zoom out")).toEqual({ move: "zoom-out", speed: undefined })
    expect(parseMotionWords("tilt up")).toEqual({ move: "pan-up", speed: undefined })
    expect(parseMotionWords("keep it still")).toEqual({ move: "still", speed: undefined })
    expect(parseMotionWords("make it magical and dreamy")).toEqual({ move: undefined, speed: undefined })
    expect(parseMotionWords(undefined)).toEqual({ move: undefined, speed: undefined })
  })
  it("takes the first move named, and render_prompt over sub_prompt", () => {
    expect(parseMotionWords("pan right then zoom in").move).toBe("pan-right")
    expect(combineMotionWords("zoom out", "pan left slowly")).toEqual({ move: "zoom-out", speed: "slow" })
    expect(combineMotionWords(undefined, "pan down")).toEqual({ move: "pan-down", speed: undefined })
  })
})

describe("camera path", () => {
  it("eases in and out and lands exactly on its keys", () => {
    expect(easeInOut(0)).toBe(0)
    expect(easeInOut(1)).toBe(1)
    expect(easeInOut(0.5)).toBeCloseTo(0.5)
    expect(frameTime(0, 240)).toBe(0)
    expect(frameTime(239, 240)).toBe(1)
    const f = planFraming({ width: 900, height: 1600 }, "person", true)
    const p = planMotion(f, { move: "zoom-in", speed: undefined }, 8)
    expect(cameraAt(p, 0).k).toBeCloseTo(p.from.k, 12)
    expect(cameraAt(p, 1).k).toBeCloseTo(p.to.k, 12)
  })

  it("moves in subpixel steps, never stalls mid-move, never jumps", () => {
    const f = planFraming({ width: 900, height: 1600 }, "other", false)
    const p = planMotion(f, { move: "pan-right", speed: "slow" }, 8)
    const xs = Array.from({ length: 240 }, (_, i) => cameraAt(p, frameTime(i, 240)).x0)
    const steps = xs.slice(1).map((x, i) => x - xs[i])
    expect(steps.every((s) => s >= 0)).toBe(true)
    expect(Math.max(...steps)).toBeLessThan(2)
    // Fractional positions: a whole-pixel path would have only integer x0s.
    expect(xs.filter((x) => Math.abs(x - Math.round(x)) > 0.01).length).toBeGreaterThan(200)
  })

  const moves = ["zoom in", "zoom out", "pan left", "pan right", "pan up", "pan down", "still", "", "dreamy"]
  const speeds = ["slow", "fast", ""]

  prop(
    "stays inside the prepared base (no black edges) and never upsamples, for any shape and words",
    [
      FastCheck.double({ min: 0.15, max: 6, noNaN: true }),
      FastCheck.integer({ min: 64, max: 8000 }),
      FastCheck.constantFrom(...ImageClass.literals, undefined),
      FastCheck.constantFrom(...moves),
      FastCheck.constantFrom(...speeds),
      FastCheck.boolean(),
      FastCheck.double({ min: 1, max: 30, noNaN: true })
    ],
    ([aspect, height, cls, move, speed, hasCaption, seconds]) => {
      const photo = { width: Math.max(1, Math.round(height * aspect)), height }
      const f = planFraming(photo, cls, hasCaption)
      const p = planMotion(f, combineMotionWords(`${speed} ${move}`, undefined), seconds)
      const eps = 1e-6
      for (let i = 0; i <= 60; i++) {
        const w = cameraAt(p, i / 60)
        expect(w.k).toBeLessThanOrEqual(1 + eps)
        expect(w.x0).toBeGreaterThanOrEqual(-eps)
        expect(w.y0).toBeGreaterThanOrEqual(-eps)
        expect(w.x0 + OUTPUT.width / w.k).toBeLessThanOrEqual(f.base.width + eps)
        expect(w.y0 + OUTPUT.height / w.k).toBeLessThanOrEqual(f.base.height + eps)
      }
    },
    { fastCheck: { numRuns: 400 } }
  )
})
