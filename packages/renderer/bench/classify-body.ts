/**
 * `node packages/renderer/bench/classify-body.ts [DUMP.json]` — how the person rule's pose settings
 * (classify.ts, PoseRule) were chosen: over the photos classify-body-dump.ts wrote (the `dev` ones:
 * in the 4th session the first 123 and the fifth batch), leave-one-scene-out — for each scene left out, the scene model is
 * refitted on the other scenes and the pose setting that classifies those best is chosen from the
 * grid below, then the left-out photos are classified with both. Prints, without the pose and with
 * it: top-1, per-class recall, what was called person wrongly, and whether each person photo's
 * subject box holds its face. Reads the dump only (seconds); run the dump first (about 2 minutes).
 */
import { readFileSync } from "node:fs"
import type { ImageClass } from "../src/CaptionSpec.ts"
import { classifyByRules, type Detections, type Inference, POSE_RULE, type PoseRule, type SceneStats } from "../src/vision/classify.ts"
import { fitSceneModel, fuse, type SceneModel } from "../src/vision/scene-model.ts"
import { CLASSES } from "./classify-manifest.ts"

interface Photo {
  file: string; label: ImageClass; scene: string; face: [number, number] | null
  size: { width: number; height: number }; photo: { width: number; height: number }
  faces: Detections["faces"]; objects: Detections["objects"]; body: Detections["body"]; stats: SceneStats; pooled: Array<number>
}
const photos: Array<Photo> = JSON.parse(readFileSync(process.argv[2] ?? "/tmp/classify-body.json", "utf8"))

// from the loosest to the strictest (a tie goes to the first: TIES=strict reverses it)
const GRID: Array<PoseRule | null> = [null]
for (const face of [0.45, 0.5, 0.55, 0.6]) for (const shoulders of [0.3, 0.34, 0.38, 0.42, 0.46]) for (const lo of [0.5, 0.7, 0.9]) {
  for (const overPlain of [0.5, 0.55, 1.01]) for (const torso of [0.2, 0.25, 0.3, 0.4, 1.01]) {
    if (overPlain >= shoulders) GRID.push({ face, shoulders, span: [lo, 2], overPlain, torso })
  }
}
if (process.env.TIES === "strict") GRID.splice(1, GRID.length - 1, ...GRID.slice(1).reverse())
const name = (r: PoseRule | null) =>
  r === null ? "no pose" : `face ${r.face} shoulders ${r.shoulders} span ${r.span[0]}-${r.span[1]} over plain ${r.overPlain > 1 ? "never" : r.overPlain} torso ${r.torso > 1 ? "never" : r.torso}`

const features = (p: Photo) => ({ pooled: p.pooled })
const rulesOf = (p: Photo, rule: PoseRule | null): Inference =>
  classifyByRules({ faces: p.faces, objects: p.objects, ...(rule === null ? {} : { body: p.body }) }, p.stats, p.size, p.photo, rule ?? POSE_RULE)
const decide = (p: Photo, rule: PoseRule | null, model: SceneModel): Inference => fuse(rulesOf(p, rule), features(p), model)
// The rules do not depend on the fold and the scene model's answer only on the rules' class: both are
// computed once, so the grid × folds search takes seconds.
const rulesBy = GRID.map((rule) => photos.map((p) => rulesOf(p, rule).image_class))
const scenes = [...new Set(photos.map((p) => p.scene))]
const chosen = new Map<Photo, { base: Inference; pose: Inference; rule: PoseRule | null }>()
const picks = new Map<string, number>()
for (const scene of scenes) {
  const rest = photos.map((p, i) => [p, i] as const).filter(([p]) => p.scene !== scene)
  const model = fitSceneModel(rest.map(([p]) => ({ features: features(p), label: p.label })))
  const fused = new Map<string, ImageClass>()
  const fusedClass = (p: Photo, i: number, c: ImageClass) => {
    const key = `${i}:${c}`
    if (!fused.has(key)) fused.set(key, fuse({ image_class: c, confidence: 1, subject: null }, features(p), model).image_class)
    return fused.get(key)!
  }
  // the grid's best on the other scenes (ties: the first in GRID's order)
  let best = 1
  let bestOk = -1
  for (let g = 1; g < GRID.length; g++) {
    const ok = rest.filter(([p, i]) => fusedClass(p, i, rulesBy[g][i]) === p.label).length
    if (ok > bestOk) [best, bestOk] = [g, ok]
  }
  picks.set(name(GRID[best]), (picks.get(name(GRID[best])) ?? 0) + 1)
  for (const p of photos.filter((p) => p.scene === scene)) chosen.set(p, { base: decide(p, null, model), pose: decide(p, GRID[best], model), rule: GRID[best] })
}

const report = (title: string, got: (p: Photo) => Inference) => {
  const ok = photos.filter((p) => got(p).image_class === p.label).length
  const recall = CLASSES.map((c) => `${c} ${photos.filter((p) => p.label === c && got(p).image_class === c).length}/${photos.filter((p) => p.label === c).length}`).join(", ")
  const falsePersons = photos.filter((p) => p.label !== "person" && got(p).image_class === "person").map((p) => `${p.file} (${p.label})`)
  const people = photos.filter((p) => p.label === "person" && p.face !== null)
  const inBox = people.filter((p) => {
    const s = got(p).subject
    return s !== null && p.face![0] >= s.x && p.face![0] <= s.x + s.width && p.face![1] >= s.y && p.face![1] <= s.y + s.height
  })
  console.log(`\n${title}: top-1 ${ok}/${photos.length} = ${((100 * ok) / photos.length).toFixed(1)} %`)
  console.log(`  recall: ${recall}`)
  console.log(`  false persons: ${falsePersons.length === 0 ? "none" : falsePersons.join(", ")}`)
  console.log(`  missed persons: ${photos.filter((p) => p.label === "person" && got(p).image_class !== "person").map((p) => `${p.file} → ${got(p).image_class}`).join(", ") || "none"}`)
  console.log(`  person subject box holds the face: ${inBox.length}/${people.length}${inBox.length < people.length ? ` (not: ${people.filter((p) => !inBox.includes(p)).map((p) => p.file).join(", ")})` : ""}`)
}
console.log(`${photos.length} photos, ${scenes.length} scenes; leave-one-scene-out (scene model refitted, pose setting chosen per fold, ties to the ${process.env.TIES === "strict" ? "strictest" : "loosest"})`)
report("without the pose", (p) => chosen.get(p)!.base)
report("with the pose (setting chosen per fold)", (p) => chosen.get(p)!.pose)
console.log(`\nsettings chosen by the folds: ${[...picks].sort((a, b) => b[1] - a[1]).map(([n, c]) => `${n} ×${c}`).join("; ")}`)
console.log(`changed by the pose: ${photos.filter((p) => chosen.get(p)!.base.image_class !== chosen.get(p)!.pose.image_class).map((p) => `${p.file} ${chosen.get(p)!.base.image_class} → ${chosen.get(p)!.pose.image_class}`).join(", ") || "none"}`)
console.log(`\nshipped setting (POSE_RULE: ${name(POSE_RULE)}), scene model still left out per fold:`)
const shippedBy = new Map(scenes.flatMap((scene) => {
  const model = fitSceneModel(photos.filter((p) => p.scene !== scene).map((p) => ({ features: { pooled: p.pooled }, label: p.label })))
  return photos.filter((p) => p.scene === scene).map((p) => [p, decide(p, POSE_RULE, model)] as const)
}))
report("shipped pose setting", (p) => shippedBy.get(p)!)
