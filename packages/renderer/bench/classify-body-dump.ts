/**
 * `node packages/renderer/bench/classify-body-dump.ts OUT.json` — MoveNet Lightning's pose beside the
 * face and object detections, for every `dev` photo of classify-set/ (never a held-out one): what
 * the person rule's body signal was chosen by (classify-body.ts reads it). Per photo: detections,
 * statistics, CenterNet's pooled features, the pose on the whole frame, and the pose's own time.
 */
import { writeFileSync } from "node:fs"
import { loadBodyPose } from "../src/platform/human.ts"
import { analyse, human, lastLayers, modelDir, tapLayers, tf } from "./classify-human.ts"
import { readManifest } from "./classify-manifest.ts"

tapLayers()
const pose = await loadBodyPose(tf, modelDir)
if (pose === undefined) throw new Error(`no MoveNet files in ${modelDir}`)
const all = readManifest()
// the dev rows (the fifth batch among them since it was scored once); never a held-out one
const rows = all.filter((e) => e.split === "dev")
const out: Array<unknown> = []
const poseMs: Array<number> = []
const detectMs: Array<number> = []
for (const e of rows) {
  const { tensor: t, row } = await analyse(e)
  let t0 = performance.now()
  const r = await human.detect(t)
  detectMs.push(performance.now() - t0)
  t0 = performance.now()
  const body = pose(t)
  poseMs.push(performance.now() - t0)
  t.dispose()
  out.push({ ...row(r), body, pooled: lastLayers().se14 })
  console.log(e.file, JSON.stringify(body?.keypoints.map((k) => Math.round(k.score * 100))))
}
const med = (a: Array<number>) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
writeFileSync(process.argv[2] ?? "/tmp/classify-body.json", JSON.stringify(out))
console.log(`${out.length} photos; median detect ${Math.round(med(detectMs.slice(1)))} ms, pose ${Math.round(med(poseMs.slice(1)))} ms`)
process.exit(0)
