import { describe, expect, it } from "vitest"
import { ANIMAL, classify, type Detections, type SceneStats } from "../src/classify.ts"
import { SCENE_CLASSES, type SceneModel } from "../src/scene-model.ts"

const size = { width: 640, height: 480 }
const photo = { width: 1280, height: 960 }
// An open, green scene: what the rules and the scene model read as a landscape.
const field: SceneStats = {
  skyTop: 0.5,
  green: 0.5,
  plainBorder: 0,
  figure: null,
  figureShare: 0,
  vegetation: 0.5,
  edges: 0.2,
  rectilinear: 0.27,
  vertical: 0.05,
  spread: 40
}
const cow = (score: number, box: readonly [number, number, number, number]) => ({ label: "cow", score, box })
/** A scene model sure of one class whatever the features (how the shipped one took a cow in a field). */
const sure = (c: (typeof SCENE_CLASSES)[number]): SceneModel => ({
  classes: SCENE_CLASSES,
  mean: [0],
  scale: [1],
  weights: SCENE_CLASSES.map(() => [0]),
  bias: SCENE_CLASSES.map((k) => (k === c ? 5 : 0)),
  ruleWeight: 0.3
})
const features = { pooled: [0] }

describe("animals are `other`", () => {
  it("a cow the detector is sure of is `other` however sure the scene model is of a landscape or a product, the cow its subject (in the photo's pixels)", () => {
    expect(classify({ faces: [], objects: [], features }, field, size, photo, null).image_class).toBe(
      "landscape_nature"
    )
    for (const model of [sure("landscape_nature"), sure("product_object")]) {
      const r = classify({ faces: [], objects: [cow(0.82, [200, 200, 200, 150])], features }, field, size, photo, model)
      expect(r.image_class).toBe("other")
      expect(r.subject).toEqual({ x: 400, y: 400, width: 400, height: 300 })
    }
    // the same model without the cow: what it says goes
    expect(classify({ faces: [], objects: [], features }, field, size, photo, sure("product_object")).image_class).toBe(
      "product_object"
    )
  })

  it("animals too small together (a bird speck over a lake, sheep dotting a hill) or too unsure leave the landscape a landscape", () => {
    const specks: Detections = {
      faces: [],
      objects: [cow(0.44, [10, 10, 40, 30]), cow(0.44, [100, 10, 40, 30]), {
        label: "bird",
        score: 0.41,
        box: [300, 50, 40, 30]
      }]
    }
    expect((3 * 40 * 30) / (640 * 480)).toBeLessThan(ANIMAL.share)
    expect(classify(specks, field, size, photo, null).image_class).toBe("landscape_nature")
    const unsure: Detections = { faces: [], objects: [cow(ANIMAL.score - 0.01, [200, 200, 200, 150])] }
    expect(classify(unsure, field, size, photo, null).image_class).toBe("landscape_nature")
    // several animals that only together cover the share count together, their union the subject
    const herd: Detections = { faces: [], objects: [cow(0.5, [100, 300, 100, 80]), cow(0.5, [400, 300, 100, 80])] }
    expect((100 * 80) / (640 * 480)).toBeLessThan(ANIMAL.share)
    expect((2 * 100 * 80) / (640 * 480)).toBeGreaterThanOrEqual(ANIMAL.share)
    expect(classify(herd, field, size, photo, null).subject).toEqual({ x: 200, y: 600, width: 800, height: 160 })
  })

  it("a person with a dog stays a person", () => {
    const d: Detections = {
      faces: [{ score: 0.9, box: [300, 60, 60, 60] }],
      objects: [{ label: "person", score: 0.8, box: [260, 40, 160, 400] }, {
        label: "dog",
        score: 0.9,
        box: [60, 240, 200, 200]
      }]
    }
    expect(classify(d, field, size, photo, null).image_class).toBe("person")
  })
})
