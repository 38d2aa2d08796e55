import { describe, expect, it } from "@effect/vitest"
import { planFraming } from "../src/framing.ts"
import { cameraAt, planMotion } from "../src/motion-path.ts"
import { SAFE_BOX } from "../src/output.ts"

describe("framing", () => {
  it("covers portraits, pans wide high-resolution scenes, and contains the rest on a blur", () => {
    expect(planFraming({ width: 900, height: 1600 }, "person", true).kind).toBe("cover")
    expect(planFraming({ width: 427, height: 640 }, undefined, true).kind).toBe("cover")
    expect(planFraming({ width: 3000, height: 1400 }, "landscape_nature", true).kind).toBe("pan")
    // Too small to pan at 1920 px height without a blurry upscale:
    expect(planFraming({ width: 640, height: 427 }, "landscape_nature", true).kind).toBe("contain-blur")
    // A product is shown whole rather than travelled across:
    expect(planFraming({ width: 3000, height: 1400 }, "product_object", true).kind).toBe("contain-blur")
    expect(planFraming({ width: 512, height: 512 }, "person", false).kind).toBe("contain-blur")
  })

  it("puts the caption band below the photo at its deepest zoom, inside the safe zone", () => {
    for (
      const photo of [{ width: 640, height: 427 }, { width: 512, height: 512 }, { width: 1000, height: 872 }, {
        width: 3000,
        height: 1000
      }]
    ) {
      const f = planFraming(photo, "product_object", true)
      expect(f.kind).toBe("contain-blur")
      expect(f.captionBox.top).toBeGreaterThanOrEqual(SAFE_BOX.top)
      expect(f.captionBox.bottom).toBe(SAFE_BOX.bottom)
      expect(f.captionBox.bottom - f.captionBox.top).toBeGreaterThanOrEqual(200)
      // Any motion the framing allows keeps the photo's lower edge above the band.
      for (const move of ["zoom-in", "zoom-out", "pan-left", "pan-right", "pan-up", "pan-down", "still"] as const) {
        const path = planMotion(f, { move, speed: "fast" }, 8)
        for (let i = 0; i <= 20; i++) {
          const w = cameraAt(path, i / 20)
          const photoBottomOut = (f.photoRect.top + f.photoRect.height - w.y0) * w.k
          expect(photoBottomOut).toBeLessThanOrEqual(f.captionBox.top)
        }
      }
    }
  })

  it("around a subject near the crop's top or bottom, the caption band stays inside the safe zone", () => {
    // A wide photo with a small face at the very top, then at the very bottom: the 9:16 crop fills the
    // frame and the band goes on the free side — never above SAFE_BOX.top or below SAFE_BOX.bottom.
    for (const subject of [{ x: 1000, y: 0, width: 60, height: 60 }, { x: 1000, y: 900, width: 60, height: 100 }]) {
      const f = planFraming({ width: 2600, height: 1000 }, "person", true, subject)
      expect(f.kind).toBe("cover")
      expect(f.subject).toBeDefined()
      expect(f.captionBox.top).toBeGreaterThanOrEqual(SAFE_BOX.top)
      expect(f.captionBox.bottom).toBeLessThanOrEqual(SAFE_BOX.bottom)
      expect(f.captionBox.bottom - f.captionBox.top).toBeGreaterThanOrEqual(240)
    }
  })

  it("a subject box with a coordinate that is not a number is ignored, not framed around", () => {
    const f = planFraming({ width: 2600, height: 1000 }, "person", true, {
      x: Number.NaN,
      y: 10,
      width: 60,
      height: 60
    })
    expect(f.crop).toBeUndefined()
    expect(Number.isFinite(f.photoRect.left)).toBe(true)
  })

  it("is a pure function of size, class and caption presence", () => {
    expect(planFraming({ width: 640, height: 427 }, undefined, true)).toEqual(
      planFraming({ width: 640, height: 427 }, "other", true)
    )
  })
})
