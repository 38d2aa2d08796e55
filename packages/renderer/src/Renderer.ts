import { Config, Context, Effect, Layer } from "effect"
import type { BinaryNotFound } from "./errors.ts"
import { DEFAULT_ENCODE, type EncodeSettings, type Preset, PRESETS } from "./ffmpeg-args.ts"
import { describeCoverage, fontCoverage } from "./fonts.ts"
import { type BinaryInfo, findOnPath, resolveBinary } from "./platform/binaries.ts"

/**
 * The renderer's start-up state: which ffmpeg/ffprobe it runs (resolved and version-checked once, and
 * logged) and the encode settings. One implementation; tests and the service share `layer`.
 */
export interface RendererShape {
  readonly ffmpeg: BinaryInfo
  readonly ffprobe: BinaryInfo
  readonly encode: EncodeSettings
  /**
   * Worker threads making frames per render (each holds a copy of the base). Default 1: a yuv420p frame
   * costs ~5.4 ms of CPU, so one thread makes them faster than x264 encodes them on two cores, and a
   * second one only added ~60 MB of peak RSS (measured).
   */
  readonly frameConcurrency: number
  /**
   * How far below the process's own priority a render's CPU work runs (ffmpeg and the frame workers,
   * in nice steps): renders yield the cores to the HTTP API in the same process and take the rest.
   * 0 when disabled or when `nice` is not on PATH.
   */
  readonly niceness: number
}

export interface RendererConfig {
  readonly ffmpegPath?: string | undefined
  readonly ffprobePath?: string | undefined
  readonly pathEnv?: string | undefined
  readonly encode?: Partial<EncodeSettings> | undefined
  readonly frameConcurrency?: number | undefined
  /** Default 10; 0 runs renders at the process's own priority. */
  readonly niceness?: number | undefined
}

const DEFAULT_NICENESS = 10

export class Renderer extends Context.Service<Renderer, RendererShape>()("@pic2video/renderer/Renderer") {
  static make = (config: RendererConfig = {}): Effect.Effect<RendererShape, BinaryNotFound> =>
    Effect.gen(function*() {
      const pathEnv = config.pathEnv ?? (yield* Config.String("PATH").pipe(Config.withDefault(""), Effect.orDie))
      const [ffmpeg, ffprobe] = yield* Effect.all(
        [resolveBinary("ffmpeg", config.ffmpegPath, pathEnv), resolveBinary("ffprobe", config.ffprobePath, pathEnv)],
        { concurrency: 2 }
      )
      yield* Effect.log(`renderer: ffmpeg ${ffmpeg.version} (${ffmpeg.source}: ${ffmpeg.path})`)
      yield* Effect.log(`renderer: ffprobe ${ffprobe.version} (${ffprobe.source}: ${ffprobe.path})`)
      // Scan fonts now, not on the first request, and say which scripts captions can use.
      const coverage = yield* fontCoverage
      yield* Effect.log(`renderer: caption fonts: ${describeCoverage(coverage)}`)
      const wanted = Math.min(19, Math.max(0, Math.round(config.niceness ?? DEFAULT_NICENESS)))
      const niceness = wanted > 0 && findOnPath("nice", pathEnv) === undefined ? 0 : wanted
      if (niceness !== wanted) {
        yield* Effect.logWarning("renderer: `nice` is not on PATH; renders run at normal priority")
      }
      return {
        ffmpeg,
        ffprobe,
        encode: { ...DEFAULT_ENCODE, ...config.encode },
        frameConcurrency: Math.max(1, config.frameConcurrency ?? 1),
        niceness
      }
    })

  static layer = (config: RendererConfig = {}): Layer.Layer<Renderer, BinaryNotFound> =>
    Layer.effect(Renderer, Renderer.make(config))

  /** FFMPEG_PATH, FFPROBE_PATH, RENDER_X264_PRESET (default veryfast), RENDER_CRF (default 20), RENDER_X264_THREADS (default 1), RENDER_NICE (default 10). */
  static layerFromEnv: Layer.Layer<Renderer, BinaryNotFound> = Layer.effect(
    Renderer,
    Effect.gen(function*() {
      const env = yield* Config.all({
        // ffmpeg / ffprobe binary to use
        ffmpegPath: Config.option(Config.String("FFMPEG_PATH")),
        ffprobePath: Config.option(Config.String("FFPROBE_PATH")),
        preset: Config.Literals(PRESETS, "RENDER_X264_PRESET").pipe(
          Config.withDefault<Preset>(DEFAULT_ENCODE.preset)
        ),
        crf: Config.Int("RENDER_CRF").pipe(Config.withDefault(DEFAULT_ENCODE.crf)),
        threads: Config.Int("RENDER_X264_THREADS").pipe(Config.withDefault(DEFAULT_ENCODE.threads)),
        niceness: Config.Int("RENDER_NICE").pipe(Config.withDefault(DEFAULT_NICENESS))
      }).pipe(Effect.orDie)
      return yield* Renderer.make({
        ffmpegPath: env.ffmpegPath._tag === "Some" ? env.ffmpegPath.value : undefined,
        ffprobePath: env.ffprobePath._tag === "Some" ? env.ffprobePath.value : undefined,
        encode: { preset: env.preset, crf: env.crf, threads: Math.min(16, Math.max(1, env.threads)) },
        niceness: env.niceness
      })
    })
  )
}
