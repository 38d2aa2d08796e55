/**
 * @pic2video/renderer: photo + caption → a verified 1080x1920 H.264/AAC MP4 with smooth camera motion.
 * A library: no database, no HTTP, no vision model (the class and subject box it frames with are inputs).
 */
export { type CaptionPhoto, prepareCaption } from "./caption.ts"
export { CaptionSpec, CaptionStyle, DEFAULT_IMAGE_CLASS, ImageClass, TextColor, TextSize } from "./CaptionSpec.ts"
export { BinaryNotFound, CaptionPrepError, PhotoRejected, ProbeFailed, RenderFailed } from "./errors.ts"
export { type Framing, type FramingKind, planFraming, type SubjectBox } from "./framing.ts"
export { photoSize } from "./ingest.ts"
export { OUTPUT, SAFE_BOX } from "./output.ts"
export { type RenderJob, type RenderResult, type RenderTimings, renderVideo } from "./pipeline.ts"
export type { BinaryInfo } from "./platform/binaries.ts"
export { POSTER, posterFrame, type PosterResult } from "./poster.ts"
export { probeVideo, type VideoProbe } from "./probe.ts"
export { Renderer, type RendererConfig, type RendererShape } from "./Renderer.ts"
export { verifyProbe } from "./verify.ts"
