/**
 * `node packages/renderer/bench/classify-levers-123.ts DUMP.json [person|screen]` — the levers tried
 * on the 123 `dev` photos after the fourth batch joined them (README, Vision model: "The person rule's
 * thresholds"). DUMP.json comes from `node packages/renderer/bench/classify-dump.ts DUMP.json` (dev
 * photos only). Every figure is leave-one-scene-out top-1 over the six classes, scenes as
 * classify-manifest.ts derives them; `person` stays with the rules.
 *
 *   person: the person rule's two thresholds (body, believed face with a body) and the lone face's,
 *     swept over a copy of classify.ts with them as variables; the scene model refitted per fold
 *     exactly as scene-model.ts does (per-fold standardisation). The rule thresholds are not fitted:
 *     the sweep reads them off the same folds (say so when quoting it).
 *   screen: the scene model's inputs and settings with the shipped person rule — spatial pooling of
 *     the deepest map, colour layout, statistics, the rules' class, λ × rule weight. For speed the
 *     features are standardised once over all photos (no labels read, but not per fold), so each
 *     block's Gram matrix is computed once; its base line reproduces the exact figure.
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs"
import type { ImageClass } from "../src/CaptionSpec.ts"
import type { Inference } from "../src/vision/classify.ts"
import { MIN_CONFIDENCE } from "../src/vision/classify.ts"
import { SCENE_CLASSES } from "../src/vision/scene-model.ts"
import { CLASSES } from "./classify-manifest.ts"
import { fitDual } from "./classify-dual-fit.ts"
import type { PhotoRow } from "./classify-human.ts"

/** `photo`: the file's displayed size (MANIFEST's face centres are in it). */
interface Photo extends PhotoRow {
  layers: Record<string, Array<number>>
  col: Array<number>
  rules: ImageClass
  rulesInf: Inference
}
const photos: Array<Photo> = (JSON.parse(readFileSync(process.argv[2], "utf8")) as Array<Photo>).filter((p) => p.split === "dev")
const mode = process.argv[3] ?? "person"

// classify.ts with the person rule's thresholds as variables (the copy is removed once loaded)
const source = readFileSync(new URL("../src/vision/classify.ts", import.meta.url), "utf8")
const swaps: Array<[string, string]> = [
  ["p.score >= BODY && overlap", "p.score >= LEVER.body && overlap"],
  ["face.score >= 0.75 ||", "face.score >= LEVER.alone ||"],
  ["face.score >= BELIEVED_FACE && corroborated", "face.score >= LEVER.face && corroborated"]
]
let variant = source
for (const [a, b] of swaps) {
  if (!variant.includes(a)) throw new Error(`classify.ts has changed: no "${a}"`)
  variant = variant.replace(a, b)
}
variant += "\nexport const LEVER = { body: BODY, face: BELIEVED_FACE, alone: 0.75 }\n"
const variantFile = new URL("../src/vision/classify.lever-variant.ts", import.meta.url)
writeFileSync(variantFile, variant)
const V = await import(variantFile.href)
unlinkSync(variantFile)
const setRules = () => {
  for (const p of photos) {
    p.rulesInf = V.classifyByRules({ faces: p.faces, objects: p.objects }, p.stats, p.size, p.photo)
    p.rules = p.rulesInf.image_class
  }
}
setRules()

const K = SCENE_CLASSES.length
const C = 720
const cell = (p: Photo, gy: number, gx: number) => p.layers.grid.slice((gy * 4 + gx) * C, (gy * 4 + gx + 1) * C)
const avg = (a: Array<Array<number>>) => a[0].map((_, i) => a.reduce((s, v) => s + v[i], 0) / a.length)
const rows = (p: Photo, r0: number, r1: number) => {
  const a: Array<Array<number>> = []
  for (let y = r0; y < r1; y++) for (let x = 0; x < 4; x++) a.push(cell(p, y, x))
  return avg(a)
}
const blocks: Record<string, (p: Photo) => Array<number>> = {
  se14: (p) => p.layers.se14,
  g2: (p) => [[0, 0], [0, 2], [2, 0], [2, 2]].flatMap(([y0, x0]) => avg([cell(p, y0, x0), cell(p, y0, x0 + 1), cell(p, y0 + 1, x0), cell(p, y0 + 1, x0 + 1)])),
  tb: (p) => [...rows(p, 0, 2), ...rows(p, 2, 4)],
  rows3: (p) => [...rows(p, 0, 1), ...rows(p, 1, 3), ...rows(p, 3, 4)],
  center: (p) => avg([cell(p, 1, 1), cell(p, 1, 2), cell(p, 2, 1), cell(p, 2, 2)]),
  ring: (p) => avg([0, 1, 2, 3].flatMap((y) => [0, 1, 2, 3].filter((x) => y === 0 || y === 3 || x === 0 || x === 3).map((x) => cell(p, y, x)))),
  col2: (p) => {
    const o: Array<number> = []
    for (let gy = 0; gy < 2; gy++) for (let gx = 0; gx < 2; gx++) for (let ch = 0; ch < 3; ch++) {
      let s = 0
      for (let y = gy * 4; y < gy * 4 + 4; y++) for (let x = gx * 4; x < gx * 4 + 4; x++) s += p.col[(y * 8 + x) * 3 + ch]
      o.push(s / 16)
    }
    return o
  },
  stats: (p) => [p.stats.skyTop, p.stats.green, p.stats.plainBorder, p.stats.figureShare, p.stats.vegetation, p.stats.edges, p.stats.rectilinear, p.stats.vertical],
  rules: (p) => SCENE_CLASSES.map((c) => (c === p.rules ? 1 : 0))
}

/** Gram matrices of standardised features; `ofFold` standardises over `train` (exact) when given. */
const gramOf = (X: Array<Array<number>>, rowsUsed: Array<number>) => {
  const d = X[0].length
  const n = rowsUsed.length
  const mean = new Array<number>(d).fill(0)
  for (const i of rowsUsed) X[i].forEach((v, j) => (mean[j] += v / n))
  const scale = mean.map((m, j) => Math.sqrt(rowsUsed.reduce((a, i) => a + (X[i][j] - m) ** 2, 0) / n) + 1e-6)
  const Z = X.map((x) => x.map((v, j) => (v - mean[j]) / scale[j]))
  return Z.map((a) => Z.map((c) => {
    let t = 0
    for (let j = 0; j < d; j++) t += a[j] * c[j]
    return t
  }))
}
const report = (name: string, got: Map<Photo, ImageClass>) => {
  const ok = photos.filter((p) => got.get(p) === p.label).length
  const per = CLASSES.map((c) => `${c.slice(0, 5)} ${photos.filter((p) => p.label === c && got.get(p) === c).length}/${photos.filter((p) => p.label === c).length}`)
  const people = photos.filter((p) => p.label === "person" && p.face !== null)
  const faceIn = people.filter((p) => {
    const s = p.rulesInf.subject
    const c = got.get(p)
    return s !== null && c !== "landscape_nature" && c !== "interior_space" && p.face![0] >= s.x && p.face![0] <= s.x + s.width && p.face![1] >= s.y && p.face![1] <= s.y + s.height
  }).length
  console.log(`${String(ok).padStart(3)}/${photos.length}  ${per.join(" ")}  face-in-box ${faceIn}/${people.length}  ${name}`)
}
/** Leave-one-scene-out with the shipped fuse (scene-model.ts): person stays the rules', the rules' class gets `ruleWeight`. */
const loso = (name: string, bw: Record<string, number>, lambda = 0.01, ruleWeight = 0.3, exact = false) => {
  const idx = photos.map((_, i) => i)
  const X = Object.fromEntries(Object.keys(bw).map((k) => [k, photos.map(blocks[k])]))
  const globalG = exact ? null : Object.fromEntries(Object.keys(bw).map((k) => [k, gramOf(X[k], idx)]))
  const got = new Map<Photo, ImageClass>()
  for (const scene of new Set(photos.map((p) => p.scene))) {
    const test = idx.filter((i) => photos[i].scene === scene)
    if (test.every((i) => photos[i].rules === "person")) {
      for (const i of test) got.set(photos[i], "person")
      continue
    }
    const tr = idx.filter((i) => photos[i].scene !== scene && photos[i].label !== "person")
    const parts = Object.entries(bw).map(([k, w]) => ({ w, G: globalG ? globalG[k] : gramOf(X[k], tr) }))
    const G = idx.map((i) => idx.map((j) => parts.reduce((s, { w, G }) => s + w * w * G[i][j], 0)))
    const prob = fitDual(G, tr, tr.map((i) => SCENE_CLASSES.indexOf(photos[i].label)), K, lambda)
    for (const i of test) {
      const p = photos[i]
      if (p.rules === "person") {
        got.set(p, "person")
        continue
      }
      const pr = prob(i)
      const scored = pr.map((v, k) => v + (SCENE_CLASSES[k] === p.rules ? ruleWeight : 0))
      const best = scored.indexOf(Math.max(...scored))
      got.set(p, SCENE_CLASSES[best] === p.rules || pr[best] < MIN_CONFIDENCE ? p.rules : SCENE_CLASSES[best])
    }
  }
  report(`${name} ${JSON.stringify(bw)} λ ${lambda} rule weight ${ruleWeight}${exact ? "" : " (screen)"}`, got)
}

console.log(`${photos.length} dev photos; the rules alone (as shipped): ${photos.filter((p) => p.rules === p.label).length}/${photos.length}`)
if (mode === "person") {
  for (const body of [0.2, 0.25, 0.3]) for (const face of [0.6, 0.65, 0.7]) for (const alone of [0.7, 0.75]) {
    Object.assign(V.LEVER, { body, face, alone })
    setRules()
    loso(`person rule body ${body} face-with-body ${face} face alone ${alone}`, { se14: 1 }, 0.01, 0.3, true)
  }
} else {
  const variants: Array<[string, Record<string, number>]> = [
    ["shipped", { se14: 1 }], ["+2x2 grid", { se14: 1, g2: 1 }], ["+2x2 grid, half weight", { se14: 1, g2: 0.5 }],
    ["+top/bottom", { se14: 1, tb: 1 }], ["+top/bottom, half", { se14: 1, tb: 0.5 }], ["+3 rows, half", { se14: 1, rows3: 0.5 }],
    ["+centre/ring", { se14: 1, center: 0.7, ring: 0.7 }], ["2x2 grid alone", { g2: 1 }], ["+colour layout ×3", { se14: 1, col2: 3 }],
    ["+statistics ×3", { se14: 1, stats: 3 }], ["+rules' class ×5", { se14: 1, rules: 5 }], ["+2x2 half +rules' class ×5", { se14: 1, g2: 0.5, rules: 5 }],
    ["+top/bottom half +statistics ×3", { se14: 1, tb: 0.5, stats: 3 }]
  ]
  for (const [name, bw] of variants) loso(name, bw)
  for (const lambda of [0.005, 0.01, 0.02, 0.05]) for (const rw of [0.15, 0.2, 0.3, 0.4]) loso("λ × rule weight", { se14: 1 }, lambda, rw)
}
process.exit(0)
