/**
 * The classify benches' Human, run in this thread (not through Vision's worker) so that CenterNet's
 * graph can be asked for more of its layers than the shipped tap does. Human and its configuration
 * are the service's (src/platform/human.ts); the tap here is the benches' own.
 */
import sharp from "sharp"
import { createHuman } from "../src/platform/human.ts"
import { type BoxTuple, sceneStats } from "../src/vision/classify.ts"
import { type Entry, SET_DIR } from "./classify-manifest.ts"

export const { human, modelDir } = await createHuman()
export const tf = human.tf
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
/** Block 14's map as read: values (h × w × c, channels last) and its shape. */
export interface LayerMap { readonly v: Float32Array; readonly h: number; readonly w: number; readonly c: number }
let layers: Record<string, Array<number>> = {}

/**
 * Wraps CenterNet's `execute` so that each detection pass also reads the layers above; `extra` adds a
 * script's own readings of the map (placed after the means, before top, bottom and max).
 * `lastLayers()` gives the last pass's layers.
 */
export const tapLayers = (extra?: (map: LayerMap) => Record<string, Array<number>>) => {
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
    if (extra !== undefined) Object.assign(layers, extra({ v, h, w, c }))
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
}
export const lastLayers = () => layers

/**
 * One photo of the set as the dump benches read it: the analysis raster (as Vision makes it: 640 px,
 * sRGB on white) as a tensor for the caller to run and dispose, and `row`, what every dump records of
 * the photo beside its own extras — labels, sizes, Human's detections and the colour statistics.
 */
export const analyse = async (e: Pick<Entry, "file" | "label" | "split" | "scene"> & { readonly face?: readonly [number, number] | null | undefined }) => {
  const img = sharp(SET_DIR + e.file).rotate().flatten({ background: "#ffffff" }).toColourspace("srgb").resize(640, 640, { fit: "inside", kernel: "lanczos3" })
  const { data, info } = await img.removeAlpha().raw().toBuffer({ resolveWithObject: true })
  const meta = await sharp(SET_DIR + e.file).metadata()
  const tensor = tf.tensor3d(Uint8Array.from(data), [info.height, info.width, 3], "int32")
  const row = (r: { face: Array<{ score: number; box: BoxTuple }>; object: Array<{ label: string; score: number; box: BoxTuple }> }) => ({
    file: e.file, label: e.label, scene: e.scene, split: e.split, face: e.face ?? null,
    size: { width: info.width, height: info.height },
    photo: { width: meta.autoOrient?.width ?? meta.width ?? 0, height: meta.autoOrient?.height ?? meta.height ?? 0 },
    faces: r.face.map((f) => ({ score: f.score, box: f.box })),
    objects: r.object.map((o) => ({ label: o.label, score: o.score, box: o.box })),
    stats: sceneStats(data, info.width, info.height)
  })
  return { data, info, tensor, row }
}
/** A dump's per-photo record, as `analyse` builds it (the benches that read a dump extend it). */
export type PhotoRow = ReturnType<Awaited<ReturnType<typeof analyse>>["row"]>
