/**
 * The service's Human (BlazeFace face detector and CenterNet COCO object detector on TensorFlow.js'
 * WebAssembly backend), configured once: vision-worker.ts runs it, and the classify benches run the
 * same one in their own thread. Everything it loads ships inside npm packages and is read from disk.
 */
import { access, readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

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
  for (const f of ["blazeface.json", "blazeface.bin", "centernet.json", "centernet.bin"]) await access(join(modelDir, f))
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
        return tf.io.getModelArtifactsForJSON(json, async (manifest: ReadonlyArray<{ paths: Array<string>; weights: Array<unknown> }>) => {
          const specs: Array<unknown> = []
          const parts: Array<Buffer> = []
          for (const group of manifest) {
            for (const p of group.paths) parts.push(await readFile(join(dirname(file), p)))
            specs.push(...group.weights)
          }
          const all = Buffer.concat(parts)
          return [specs, all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)]
        })
      }
    }
  })
  return { human, modelDir }
}
