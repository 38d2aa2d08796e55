import { Config, Context, Effect, Layer, Metric, Semaphore } from "effect"
import sharp from "sharp"
import { classify, type Detections, type Inference, type SceneStats, sceneStats } from "./classify.ts"
import { spawnVisionThread, type VisionThread } from "./platform/vision-workers.ts"
import { SCENE_MODEL_VERSION } from "./scene-model-weights.ts"

/**
 * Looks at a photo: its class, the confidence of that call and the main subject's box (displayed
 * pixels). The model runs on one worker thread per process, started on first use and kept; when it
 * cannot load (files missing, WebAssembly refused) every call fails with `VisionUnavailable` and the
 * caller carries on without an inference.
 */
export interface VisionResult extends Inference {
  readonly model: string
  readonly millis: number
  /** What the class was decided from (for the bench: re-deciding with another scene model); not stored. */
  readonly evidence: {
    readonly detections: Detections
    readonly stats: SceneStats
    readonly size: { readonly width: number; readonly height: number }
    readonly photo: { readonly width: number; readonly height: number }
  }
}

export class VisionUnavailable extends Error {
  readonly _tag = "VisionUnavailable"
}

export interface VisionShape {
  readonly model: string
  readonly infer: (photo: string | Uint8Array) => Effect.Effect<VisionResult, VisionUnavailable>
}

/**
 * Model identity stored with each inference: the package, the networks it runs and the version of
 * the scene model and rules over them, which `npm run vision:fit` writes with the weights (the
 * history of the versions: docs/vision-research.md). An inference made without MoveNet (a model
 * folder without it) is stamped MODEL_NAME_WITHOUT_POSE: the name says which models were loaded
 * (with MoveNet loaded, a photo it cannot matter for is still stamped MODEL_NAME: see poseMatters).
 */
export const MODEL_NAME = `human-3.3.6/blazeface+centernet+movenet-lightning@tfjs-wasm-4.22.0+${SCENE_MODEL_VERSION}`
export const MODEL_NAME_WITHOUT_POSE = `human-3.3.6/blazeface+centernet@tfjs-wasm-4.22.0+${SCENE_MODEL_VERSION}`

/** The analysis raster's longer side: the detectors' inputs are 256 (faces) and 512 (objects) px. */
const ANALYSIS_SIZE = 640
const LIMIT_INPUT_PIXELS = 100_000_000
/**
 * Photos being looked at at once per process (docs/contract.md H4): one decoding while the model
 * thread works on the one before. The thread takes one photo at a time anyway, so a burst of uploads
 * (each starts an inference as it is stored) queues here as paths, not as decoded pixels: unbounded,
 * fifteen 100 MP photos arriving together were all decoded at once and their rasters queued for the
 * thread, and the resident set stayed high long after the burst.
 */
const INFER_AT_ONCE = 2

interface VisionConfig {
  /** Folder with the model files; default: the one shipped in @vladmandic/human. */
  readonly modelDir?: string | undefined
  readonly niceness?: number | undefined
}

/**
 * How long one classification takes (decode, statistics and the models on the worker thread), once a
 * slot is free; exported as a Prometheus histogram by the service's /metrics (docs/operations.md).
 */
const inferenceSeconds = Metric.histogram("p2v_vision_inference_seconds", {
  description: "Seconds one photo classification took, from decode to classes",
  boundaries: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30]
})
// registered now (in the default registry), so it is exported from the start, at 0
inferenceSeconds.valueUnsafe(Context.empty())

export const makeVision = (config: VisionConfig = {}): VisionShape => {
  let thread: VisionThread | undefined
  const slots = Semaphore.makeUnsafe(INFER_AT_ONCE)
  const get = () => (thread ??= spawnVisionThread({ modelDir: config.modelDir, niceness: config.niceness ?? 0 }))
  const run = async (photo: string | Uint8Array): Promise<VisionResult> => {
    const started = performance.now()
    const img = sharp(photo, { pages: 1, limitInputPixels: LIMIT_INPUT_PIXELS })
    const meta = await img.metadata()
    const displayed = {
      width: meta.autoOrient?.width ?? meta.width ?? 0,
      height: meta.autoOrient?.height ?? meta.height ?? 0
    }
    const { data, info } = await img
      .rotate()
      .flatten({ background: "#ffffff" })
      .toColourspace("srgb")
      .resize(ANALYSIS_SIZE, ANALYSIS_SIZE, { fit: "inside", kernel: "lanczos3" })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
    const stats = sceneStats(data, info.width, info.height)
    // the worker answers once its models are loaded (or with the load error)
    const { detections, withPose } = await get().detect({
      width: info.width,
      height: info.height,
      pixels: Uint8Array.from(data)
    }) // a copy: sharp's buffer is external memory and cannot be transferred
    const size = { width: info.width, height: info.height }
    const inference = classify(detections, stats, size, displayed)
    const millis = performance.now() - started
    inferenceSeconds.updateUnsafe(millis / 1000, Context.empty())
    return {
      ...inference,
      model: withPose ? MODEL_NAME : MODEL_NAME_WITHOUT_POSE,
      millis: Math.round(millis),
      evidence: { detections, stats, size, photo: displayed }
    }
  }
  return {
    model: MODEL_NAME,
    infer: (photo) =>
      Effect.tryPromise({
        try: () => run(photo),
        catch: (e) => new VisionUnavailable(e instanceof Error ? e.message : String(e))
      }).pipe(slots.withPermits(1), Effect.withSpan("vision.infer"))
  }
}

export class Vision extends Context.Service<Vision, VisionShape>()("@pic2video/vision/Vision") {
  static layer = (config: VisionConfig = {}): Layer.Layer<Vision> => Layer.sync(Vision, () => makeVision(config))

  /** VISION_MODEL_DIR (default: the models shipped in @vladmandic/human), RENDER_NICE (as renders). */
  static layerFromEnv: Layer.Layer<Vision> = Layer.effect(
    Vision,
    Effect.gen(function*() {
      const env = yield* Config.all({
        modelDir: Config.option(Config.String("VISION_MODEL_DIR")),
        niceness: Config.Int("RENDER_NICE").pipe(Config.withDefault(10))
      }).pipe(Effect.orDie)
      return makeVision({
        modelDir: env.modelDir._tag === "Some" ? env.modelDir.value : undefined,
        niceness: env.niceness
      })
    })
  )
}
