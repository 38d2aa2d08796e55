import { Effect } from "effect"
import * as fc from "fast-check"
import { mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  type BodyPose,
  classify,
  classifyByRules,
  type Detections,
  POSE_PARTS,
  poseMatters,
  type PosePart,
  type SceneStats,
  type Subject
} from "../src/classify.ts"
import { makeVision, MODEL_NAME, MODEL_NAME_WITHOUT_POSE } from "../src/Vision.ts"

const size = { width: 640, height: 640 }
const stats = (plainBorder: number): SceneStats => ({
  skyTop: 0,
  green: 0,
  plainBorder,
  figure: [150, 40, 340, 600],
  figureShare: 0.3,
  vegetation: 0,
  edges: 0.1,
  rectilinear: 0.3,
  vertical: 0.1,
  spread: 40
})
const rules = (d: Detections, plain = 0) => classifyByRules(d, stats(plain), size, size)

/** A pose from part → [x, y, score]; the parts not named are unseen (score 0.05, at the frame's centre). */
const pose = (seen: Partial<Record<PosePart, readonly [number, number, number]>>): BodyPose => ({
  keypoints: POSE_PARTS.map((part) => {
    const [x, y, score] = seen[part] ?? [320, 320, 0.05]
    return { part, x, y, score }
  })
})
const holds = (s: Subject | null, x: number, y: number) =>
  s !== null && x >= s.x && x <= s.x + s.width && y >= s.y && y <= s.y + s.height

// A face 100 px wide centred on (320, 150) (big enough for the plain-backdrop rule); the head's keypoints on it.
const face = (score: number) => ({ score, box: [270, 100, 100, 100] as const })
const head = {
  nose: [320, 160, 0.6],
  leftEye: [340, 140, 0.6],
  rightEye: [300, 140, 0.6],
  leftEar: [365, 150, 0.4],
  rightEar: [275, 150, 0.4]
} as const
/** Shoulders below the face, `span` face widths apart, each scored `score`. */
const shoulders = (span: number, score: number) => ({
  leftShoulder: [320 + span * 50, 260, score],
  rightShoulder: [320 - span * 50, 260, score]
} as const)

describe("the person rule's body pose", () => {
  it("a half-believed face on a plain backdrop (a welder behind his visor) is a person when the pose stands a body under it, and the face is in the subject", () => {
    const welder = (body?: BodyPose): Detections => ({ faces: [face(0.53)], objects: [], ...(body ? { body } : {}) })
    // without the pose: the plain-backdrop rule takes the half-believed face for a doll's
    expect(rules(welder(), 0.87).image_class).toBe("doll_figurine")
    const r = rules(welder(pose({ ...head, ...shoulders(1.3, 0.59) })), 0.87)
    expect(r.image_class).toBe("person")
    expect(holds(r.subject, 320, 150)).toBe(true)
  })

  it("a believed face with shoulders just seen at a human span is a person where CenterNet sees no one (men bent over an engine)", () => {
    const mechanic = (s: number, span: number): Detections => ({
      faces: [face(0.64)],
      objects: [],
      body: pose({ ...head, ...shoulders(span, s) })
    })
    expect(rules(mechanic(0.39, 1.1)).image_class).toBe("person")
    // shoulders too unsure, or as narrow as a moulded figure's, or above the face: the face is a doll's
    expect(rules(mechanic(0.3, 1.1)).image_class).toBe("doll_figurine")
    expect(rules(mechanic(0.6, 0.6)).image_class).toBe("doll_figurine")
    const raised: Detections = {
      faces: [face(0.64)],
      objects: [],
      body: pose({ ...head, leftShoulder: [375, 110, 0.6], rightShoulder: [265, 110, 0.6] })
    }
    expect(rules(raised).image_class).toBe("doll_figurine")
    // a head the pose puts elsewhere does not vouch for this face
    const elsewhere: Detections = {
      faces: [face(0.64)],
      objects: [],
      body: pose({ nose: [500, 400, 0.7], leftEye: [510, 390, 0.7], rightEye: [490, 390, 0.7], ...shoulders(1.1, 0.6) })
    }
    expect(rules(elsewhere).image_class).toBe("doll_figurine")
  })

  it("a doll's skeleton-like pose on a plain backdrop stays a doll unless its shoulders are surer than a figurine's (0.45)", () => {
    const ballerina: Detections = { faces: [face(0.55)], objects: [], body: pose({ ...head, ...shoulders(0.9, 0.45) }) }
    expect(rules(ballerina, 0.85).image_class).toBe("doll_figurine")
    // a teddy bear that fills the frame is one whatever the pose says
    const teddy: Detections = {
      faces: [face(0.41)],
      objects: [{ label: "teddy bear", score: 0.66, box: [100, 50, 440, 560] }],
      body: pose({ ...head, ...shoulders(1.5, 0.47) })
    }
    expect(rules(teddy).image_class).toBe("doll_figurine")
  })

  it("a body seen from behind inside a faint CenterNet person is a person, with its head in the subject box", () => {
    // turned away: no face, the nose and eyes unseen, the ears faint; shoulders and hips seen
    const back = pose({
      leftEar: [330, 130, 0.25],
      rightEar: [290, 130, 0.25],
      leftShoulder: [360, 190, 0.4],
      rightShoulder: [260, 190, 0.35],
      leftHip: [340, 360, 0.3],
      rightHip: [280, 360, 0.3]
    })
    const crew = (body?: BodyPose): Detections => ({
      faces: [],
      objects: [{ label: "person", score: 0.28, box: [220, 90, 180, 520] }],
      ...(body ? { body } : {})
    })
    expect(rules(crew()).image_class).not.toBe("person")
    const r = rules(crew(back))
    expect(r.image_class).toBe("person")
    // the head (about 310, 130) is in the box; the hips are not
    expect(holds(r.subject, 310, 130)).toBe(true)
    expect(holds(r.subject, 310, 360)).toBe(false)
    // the same torso where no person is detected (a coat on a hanger, a mannequin's shadow) is not one
    expect(rules({ faces: [], objects: [], body: back }).image_class).not.toBe("person")
    // nor a torso the pose is unsure of
    const faint = pose({
      leftShoulder: [360, 190, 0.15],
      rightShoulder: [260, 190, 0.15],
      leftHip: [340, 360, 0.1],
      rightHip: [280, 360, 0.1]
    })
    expect(rules(crew(faint)).image_class).not.toBe("person")
  })

  it("a believed face with no body around it stays a figurine even when a faint person and a torso are found elsewhere", () => {
    const statue: Detections = {
      faces: [{ score: 0.8, box: [60, 60, 50, 50] }],
      objects: [{ label: "person", score: 0.28, box: [400, 100, 180, 500] }],
      body: pose({
        leftShoulder: [520, 190, 0.4],
        rightShoulder: [440, 190, 0.4],
        leftHip: [510, 360, 0.3],
        rightHip: [450, 360, 0.3]
      })
    }
    expect(rules(statue).image_class).toBe("doll_figurine")
  })
})

describe("the vision model's body pose", () => {
  it("MoveNet runs beside the detectors: the astronaut's nose and shoulders are where she is", async () => {
    const r = await Effect.runPromise(
      makeVision().infer(new URL("../../../test/fixtures/astronaut.png", import.meta.url).pathname)
    )
    const body = r.evidence.detections.body!
    expect(body.keypoints).toHaveLength(17)
    const at = (part: string) => body.keypoints.find((k) => k.part === part)!
    // the fixture is 512 px, the analysis raster 640: the face centre (227, 128) is at about (284, 160)
    expect(Math.abs(at("nose").x - 284)).toBeLessThan(40)
    expect(Math.abs(at("nose").y - 160)).toBeLessThan(40)
    expect(at("nose").score).toBeGreaterThan(0.3)
    expect(at("leftShoulder").y).toBeGreaterThan(at("nose").y)
  }, 60_000)

  it(
    "a model folder without MoveNet's files gives detections with no body, stamped with the name of what ran",
    async () => {
      const models = join(dirname(createRequire(import.meta.url).resolve("@vladmandic/human")), "..", "models")
      const detectorsOnly = mkdtempSync(join(tmpdir(), "vision-no-pose-"))
      try {
        for (const f of ["blazeface.json", "blazeface.bin", "centernet.json", "centernet.bin"]) {
          symlinkSync(
            join(models, f),
            join(detectorsOnly, f)
          )
        }
        const photo = new URL("../../../test/fixtures/astronaut.png", import.meta.url).pathname
        const without = await Effect.runPromise(makeVision({ modelDir: detectorsOnly }).infer(photo))
        expect(without.evidence.detections.body).toBeUndefined()
        expect(without.model).toBe(MODEL_NAME_WITHOUT_POSE)
        expect(without.image_class).toBe("person")
        const withPose = await Effect.runPromise(makeVision({ modelDir: models }).infer(photo))
        expect(withPose.model).toBe(MODEL_NAME)
      } finally {
        rmSync(detectorsOnly, { recursive: true, force: true })
      }
    },
    60_000
  )

  describe("where the worker skips the pose (poseMatters false), no pose could have changed the call", () => {
    // Scores at and just below the thresholds poseMatters reads (POSE_RULE.face 0.5, BODY 0.25), and the
    // rules' own (BELIEVED_FACE 0.6, a confident face 0.75), or anywhere in the detectors' range.
    const score = (min: number) =>
      fc.oneof(
        fc.constantFrom(0.2499, 0.25, 0.4999, 0.5, 0.5999, 0.6, 0.7499, 0.75).filter((v) => v >= min),
        fc.double({ min, max: 1, noNaN: true })
      )
    const box = fc.tuple(
      fc.double({ min: -700, max: 640, noNaN: true }),
      fc.double({ min: -700, max: 640, noNaN: true }),
      fc.double({ min: 1, max: 700, noNaN: true }),
      fc.double({ min: 1, max: 700, noNaN: true })
    )
    const label = fc.constantFrom(
      "person",
      "person",
      "chair",
      "teddy bear",
      "dog",
      "cup",
      "couch",
      "car",
      "book",
      "bed"
    )
    const detections = fc.record({
      faces: fc.array(fc.record({ score: score(0.3), box }), { maxLength: 3 }),
      objects: fc.array(fc.record({ label, score: score(0.2), box }), { maxLength: 5 })
    })
    type Part = readonly [x: number, y: number, score: number]
    const unit = fc.double({ min: 0, max: 1, noNaN: true })
    const anywhere = fc.tuple(
      fc.double({ min: 0, max: 640, noNaN: true }),
      fc.double({ min: 0, max: 640, noNaN: true }),
      unit
    )
    const bodyOf = (parts: ReadonlyArray<Part>): BodyPose => ({
      keypoints: POSE_PARTS.map((part, i) => ({ part, x: parts[i][0], y: parts[i][1], score: parts[i][2] }))
    })
    const scattered = fc.array(anywhere, { minLength: 17, maxLength: 17 }).map(bodyOf)
    // what posedFace looks for: the head's keypoints on the face, shoulders below it 0.7–2 face widths apart
    const standingUnder = ([x, y, w, h]: readonly [number, number, number, number]) =>
      fc.tuple(
        fc.array(unit, { minLength: 10, maxLength: 10 }),
        fc.double({ min: 0.7, max: 2, noNaN: true }),
        fc.double({ min: 0.34, max: 1, noNaN: true }),
        fc.array(anywhere, { minLength: 17, maxLength: 17 })
      )
        .map(([u, span, sure, rest]) => {
          const parts: Array<Part> = [...rest]
          for (let i = 0; i < 5; i++) parts[i] = [x + u[2 * i] * w, y + u[2 * i + 1] * h, 0.6]
          parts[5] = [x + w / 2 + (span * w) / 2, y + 1.5 * h, sure]
          parts[6] = [x + w / 2 - (span * w) / 2, y + 1.5 * h, sure]
          return bodyOf(parts)
        })
    // what torsoInPerson looks for: shoulders and hips inside the person's box
    const torsoIn = ([x, y, w, h]: readonly [number, number, number, number]) =>
      fc.tuple(
        fc.array(unit, { minLength: 8, maxLength: 8 }),
        fc.double({ min: 0.2, max: 1, noNaN: true }),
        fc.array(anywhere, { minLength: 17, maxLength: 17 })
      )
        .map(([u, sure, rest]) => {
          const parts: Array<Part> = [...rest]
          for (const [j, i] of [5, 6, 11, 12].entries()) parts[i] = [x + u[2 * j] * w, y + u[2 * j + 1] * h, sure]
          return bodyOf(parts)
        })
    const cases = detections.chain((d) => {
      const bodies = [
        scattered,
        ...d.faces.map((f) => standingUnder(f.box)),
        ...d.objects.filter((o) => o.label === "person").map((o) => torsoIn(o.box))
      ]
      return fc.tuple(fc.constant(d), fc.oneof(...bodies), unit)
    })

    it("any body — scattered, standing under a face, or a torso inside a person — gives the same inference, by the rules and by classify", () => {
      let skipped = 0
      let changedWhereItMatters = 0
      fc.assert(
        fc.property(cases, ([d, b, plain]) => {
          const withBody: Detections = { ...d, body: b }
          if (poseMatters(d)) {
            if (rules(withBody, plain).image_class !== rules(d, plain).image_class) changedWhereItMatters++
            return
          }
          skipped++
          expect(rules(withBody, plain)).toEqual(rules(d, plain))
          expect(classify(withBody, stats(plain), size, size)).toEqual(classify(d, stats(plain), size, size))
        }),
        { numRuns: 3000 }
      )
      // the generator reaches the case the property is about, and its bodies do change calls where the pose is read
      expect(skipped).toBeGreaterThan(300)
      expect(changedWhereItMatters).toBeGreaterThan(30)
    })

    it("at the thresholds: a face of 0.5 with a body under it is a person, one of 0.4999 is skipped and is not; the same for a person box of 0.25 and 0.2499", () => {
      const standing = pose({ ...head, ...shoulders(1.1, 0.5) })
      const atFace = (s: number): Detections => ({ faces: [face(s)], objects: [] })
      expect(poseMatters(atFace(0.5))).toBe(true)
      expect(rules({ ...atFace(0.5), body: standing }).image_class).toBe("person")
      expect(rules(atFace(0.5)).image_class).not.toBe("person")
      expect(poseMatters(atFace(0.4999))).toBe(false)
      expect(rules({ ...atFace(0.4999), body: standing })).toEqual(rules(atFace(0.4999)))
      // a person seen from behind, faintly: no face, a torso inside the box
      const torso = pose({
        leftShoulder: [380, 250, 0.5],
        rightShoulder: [260, 250, 0.5],
        leftHip: [360, 420, 0.4],
        rightHip: [280, 420, 0.4]
      })
      const atPerson = (s: number): Detections => ({
        faces: [],
        objects: [{ label: "person", score: s, box: [200, 120, 240, 500] }]
      })
      expect(poseMatters(atPerson(0.25))).toBe(true)
      expect(rules({ ...atPerson(0.25), body: torso }).image_class).toBe("person")
      expect(rules(atPerson(0.25)).image_class).not.toBe("person")
      expect(poseMatters(atPerson(0.2499))).toBe(false)
      expect(rules({ ...atPerson(0.2499), body: torso })).toEqual(rules(atPerson(0.2499)))
    })
  })

  it(
    "the worker reads the pose only where it can matter, and the model name still says the pose model was loaded",
    async () => {
      // a photo with no face nor person: MoveNet is loaded but skipped for it, so no body in the detections
      const r = await Effect.runPromise(
        makeVision().infer(new URL("../../../test/fixtures/coffee.png", import.meta.url).pathname)
      )
      expect(poseMatters(r.evidence.detections)).toBe(false)
      expect(r.evidence.detections.body).toBeUndefined()
      expect(r.model).toBe(MODEL_NAME)
    },
    60_000
  )
})
