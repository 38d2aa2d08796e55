import { imageClasses } from "@pic2video/domain/Requests"
import { describe, expect, it } from "vitest"
import { planFraming } from "../src/framing.ts"
import { planMotion, subjectStaysInZone } from "../src/motion-path.ts"
import { combineMotionWords } from "../src/motion-words.ts"
import { SAFE_BOX } from "../src/output.ts"

describe("subject-aware framing and motion", () => {
  const face = { x: 154, y: 55, width: 146, height: 146 }
  it("a square portrait with a face fills the frame around it instead of being letterboxed", () => {
    expect(planFraming({ width: 512, height: 512 }, "person", true).kind).toBe("contain-blur")
    const f = planFraming({ width: 512, height: 512 }, "person", true, face)
    expect(f.kind).toBe("cover")
    expect(f.crop!.width / f.crop!.height).toBeCloseTo(9 / 16, 3)
    expect(f.crop!.left).toBeLessThanOrEqual(face.x)
    expect(f.crop!.left + f.crop!.width).toBeGreaterThanOrEqual(face.x + face.width)
    // the caption goes beside the subject, inside the safe box
    expect(f.captionBox.top).toBeGreaterThanOrEqual(SAFE_BOX.top)
    expect(f.captionBox.bottom).toBeLessThanOrEqual(SAFE_BOX.bottom)
  })

  it("keeps the letterbox for what cannot fit: a group spread across a panorama", () => {
    const f = planFraming({ width: 3000, height: 1000 }, "person", true, { x: 100, y: 300, width: 2800, height: 300 })
    expect(f.crop).toBeUndefined()
  })

  it("the subject stays in its zone (out of the caption box) for every class and camera word", () => {
    const photos = [
      { size: { width: 512, height: 512 }, subject: face },
      { size: { width: 600, height: 400 }, subject: { x: 166, y: 22, width: 245, height: 240 } },
      { size: { width: 1920, height: 1080 }, subject: { x: 1500, y: 100, width: 200, height: 200 } },
      { size: { width: 900, height: 1600 }, subject: { x: 300, y: 1200, width: 200, height: 200 } }
    ]
    const classes = imageClasses
    const prompts = [undefined, "zoom in", "zoom out", "pan left", "pan right", "pan up", "fast", "slow", "still"]
    for (const p of photos) {
      for (const cls of classes) {
        for (const caption of [true, false]) {
          const f = planFraming(p.size, cls, caption, p.subject)
          if (!f.subject) continue
          for (const prompt of prompts) {
            const path = planMotion(f, combineMotionWords(prompt, undefined), 8)
            expect(subjectStaysInZone(f, path, 200), `${cls} ${prompt} ${JSON.stringify(p.size)}`).toBe(true)
          }
        }
      }
    }
  })

  it("the motion differs per class: a push-in on a face, a sideways drift over a landscape", () => {
    const person = planMotion(
      planFraming({ width: 512, height: 512 }, "person", true, face),
      combineMotionWords(undefined, undefined),
      8
    )
    const landscape = planMotion(
      planFraming({ width: 512, height: 512 }, "landscape_nature", true, face),
      combineMotionWords(undefined, undefined),
      8
    )
    expect(person.to.k).toBeGreaterThan(person.from.k * 1.03)
    expect(Math.abs(landscape.to.ax - landscape.from.ax)).toBeGreaterThan(Math.abs(person.to.ax - person.from.ax) + 20)
  })
})
