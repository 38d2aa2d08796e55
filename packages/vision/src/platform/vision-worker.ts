/**
 * Worker-thread entry: the vision model (Human's BlazeFace face detector and CenterNet COCO object
 * detector, and MoveNet Lightning's body pose, on TensorFlow.js' WebAssembly backend). Loading and
 * inference are CPU work of a few hundred milliseconds: in a worker they leave the process's event loop (HTTP, cluster messages) free.
 * Everything it loads ships inside npm packages and is read from disk: nothing is fetched.
 */
import { getPriority, setPriority } from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { poseMatters } from "../classify.ts"
import { createHuman, loadBodyPose } from "./human.ts"
import type { VisionRequest, VisionResponse, VisionWorkerInit } from "./vision-workers.ts"

const port = parentPort!
const init = workerData as VisionWorkerInit
// The model runs beside the HTTP API on the same cores: this thread (Linux's nice value is per
// thread) takes only what the API leaves idle. Elsewhere it would lower the whole process: left alone.
if (init.niceness > 0 && process.platform === "linux") {
  try {
    setPriority(Math.min(19, getPriority() + init.niceness))
  } catch {
    // not permitted: the model runs at normal priority
  }
}

const load = async () => {
  const { human, modelDir } = await createHuman(init.modelDir)
  await human.load()
  const loaded: ReadonlyArray<string> = human.models.loaded()
  if (!loaded.includes("blazeface") || !loaded.includes("centernet")) {
    throw new Error(`vision models did not load from ${modelDir} (loaded: ${loaded.join(", ") || "none"})`)
  }
  tapSceneFeatures(human)
  // MoveNet (the person rule's body pose, classify.ts) is optional: a model folder without its files
  // gives detections with no body, and the rules decide as they did before it.
  const pose = await loadBodyPose(human.tf, modelDir)
  return { human, pose }
}

/**
 * CenterNet's MobileNetV3 backbone already averages its deepest layer over the frame (720 channels,
 * for a squeeze-and-excite gate). Asking the graph for that tensor in the same pass that Human runs
 * for its detections gives a scene descriptor at no extra network cost; the learned scene model
 * (src/scene-model.ts) reads it. Human has no hook for extra outputs, so its model's
 * `execute` is wrapped; any other call passes through untouched.
 */
const POOLED_NODE = "tower_0/MobilenetV3/expanded_conv_14/squeeze_excite/Mean"
let lastFeatures: { pooled: Array<number> } | undefined
type Execute = (input: unknown, outputs: unknown) => unknown
const tapSceneFeatures = (human: { models: { models: { centernet: { execute: Execute } } } }) => {
  const model = human.models.models.centernet
  const execute = model.execute.bind(model)
  model.execute = (input, outputs) => {
    if (!(Array.isArray(outputs) && outputs.length === 1 && outputs[0] === "tower_0/detections")) {
      return execute(input, outputs)
    }
    let both: [unknown, { dataSync: () => Float32Array; dispose: () => void }]
    try {
      both = execute(input, ["tower_0/detections", POOLED_NODE]) as typeof both
    } catch {
      // a model without that node (VISION_MODEL_DIR pointing elsewhere): detections only, rules only
      return execute(input, outputs)
    }
    lastFeatures = { pooled: Array.from(both[1].dataSync()) }
    both[1].dispose()
    return both[0]
  }
}

const ready = load()
ready.then(
  () => port.postMessage({ id: -1 } satisfies VisionResponse),
  (e) => port.postMessage({ id: -1, error: e instanceof Error ? e.message : String(e) } satisfies VisionResponse)
)

port.on("message", async (request: VisionRequest) => {
  let response: VisionResponse
  try {
    const { human, pose } = await ready
    const tensor = human.tf.tensor3d(request.pixels, [request.height, request.width, 3], "int32")
    try {
      lastFeatures = undefined
      const result = await human.detect(tensor)
      const seen = {
        faces: result.face.map((f: { score: number; box: [number, number, number, number] }) => ({
          score: f.score,
          box: f.box
        })),
        objects: result.object.map((o: { label: string; score: number; box: [number, number, number, number] }) => ({
          label: o.label,
          score: o.score,
          box: o.box
        }))
      }
      response = {
        id: request.id,
        detections: {
          ...seen,
          ...(lastFeatures === undefined ? {} : { features: lastFeatures }),
          // the pose only where it can change the call (classify.ts poseMatters)
          ...(pose === undefined || !poseMatters(seen) ? {} : { body: pose(tensor) })
        },
        withPose: pose !== undefined
      }
    } finally {
      tensor.dispose()
    }
  } catch (e) {
    response = { id: request.id, error: e instanceof Error ? e.message : String(e) }
  }
  port.postMessage(response)
})
