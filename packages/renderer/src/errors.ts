import { Schema } from "effect"

/** The caption overlay could not be made (the api answers 502 `caption_prep_failed`). */
export class CaptionPrepError extends Schema.TaggedError<CaptionPrepError>()("CaptionPrepError", {
  reason: Schema.Literals(["unsupported_script", "does_not_fit", "render_failed"]),
  message: Schema.String
}) {}

/** The stored photo no longer decodes: refused before generation (`render_rejected`). */
export class PhotoRejected extends Schema.TaggedError<PhotoRejected>()("PhotoRejected", {
  message: Schema.String
}) {}

/** Generation ran but produced no valid video (`render_failed`). Carries ffmpeg's stderr tail. */
export class RenderFailed extends Schema.TaggedError<RenderFailed>()("RenderFailed", {
  stage: Schema.Literals(["frames", "encode", "verify", "io"]),
  message: Schema.String,
  stderrTail: Schema.optional(Schema.String)
}) {}

/** ffprobe could not read the file. */
export class ProbeFailed extends Schema.TaggedError<ProbeFailed>()("ProbeFailed", {
  path: Schema.String,
  message: Schema.String
}) {}

/** ffmpeg/ffprobe could not be found or run at start-up. */
export class BinaryNotFound extends Schema.TaggedError<BinaryNotFound>()("BinaryNotFound", {
  name: Schema.String,
  message: Schema.String
}) {}
