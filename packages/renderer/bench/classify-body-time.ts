/**
 * `node packages/renderer/bench/classify-body-time.ts` — what MoveNet adds to an inference: the
 * service's Vision with and without it (a model folder holding only the detectors' files), photo by
 * photo in turn over the `dev` photos (only timed: nothing is scored). With it, the pose is run only
 * where it can change the call (classify.ts poseMatters; since the 5th session). Prints the medians
 * and the median paired difference, over all photos and over those the pose ran on, with the load
 * average (the machine's other work stretches both). The two sides take turns going first.
 */
import { Effect } from "effect"
import { mkdtempSync, symlinkSync } from "node:fs"
import { createRequire } from "node:module"
import { loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { makeVision, MODEL_NAME, MODEL_NAME_WITHOUT_POSE } from "../src/vision/Vision.ts"
import { readManifest, SET_DIR } from "./classify-manifest.ts"

const models = join(dirname(createRequire(import.meta.url).resolve("@vladmandic/human")), "..", "models")
const detectorsOnly = mkdtempSync(join(tmpdir(), "vision-no-pose-"))
for (const f of ["blazeface.json", "blazeface.bin", "centernet.json", "centernet.bin"]) symlinkSync(join(models, f), join(detectorsOnly, f))
const files = readManifest().filter((e) => e.split === "dev").map((e) => SET_DIR + e.file)
const withPose = makeVision()
const without = makeVision({ modelDir: detectorsOnly })
const a: number[] = [], b: number[] = [], posed: boolean[] = []
await Effect.runPromise(withPose.infer(files[0])); await Effect.runPromise(without.infer(files[0]))
const timed = async (v: typeof withPose, f: string) => {
  const t = performance.now()
  const r = await Effect.runPromise(v.infer(f))
  return [r, performance.now() - t] as const
}
for (const [i, f] of files.entries()) {
  // the order alternates photo by photo, so that neither side always runs on the warmer cache
  const [[r1, ms1], [r2, ms2]] = i % 2 === 0
    ? [await timed(withPose, f), await timed(without, f)]
    : (([y, x]) => [x, y] as const)([await timed(without, f), await timed(withPose, f)])
  a.push(ms1)
  b.push(ms2)
  if (r1.model !== MODEL_NAME || r2.model !== MODEL_NAME_WITHOUT_POSE) throw new Error("A/B mixed up")
  posed.push(r1.evidence.detections.body !== undefined)
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)]
const diffs = a.map((v, i) => v - b[i])
console.log(`${files.length} dev photos: median infer with pose ${Math.round(med(a))} ms, without ${Math.round(med(b))} ms, median paired difference ${Math.round(med(diffs))} ms; load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
const ran = diffs.filter((_, i) => posed[i])
const skipped = diffs.filter((_, i) => !posed[i])
console.log(`the pose ran on ${ran.length} of them: median paired difference there ${ran.length === 0 ? "-" : Math.round(med(ran))} ms; on the ${skipped.length} it skipped ${skipped.length === 0 ? "-" : Math.round(med(skipped))} ms (the same work twice: the noise floor)`)
process.exit(0)
