/**
 * `node packages/renderer/bench/classify-crop-dump.ts OUT.json` — the experiment of a second pose
 * pass on person crops (tried, not taken: classify-crop.ts): for every `dev` photo (never a held-out one), the detections, statistics, pooled
 * features and whole-frame pose as classify-body-dump.ts writes them, plus MoveNet run again on the
 * crop around each of the two largest surely seen CenterNet persons (score >= 0.2, ranked by score × area), padded by a quarter
 * of the box each side: the pose of a person too small in the frame for the whole-frame pass.
 */
import { writeFileSync } from "node:fs"
import { loadBodyPose } from "../src/platform/human.ts"
import { analyse, human, lastLayers, modelDir, tapLayers, tf } from "./classify-human.ts"
import { readManifest } from "./classify-manifest.ts"

tapLayers()
const pose = await loadBodyPose(tf, modelDir)
if (pose === undefined) throw new Error(`no MoveNet files in ${modelDir}`)
const rows = readManifest().filter((e) => e.split === "dev")
const out: Array<unknown> = []
const cropMs: Array<number> = []
for (const e of rows) {
  const { tensor: t, row, info } = await analyse(e)
  const r = await human.detect(t)
  const body = pose(t)
  const people = r.object.filter((o: { label: string; score: number }) => o.label === "person" && o.score >= 0.2)
    .sort((a: { score: number; box: number[] }, b: { score: number; box: number[] }) => b.score * b.box[2] * b.box[3] - a.score * a.box[2] * a.box[3])
    .slice(0, 2)
  const crops = people.map((p: { score: number; box: [number, number, number, number] }) => {
    const [x, y, w, h] = p.box
    const x0 = Math.max(0, Math.floor(x - w / 4)), y0 = Math.max(0, Math.floor(y - h / 4))
    const x1 = Math.min(info.width, Math.ceil(x + w * 1.25)), y1 = Math.min(info.height, Math.ceil(y + h * 1.25))
    const t0 = performance.now()
    const crop = tf.slice(t, [y0, x0, 0], [y1 - y0, x1 - x0, 3])
    const b = pose(crop)
    crop.dispose()
    cropMs.push(performance.now() - t0)
    return { person: { score: p.score, box: p.box }, body: { keypoints: b.keypoints.map((k) => ({ ...k, x: k.x + x0, y: k.y + y0 })) } }
  })
  t.dispose()
  out.push({ ...row(r), body, crops, pooled: lastLayers().se14 })
  console.log(e.file, crops.map((c: { person: { score: number } ; body: { keypoints: Array<{ score: number }> } }) => `${c.person.score.toFixed(2)}:${JSON.stringify(c.body.keypoints.map((k) => Math.round(k.score * 100)))}`).join(" "))
}
const med = (a: Array<number>) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
writeFileSync(process.argv[2] ?? "/tmp/classify-crop.json", JSON.stringify(out))
console.log(`${out.length} photos; ${cropMs.length} crops, median crop pose ${Math.round(med(cropMs) ?? 0)} ms`)
process.exit(0)
