/**
 * `node packages/renderer/bench/classify-embedding.ts DUMP.json [NSFWJS_DIR] [a|layers|keras]` — does a
 * general image embedding make a better scene model than CenterNet's pooled backbone? (4th session:
 * it does not; README, Vision model, "A second network".) The candidate is the MobileNetV2 (width 1.4,
 * ImageNet-trained, fine-tuned for nsfwjs' five categories) that npm's nsfwjs 4.4.0 ships as JS
 * modules (dist/models/mobilenet_v2_mid: a TF.js graph model, its weights base64 inside; the
 * package's smaller mobilenet_v2 is a Keras layers model, which Human's tfjs build cannot load:
 * `keras` mode runs it layer by layer). Its last layer (1792 channels) averaged over the frame is
 * the embedding. It runs on Human's own tfjs (the same
 * WASM backend). nsfwjs is not a dependency of the project: NSFWJS_DIR is the unpacked package
 * (`npm pack nsfwjs@4.4.0 && tar xzf nsfwjs-4.4.0.tgz` gives `package/`; default node_modules/nsfwjs).
 *
 * First run (~3 min): every photo of classify-set/ whose split is `dev` or that belongs to the fifth
 * batch (scored once already, so it may be fitted on now; see MANIFEST) — detections, colour
 * statistics, CenterNet's 720 pooled values, the embedding at 224, 192 and 160 px and the expansions
 * of blocks 16, 13 and 10 at 224, with timings — written to DUMP.json. Later runs read DUMP.json.
 * Then leave-one-scene-out (scenes as classify-manifest.ts derives them; scene-model.ts's fit,
 * standardised per fold) for:
 *   (a) the shipped pipeline (CenterNet's 720 values, person from the rules) — `a` stops here
 *   (b) the embedding instead   (c) both side by side (each standardised, then weighted)
 *   (d) (b)/(c) with `person` also a class of the model, taken when the rules say not-person
 * at a few λ, rule weights and input sizes (~10 min); `layers`: (b) and (c) with the earlier layers;
 * `keras` (NSFWJS_DIR needed): adds the smaller MobileNetV2's layers to DUMP.json, then (b)-(d) on them.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { loadavg } from "node:os"
import type { ImageClass } from "../src/CaptionSpec.ts"
import { classifyByRules, type Inference, MIN_CONFIDENCE } from "../src/vision/classify.ts"
import { CLASSES, readManifest } from "./classify-manifest.ts"
import { fitDual } from "./classify-dual-fit.ts"
import type { PhotoRow } from "./classify-human.ts"

interface Photo extends PhotoRow {
  se14: Array<number>
  emb: Record<string, Array<number>>
  ms: Record<string, number>
}

const out = process.argv[2] ?? "/tmp/classify-embedding.json"
const load = () => loadavg().map((l) => l.toFixed(2)).join(" ")

const dump = async (): Promise<Array<Photo>> => {
  const { analyse, human, lastLayers, tapLayers, tf } = await import("./classify-human.ts")
  tapLayers()
  const dir = process.argv[3] ?? join(new URL("../../../node_modules/nsfwjs", import.meta.url).pathname)
  const require = createRequire(import.meta.url)
  const unwrap = (m: unknown) => (m as { default?: unknown }).default ?? m
  const modelDir = join(dir, "dist/models/mobilenet_v2_mid")
  const json = unwrap(require(join(modelDir, "model.min.js"))) as { modelTopology: unknown; weightsManifest: Array<{ paths: Array<string>; weights: Array<unknown> }> }
  const parts = json.weightsManifest.flatMap((g) => g.paths.map((p) => Buffer.from(unwrap(require(join(modelDir, p + ".min.js"))) as string, "base64")))
  const all = Buffer.concat(parts)
  // the graph fixes its input at 224 × 224; the convolutions take any size (the mean is taken here)
  type Node = { name: string; attr?: { shape?: { shape?: { dim?: Array<{ size: string }> } } } }
  const input = (json.modelTopology as { node: Array<Node> }).node.find((n) => n.name === "input")
  for (const d of input?.attr?.shape?.shape?.dim?.slice(1, 3) ?? []) d.size = "-1"
  const net = await tf.loadGraphModel({
    load: async () => ({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
      weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)
    })
  })
  const NET = "StatefulPartitionedCall/sequential/keras_layer/StatefulPartitionedCall/StatefulPartitionedCall/StatefulPartitionedCall/predict/MobilenetV2/"
  // the last layer (what the fine-tuned head reads) and, less touched by the fine-tuning, the
  // expansions of blocks 16, 13 and 10 (each averaged over the frame)
  const LAYERS: Record<string, string> = { last: "Conv_1/Relu6", e16: "expanded_conv_16/expand/Relu6", e13: "expanded_conv_13/expand/Relu6", e10: "expanded_conv_10/expand/Relu6" }
  const embed = (t: unknown, side: number, names: Array<string>) => {
    const maps = tf.tidy(() => net.execute(tf.expandDims(tf.image.resizeBilinear(tf.div(tf.cast(t, "float32"), 255), [side, side], true), 0), names.map((n) => NET + LAYERS[n])))
    const list = Array.isArray(maps) ? maps : [maps]
    const v = Object.fromEntries(names.map((n, i) => {
      const pooled = tf.tidy(() => tf.reshape(tf.mean(list[i], [1, 2]), [-1]))
      const a = Array.from(pooled.dataSync() as Float32Array)
      pooled.dispose()
      return [n, a]
    }))
    tf.dispose(list)
    return v
  }
  const SIDES = [224, 192, 160]
  const rows = readManifest()
  const photos: Array<Photo> = []
  console.log(`load average at start: ${load()}`)
  for (const e of rows) {
    if (e.split !== "dev") continue
    const { tensor: t, row } = await analyse(e)
    let t0 = performance.now()
    const r = await human.detect(t)
    const ms: Record<string, number> = { detect: performance.now() - t0 }
    const emb: Record<string, Array<number>> = {}
    for (const side of SIDES) {
      t0 = performance.now()
      emb[side] = embed(t, side, ["last"]).last
      ms[side] = performance.now() - t0
    }
    Object.assign(emb, embed(t, 224, ["e16", "e13", "e10"]))
    t.dispose()
    photos.push({ ...row(r), se14: lastLayers().se14, emb, ms })
    process.stdout.write(".")
  }
  console.log(`\n${photos.length} photos; tensors alive ${tf.memory().numTensors}; load average at end: ${load()}`)
  writeFileSync(out, JSON.stringify(photos))
  return photos
}

/**
 * `keras` mode: nsfwjs' smaller MobileNetV2 (width 1.0, dist/models/mobilenet_v2), a Keras layers
 * model whose first blocks were frozen in its training (`trainable: false`: ImageNet's weights) —
 * run here layer by layer on Human's tfjs (it has no tfjs-layers); its out_relu and the expansions of
 * blocks 16 and 13, averaged over the frame, are added to DUMP.json as k_last, k16, k13. Its own
 * head is run too and its five-category answer printed for a few photos (a check of the decoding).
 */
const kerasEmbeddings = async (photos: Array<Photo>) => {
  const { analyse, tf } = await import("./classify-human.ts")
  const require = createRequire(import.meta.url)
  const unwrap = (m: unknown) => (m as { default?: unknown }).default ?? m
  const modelDir = join(process.argv[3], "dist/models/mobilenet_v2")
  type Layer = { class_name: string; config: Record<string, any>; inbound_nodes: Array<Array<[string, number, number]>> }
  const json = unwrap(require(join(modelDir, "model.min.js"))) as { modelTopology: { model_config: { config: { layers: Array<Layer> } } }; weightsManifest: Array<{ paths: Array<string>; weights: Array<unknown> }> }
  const data = Buffer.from(unwrap(require(join(modelDir, "group1-shard1of1.min.js"))) as string, "base64")
  const W = tf.io.decodeWeights(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength), json.weightsManifest.flatMap((g) => g.weights))
  const layers = json.modelTopology.model_config.config.layers
  const WANT: Record<string, string> = { out_relu: "k_last", block_16_expand_relu: "k16", block_13_expand_relu: "k13" }
  const run = (x: unknown) => tf.tidy(() => {
    const v: Record<string, any> = {}
    const taken: Record<string, unknown> = {}
    for (const l of layers) {
      const c = l.config
      const name = c.name as string
      const inp = (l.inbound_nodes[0] ?? []).map((n) => v[n[0]])
      const w = (k: string) => W[`${name}/${k}`]
      switch (l.class_name) {
        case "InputLayer": v[name] = x; break
        case "ZeroPadding2D": v[name] = tf.pad(inp[0], [[0, 0], c.padding[0], c.padding[1], [0, 0]]); break
        case "Conv2D": v[name] = tf.conv2d(inp[0], w("kernel"), c.strides, c.padding); break
        case "DepthwiseConv2D": v[name] = tf.depthwiseConv2d(inp[0], w("depthwise_kernel"), c.strides, c.padding); break
        case "BatchNormalization": v[name] = tf.batchNorm(inp[0], w("moving_mean"), w("moving_variance"), w("beta"), w("gamma"), c.epsilon); break
        case "ReLU": v[name] = tf.clipByValue(inp[0], 0, c.max_value); break
        case "Add": v[name] = tf.add(inp[0], inp[1]); break
        case "AveragePooling2D": v[name] = tf.reshape(tf.mean(inp[0], [1, 2]), [1, -1]); break // 7 × 7 at 224 px: the whole map
        case "Flatten": v[name] = inp[0]; break
        case "Dropout": v[name] = inp[0]; break
        case "Dense": {
          const z = tf.add(tf.matMul(inp[0], w("kernel")), w("bias"))
          v[name] = c.activation === "relu" ? tf.relu(z) : c.activation === "softmax" ? tf.softmax(z) : z
          break
        }
        default: throw new Error(`unknown layer ${l.class_name}`)
      }
      if (WANT[name]) taken[WANT[name]] = tf.reshape(tf.mean(v[name], [1, 2]), [-1])
    }
    return { ...taken, head: v[layers[layers.length - 1].config.name] } as Record<string, any>
  })
  const ms: Array<number> = []
  for (const [i, p] of photos.entries()) {
    const { tensor: t } = await analyse(p)
    const t0 = performance.now()
    const x = tf.tidy(() => tf.expandDims(tf.image.resizeBilinear(tf.div(tf.cast(t, "float32"), 255), [224, 224], true), 0))
    const r = run(x)
    for (const k of Object.values(WANT)) p.emb[k] = Array.from(r[k].dataSync() as Float32Array)
    ms.push(performance.now() - t0)
    if (i % 40 === 0) console.log(`${p.file}: nsfwjs head (drawing, hentai, neutral, porn, sexy) ${Array.from(r.head.dataSync() as Float32Array).map((v) => v.toFixed(2)).join(" ")}`)
    tf.dispose([t, x, ...Object.values(r)])
  }
  console.log(`keras MobileNetV2 1.0 at 224 px: median ${Math.round(median(ms.slice(1)))} ms a photo; tensors alive ${tf.memory().numTensors}; load average ${load()}`)
  writeFileSync(out, JSON.stringify(photos))
}
const median = (a: Array<number>) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]

const photos: Array<Photo> = existsSync(out) ? JSON.parse(readFileSync(out, "utf8")) : await dump()
if (process.argv[4] === "keras") await kerasEmbeddings(photos)
console.log(`${photos.length} dev photos. Median ms per photo (this thread, warm; first photo dropped): ` +
  Object.keys(photos[0].ms).map((k) => `${k === "detect" ? "both detectors" : `embedding ${k} px`} ${Math.round(median(photos.slice(1).map((p) => p.ms[k])))}`).join(", "))

const rules = new Map<Photo, Inference>(photos.map((p) => [p, classifyByRules({ faces: p.faces, objects: p.objects }, p.stats, p.size, p.photo)]))
const SCENE: ReadonlyArray<ImageClass> = ["doll_figurine", "landscape_nature", "product_object", "interior_space", "other"]
/** Gram matrix of the blocks' features, each standardised over the training rows (as scene-model.ts does per fit). */
const gramOf = (blocks: Array<{ X: Array<Array<number>>; w: number }>, tr: Array<number>) => {
  const n = photos.length
  const G = photos.map(() => new Float64Array(n))
  for (const { X, w } of blocks) {
    const d = X[0].length
    const mean = new Float64Array(d)
    for (const i of tr) for (let j = 0; j < d; j++) mean[j] += X[i][j] / tr.length
    const scale = new Float64Array(d)
    for (const i of tr) for (let j = 0; j < d; j++) scale[j] += (X[i][j] - mean[j]) ** 2 / tr.length
    for (let j = 0; j < d; j++) scale[j] = (Math.sqrt(scale[j]) + 1e-6) / w
    const Z = X.map((x) => Float64Array.from(x, (v, j) => (v - mean[j]) / scale[j]))
    for (let a = 0; a < n; a++) for (let b = a; b < n; b++) {
      let t = 0
      for (let j = 0; j < d; j++) t += Z[a][j] * Z[b][j]
      G[a][b] += t
      if (b !== a) G[b][a] += t
    }
  }
  return G
}
const report = (name: string, got: Map<Photo, ImageClass>) => {
  const ok = photos.filter((p) => got.get(p) === p.label).length
  const per = CLASSES.map((c) => `${c.slice(0, 5)} ${photos.filter((p) => p.label === c && got.get(p) === c).length}/${photos.filter((p) => p.label === c).length}`)
  const falsePersons = photos.filter((p) => p.label !== "person" && got.get(p) === "person").length
  console.log(`${String(ok).padStart(3)}/${photos.length} ${((100 * ok) / photos.length).toFixed(1).padStart(5)} %  ${per.join(" ")}  false persons ${falsePersons}  ${name}`)
  return got
}

/**
 * Leave-one-scene-out with scene-model.ts's fuse: the rules' class gets `ruleWeight`, the model must
 * be at least MIN_CONFIDENCE sure to overturn it. `personToo`: the model also knows `person` (fitted
 * on the people too) and may call one where the rules did not; a rules' person stays a person.
 */
const loso = (name: string, blocks: Record<string, number>, lambda: number, ruleWeight: number, personToo = false) => {
  const idx = photos.map((_, i) => i)
  const X = Object.entries(blocks).map(([k, w]) => ({ X: photos.map((p) => (k === "se14" ? p.se14 : p.emb[k])), w }))
  const classes = personToo ? (["person", ...SCENE] as Array<ImageClass>) : SCENE
  const got = new Map<Photo, ImageClass>()
  for (const scene of new Set(photos.map((p) => p.scene))) {
    const test = idx.filter((i) => photos[i].scene === scene)
    if (test.every((i) => rules.get(photos[i])!.image_class === "person")) {
      for (const i of test) got.set(photos[i], "person")
      continue
    }
    const tr = idx.filter((i) => photos[i].scene !== scene && classes.includes(photos[i].label))
    const prob = fitDual(gramOf(X, tr), tr, tr.map((i) => classes.indexOf(photos[i].label)), classes.length, lambda)
    for (const i of test) {
      const p = photos[i]
      const r = rules.get(p)!.image_class
      if (r === "person") {
        got.set(p, "person")
        continue
      }
      const pr = prob(i)
      const scored = pr.map((v, k) => v + (classes[k] === r ? ruleWeight : 0))
      const best = scored.indexOf(Math.max(...scored))
      got.set(p, classes[best] === r || pr[best] < MIN_CONFIDENCE ? r : classes[best])
    }
  }
  return report(`${name} ${JSON.stringify(blocks)} λ ${lambda} rule weight ${ruleWeight}${personToo ? " person too" : ""}`, got)
}

const only = process.argv[4] // a | layers | keras | (none: the rest)
console.log(`rules alone: ${photos.filter((p) => rules.get(p)!.image_class === p.label).length}/${photos.length}; load average ${load()}`)
const shipped = loso("(a) shipped", { se14: 1 }, 0.01, 0.3)
if (only === "keras") {
  for (const k of ["k_last", "k16", "k13"]) loso(`(b) ${k}`, { [k]: 1 }, 0.01, 0.3)
  for (const k of ["k_last", "k16", "k13"]) loso(`(c) ${k}`, { se14: 1, [k]: 1 }, 0.01, 0.3)
  loso("(c) k_last at half weight", { se14: 1, k_last: 0.5 }, 0.01, 0.3)
  loso("(d) k_last", { se14: 1, k_last: 1 }, 0.01, 0.3, true)
}
if (only === "layers") {
  // the embedding's earlier layers, less fitted to nsfwjs' categories
  for (const k of ["e16", "e13", "e10"]) loso(`(b) ${k}`, { [k]: 1 }, 0.01, 0.3)
  for (const k of ["e16", "e13", "e10"]) loso(`(c) ${k}`, { se14: 1, [k]: 1 }, 0.01, 0.3)
  loso("(c) e13 at half weight", { se14: 1, e13: 0.5 }, 0.01, 0.3)
  loso("(c) last at half weight", { se14: 1, 224: 0.5 }, 0.01, 0.3)
}
if (only === undefined) {
  const b = loso("(b) embedding", { 224: 1 }, 0.01, 0.3)
  const c = loso("(c) both", { se14: 1, 224: 1 }, 0.01, 0.3)
  for (const lambda of [0.003, 0.03, 0.1]) loso("(b) λ", { 224: 1 }, lambda, 0.3)
  for (const rw of [0.15, 0.5]) loso("(b) rule weight", { 224: 1 }, 0.01, rw)
  loso("(c) λ", { se14: 1, 224: 1 }, 0.03, 0.3)
  for (const side of ["192", "160"]) loso(`(b) at ${side} px`, { [side]: 1 }, 0.01, 0.3)
  loso("(d) embedding", { 224: 1 }, 0.01, 0.3, true)
  loso("(d) both", { se14: 1, 224: 1 }, 0.01, 0.3, true)
  const moved = (m: Map<Photo, ImageClass>) => photos.filter((p) => m.get(p) !== shipped.get(p)).map((p) => `${p.file} ${p.label}: ${shipped.get(p)} → ${m.get(p)}`)
  console.log("\n(b) against (a):\n  " + moved(b).join("\n  "))
  console.log("\n(c) against (a):\n  " + moved(c).join("\n  "))
}
console.log(`load average at end: ${load()}`)
process.exit(0)
