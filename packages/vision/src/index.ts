/**
 * @pic2video/vision: what a photo shows (its class, the confidence of that call, the main subject's
 * box), from models shipped in npm packages and run on a worker thread. `framingInputs` is the seam
 * the renderer consumes: the class and subject a render frames the photo with.
 */
export {
  classify,
  type Detections,
  framingInputs,
  type Inference,
  MIN_CONFIDENCE,
  type SceneStats,
  type Subject
} from "./classify.ts"
export { makeVision, MODEL_NAME, Vision, type VisionResult, type VisionShape, VisionUnavailable } from "./Vision.ts"
