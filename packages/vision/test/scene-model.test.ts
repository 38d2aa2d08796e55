import type { ImageClass } from "@pic2video/domain/Requests"
import { describe, expect, it } from "vitest"
import { classify, classifyByRules, type Detections, type Inference } from "../src/classify.ts"
import {
  classWeights,
  fitSceneModel,
  fuse,
  SCENE_CLASSES,
  SCENE_MODEL,
  sceneProbabilities
} from "../src/scene-model.ts"
import { plainStats, size } from "./support.ts"

// Four features; each scene class lives around its own direction, `other` around a fifth mix.
const DIRECTIONS: Record<string, ReadonlyArray<number>> = {
  doll_figurine: [1, 0, 0, 0],
  landscape_nature: [0, 1, 0, 0],
  product_object: [0, 0, 1, 0],
  interior_space: [0, 0, 0, 1],
  other: [1, 1, -1, -1]
}
const sample = (label: ImageClass, jitter: number) => ({
  label,
  features: { pooled: DIRECTIONS[label].map((x, i) => x + jitter * (i + 1) * 0.05) }
})
const training = SCENE_CLASSES.flatMap((c) => [sample(c, 1), sample(c, -1), sample(c, 0.5)])
const model = fitSceneModel(training)
const ruled = (image_class: ImageClass, confidence = 0.6): Inference => ({
  image_class,
  confidence,
  subject: { x: 1, y: 2, width: 3, height: 4 }
})

describe("scene model", () => {
  it("fits one mean per scene class and puts a photo near its class", () => {
    expect(model.classes).toEqual(SCENE_CLASSES)
    expect(model.weights).toHaveLength(SCENE_CLASSES.length)
    for (const c of SCENE_CLASSES) {
      const probs = sceneProbabilities(model, sample(c, 0.2).features)
      const best = probs.reduce((a, b) => (b.p > a.p ? b : a))
      expect(best.image_class).toBe(c)
      expect(probs.reduce((s, x) => s + x.p, 0)).toBeCloseTo(1, 6)
    }
  })

  it("weighs every class the same, however many photos it has", () => {
    // class 0: one photo, class 1: three
    const w = classWeights([1, 0, 1, 1], 2)
    expect(w).toEqual([2 / 3, 2, 2 / 3, 2 / 3])
    expect(w.reduce((a, b) => a + b, 0)).toBeCloseTo(4, 12)
    // one doll among ten `other` photos: a photo halfway between the two is not swallowed by the
    // crowd (fitted with every photo weighing the same, `other` took it with p 0.72)
    const lopsided = [
      sample("doll_figurine", 0),
      ...[-3, -2, -1, 0, 1, 2, 3, 4, 5, 6].map((j) => sample("other", j / 3)),
      ...(["landscape_nature", "product_object", "interior_space"] as const).flatMap((
        c
      ) => [sample(c, 1), sample(c, -1)])
    ]
    const halfway = { pooled: DIRECTIONS.doll_figurine.map((x, i) => (x + DIRECTIONS.other[i]) / 2) }
    const p = Object.fromEntries(sceneProbabilities(fitSceneModel(lopsided), halfway).map((x) => [x.image_class, x.p]))
    expect(p.doll_figurine).toBeGreaterThan(p.other)
  })

  it("refuses to fit without a photo of every class", () => {
    expect(() => fitSceneModel(training.filter((s) => s.label !== "doll_figurine"))).toThrow(/doll_figurine/)
  })

  it("overturns the rules only when sure, keeps their subject box (none for a landscape or a room), and never touches a person", () => {
    const landscape = sample("landscape_nature", 0).features
    // the rules fell back to `other`; the model is sure it is a landscape
    const r = fuse(ruled("other", 0.5), landscape, model)
    expect(r.image_class).toBe("landscape_nature")
    expect(r.confidence).toBeGreaterThan(0.6)
    // a landscape has no single subject; a figurine keeps the detectors' box
    expect(r.subject).toBeNull()
    const doll = fuse(ruled("product_object", 0.5), sample("doll_figurine", 0).features, model)
    expect(doll.image_class).toBe("doll_figurine")
    expect(doll.subject).toEqual({ x: 1, y: 2, width: 3, height: 4 })
    // the rules and the model agree: the rules' answer unchanged
    expect(fuse(ruled("landscape_nature", 0.7), landscape, model)).toEqual(ruled("landscape_nature", 0.7))
    // a person stays a person
    expect(fuse(ruled("person", 0.9), landscape, model).image_class).toBe("person")
    // an undecided model (halfway between two classes) leaves the rules' class
    const between = { pooled: DIRECTIONS.product_object.map((x, i) => (x + DIRECTIONS.interior_space[i]) / 2) }
    expect(fuse(ruled("product_object"), between, model).image_class).toBe("product_object")
  })

  it("without features (or of another length, or no usable model) the rules decide", () => {
    expect(fuse(ruled("other", 0.5), undefined, model).image_class).toBe("other")
    expect(fuse(ruled("other", 0.5), { pooled: [0, 1, 0] }, model).image_class).toBe("other")
    expect(fuse(ruled("other", 0.5), sample("landscape_nature", 0).features, null).image_class).toBe("other")
    // a stale weights file (other shapes) is ignored, not a failed inference
    expect(
      fuse(ruled("other", 0.5), sample("landscape_nature", 0).features, { ...model, weights: model.weights.slice(1) })
        .image_class
    ).toBe("other")
  })

  it("classify = the rules, then the model; the shipped weights match the detector's 720 features", () => {
    const d: Detections = { faces: [], objects: [], features: sample("interior_space", 0).features }
    expect(classifyByRules(d, plainStats, size, size).image_class).toBe("other")
    expect(classify(d, plainStats, size, size, model).image_class).toBe("interior_space")
    expect(classify(d, plainStats, size, size, null).image_class).toBe("other")
    expect(SCENE_MODEL).not.toBeNull()
    expect(SCENE_MODEL!.mean).toHaveLength(720)
    expect(SCENE_MODEL!.weights.every((w) => w.length === 720)).toBe(true)
  })
})
