/**
 * `node packages/renderer/bench/classify-dump.ts OUT.json` — what classify-levers-123.ts reads: for
 * every `dev` photo of classify-set/ (never the held-out ones) the detections, the colour statistics,
 * CenterNet's backbone layers (the squeeze-and-excite means, and block 14's map pooled on a 4×4 grid,
 * in halves and as a max) and an 8×8 colour layout. Human runs in this thread as in classify-levers.ts
 * (both through classify-human.ts). About a minute.
 */
import { writeFileSync } from "node:fs"
import { analyse, human, lastLayers, tapLayers } from "./classify-human.ts"
import { readManifest } from "./classify-manifest.ts"

// block 14's map also pooled on a 4x4 grid
tapLayers(({ v, h, w, c }) => {
  const G = 4
  const grid: Array<number> = []
  for (let gy = 0; gy < G; gy++) for (let gx = 0; gx < G; gx++) {
    const y0 = Math.floor((gy * h) / G), y1 = Math.floor(((gy + 1) * h) / G), x0 = Math.floor((gx * w) / G), x1 = Math.floor(((gx + 1) * w) / G)
    const r = new Array<number>(c).fill(0)
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) for (let i = 0; i < c; i++) r[i] += v[(y * w + x) * c + i] / ((y1 - y0) * (x1 - x0))
    grid.push(...r)
  }
  return { grid, mapshape: [h, w, c] }
})

const out: Array<unknown> = []
// dev photos only: the held-out batch is never looked at while choosing
for (const e of readManifest().filter((e) => e.split === "dev")) {
  const { data, info, tensor, row } = await analyse(e)
  const r = await human.detect(tensor)
  tensor.dispose()
  // colour layout: mean RGB on an 8x8 grid
  const G = 8
  const col: Array<number> = []
  for (let gy = 0; gy < G; gy++) for (let gx = 0; gx < G; gx++) {
    const y0 = Math.floor((gy * info.height) / G), y1 = Math.floor(((gy + 1) * info.height) / G), x0 = Math.floor((gx * info.width) / G), x1 = Math.floor(((gx + 1) * info.width) / G)
    let R = 0, Gg = 0, B = 0, n = 0
    for (let y = y0; y < y1; y += 2) for (let x = x0; x < x1; x += 2) { const i = (y * info.width + x) * 3; R += data[i]; Gg += data[i + 1]; B += data[i + 2]; n++ }
    col.push(R / n, Gg / n, B / n)
  }
  out.push({ ...row(r), layers: lastLayers(), col })
  console.log(e.file)
}
writeFileSync(process.argv[2] ?? "/tmp/classify-dump.json", JSON.stringify(out))
console.log(`${out.length} dev photos written`)
process.exit(0)
