import { Effect } from "effect"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import { classify, type Detections, framingInputs, sceneStats } from "../src/classify.ts"
import { makeVision } from "../src/Vision.ts"
import { plainStats, size } from "./support.ts"

const detections = (d: Partial<Detections>): Detections => ({ faces: [], objects: [], ...d })

describe("classify", () => {
  it("a confident face is a person, and the subject box is the face", () => {
    const r = classify(
      detections({
        faces: [{ score: 0.9, box: [200, 80, 150, 150] }],
        objects: [{ label: "person", score: 0.6, box: [20, 20, 500, 600] }]
      }),
      plainStats,
      size,
      { width: 1280, height: 1280 }
    )
    expect(r.image_class).toBe("person")
    expect(r.subject).toEqual({ x: 400, y: 160, width: 300, height: 300 })
  })

  it("a believed face with no body around it is a doll or figurine; in a furnished room it is a portrait on the wall", () => {
    const painted = detections({
      faces: [{ score: 0.8, box: [260, 100, 80, 80] }],
      objects: [{ label: "vase", score: 0.3, box: [250, 180, 100, 300] }]
    })
    const doll = classify(painted, plainStats, size, size)
    expect(doll.image_class).toBe("doll_figurine")
    expect(doll.subject).toEqual({ x: 260, y: 100, width: 80, height: 80 })
    // the same face with a person detected around it is a person
    const real = detections({
      faces: [{ score: 0.8, box: [260, 100, 80, 80] }],
      objects: [{ label: "person", score: 0.5, box: [180, 60, 260, 560] }]
    })
    expect(classify(real, plainStats, size, size).image_class).toBe("person")
    // a close-up that is nearly all face stays a person even without a body
    expect(
      classify(detections({ faces: [{ score: 0.9, box: [100, 100, 400, 400] }] }), plainStats, size, size).image_class
    ).toBe("person")
    const salon = detections({
      faces: [{ score: 0.7, box: [300, 100, 30, 30] }],
      objects: [{ label: "chair", score: 0.5, box: [50, 350, 120, 150] }, {
        label: "couch",
        score: 0.45,
        box: [250, 380, 200, 100]
      }]
    })
    expect(classify(salon, plainStats, size, size).image_class).toBe("interior_space")
  })

  it("a faint body around a believed face makes a person; fainter than the detector's 0.25, the face is a painted one", () => {
    // a soldier half hidden by his rifle: a confident face, CenterNet's body only 0.26
    const soldier = (body: number) =>
      detections({
        faces: [{ score: 0.89, box: [180, 67, 69, 70] }],
        objects: [{ label: "person", score: body, box: [120, 30, 300, 600] }]
      })
    const r = classify(soldier(0.26), plainStats, size, size)
    expect(r.image_class).toBe("person")
    expect(r.subject).toEqual({ x: 180, y: 67, width: 69, height: 70 })
    expect(classify(soldier(0.22), plainStats, size, size).image_class).toBe("doll_figurine")
    // a worker in goggles: the face only believed (0.67), a body around it → person; without the body it is not
    const worker = detections({
      faces: [{ score: 0.67, box: [155, 53, 50, 50] }],
      objects: [{ label: "person", score: 0.33, box: [60, 20, 400, 600] }]
    })
    expect(classify(worker, plainStats, size, size).image_class).toBe("person")
    expect(
      classify(detections({ faces: [{ score: 0.67, box: [155, 53, 50, 50] }] }), plainStats, size, size).image_class
    ).not.toBe("person")
    expect(
      classify(
        detections({
          faces: [{ score: 0.55, box: [155, 53, 50, 50] }],
          objects: [{ label: "person", score: 0.33, box: [60, 20, 400, 600] }]
        }),
        plainStats,
        size,
        size
      ).image_class
    ).not.toBe("person")
  })

  it("a face inside an animal is the animal's: not a person", () => {
    const r = classify(
      detections({
        faces: [{ score: 0.85, box: [40, 0, 400, 400] }],
        objects: [{ label: "cat", score: 0.5, box: [0, 0, 600, 420] }]
      }),
      plainStats,
      size,
      size
    )
    expect(r.image_class).toBe("other")
  })

  it("teddy bears are figurines, fittings make an interior, one dominant thing is a product", () => {
    expect(
      classify(
        detections({ objects: [{ label: "teddy bear", score: 0.5, box: [100, 100, 300, 300] }] }),
        plainStats,
        size,
        size
      ).image_class
    ).toBe("doll_figurine")
    expect(
      classify(
        detections({
          objects: [{ label: "couch", score: 0.5, box: [0, 300, 400, 200] }, {
            label: "chair",
            score: 0.4,
            box: [420, 320, 100, 150]
          }]
        }),
        plainStats,
        size,
        size
      ).image_class
    ).toBe("interior_space")
    const cup = classify(
      detections({ objects: [{ label: "cup", score: 0.5, box: [180, 20, 260, 260] }] }),
      plainStats,
      size,
      size
    )
    expect(cup.image_class).toBe("product_object")
    expect(cup.subject).toEqual({ x: 180, y: 20, width: 260, height: 260 })
  })

  it("sky over vegetation with nothing detected is a landscape; unsure calls fall back to other", () => {
    expect(
      classify(detections({}), { ...plainStats, skyTop: 0.6, green: 0.3, vegetation: 0.3 }, size, size).image_class
    ).toBe("landscape_nature")
    const weak = classify(
      detections({ objects: [{ label: "cup", score: 0.31, box: [300, 300, 40, 40] }] }),
      plainStats,
      size,
      size
    )
    expect(weak.image_class).toBe("other")
  })

  it("an open sky over uprights is built (a street, a building), not a landscape; specks of birds do not spoil a field", () => {
    const street = { ...plainStats, skyTop: 0.8, edges: 0.2, rectilinear: 0.55, vertical: 0.25, spread: 40 }
    expect(classify(detections({}), street, size, size).image_class).toBe("other")
    const meadow = { ...plainStats, skyTop: 0.9, edges: 0.05, rectilinear: 0.45, vertical: 0.05, spread: 40 }
    const birds = detections({
      objects: [{ label: "bird", score: 0.43, box: [300, 200, 20, 15] }, {
        label: "sheep",
        score: 0.36,
        box: [50, 400, 8, 6]
      }]
    })
    expect(classify(birds, meadow, size, size).image_class).toBe("landscape_nature")
    // a big animal in front is the animal's photo
    expect(
      classify(detections({ objects: [{ label: "dog", score: 0.6, box: [100, 100, 400, 400] }] }), meadow, size, size)
        .image_class
    ).toBe("other")
    // a frame of vegetation without sky (a flower bed) is nature too, unless something big is in front
    const leafy = { ...plainStats, skyTop: 0.1, vegetation: 0.35, edges: 0.1 }
    expect(classify(detections({}), leafy, size, size).image_class).toBe("landscape_nature")
    expect(
      classify(detections({ objects: [{ label: "bird", score: 0.22, box: [0, 0, 600, 400] }] }), leafy, size, size)
        .image_class
    ).toBe("other")
  })

  it("a built scene under no sky with indoor things is a room; a small thing in it is not a product; a pile of things is not one product", () => {
    const room = { ...plainStats, skyTop: 0.1, edges: 0.2, rectilinear: 0.6, vertical: 0.28, spread: 40 }
    const keyboard = detections({ objects: [{ label: "keyboard", score: 0.4, box: [0, 400, 200, 120] }] })
    expect(classify(keyboard, room, size, size).image_class).toBe("interior_space")
    // the same keyboard filling a plain frame is a product shot
    expect(
      classify(
        detections({ objects: [{ label: "keyboard", score: 0.4, box: [60, 200, 520, 200] }] }),
        { ...room, plainBorder: 0.7 },
        size,
        size
      ).image_class
    ).toBe("product_object")
    const pile = detections({
      objects: [0, 1, 2, 3, 4].map((i) => ({
        label: "orange",
        score: 0.4 - i * 0.03,
        box: [i * 120, 200, 110, 110] as const
      }))
    })
    expect(classify(pile, { ...plainStats, edges: 0.25 }, size, size).image_class).toBe("other")
  })
})

describe("too little signal", () => {
  it("under 32 px on the shorter side, or a luma spread under 4 levels, is `other` at 0 whatever was detected", () => {
    const product = detections({ objects: [{ label: "cup", score: 0.9, box: [100, 100, 400, 400] }] })
    expect(classify(product, plainStats, size, size).image_class).toBe("product_object")
    expect(classify(product, plainStats, size, { width: 31, height: 500 })).toEqual({
      image_class: "other",
      confidence: 0,
      subject: null
    })
    expect(classify(product, { ...plainStats, spread: 3.9 }, size, size)).toEqual({
      image_class: "other",
      confidence: 0,
      subject: null
    })
    expect(classify(product, { ...plainStats, spread: 4 }, size, { width: 32, height: 32 }).image_class).toBe(
      "product_object"
    )
  })
})

describe("sceneStats", () => {
  const raster = (w: number, h: number, paint: (x: number, y: number) => readonly [number, number, number]) => {
    const px = new Uint8Array(w * h * 3)
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) px.set(paint(x, y), (y * w + x) * 3)
    return px
  }
  it("stripes of uprights read as built (vertical edges); a horizon alone does not", () => {
    const uprights = sceneStats(
      raster(120, 90, (x) => (Math.floor(x / 10) % 2 ? [230, 230, 230] : [40, 40, 40])),
      120,
      90
    )
    expect(uprights.vertical).toBeGreaterThan(0.9)
    expect(uprights.rectilinear).toBeGreaterThan(0.9)
    const horizon = sceneStats(raster(120, 90, (_x, y) => (y < 40 ? [110, 160, 230] : [90, 140, 40])), 120, 90)
    expect(horizon.vertical).toBeLessThan(0.05)
    expect(horizon.skyTop).toBeGreaterThan(0.9)
    expect(horizon.vegetation).toBeGreaterThan(0.5)
  })
  it("a plain frame has no edges and no vegetation; yellow-green grass in low sun is vegetation", () => {
    const plain = sceneStats(raster(64, 64, () => [128, 128, 128]), 64, 64)
    expect(plain.edges).toBe(0)
    expect(plain.spread).toBeCloseTo(0, 4)
    const halves = sceneStats(raster(64, 64, (x) => (x < 32 ? [0, 0, 0] : [255, 255, 255])), 64, 64)
    expect(halves.spread).toBeCloseTo(127.5, 0)
    expect(plain.vegetation).toBe(0)
    const grass = sceneStats(raster(64, 64, () => [165, 160, 60]), 64, 64)
    expect(grass.vegetation).toBe(1)
    expect(grass.green).toBe(0)
  })
})

describe("framingInputs (the override rule)", () => {
  const inferred = { image_class: "person" as const, confidence: 0.9, subject: { x: 10, y: 10, width: 50, height: 50 } }
  it("the request's image_class overrides the inferred class; the subject stays a fact about the photo", () => {
    expect(framingInputs("landscape_nature", inferred)).toEqual({
      imageClass: "landscape_nature",
      subject: inferred.subject
    })
    expect(framingInputs(undefined, inferred)).toEqual({ imageClass: "person", subject: inferred.subject })
  })
  it("no inference (pending, failed, model unavailable) → default class and no subject; a weak one gives no subject", () => {
    expect(framingInputs(undefined, null)).toEqual({ imageClass: undefined, subject: null })
    expect(framingInputs(undefined, { ...inferred, image_class: "other", confidence: 0.3 })).toEqual({
      imageClass: "other",
      subject: null
    })
  })
})

describe("the vision model", () => {
  it("finds the astronaut's face (model files shipped in the npm package, nothing downloaded)", async () => {
    const r = await Effect.runPromise(
      makeVision().infer(new URL("../../../test/fixtures/astronaut.png", import.meta.url).pathname)
    )
    expect(r.image_class).toBe("person")
    expect(r.subject!.x).toBeLessThanOrEqual(227)
    expect(r.subject!.x + r.subject!.width).toBeGreaterThanOrEqual(227)
  }, 60_000)

  // a photo with too little signal is `other` at confidence 0 with no subject
  const solid = (width: number, height: number, background: string, format: "png" | "jpeg") =>
    sharp({ create: { width, height, channels: 3, background } })[format]().toBuffer().then((b) => new Uint8Array(b))
  it(
    "a 1×1 photo, a uniform gray one and a uniform black 99.8 MP one are `other` at confidence 0, no subject",
    async () => {
      const vision = makeVision()
      for (
        const [name, photo] of [
          ["1×1", await solid(1, 1, "#c08040", "png")],
          ["uniform gray 800×600", await solid(800, 600, "#808080", "jpeg")],
          ["uniform black 11552×8640", await solid(11_552, 8_640, "#000000", "jpeg")]
        ] as const
      ) {
        const r = await Effect.runPromise(vision.infer(photo))
        expect({ name, image_class: r.image_class, confidence: r.confidence, subject: r.subject }).toEqual({
          name,
          image_class: "other",
          confidence: 0,
          subject: null
        })
      }
    },
    120_000
  )

  it(
    "a missing model fails the call with VisionUnavailable (the caller falls back), it does not throw or hang",
    async () => {
      const r = await Effect.runPromise(
        Effect.result(
          makeVision({ modelDir: "/nonexistent/models" }).infer(
            new URL("../../../test/fixtures/astronaut.png", import.meta.url).pathname
          )
        )
      )
      expect(r._tag).toBe("Failure")
    },
    60_000
  )
})
