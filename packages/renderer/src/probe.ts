import { Effect } from "effect"
import ffmpeg from "fluent-ffmpeg"
import { ProbeFailed } from "./errors.ts"
import { moovBeforeMdat, topLevelBoxes } from "./mp4-atoms.ts"
import { fileReader, fileSize } from "./platform/files.ts"
import { Renderer } from "./Renderer.ts"

/** What ffprobe (and the box order) says about an MP4. */
export interface VideoProbe {
  readonly durationSec: number
  readonly byteSize: number
  readonly video: {
    readonly codec: string
    readonly profile: string
    readonly level: number
    readonly width: number
    readonly height: number
    readonly pixFmt: string
    readonly fps: number
    readonly frames: number
    readonly colorSpace: string
    readonly colorPrimaries: string
    readonly colorTransfer: string
    readonly colorRange: string
  } | null
  readonly audio: { readonly codec: string; readonly sampleRate: number; readonly channels: number } | null
  readonly boxes: ReadonlyArray<string>
  readonly moovBeforeMdat: boolean
}

const num = (v: unknown): number => (typeof v === "number" ? v : Number.parseFloat(String(v)))
const str = (v: unknown): string => (v === undefined || v === null ? "" : String(v))
const rate = (r: unknown): number => {
  const [a, b] = str(r).split("/").map(Number)
  return b ? a / b : a
}

const ffprobe = (binary: string, path: string) =>
  Effect.callback<ffmpeg.FfprobeData, ProbeFailed>((resume) => {
    ffmpeg(path)
      .setFfprobePath(binary)
      .ffprobe((err: Error | null, data: ffmpeg.FfprobeData) =>
        resume(err ? Effect.fail(new ProbeFailed({ path, message: err.message })) : Effect.succeed(data))
      )
  })

export const probeVideo = (path: string): Effect.Effect<VideoProbe, ProbeFailed, Renderer> =>
  Effect.gen(function*() {
    const renderer = yield* Renderer
    const data = yield* ffprobe(renderer.ffprobe.path, path)
    const size = yield* fileSize(path).pipe(Effect.mapError(() => new ProbeFailed({ path, message: "cannot stat" })))
    const boxes = yield* fileReader(path, (read) => topLevelBoxes(read, size)).pipe(
      Effect.mapError(() => new ProbeFailed({ path, message: "cannot read MP4 boxes" }))
    )
    const v = data.streams.find((s) => s.codec_type === "video")
    const a = data.streams.find((s) => s.codec_type === "audio")
    return {
      durationSec: num(data.format.duration),
      byteSize: size,
      video: v
        ? {
          codec: str(v.codec_name),
          profile: str(v.profile),
          level: num(v.level),
          width: num(v.width),
          height: num(v.height),
          pixFmt: str(v.pix_fmt),
          fps: rate(v.avg_frame_rate),
          frames: num(v.nb_frames),
          colorSpace: str(v.color_space),
          colorPrimaries: str(v.color_primaries),
          colorTransfer: str(v.color_transfer),
          colorRange: str(v.color_range)
        }
        : null,
      audio: a ? { codec: str(a.codec_name), sampleRate: num(a.sample_rate), channels: num(a.channels) } : null,
      boxes,
      moovBeforeMdat: moovBeforeMdat(boxes)
    } satisfies VideoProbe
  })
