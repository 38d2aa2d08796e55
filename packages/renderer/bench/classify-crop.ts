/**
 * `node packages/renderer/bench/classify-crop.ts [DUMP.json]` — tried, not taken (README, "Person
 * crops"): whether MoveNet run again on a CenterNet person's crop (classify-crop-dump.ts) finds people
 * the whole-frame pose misses, and at what cost in false persons. Prints, per photo with a person
 * box, the crop's torso and head scores; then leave-one-scene-out (scene model refitted per fold)
 * with the variant below at each torso threshold, and with the threshold chosen per fold.
 */
import { readFileSync } from "node:fs"
import type { ImageClass } from "../src/CaptionSpec.ts"
import { type BodyPose, type BoxTuple, classify, classifyByRules, type Detections, type Inference, POSE_RULE, type SceneStats } from "../src/vision/classify.ts"
import { fitSceneModel } from "../src/vision/scene-model.ts"
import { CLASSES } from "./classify-manifest.ts"

interface Crop { person: { score: number; box: BoxTuple }; body: BodyPose }
interface Photo {
  file: string; label: ImageClass; scene: string; face: [number, number] | null
  size: { width: number; height: number }; photo: { width: number; height: number }
  faces: Detections["faces"]; objects: Detections["objects"]; body: Detections["body"]; crops: Array<Crop>; stats: SceneStats; pooled: Array<number>
}
const photos: Array<Photo> = JSON.parse(readFileSync(process.argv[2] ?? "/tmp/classify-crop.json", "utf8"))
const TORSO = ["leftShoulder", "rightShoulder", "leftHip", "rightHip"]
const HEAD = ["nose", "leftEye", "rightEye", "leftEar", "rightEar"]
for (const p of photos.filter((p) => p.crops.length > 0)) {
  const s = p.crops.map((c) => {
    const k = (parts: Array<string>) => parts.map((n) => c.body.keypoints.find((q) => q.part === n)!.score)
    const mean = (a: Array<number>) => a.reduce((x, y) => x + y, 0) / a.length
    return `p${c.person.score.toFixed(2)} torso ${mean(k(TORSO)).toFixed(2)} head ${mean(k(HEAD)).toFixed(2)}`
  })
  console.log(`${p.label === "person" ? "P" : " "} ${p.file.padEnd(36)} ${s.join(" | ")}`)
}

const GRID = [1.01, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7]
/**
 * The variant: when the shipped classifier (rules with the whole-frame pose, animals, scene model)
 * calls no person, the rules again with each crop's pose in the frame pose's place and the torso
 * threshold `cropTorso` (1.01: never, i.e. the shipped classifier).
 */
const decide = (p: Photo, cropTorso: number, model: ReturnType<typeof fitSceneModel>): Inference => {
  const shipped = classify({ faces: p.faces, objects: p.objects, body: p.body, features: { pooled: p.pooled } }, p.stats, p.size, p.photo, model)
  if (shipped.image_class === "person" || cropTorso > 1) return shipped
  for (const c of p.crops) {
    const r = classifyByRules({ faces: p.faces, objects: p.objects, body: c.body }, p.stats, p.size, p.photo, { ...POSE_RULE, torso: cropTorso })
    if (r.image_class === "person") return r
  }
  return shipped
}
const scenes = [...new Set(photos.map((p) => p.scene))]
const models = new Map(scenes.map((s) => [s, fitSceneModel(photos.filter((p) => p.scene !== s).map((p) => ({ features: { pooled: p.pooled }, label: p.label })))]))
const report = (title: string, got: (p: Photo) => Inference) => {
  const ok = photos.filter((p) => got(p).image_class === p.label).length
  const recall = CLASSES.map((c) => `${c} ${photos.filter((p) => p.label === c && got(p).image_class === c).length}/${photos.filter((p) => p.label === c).length}`).join(", ")
  const falsePersons = photos.filter((p) => p.label !== "person" && got(p).image_class === "person").map((p) => p.file)
  const people = photos.filter((p) => p.label === "person" && p.face !== null)
  const inBox = people.filter((p) => { const s = got(p).subject; return s !== null && p.face![0] >= s.x && p.face![0] <= s.x + s.width && p.face![1] >= s.y && p.face![1] <= s.y + s.height })
  console.log(`\n${title}: top-1 ${ok}/${photos.length}; ${recall}; face in box ${inBox.length}/${people.length}`)
  console.log(`  false persons: ${falsePersons.join(", ") || "none"}; missed: ${photos.filter((p) => p.label === "person" && got(p).image_class !== "person").map((p) => `${p.file} → ${got(p).image_class}`).join(", ") || "none"}`)
}
for (const g of GRID) report(`crop torso ${g > 1 ? "never" : g}`, (p) => decide(p, g, models.get(p.scene)!))
// per fold: the threshold that does best on the other scenes (ties: the first in GRID — never, then the loosest)
const chosen = new Map<Photo, Inference>()
for (const s of scenes) {
  const rest = photos.filter((p) => p.scene !== s)
  const m = models.get(s)!
  let best = GRID[0], bestOk = -1
  for (const g of GRID) {
    const ok = rest.filter((p) => decide(p, g, m).image_class === p.label).length
    if (ok > bestOk) [best, bestOk] = [g, ok]
  }
  for (const p of photos.filter((p) => p.scene === s)) chosen.set(p, decide(p, best, m))
}
report("crop torso chosen per fold", (p) => chosen.get(p)!)
