/**
 * `node packages/renderer/bench/classify-dump.ts OUT.json` — what classify-levers-123.ts reads: for
 * every `dev` photo of classify-set/ (never the held-out ones) the detections, the colour statistics,
 * CenterNet's backbone layers (the squeeze-and-excite means, and block 14's map pooled on a 4×4 grid,
 * in halves and as a max) and an 8×8 colour layout. Human runs in this thread as in classify-levers.ts
 * (its setup is copied from there). About a minute.
 */
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import sharp from "sharp"
import { type BoxTuple, sceneStats } from "../src/vision/classify.ts"
import { writeFileSync } from "node:fs"
import { readManifest, SET_DIR } from "./classify-manifest.ts"

const require = createRequire(import.meta.url)
const humanDir = dirname(require.resolve("@vladmandic/human"))
const modelDir = join(humanDir, "..", "models")
const H = require(join(humanDir, "human.node-wasm.js"))
// as src/platform/vision-worker.ts configures it
const human = new H.Human({
  backend: "wasm",
  wasmPath: dirname(require.resolve("@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm")) + "/",
  modelBasePath: "file://" + modelDir + "/",
  debug: false,
  async: true,
  cacheSensitivity: 0,
  face: {
    enabled: true,
    detector: { rotation: false, maxDetected: 5, minConfidence: 0.3, return: false },
    mesh: { enabled: false },
    iris: { enabled: false },
    emotion: { enabled: false },
    description: { enabled: false },
    antispoof: { enabled: false },
    liveness: { enabled: false }
  },
  body: { enabled: false },
  hand: { enabled: false },
  gesture: { enabled: false },
  segmentation: { enabled: false },
  filter: { enabled: false },
  object: { enabled: true, minConfidence: 0.2, maxDetected: 10 }
})
const tf = human.tf
tf.io.registerLoadRouter((url: string | ReadonlyArray<string>) => {
  const u = Array.isArray(url) ? url[0] : url
  if (typeof u !== "string" || !u.startsWith("file://")) return null
  const file = new URL(u).pathname
  return {
    load: async () =>
      tf.io.getModelArtifactsForJSON(JSON.parse(await readFile(file, "utf8")), async (manifest: ReadonlyArray<{ paths: Array<string>; weights: Array<unknown> }>) => {
        const parts: Array<Buffer> = []
        for (const g of manifest) for (const p of g.paths) parts.push(await readFile(join(dirname(file), p)))
        const all = Buffer.concat(parts)
        return [manifest.flatMap((g) => g.weights), all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)]
      })
  }
})
await human.load()

// The layers read: the squeeze-and-excite means (the shipped one is block 14), the head's mean and
// block 14's map (pooled here into a max and a top and bottom half).
const NET = "tower_0/MobilenetV3/"
const MEANS: Record<string, string> = {
  se14: `${NET}expanded_conv_14/squeeze_excite/Mean`,
  se13: `${NET}expanded_conv_13/squeeze_excite/Mean`,
  se12: `${NET}expanded_conv_12/squeeze_excite/Mean`,
  se11: `${NET}expanded_conv_11/squeeze_excite/Mean`,
  se10: `${NET}expanded_conv_10/squeeze_excite/Mean`,
  head: "tower_0/CenternetHead/Mean"
}
const MAP = `${NET}expanded_conv_14/depthwise/hard_swish/mul_1`
type Tensor = { shape: Array<number>; dataSync: () => Float32Array; dispose: () => void }
let layers: Record<string, Array<number>> = {}
const centernet = human.models.models.centernet
const execute = centernet.execute.bind(centernet)
centernet.execute = (input: unknown, outputs: unknown) => {
  if (!(Array.isArray(outputs) && outputs[0] === "tower_0/detections")) return execute(input, outputs)
  const all = execute(input, ["tower_0/detections", ...Object.values(MEANS), MAP]) as Array<Tensor>
  layers = {}
  Object.keys(MEANS).forEach((k, i) => (layers[k] = Array.from(all[i + 1].dataSync())))
  const map = all[all.length - 1]
  const [, h, w, c] = map.shape
  const v = map.dataSync()
  const pool = (y0: number, y1: number) => {
    const r = new Array<number>(c).fill(0)
    for (let y = y0; y < y1; y++) for (let x = 0; x < w; x++) for (let i = 0; i < c; i++) r[i] += v[(y * w + x) * c + i] / ((y1 - y0) * w)
    return r
  }
  const G = 4
  const grid: Array<number> = []
  for (let gy = 0; gy < G; gy++) for (let gx = 0; gx < G; gx++) {
    const y0 = Math.floor((gy * h) / G), y1 = Math.floor(((gy + 1) * h) / G), x0 = Math.floor((gx * w) / G), x1 = Math.floor(((gx + 1) * w) / G)
    const r = new Array<number>(c).fill(0)
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) for (let i = 0; i < c; i++) r[i] += v[(y * w + x) * c + i] / ((y1 - y0) * (x1 - x0))
    grid.push(...r)
  }
  layers.grid = grid
  layers.mapshape = [h, w, c]
  layers.top = pool(0, Math.floor(h / 2))
  layers.bottom = pool(Math.floor(h / 2), h)
  layers.max = Array.from({ length: c }, (_, i) => {
    let m = -Infinity
    for (let p = 0; p < h * w; p++) m = Math.max(m, v[p * c + i])
    return m
  })
  for (const t of all.slice(1)) t.dispose()
  return all[0]
}


const out: Array<unknown> = []
// dev photos only: the held-out batch is never looked at while choosing
for (const e of readManifest().filter((e) => e.split === "dev")) {
  const img = sharp(SET_DIR + e.file).rotate().flatten({ background: "#ffffff" }).toColourspace("srgb").resize(640, 640, { fit: "inside", kernel: "lanczos3" })
  const { data, info } = await img.removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const t = tf.tensor3d(Uint8Array.from(data), [info.height, info.width, 3], "int32")
  const r = await human.detect(t)
  t.dispose()
  // colour layout: mean RGB on an 8x8 grid
  const G = 8
  const col: Array<number> = []
  for (let gy = 0; gy < G; gy++) for (let gx = 0; gx < G; gx++) {
    const y0 = Math.floor((gy * info.height) / G), y1 = Math.floor(((gy + 1) * info.height) / G), x0 = Math.floor((gx * info.width) / G), x1 = Math.floor(((gx + 1) * info.width) / G)
    let R = 0, Gg = 0, B = 0, n = 0
    for (let y = y0; y < y1; y += 2) for (let x = x0; x < x1; x += 2) { const i = (y * info.width + x) * 3; R += data[i]; Gg += data[i + 1]; B += data[i + 2]; n++ }
    col.push(R / n, Gg / n, B / n)
  }
  out.push({
    file: e.file, label: e.label, scene: e.scene, split: e.split, face: e.face ?? null,
    size: { width: info.width, height: info.height },
    photo: await sharp(SET_DIR + e.file).metadata().then((m) => ({ width: m.autoOrient?.width ?? m.width ?? 0, height: m.autoOrient?.height ?? m.height ?? 0 })),
    faces: r.face.map((f: { score: number; box: BoxTuple }) => ({ score: f.score, box: f.box })),
    objects: r.object.map((o: { label: string; score: number; box: BoxTuple }) => ({ label: o.label, score: o.score, box: o.box })),
    stats: sceneStats(data, info.width, info.height),
    layers, col
  })
  console.log(e.file)
}
writeFileSync(process.argv[2] ?? "/tmp/classify-dump.json", JSON.stringify(out))
console.log(`${out.length} dev photos written`)
process.exit(0)
