import { OUTPUT } from "./output.ts"

/**
 * The ffmpeg command as data (pure, unit-tested). `ffmpeg-process.ts` hands it to fluent-ffmpeg;
 * `toArgv` flattens it for logs, tests and the benchmark's floor run.
 */
interface FfmpegInput {
  /** "pipe:0" for the raw frames on stdin, else a file path or a lavfi graph. */
  readonly source: string
  readonly options: ReadonlyArray<string>
}

export interface FfmpegCommand {
  readonly inputs: ReadonlyArray<FfmpegInput>
  readonly complexFilter: string
  readonly outputOptions: ReadonlyArray<string>
  readonly output: string
}

export const PRESETS = ["superfast", "veryfast", "faster", "fast", "medium"] as const
export type Preset = (typeof PRESETS)[number]

export interface EncodeSettings {
  /** x264 preset. veryfast: 3.6 MB / SSIM 0.980 for 8 s; ultrafast is excluded (40 MB at crf 20). */
  readonly preset: Preset
  readonly crf: number
  /** VBV cap in kbit/s; platforms cap uploads at ~25 Mbit/s, 12 keeps busy photos well inside. */
  readonly maxrateKbps: number
  /**
   * x264 threads, pinned so the same inputs give the same bytes whatever the host's core count. Default
   * 1: the frame worker takes the second core of a 2-core host, x264 the first, and a render costs what
   * x264 alone does (the pipe never waits on generation). More than 1 are sliced threads (each frame cut
   * in that many slices): x264's frame threads each hold frames of their own (1080x1920: ~45 MB of
   * ffmpeg's RSS per extra thread, measured), sliced threads share one set (2 threads: 228 against
   * 278 MB; +0.5 % bytes, same SSIM).
   */
  readonly threads: number
}

export const DEFAULT_ENCODE: EncodeSettings = { preset: "veryfast", crf: 20, maxrateKbps: 12_000, threads: 1 }

/**
 * What x264 is told beyond the preset. b-pyramid=none: B-frames are not kept as references, so x264
 * holds two fewer reconstructed frames (10 MB each at 1080x1920): ffmpeg's peak RSS 227 → 205 MB, at
 * −0.2 to −0.9 % bytes and SSIM −0.0001 to −0.0004, PSNR ±0.03 dB (hubble and portrait, measured
 * against the source frames).
 */
export const x264Params = (s: EncodeSettings): string =>
  ["b-pyramid=none", ...(s.threads > 1 ? ["sliced-threads=1"] : [])].join(":")

interface EncodeJob {
  readonly frames: number
  readonly overlayPath: string | undefined
  readonly outPath: string
  readonly settings: EncodeSettings
  /**
   * What arrives on stdin: yuv420p, BT.709 limited range with the caption already burned in (the
   * renderer: its frame workers do both, so ffmpeg only encodes), or rgb24 for ffmpeg to overlay and
   * convert (the older, slower pipeline, kept as the benchmark's floor). Default rgb24.
   */
  readonly inputPixFmt?: "rgb24" | "yuv420p"
}

/**
 * Silent stereo 48 kHz: some editors and upload APIs expect an audio track; it costs ~2 kbit/s. Made
 * inside the filter graph, not as a second (lavfi) input: with two inputs ffmpeg reads each on a thread
 * of its own through a queue of 8 packets, i.e. 8 raw frames (25 MB) buffered ahead of the encoder;
 * with stdin as the only input it reads in step with the encoder (−40 MB peak RSS, measured).
 */
const SILENCE = "anullsrc=r=48000:cl=stereo"

/**
 * The filter graph: nothing to do for yuv420p input (the renderer's; see yuv.ts). For rgb24 input the
 * caption is burned in while still in RGB (planar gbrp, so no chroma is lost
 * under the text edges), then ONE conversion to limited-range BT.709 YUV: ffmpeg's default matrix is
 * BT.601, and tagging 709 without converting makes colours worse than no tags at all.
 * Outputs [v], and [a]: the silence.
 */
export const filterGraph = (hasOverlay: boolean, inputPixFmt: "rgb24" | "yuv420p" = "rgb24"): string => {
  const video = (() => {
    if (inputPixFmt === "yuv420p") return "[0:v]null[v]"
    const toYuv = "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p"
    return hasOverlay
      ? `[0:v]format=gbrp[bg];[1:v]format=gbrap[ov];[bg][ov]overlay=format=gbrp,${toYuv}[v]`
      : `[0:v]format=gbrp,${toYuv}[v]`
  })()
  return `${video};${SILENCE}[a]`
}

export const encodeCommand = (job: EncodeJob): FfmpegCommand => {
  const s = job.settings
  const inputs: Array<FfmpegInput> = [
    {
      source: "pipe:0",
      options: [
        "-f",
        "rawvideo",
        "-pix_fmt",
        job.inputPixFmt ?? "rgb24",
        "-s",
        `${OUTPUT.width}x${OUTPUT.height}`,
        "-r",
        `${OUTPUT.fps}`
      ]
    }
  ]
  if (job.overlayPath !== undefined) inputs.push({ source: job.overlayPath, options: [] })
  const gop = 2 * OUTPUT.fps
  return {
    inputs,
    complexFilter: filterGraph(job.overlayPath !== undefined, job.inputPixFmt),
    outputOptions: [
      "-map",
      "[v]",
      "-map",
      "[a]",
      // The frame count, not the (endless) silence, decides the length.
      "-frames:v",
      `${job.frames}`,
      "-t",
      `${job.frames / OUTPUT.fps}`,
      "-c:v",
      "libx264",
      "-preset",
      s.preset,
      "-crf",
      `${s.crf}`,
      "-maxrate",
      `${s.maxrateKbps}k`,
      "-bufsize",
      `${s.maxrateKbps * 2}k`,
      // High@4.0 fits 1080x1920@30 exactly (8160 MB/frame, 244,800 MB/s) and every phone decodes it.
      "-profile:v",
      "high",
      "-level:v",
      "4.0",
      "-pix_fmt",
      "yuv420p",
      // 2 s keyframe interval, closed GOPs (x264's default), as the platforms ask.
      "-g",
      `${gop}`,
      "-keyint_min",
      `${gop}`,
      "-sc_threshold",
      "0",
      "-threads",
      `${s.threads}`,
      "-x264-params",
      x264Params(s),
      "-color_primaries",
      "bt709",
      "-color_trc",
      "bt709",
      "-colorspace",
      "bt709",
      "-color_range",
      "tv",
      "-c:a",
      "aac",
      "-b:a",
      "128k",
      "-ar",
      "48000",
      "-ac",
      "2",
      // No dates or tool strings that differ between runs; same inputs → same bytes.
      "-map_metadata",
      "-1",
      "-fflags",
      "+bitexact",
      "-flags:v",
      "+bitexact",
      "-flags:a",
      "+bitexact",
      // moov before mdat, so players and platforms can start before the whole file is there.
      "-movflags",
      "+faststart",
      "-f",
      "mp4"
    ],
    output: job.outPath
  }
}

export const toArgv = (c: FfmpegCommand): ReadonlyArray<string> => [
  "-hide_banner",
  "-y",
  ...c.inputs.flatMap((i) => [...i.options, "-i", i.source]),
  "-filter_complex",
  c.complexFilter,
  ...c.outputOptions,
  c.output
]
