/**
 * The service's Human (BlazeFace face detector and CenterNet COCO object detector on TensorFlow.js'
 * WebAssembly backend), configured once: vision-worker.ts runs it, and the classify benches run the
 * same one in their own thread. Everything it loads ships inside npm packages and is read from disk.
 */
import { access, readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { POSE_PARTS } from "../classify.ts"

const require = createRequire(import.meta.url)

/**
 * A Human instance (not yet loaded) reading its models from `modelDir` (default: the models that ship
 * with @vladmandic/human), with `file://` model URLs served from disk.
 * Human's package `exports` cannot name its WebAssembly build, so it is loaded by its file path.
 */
export const createHuman = async (modelDirOverride?: string) => {
  const humanDir = dirname(require.resolve("@vladmandic/human"))
  const modelDir = modelDirOverride ?? join(humanDir, "..", "models")
  const wasmDir = dirname(require.resolve("@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm"))
  // Human logs a model it cannot load and carries on; a missing file must fail the load instead.
  for (const f of ["blazeface.json", "blazeface.bin", "centernet.json", "centernet.bin"]) {
    await access(join(modelDir, f))
  }
  const H = require(join(humanDir, "human.node-wasm.js"))
  const human = new H.Human({
    backend: "wasm",
    wasmPath: wasmDir + "/",
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
  // tfjs-core reads models over HTTP only; this serves `file://` URLs from disk (model.json + shards).
  tf.io.registerLoadRouter((url: string | ReadonlyArray<string>) => {
    const u = Array.isArray(url) ? url[0] : url
    if (typeof u !== "string" || !u.startsWith("file://")) return null
    const file = new URL(u).pathname
    return {
      load: async () => {
        const json = JSON.parse(await readFile(file, "utf8"))
        return tf.io.getModelArtifactsForJSON(
          json,
          async (manifest: ReadonlyArray<{ paths: Array<string>; weights: Array<unknown> }>) => {
            const specs: Array<unknown> = []
            const parts: Array<Buffer> = []
            for (const group of manifest) {
              for (const p of group.paths) parts.push(await readFile(join(dirname(file), p)))
              specs.push(...group.weights)
            }
            const all = Buffer.concat(parts)
            return [specs, all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)]
          }
        )
      }
    }
  })
  return { human, modelDir }
}

type PoseTensor = { shape: Array<number>; dispose: () => void }
type PoseTf = {
  loadGraphModel: (
    url: string
  ) => Promise<{ execute: (input: PoseTensor) => PoseTensor & { dataSync: () => Float32Array } }>
  tidy: <T>(f: () => T) => T
  pad: (t: PoseTensor, p: Array<[number, number]>) => PoseTensor
  image: { resizeBilinear: (t: PoseTensor, size: [number, number]) => PoseTensor }
  cast: (t: PoseTensor, dtype: string) => PoseTensor
  expandDims: (t: PoseTensor, axis: number) => PoseTensor
}

/**
 * MoveNet Lightning (single pose, ships beside Human's other models), run on its own rather than
 * through Human's `body` module: Human's keeps each keypoint of the previous call when the new one
 * lies within 0.5 % of it (a video smoother) and drops keypoints it finds implausible, so one photo's
 * answer would depend on the photo before. Must be called after createHuman (its file:// router).
 * The returned function gives the 17 keypoints (POSE_PARTS order) in the frame's pixels, each with
 * its score; the frame is padded to a square and scaled to the network's 192 px, as Human does.
 * `undefined` when `modelDir` (createHuman's) has no MoveNet files: the pose is optional. Files that
 * are there but do not load fail the call (a broken model folder is not a missing model).
 */
export const loadBodyPose = async (tf: unknown, modelDir: string) => {
  const T = tf as PoseTf
  const present = await Promise.all(
    ["movenet-lightning.json", "movenet-lightning.bin"].map((f) =>
      access(join(modelDir, f)).then(() => true, () => false)
    )
  )
  if (!present.every(Boolean)) return undefined
  const model = await T.loadGraphModel("file://" + join(modelDir, "movenet-lightning.json"))
  return (frame: PoseTensor) => {
    const [h, w] = frame.shape
    const side = Math.max(h, w)
    const top = Math.trunc((side - h) / 2)
    const left = Math.trunc((side - w) / 2)
    const out = T.tidy(() => {
      const square = T.pad(frame, [[top, side - h - top], [left, side - w - left], [0, 0]])
      return model.execute(T.expandDims(T.cast(T.image.resizeBilinear(square, [192, 192]), "int32"), 0))
    })
    let v: Float32Array
    try {
      v = out.dataSync()
    } finally {
      out.dispose()
    }
    // output rows are (y, x, score), 0..1 of the padded square
    return {
      keypoints: POSE_PARTS.map((part, i) => ({
        part,
        x: v[i * 3 + 1] * side - left,
        y: v[i * 3] * side - top,
        score: v[i * 3 + 2]
      }))
    }
  }
}
