import type { ImageClass } from "@pic2video/domain/Requests"
import { fuse, type SceneModel } from "./scene-model.ts"

/**
 * Pure: what the detectors saw → the photo's class, the confidence of that call and the main subject.
 * The models are a face detector and an 80-class COCO object detector; the classes the contract names
 * are read off them (faces with a body → person, faces without one and teddy bears → doll_figurine,
 * furniture and fittings → interior_space, one dominant thing → product_object) and off cheap
 * statistics of the raster (SceneStats: sky, vegetation, a plain border, edge density and how many
 * edges run straight and upright — built scenes vs open ones). Anything unsure is `other`.
 * Measured on the labelled set in training/classify-set (`npm run bench:classify`).
 */
type BoxTuple = readonly [x: number, y: number, width: number, height: number]

export interface Detections {
  readonly faces: ReadonlyArray<{ readonly score: number; readonly box: BoxTuple }>
  readonly objects: ReadonlyArray<{ readonly label: string; readonly score: number; readonly box: BoxTuple }>
  /** What the object detector's network saw of the whole scene (scene-model.ts); absent when it could not say. */
  readonly features?: SceneFeatures
  /**
   * The one body a pose model (MoveNet) found in the frame; absent when none was run — no pose model,
   * or nothing in the frame the pose could make a person of (see poseMatters).
   */
  readonly body?: BodyPose
}

/** MoveNet's 17 keypoints, in its output order. */
export const POSE_PARTS = [
  "nose",
  "leftEye",
  "rightEye",
  "leftEar",
  "rightEar",
  "leftShoulder",
  "rightShoulder",
  "leftElbow",
  "rightElbow",
  "leftWrist",
  "rightWrist",
  "leftHip",
  "rightHip",
  "leftKnee",
  "rightKnee",
  "leftAnkle",
  "rightAnkle"
] as const
export type PosePart = (typeof POSE_PARTS)[number]

/** A body's keypoints (POSE_PARTS), in the boxes' pixels. */
export interface BodyPose {
  readonly keypoints: ReadonlyArray<
    { readonly part: PosePart; readonly score: number; readonly x: number; readonly y: number }
  >
}

/** From the object detector's forward pass: its backbone's deepest layer averaged over the frame (720 values). */
export interface SceneFeatures {
  readonly pooled: ReadonlyArray<number>
}

/** Colour statistics of the analysis raster (shares of pixels, 0..1). */
export interface SceneStats {
  /** sky-like pixels (blue, or bright and grey) in the top third */
  readonly skyTop: number
  /** vegetation-like pixels (green dominant) anywhere */
  readonly green: number
  /** pixels close to the mean colour of the outer border (a plain backdrop) */
  readonly plainBorder: number
  /** Box of the pixels that differ from that backdrop, and their share of the frame. */
  readonly figure: BoxTuple | null
  readonly figureShare: number
  /** vegetation-like pixels by hue (yellow-green to blue-green, saturated): grass in low sun too */
  readonly vegetation: number
  /** share of pixels on a clear edge (texture: 0 for a plain wall, high for foliage or clutter) */
  readonly edges: number
  /**
   * Of the edge pixels, the share whose edge runs within 12° of horizontal or vertical. Built
   * things (rooms, furniture, buildings, packaging) are made of straight horizontals and verticals
   * (0.45–0.8); foliage, water, rock and animals are not (about 0.27, the share of a uniform spread).
   */
  readonly rectilinear: number
  /** Of the edge pixels, the share on near-vertical lines (within 12°): walls, doors, windows, furniture legs, building fronts. A horizon is not one. */
  readonly vertical: number
  /** The standard deviation of the raster's luma (0..255): how much there is to see at all (0: one flat colour). */
  readonly spread: number
}

export interface Subject {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

export interface Inference {
  readonly image_class: ImageClass
  readonly confidence: number
  /** In the photo's displayed pixels; null when there is no single subject. */
  readonly subject: Subject | null
}

/** Below this, the class falls back to `other` (the subject box is still kept when there is one). */
export const MIN_CONFIDENCE = 0.45

/**
 * Too little signal to call anything: a photo under `side` px on its shorter side (the detectors see
 * a handful of pixels blown up to 640: a 1×1 photo was a product at 0.668), or a flat one, whose luma
 * varies by less than `spread` levels (one colour, or nearly: a uniform black 99.8 MP photo was called
 * at confidence 1.0). Real photos are well above both: of the 210 labelled photos
 * (training/classify-set) and the test fixtures, the least spread is 8.7 (a doll rendered on a plain
 * backdrop; studio shots of a figure come next at 9.7–10.8) and the smallest shorter side 126 px.
 */
const MIN_SIGNAL = { side: 32, spread: 4 } as const

/** What a photo with too little signal is: `other`, a confidence that says nothing was seen, no subject. */
const NO_SIGNAL: Inference = { image_class: "other", confidence: 0, subject: null }

const tooLittleSignal = (stats: Pick<SceneStats, "spread">, photo: Size): boolean =>
  Math.min(photo.width, photo.height) < MIN_SIGNAL.side || stats.spread < MIN_SIGNAL.spread

/**
 * A face the detector believes (it frames a person's subject, and one with no body around it is a
 * painted or moulded face). A believed face inside a detected person is a person: not higher, since at
 * 0.7 a foundry worker in goggles (face 0.67, body 0.33) is missed.
 */
export const BELIEVED_FACE = 0.6
/**
 * A person the object detector sees around a face, however faintly: CenterNet scores a real body
 * 0.26–0.29 when it is cut by the frame or half hidden (a soldier behind his rifle, women at a
 * machine), and below 0.3 — the old threshold — their confident faces were taken for painted ones.
 * The detector reports nothing under 0.2. Both thresholds were chosen by leave-one-scene-out over
 * the 123 dev photos (docs/vision-research.md); they are not refitted per fold.
 */
export const BODY = 0.25

/**
 * A face the pose model stands a body under: its head keypoints (nose, eyes, ears) on the face, both
 * shoulders seen below it at a human span. MoveNet finds that skeleton where CenterNet sees no one —
 * a welder behind his visor, men bent over an engine — while moulded faces (dolls, figurines) and
 * animals get no shoulders, or ones as narrow as the face. `face`: the least face score it vouches
 * for; `shoulders`: the least mean score of the two shoulders; `span`: their distance apart in face
 * widths. Chosen by leave-one-scene-out over the dev photos (docs/vision-research.md; the sweep was
 * bench/classify-body.ts, in git history at ff0994a).
 */
interface PoseRule {
  readonly face: number
  readonly shoulders: number
  readonly span: readonly [min: number, max: number]
  /**
   * Shoulders this sure overrule the plain-backdrop doll rule (a figure on a plain ground with a half
   * believed face): a welder's masked face on a dark wall has a body under it, a ballerina figurine's
   * weaker shoulders (0.45) do not.
   */
  readonly overPlain: number
  /**
   * A person with no face to show (turned away, masked, small): the least mean score of the torso's
   * four keypoints (shoulders, hips) when three of them lie inside a person CenterNet sees (≥ BODY).
   */
  readonly torso: number
}
export const POSE_RULE: PoseRule = { face: 0.5, shoulders: 0.34, span: [0.7, 2], overPlain: 0.5, torso: 0.2 }

/**
 * Whether the body pose can change what the rules decide with the shipped POSE_RULE: it is read only
 * around a face of at least POSE_RULE.face (posedFace) or inside a person the object detector scores
 * at least BODY (torsoInPerson). Most photos of other classes have neither, and the vision worker
 * skips the pose model for them (its cost: docs/vision-research.md); the answer is the
 * same (property-tested). A sweep of other PoseRules (bench/classify-body.ts at ff0994a) must run the pose on
 * every photo itself, as its dump does: Vision's evidence has no body where this says no.
 */
export const poseMatters = (d: Pick<Detections, "faces" | "objects">): boolean =>
  d.faces.some((f) => f.score >= POSE_RULE.face) || d.objects.some((o) => o.label === "person" && o.score >= BODY)

const INTERIOR = new Set([
  "chair",
  "couch",
  "bed",
  "dining table",
  "toilet",
  "tv",
  "oven",
  "sink",
  "refrigerator",
  "microwave",
  "toaster"
])
/** Small things found indoors (a desk, a shelf): with no sky or vegetation they make a room. */
const INDOOR_THINGS = new Set([
  "remote",
  "keyboard",
  "mouse",
  "laptop",
  "book",
  "vase",
  "clock",
  "potted plant",
  "bottle",
  "sports ball"
])
const ANIMALS = new Set(["bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe"])
const VEHICLES = new Set(["bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat"])
const STREET = new Set(["traffic light", "fire hydrant", "stop sign", "parking meter", "bench"])

const area = (b: BoxTuple) => Math.max(0, b[2]) * Math.max(0, b[3])
const clip = (b: BoxTuple, w: number, h: number): BoxTuple => {
  const x0 = Math.max(0, b[0])
  const y0 = Math.max(0, b[1])
  const x1 = Math.min(w, b[0] + b[2])
  const y1 = Math.min(h, b[1] + b[3])
  return [x0, y0, Math.max(0, x1 - x0), Math.max(0, y1 - y0)]
}
const overlap = (a: BoxTuple, b: BoxTuple) => {
  const w = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0])
  const h = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1])
  return w > 0 && h > 0 ? (w * h) / Math.max(1, area(a)) : 0
}
const union = (boxes: ReadonlyArray<BoxTuple>): BoxTuple => {
  const x0 = Math.min(...boxes.map((b) => b[0]))
  const y0 = Math.min(...boxes.map((b) => b[1]))
  const x1 = Math.max(...boxes.map((b) => b[0] + b[2]))
  const y1 = Math.max(...boxes.map((b) => b[1] + b[3]))
  return [x0, y0, x1 - x0, y1 - y0]
}
const round1 = (v: number) => Math.round(v * 1000) / 1000
type Size = { readonly width: number; readonly height: number }
/** The detections' boxes clipped to the raster, the ones left with no area dropped. */
const inFrame = <O extends { readonly box: BoxTuple }>(items: ReadonlyArray<O>, size: Size): Array<O> =>
  items.map((o) => ({ ...o, box: clip(o.box, size.width, size.height) })).filter((o) => area(o.box) > 0)
/** A box in the analysis raster's pixels → in the photo's displayed pixels (the stored subject). */
const toPhoto = (b: BoxTuple, size: Size, photo: Size): Subject => {
  const sx = photo.width / size.width
  const sy = photo.height / size.height
  return {
    x: Math.round(b[0] * sx),
    y: Math.round(b[1] * sy),
    width: Math.round(b[2] * sx),
    height: Math.round(b[3] * sy)
  }
}

/**
 * The rules, then the learned scene model over the detector's features (scene-model.ts; `null`: rules
 * only) — except for animals: a photo that is not of a person, with animals the object detector is
 * sure of (ANIMAL), is `other` whatever the rules and the scene model would say (the contract has no
 * class for animals; they took a cow in a field for a product, dogs at a window for figurines), the
 * animals its subject. `size` is the analysis raster the boxes are in; `photo` the displayed size the
 * subject is scaled to.
 */
export const classify = (
  d: Detections,
  stats: SceneStats,
  size: Size,
  photo: Size,
  model?: SceneModel | null
): Inference => {
  if (tooLittleSignal(stats, photo)) return NO_SIGNAL
  const rules = classifyByRules(d, stats, size, photo)
  const animals = rules.image_class === "person" ? null : animalsIn(d, size)
  if (animals === null) return fuse(rules, d.features, model)
  return {
    image_class: "other",
    confidence: round1(Math.min(1, 0.5 + animals.score / 2)),
    subject: toPhoto(animals.box, size, photo)
  }
}

/**
 * Animals the object detector is sure of: each scoring ≥ `score`, together covering ≥ `share` of the
 * frame (a bird speck over a lake or sheep dotting a hillside leave a landscape a landscape). Chosen
 * by leave-one-scene-out over the 159 dev photos (docs/vision-research.md): 129 → 131 for any score 0.3–0.5
 * with share 0.04, the two gains `other` photos (a cow, dogs at a window), no photo lost.
 */
export const ANIMAL = { score: 0.3, share: 0.04 } as const

const animalsIn = (d: Detections, size: Size): { readonly score: number; readonly box: BoxTuple } | null => {
  const seen = inFrame(d.objects, size).filter((o) => ANIMALS.has(o.label) && o.score >= ANIMAL.score)
  if (seen.length === 0 || seen.reduce((s, o) => s + area(o.box), 0) / (size.width * size.height) < ANIMAL.share) {
    return null
  }
  return { score: Math.max(...seen.map((o) => o.score)), box: union(seen.map((o) => o.box)) }
}

/** The rules alone (see the top of this file). */
export const classifyByRules = (
  d: Detections,
  stats: SceneStats,
  size: Size,
  photo: Size,
  poseRule: PoseRule = POSE_RULE
): Inference => {
  const W = size.width
  const H = size.height
  const frame = W * H
  const objects = inFrame(d.objects, size)
  const animals = objects.filter((o) => ANIMALS.has(o.label) && o.score >= ANIMAL.score)
  // A "face" inside an animal is the animal's (BlazeFace fires on cats and dogs).
  const faces = inFrame(d.faces, size)
    .filter((f) => area(f.box) / frame >= 0.0015 && !animals.some((a) => overlap(f.box, a.box) > 0.5))
    .sort((a, b) => b.score * area(b.box) - a.score * area(a.box))
  const people = objects.filter((o) => o.label === "person").sort((a, b) =>
    b.score * area(b.box) - a.score * area(a.box)
  )
  const result = (image_class: ImageClass, confidence: number, box: BoxTuple | null): Inference => ({
    image_class: confidence >= MIN_CONFIDENCE ? image_class : "other",
    confidence: round1(confidence),
    subject: box === null ? null : toPhoto(box, size, photo)
  })

  // Dolls and figurines: COCO has teddy bears; a teddy bear that dominates the frame wins over faces.
  const teddy =
    objects.filter((o) => o.label === "teddy bear" && o.score >= 0.3).sort((a, b) => area(b.box) - area(a.box))[0]
  if (teddy && area(teddy.box) / frame >= 0.05) {
    return result("doll_figurine", Math.min(1, teddy.score + 0.2), teddy.box)
  }

  // A figure on a plain backdrop whose face the detector only half believes: a doll or a figurine
  // (real faces score higher; a studio portrait of a person has a confident face).
  const face = faces[0]
  const plain = stats.plainBorder >= 0.8
  const standing = posedFace(d.body, faces, poseRule)
  const overPlain = standing !== undefined && standing.shoulders >= poseRule.overPlain
  if (plain && face && face.score >= 0.5 && face.score < 0.75 && area(face.box) / frame >= 0.02 && !overPlain) {
    return result("doll_figurine", 0.5 + (0.75 - face.score), stats.figure ?? face.box)
  }

  // A face without a body: faces the detector believes, none of them inside a person the object
  // detector sees, is a painted or moulded face — a doll, a figurine, a statue (or a portrait on the
  // wall of a room: fittings, below, decide first). Real people come with a body (CenterNet finds a
  // person around the face even in a head-and-shoulders portrait); a close-up that is nearly all
  // face is left to the person rule.
  const believed = faces.filter((f) => f.score >= BELIEVED_FACE)
  const bodied = (f: { readonly box: BoxTuple }) => people.some((p) => p.score >= BODY && overlap(f.box, p.box) > 0.5)
  const bodiless = believed.length > 0 && !believed.some(bodied) && area(believed[0].box) / frame < 0.2

  // People: a confident face, or a large person. The subject is every confident face (a group keeps
  // everyone: framing decides whether they fit); without a face, the person's upper body.
  const person = people[0]
  const personShare = person ? area(person.box) / frame : 0
  // A face alone must be confident; a merely believed one counts when a person is detected around it.
  const corroborated = face !== undefined && bodied(face)
  if (face && !bodiless && (face.score >= 0.75 || (face.score >= BELIEVED_FACE && corroborated))) {
    const group = faces.filter((f) => f.score >= BELIEVED_FACE).map((f) => f.box)
    const conf = Math.min(1, face.score * 0.7 + (person ? person.score * 0.3 + 0.1 : 0))
    return result("person", conf, union(group))
  }
  // A face with a body under it by the pose model (see PoseRule): the subject is that face, with the
  // believed ones beside it.
  if (standing) {
    const group = faces.filter((f) => f === standing.face || f.score >= BELIEVED_FACE).map((f) => f.box)
    return result("person", Math.min(1, 0.5 * standing.face.score + 0.5 * standing.shoulders), union(group))
  }
  if (person && person.score >= 0.45 && personShare >= 0.08) {
    const b = person.box
    return result(
      "person",
      Math.min(1, person.score + 0.15),
      clip([b[0], b[1], b[2], Math.min(b[3], b[2] * 1.3)], W, H)
    )
  }
  // A body the pose model finds inside a person CenterNet only half believes, face unseen: the
  // subject is its head (see headOf). A believed face with no body stays the doll rule's (below).
  const turned = bodiless ? undefined : torsoInPerson(d.body, people, poseRule)
  if (turned) return result("person", Math.min(1, 0.3 + turned.score + turned.person.score), clip(turned.head, W, H))

  // Interiors: several fittings, or one big one (a bed, a sofa, a table filling the frame).
  const fittings = objects.filter((o) => INTERIOR.has(o.label) && o.score >= 0.25 && area(o.box) / frame < 0.9)
  const fittingShare = fittings.reduce((s, o) => s + area(o.box), 0) / frame
  if (fittings.length >= 2 || fittingShare >= 0.15) {
    const conf = Math.min(1, 0.4 + 0.15 * fittings.length + fittingShare)
    return result("interior_space", conf, null)
  }

  if (bodiless) {
    const top = Math.max(...believed.map((f) => f.score))
    return result("doll_figurine", Math.min(1, 0.45 + 0.3 * top), union(believed.map((f) => f.box)))
  }

  // What the picture is made of (see SceneStats): a built scene has many straight uprights (walls,
  // doors, shelves, building fronts); an open natural one has sky or vegetation and few uprights (a
  // horizon is horizontal). A very busy texture (a painting's brush strokes, fur) is neither.
  const built = stats.vertical >= 0.2 && stats.rectilinear >= 0.42 && stats.edges >= 0.05
  const busy = stats.edges >= 0.45
  // An animal counts only when it is more than a speck (birds over a field, sheep on a far meadow).
  const bigAnimal = animals.some((a) => area(a.box) / frame >= 0.03 || a.score >= 0.5)

  // Products: one dominant thing that is not an animal, a vehicle or street furniture. Many things
  // of about the same size (a pile of fruit, a shelf of vases) are a pattern, not a product; a small
  // thing in a built, cluttered scene (a keyboard on a desk) is part of a room.
  const things = objects
    .filter((o) =>
      o.label !== "person" && !ANIMALS.has(o.label) && !VEHICLES.has(o.label) && !STREET.has(o.label) && o.score >= 0.3
    )
    .sort((a, b) => b.score * area(b.box) - a.score * area(a.box))
  const thing = things[0]
  const similar = thing
    ? objects.filter((o) => o.score >= 0.2 && area(o.box) >= area(thing.box) / 3 && area(o.box) / frame >= 0.02).length
    : 0
  const many = similar >= 4
  const thingShare = thing ? area(thing.box) / frame : 0
  if (thing && !many && thingShare >= 0.04 && (thingShare >= 0.12 || stats.plainBorder >= 0.3 || !built)) {
    const conf = Math.min(1, thing.score + 0.25 + 0.3 * stats.plainBorder)
    return result("product_object", conf, thing.box)
  }

  // Landscapes: an open sky over a scene without uprights, or a frame of vegetation, with nothing big
  // confidently detected in front of it.
  const confident = objects.filter((o) => o.score >= 0.4 && area(o.box) / frame >= 0.1)
  const vague = objects.filter((o) => o.score >= 0.2 && area(o.box) / frame >= 0.3 && area(o.box) / frame < 0.9)
  const open = stats.skyTop >= 0.35 && stats.vertical < 0.16
  const leafy = stats.vegetation >= 0.15 && stats.skyTop < 0.35 + stats.vegetation && vague.length === 0
  if (confident.length === 0 && !bigAnimal && !busy && stats.plainBorder < 0.6 && (open || leafy)) {
    const nature = Math.min(1, (open ? stats.skyTop * 0.6 + (0.16 - stats.vertical) * 2 : 0) + stats.vegetation * 0.8)
    return result("landscape_nature", Math.min(1, 0.45 + nature * 0.5), null)
  }
  // One big thing the detector is unsure of the kind of (an apple called an orange) is still one thing.
  const bigThing =
    vague.filter((o) =>
      !ANIMALS.has(o.label) && !VEHICLES.has(o.label) && !INTERIOR.has(o.label) && o.label !== "person" &&
      o.label !== "teddy bear"
    )[0]
  if (bigThing && !many) return result("product_object", 0.45 + bigThing.score, bigThing.box)

  // A studio shot: one figure on a plain backdrop, whatever the detector made of it.
  if (
    stats.plainBorder >= 0.8 && stats.figure !== null && stats.figureShare >= 0.04 && stats.figureShare <= 0.7 &&
    area(stats.figure) / frame <= 0.8
  ) {
    return result("product_object", 0.45 + 0.4 * stats.plainBorder * Math.min(1, stats.figureShare * 4), stats.figure)
  }

  // A built scene under no sky, with small indoor things or strongly straight-edged: a room.
  const big = objects.filter((o) => o.score >= 0.4 && area(o.box) / frame >= 0.1)
  const indoorThings = objects.filter((o) =>
    INDOOR_THINGS.has(o.label) && o.score >= 0.2 && area(o.box) / frame >= 0.01
  )
  if (built && stats.skyTop < 0.3 && big.length === 0 && (indoorThings.length > 0 || stats.rectilinear >= 0.55)) {
    return result("interior_space", Math.min(1, 0.45 + stats.vertical + 0.1 * indoorThings.length), null)
  }
  // Whatever is most surely seen frames the photo, unless it is a speck (a pair of feet dangling into
  // a lake view): camera motion toward a speck hides the scene it belongs to.
  const main = [...animals, ...objects].sort((a, b) => b.score * area(b.box) - a.score * area(a.box))[0]
  return result("other", 0.5, main && main.score >= 0.4 && area(main.box) / frame >= 0.02 ? main.box : null)
}

const HEAD: ReadonlyArray<PosePart> = ["nose", "leftEye", "rightEye", "leftEar", "rightEar"]
type Keypoint = BodyPose["keypoints"][number]
const keypoint = (body: BodyPose, part: PosePart): Keypoint | undefined => body.keypoints.find((k) => k.part === part)
/** The most confident face that the pose stands a body under (PoseRule), with its shoulders' mean score. */
const posedFace = <F extends { readonly score: number; readonly box: BoxTuple }>(
  body: BodyPose | undefined,
  faces: ReadonlyArray<F>,
  rule: PoseRule
): { face: F; shoulders: number } | undefined => {
  if (body === undefined) return undefined
  const at = (part: PosePart) => keypoint(body, part)
  const left = at("leftShoulder")
  const right = at("rightShoulder")
  if (left === undefined || right === undefined) return undefined
  const shoulders = (left.score + right.score) / 2
  if (shoulders < rule.shoulders) return undefined
  const head = HEAD.map(at).filter((k): k is Keypoint => k !== undefined && k.score >= 0.2)
  const face = [...faces]
    .sort((a, b) => b.score - a.score)
    .find((f) => {
      const [x, y, w, h] = f.box
      // most of the head's keypoints within half a face of it (ears sit at its sides)
      const onFace = head.filter((k) =>
        k.x >= x - w / 2 && k.x <= x + 1.5 * w && k.y >= y - h / 2 && k.y <= y + 1.5 * h
      ).length
      const span = Math.abs(left.x - right.x) / Math.max(1, w)
      const below = (left.y + right.y) / 2 >= y + h / 2
      return f.score >= rule.face && onFace >= 3 && below && span >= rule.span[0] && span <= rule.span[1]
    })
  return face === undefined ? undefined : { face, shoulders }
}

const TORSO: ReadonlyArray<PosePart> = ["leftShoulder", "rightShoulder", "leftHip", "rightHip"]
/**
 * The torso (PoseRule.torso) inside a detected person, and the head above it: a box around the head
 * keypoints the pose sees (nose, eyes, ears) and the shoulder line, at least a shoulder span (or a
 * quarter of the person's box, when the shoulders are seen edge-on) wide and
 * reaching a span above the shoulders — where the head is even when its keypoints are unsure.
 */
const torsoInPerson = <P extends { readonly score: number; readonly box: BoxTuple }>(
  body: BodyPose | undefined,
  people: ReadonlyArray<P>,
  rule: PoseRule
): { person: P; score: number; head: BoxTuple } | undefined => {
  if (body === undefined) return undefined
  const at = (part: PosePart) => keypoint(body, part)
  const torso = TORSO.map(at).filter((k): k is Keypoint => k !== undefined)
  if (torso.length < 4) return undefined
  const score = torso.reduce((s, k) => s + k.score, 0) / 4
  if (score < rule.torso) return undefined
  const inside = (b: BoxTuple) =>
    torso.filter((k) => k.x >= b[0] && k.x <= b[0] + b[2] && k.y >= b[1] && k.y <= b[1] + b[3]).length >= 3
  const person = people.find((p) => p.score >= BODY && inside(p.box))
  if (person === undefined) return undefined
  const [left, right] = torso
  const shoulderY = (left.y + right.y) / 2
  const span = Math.max(Math.abs(left.x - right.x), person.box[2] / 4)
  const head = HEAD.map(at).filter((k): k is Keypoint => k !== undefined && k.score >= 0.2 && k.y <= shoulderY)
  const cx = head.length > 0 ? head.reduce((s, k) => s + k.x, 0) / head.length : (left.x + right.x) / 2
  const xs = [cx - span / 2, cx + span / 2, ...head.map((k) => k.x)]
  const top = Math.min(shoulderY - span, ...head.map((k) => k.y - span / 2))
  return { person, score, head: [Math.min(...xs), top, Math.max(...xs) - Math.min(...xs), shoulderY - top] }
}

/** Colour statistics of an RGB raster (see SceneStats). */
export const sceneStats = (pixels: Uint8Array, width: number, height: number): SceneStats => {
  let sky = 0
  let skyN = 0
  let green = 0
  let vegetation = 0
  const topRows = Math.floor(height / 3)
  // border mean
  let br = 0, bg = 0, bb = 0, bn = 0
  const edge = Math.max(1, Math.round(Math.min(width, height) * 0.04))
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (y >= edge && y < height - edge && x >= edge && x < width - edge) continue
      const i = (y * width + x) * 3
      br += pixels[i]
      bg += pixels[i + 1]
      bb += pixels[i + 2]
      bn++
    }
  }
  br /= bn
  bg /= bn
  bb /= bn
  let plain = 0
  let borderN = 0
  let fx0 = width, fy0 = height, fx1 = -1, fy1 = -1, figure = 0
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3
      const r = pixels[i], g = pixels[i + 1], b = pixels[i + 2]
      const max = Math.max(r, g, b)
      const min = Math.min(r, g, b)
      if (y < topRows) {
        skyN++
        if ((b > r + 10 && b >= g - 5 && b > 90) || (min > 170 && max - min < 30)) sky++
      }
      if (g > r + 6 && g > b + 6) green++
      if (max >= 40 && max - min >= 0.2 * max) {
        // hue in degrees, 0..360
        const h = max === r
          ? (60 * (g - b)) / (max - min)
          : max === g
          ? 120 + (60 * (b - r)) / (max - min)
          : 240 + (60 * (r - g)) / (max - min)
        const hue = h < 0 ? h + 360 : h
        if (hue >= 55 && hue <= 165) vegetation++
      }
      if (Math.abs(r - br) + Math.abs(g - bg) + Math.abs(b - bb) >= 60) {
        figure++
        if (x < fx0) fx0 = x
        if (x > fx1) fx1 = x
        if (y < fy0) fy0 = y
        if (y > fy1) fy1 = y
      }
      if (y < edge || y >= height - edge || x < edge || x >= width - edge) {
        borderN++
        if (Math.abs(r - br) + Math.abs(g - bg) + Math.abs(b - bb) < 45) plain++
      }
    }
  }
  const { edges, rectilinear, vertical, spread } = edgeStats(pixels, width, height)
  return {
    skyTop: sky / Math.max(1, skyN),
    green: green / (width * height),
    plainBorder: plain / Math.max(1, borderN),
    figure: fx1 < 0 ? null : [fx0, fy0, fx1 - fx0 + 1, fy1 - fy0 + 1],
    figureShare: figure / (width * height),
    vegetation: vegetation / (width * height),
    edges,
    rectilinear,
    vertical,
    spread
  }
}

/**
 * Sobel gradients of the luma: the share of edge pixels, and of those the share near 0° or 90°; and
 * the luma's standard deviation.
 */
const edgeStats = (
  pixels: Uint8Array,
  width: number,
  height: number
): { edges: number; rectilinear: number; vertical: number; spread: number } => {
  const luma = new Float32Array(width * height)
  let sum = 0
  let squares = 0
  for (let i = 0, j = 0; i < luma.length; i++, j += 3) {
    const l = 0.299 * pixels[j] + 0.587 * pixels[j + 1] + 0.114 * pixels[j + 2]
    luma[i] = l
    sum += l
    squares += l * l
  }
  const mean = sum / Math.max(1, luma.length)
  const spread = Math.sqrt(Math.max(0, squares / Math.max(1, luma.length) - mean * mean))
  let strong = 0
  let straight = 0
  let upright = 0
  let n = 0
  const TAN12 = Math.tan((12 * Math.PI) / 180)
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x
      const gx = luma[i - width + 1] + 2 * luma[i + 1] + luma[i + width + 1] - luma[i - width - 1] - 2 * luma[i - 1] -
        luma[i + width - 1]
      const gy = luma[i + width - 1] + 2 * luma[i + width] + luma[i + width + 1] - luma[i - width - 1] -
        2 * luma[i - width] - luma[i - width + 1]
      n++
      // |g| > 80 on the 0..1020 Sobel scale: a clear edge, not sensor noise or a soft gradient
      if (gx * gx + gy * gy < 6400) continue
      strong++
      const ax = Math.abs(gx)
      const ay = Math.abs(gy)
      // a vertical line has a horizontal gradient
      if (ay <= ax * TAN12) upright++
      if (ay <= ax * TAN12 || ax <= ay * TAN12) straight++
    }
  }
  return {
    edges: strong / Math.max(1, n),
    rectilinear: strong === 0 ? 0 : straight / strong,
    vertical: strong === 0 ? 0 : upright / strong,
    spread
  }
}

/**
 * The one rule for what a render uses: the request's `image_class` overrides the inferred class; the
 * inferred subject box is a fact about the photo and frames it whatever the class, but only when the
 * model was confident. No inference (pending, failed, model unavailable) → the default class, no subject.
 */
export const framingInputs = (
  requested: ImageClass | undefined,
  inferred: { readonly image_class: ImageClass; readonly confidence: number; readonly subject: Subject | null } | null
): { readonly imageClass: ImageClass | undefined; readonly subject: Subject | null } => ({
  imageClass: requested ?? inferred?.image_class,
  subject: inferred !== null && inferred.confidence >= MIN_CONFIDENCE ? inferred.subject : null
})
