/**
 * `node packages/renderer/bench/classify-stages.ts [N]` — where an inference's time goes, stage by
 * stage, over the first N (default 60) photos of classify-set/ in this thread (medians, the first
 * photo left out as warm-up): decode + resize to the analysis raster (sharp), the colour statistics,
 * BlazeFace alone, CenterNet alone, both as Vision's worker runs them, and MoveNet. Then whether
 * CenterNet's graph runs at a smaller input than its 512 px (its placeholder opened to any size):
 * the time per size, or the error that size gets. Only timed; nothing is scored.
 */
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import sharp from "sharp"
import { createHuman, loadBodyPose } from "../src/platform/human.ts"
import { sceneStats } from "../src/vision/classify.ts"
import { readManifest, SET_DIR } from "./classify-manifest.ts"

const { human, modelDir } = await createHuman()
await human.load()
const tf = human.tf
const pose = await loadBodyPose(tf, modelDir)
if (pose === undefined) throw new Error(`no MoveNet files in ${modelDir}`)
const rows = readManifest().slice(0, Number(process.argv[2] ?? 60))
const med = (a: Array<number>) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
const raster = (file: string) =>
  sharp(SET_DIR + file).rotate().flatten({ background: "#ffffff" }).toColourspace("srgb")
    .resize(640, 640, { fit: "inside", kernel: "lanczos3" }).removeAlpha().raw().toBuffer({ resolveWithObject: true })
const ms = async (f: () => unknown) => {
  const t = performance.now()
  await f()
  return performance.now() - t
}

// Human merges a call's configuration into its own for good: every call says both switches
const only = (face: boolean, object: boolean) => ({ face: { enabled: face }, object: { enabled: object } })
const t: Record<string, Array<number>> = { decode: [], stats: [], blazeface: [], centernet: [], both: [], movenet: [] }
for (const [i, e] of rows.entries()) {
  const took: Record<string, number> = {}
  let raw!: Awaited<ReturnType<typeof raster>>
  took.decode = await ms(async () => (raw = await raster(e.file)))
  took.stats = await ms(() => sceneStats(raw.data, raw.info.width, raw.info.height))
  const tensor = tf.tensor3d(Uint8Array.from(raw.data), [raw.info.height, raw.info.width, 3], "int32")
  took.blazeface = await ms(() => human.detect(tensor, only(true, false)))
  took.centernet = await ms(() => human.detect(tensor, only(false, true)))
  took.both = await ms(() => human.detect(tensor, only(true, true)))
  took.movenet = await ms(() => pose(tensor))
  tensor.dispose()
  if (i > 0) for (const k in t) t[k].push(took[k])
}
console.log(`${rows.length - 1} photos, medians (ms): ${Object.entries(t).map(([k, v]) => `${k} ${Math.round(med(v))}`).join(", ")}; load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)

// CenterNet at other input sizes: the graph's placeholder opened to any height and width
const json = JSON.parse(readFileSync(join(modelDir, "centernet.json"), "utf8"))
for (const n of json.modelTopology.node) if (n.op === "Placeholder") n.attr.shape.shape.dim = [{ size: "1" }, { size: "-1" }, { size: "-1" }, { size: "3" }]
const dir = mkdtempSync(join(tmpdir(), "centernet-any-size-"))
writeFileSync(join(dir, "centernet.json"), JSON.stringify(json))
symlinkSync(join(modelDir, "centernet.bin"), join(dir, "centernet.bin"))
const model = await tf.loadGraphModel("file://" + join(dir, "centernet.json"))
for (const size of [512, 448, 384]) {
  const input = tf.zeros([1, size, size, 3])
  try {
    const times: Array<number> = []
    for (let i = 0; i < 6; i++) {
      times.push(await ms(async () => {
        const out = model.execute(input, ["tower_0/detections"])
        await out.data()
        out.dispose()
      }))
    }
    console.log(`CenterNet at ${size} px: median ${Math.round(med(times.slice(1)))} ms`)
  } catch (e) {
    console.log(`CenterNet at ${size} px: ${e instanceof Error ? e.message : String(e)}`)
  } finally {
    input.dispose()
  }
}
process.exit(0)
