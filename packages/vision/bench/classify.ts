/**
 * `npm run bench:classify` — the vision model over the labelled set in `classify-set/` (see its
 * MANIFEST.tsv: file, label, face centre for `person`, source, licence). Prints:
 *   - per photo: split, label, inferred class, confidence, subject box, wall ms of `infer` (decode + model)
 *   - the `held-out` part (a fresh batch, never fitted on or chosen by) as the shipped classifier calls
 *     it: its confusion matrix, top-1 and per-class recall — the honest figure, scored once per batch
 *   - leave-one-scene-out over every photo: each photo classified by a scene model refitted without
 *     its scene (the photo and its twins: a stereo pair, two views of one panorama; read off
 *     MANIFEST's source) — on the `dev` photos alone (what the method was chosen by) and on all; its
 *     confusion matrix and per-class recall. The rules are not refitted per fold (tuned on the first
 *     45 photos; the person rule's BODY / BELIEVED_FACE chosen by leave-one-scene-out over 123). The
 *     "all" figure fits its folds on held-out labels too: report it, never choose settings by it.
 *   - top-1 of the shipped classifier, of the rules alone and leave-one-scene-out, over all, dev and
 *     held-out (the shipped classifier on dev is training accuracy: not a figure to quote)
 *   - whether every `person` photo's subject box contains its face centre
 *   - per-photo time: median / p90 of the labelled pass (after one warm-up photo; the model load is
 *     printed separately), as wall time and as the process's CPU time (all its threads), which does
 *     not stretch when other work shares the cores
 *   - memory and time: RSS and the median of the last 50 after every 50 of BENCH_REPEAT (default
 *     200) more inferences over the set (a plateau means no growth), with the load average
 * Timings on a shared 2-core VM drift with load: compare within one run.
 */
import { tuneMemory } from "@pic2video/server/ProcessMemory"

// As the service's processes start (packages/server/src/bin/*.ts), where inference runs: jemalloc and
// V8's small young generation, so the memory figures are the service's (plain glibc malloc creeps).
tuneMemory()
import type { ImageClass } from "@pic2video/domain/Requests"
import { Effect } from "effect"
import { loadavg } from "node:os"
import { classify, classifyByRules } from "../src/classify.ts"
import { fitSceneModel, SCENE_MODEL } from "../src/scene-model.ts"
import { makeVision, MODEL_NAME, type VisionResult } from "../src/Vision.ts"
import { CLASSES, type Entry, readManifest, SET_DIR } from "../training/classify-manifest.ts"

const dir = SET_DIR
const entries: Array<Entry> = readManifest()

const vision = makeVision()
const infer = (file: string) => Effect.runPromise(vision.infer(dir + file))
const pct = (a: ReadonlyArray<number>, p: number) => {
  const s = [...a].sort((x, y) => x - y)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]
}
const mb = () => Math.round(process.memoryUsage().rss / 1e6)

const load = () => loadavg().map((l) => l.toFixed(2)).join(" ")
console.log(`load average at start: ${load()}`)
const t0 = performance.now()
await infer(entries[0].file)
console.log(`model load + first photo: ${Math.round(performance.now() - t0)} ms, rss ${mb()} MB`)

/** CPU time of the whole process (main thread, the model's worker thread, sharp's threads) in ms. */
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const results: Array<{ e: Entry; r: VisionResult; ms: number; cpu: number }> = []
for (const e of entries) {
  const t = performance.now()
  const c = cpuMs()
  const r = await infer(e.file)
  results.push({ e, r, ms: performance.now() - t, cpu: cpuMs() - c })
}

const pad = (s: string | number, n: number) => String(s).padEnd(n)
console.log(
  "\n" + pad("file", 34) + pad("split", 9) + pad("label", 18) + pad("inferred", 18) + pad("conf", 7) + pad("ms", 6) +
    "subject"
)
for (const { e, r, ms } of results) {
  const mark = r.image_class === e.label ? " " : "✗"
  const s = r.subject ? `${r.subject.x},${r.subject.y} ${r.subject.width}x${r.subject.height}` : "-"
  console.log(
    pad(e.file, 34) + pad(e.split === "dev" ? "dev" : "held", 9) + pad(e.label, 18) + pad(mark + r.image_class, 18) +
      pad(r.confidence.toFixed(2), 7) + pad(Math.round(ms), 6) + s
  )
}

const confusion = (
  title: string,
  of: ReadonlyArray<(typeof results)[number]>,
  got: (x: (typeof results)[number]) => ImageClass
) => {
  console.log(`\nconfusion, ${title} (rows: label, columns: inferred)`)
  console.log(pad("", 18) + CLASSES.map((c) => pad(c.slice(0, 9), 10)).join(""))
  for (const a of CLASSES) {
    const row = CLASSES.map((b) => of.filter((x) => x.e.label === a && got(x) === b).length)
    console.log(pad(a, 18) + row.map((n) => pad(n, 10)).join(""))
  }
}
const share = (of: ReadonlyArray<(typeof results)[number]>, got: (x: (typeof results)[number]) => ImageClass) => {
  const ok = of.filter((x) => got(x) === x.e.label).length
  return `${ok}/${of.length} = ${((100 * ok) / Math.max(1, of.length)).toFixed(1)} %`
}
const shipped = (x: (typeof results)[number]) => x.r.image_class
const decide = (r: VisionResult, model: Parameters<typeof classify>[4]) =>
  classify(r.evidence.detections, r.evidence.stats, r.evidence.size, r.evidence.photo, model).image_class
const rulesOnly = new Map(
  results.map((
    x
  ) => [
    x,
    classifyByRules(x.r.evidence.detections, x.r.evidence.stats, x.r.evidence.size, x.r.evidence.photo).image_class
  ])
)
type Result = (typeof results)[number]
/** Leave-one-scene-out over `pool`: each photo decided by a scene model refitted on the other scenes' photos of the pool. */
const leaveOneSceneOut = (pool: ReadonlyArray<Result>) =>
  new Map(pool.map((x) => {
    const rest = pool.filter((y) => y.e.scene !== x.e.scene && y.r.evidence.detections.features !== undefined)
      .map((y) => ({ features: y.r.evidence.detections.features!, label: y.e.label }))
    return [x, decide(x.r, fitSceneModel(rest))]
  }))
const dev = results.filter((x) => x.e.split === "dev")
const held = results.filter((x) => x.e.split === "held-out")
const looDev = leaveOneSceneOut(dev)
const looAll = leaveOneSceneOut(results)

const recall = (of: ReadonlyArray<Result>, got: (x: Result) => ImageClass) =>
  CLASSES.map((c) => {
    const mine = of.filter((x) => x.e.label === c)
    return `${c} ${mine.filter((x) => got(x) === c).length}/${mine.length}`
  }).join(", ")
console.log(
  `\nscene model: ${
    SCENE_MODEL === null
      ? "none (rules only)"
      : `logistic regression, ${SCENE_MODEL.classes.length} classes over ${SCENE_MODEL.mean.length} features, rule weight ${SCENE_MODEL.ruleWeight}`
  }; photos with features: ${
    results.filter((x) => x.r.evidence.detections.features !== undefined).length
  }/${results.length}; ${MODEL_NAME}`
)
if (held.length > 0) {
  confusion("held-out (fresh batch), shipped classifier", held, shipped)
  console.log(
    `held-out top-1, shipped classifier: ${share(held, shipped)}   (rules alone ${
      share(held, (x) => rulesOnly.get(x)!)
    })`
  )
  console.log(`  per class: ${recall(held, shipped)}`)
} else {
  console.log("held-out: no fresh photos in the set yet")
}
confusion("leave-one-scene-out over all photos", results, (x) => looAll.get(x)!)
console.log(
  `top-1 accuracy                     shipped            rules alone        leave-one-scene-out (dev only | all)`
)
console.log(
  `  all        ${pad("", 23)}${pad(share(results, shipped), 19)}${pad(share(results, (x) => rulesOnly.get(x)!), 19)}${
    pad("", 19)
  } | ${share(results, (x) => looAll.get(x)!)}`
)
console.log(
  `  dev        (training photos)    ${pad(share(dev, shipped), 19)}${pad(share(dev, (x) => rulesOnly.get(x)!), 19)}${
    pad(share(dev, (x) => looDev.get(x)!), 19)
  } | ${share(dev, (x) => looAll.get(x)!)}`
)
if (held.length > 0) {
  console.log(
    `  held-out   (fresh: the honest)  ${pad(share(held, shipped), 19)}${
      pad(share(held, (x) => rulesOnly.get(x)!), 19)
    }${pad("", 19)} | ${share(held, (x) => looAll.get(x)!)}`
  )
}
console.log(`per-class recall, leave-one-scene-out: dev only: ${recall(dev, (x) => looDev.get(x)!)}`)
console.log(`                                       all:      ${recall(results, (x) => looAll.get(x)!)}`)
const people = results.filter((x) => x.e.label === "person" && x.e.face)
const faceIn = people.filter(({ e, r }) =>
  r.subject !== null && e.face !== undefined &&
  e.face[0] >= r.subject.x && e.face[0] <= r.subject.x + r.subject.width &&
  e.face[1] >= r.subject.y && e.face[1] <= r.subject.y + r.subject.height
)
console.log(
  `person subject box contains the face: ${faceIn.length}/${people.length}` +
    (faceIn.length < people.length
      ? ` (missed: ${people.filter((p) => !faceIn.includes(p)).map((p) => p.e.file).join(", ")})`
      : "")
)
const times = results.map((x) => x.ms)
console.log(
  `per-photo time (decode + inference): median ${Math.round(pct(times, 0.5))} ms, p90 ${
    Math.round(pct(times, 0.9))
  } ms, max ${Math.round(Math.max(...times))} ms (wall; load average now ${load()})`
)
const cpus = results.map((x) => x.cpu)
console.log(
  `per-photo CPU time (all threads of the process; about the wall time on idle cores, and it does not stretch with the load): median ${
    Math.round(pct(cpus, 0.5))
  } ms, p90 ${Math.round(pct(cpus, 0.9))} ms`
)

const repeat = Number(process.env.BENCH_REPEAT ?? 200)
const rssBefore = mb()
const loopTimes: Array<number> = []
const loopCpu: Array<number> = []
console.log(`memory: rss ${rssBefore} MB after the labelled pass; ${repeat} more inferences over the set:`)
for (let i = 0; i < repeat; i++) {
  const t = performance.now()
  const c = cpuMs()
  await infer(entries[i % entries.length].file)
  loopTimes.push(performance.now() - t)
  loopCpu.push(cpuMs() - c)
  if ((i + 1) % 50 === 0 || i + 1 === repeat) {
    console.log(
      `  after ${String(i + 1).padStart(3)}: rss ${mb()} MB, median of the last ${Math.min(50, loopTimes.length)}: ${
        Math.round(pct(loopTimes.slice(-50), 0.5))
      } ms wall, ${Math.round(pct(loopCpu.slice(-50), 0.5))} ms CPU; load ${load()}`
    )
  }
}
if (repeat > 0) {
  console.log(
    `median over all ${repeat}: ${Math.round(pct(loopTimes, 0.5))} ms wall, ${
      Math.round(pct(loopCpu, 0.5))
    } ms CPU; rss Δ ${mb() - rssBefore} MB; load average at end: ${load()}`
  )
}
process.exit(0)
