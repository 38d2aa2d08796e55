/**
 * `node packages/renderer/bench/classify-body-time.ts` — what MoveNet adds to an inference: the
 * service's Vision with and without it (a model folder holding only the detectors' files), photo by
 * photo in turn over the `dev` photos (only timed: nothing is scored). Prints the medians and the
 * median paired difference, with the load average (the machine's other work stretches both).
 */
import { Effect } from "effect"
import { mkdtempSync, symlinkSync } from "node:fs"
import { createRequire } from "node:module"
import { loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { makeVision } from "../src/vision/Vision.ts"
import { readManifest, SET_DIR } from "./classify-manifest.ts"

const models = join(dirname(createRequire(import.meta.url).resolve("@vladmandic/human")), "..", "models")
const detectorsOnly = mkdtempSync(join(tmpdir(), "vision-no-pose-"))
for (const f of ["blazeface.json", "blazeface.bin", "centernet.json", "centernet.bin"]) symlinkSync(join(models, f), join(detectorsOnly, f))
const files = readManifest().filter((e) => e.split === "dev").map((e) => SET_DIR + e.file)
const withPose = makeVision()
const without = makeVision({ modelDir: detectorsOnly })
const a: number[] = [], b: number[] = []
await Effect.runPromise(withPose.infer(files[0])); await Effect.runPromise(without.infer(files[0]))
for (const f of files) {
  let t = performance.now(); const r1 = await Effect.runPromise(withPose.infer(f)); a.push(performance.now() - t)
  t = performance.now(); const r2 = await Effect.runPromise(without.infer(f)); b.push(performance.now() - t)
  if (r1.evidence.detections.body === undefined || r2.evidence.detections.body !== undefined) throw new Error("A/B mixed up")
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)]
const diffs = a.map((v, i) => v - b[i])
console.log(`${files.length} dev photos: median infer with pose ${Math.round(med(a))} ms, without ${Math.round(med(b))} ms, median paired difference ${Math.round(med(diffs))} ms; load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
process.exit(0)
