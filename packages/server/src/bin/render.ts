#!/usr/bin/env node
/**
 * `npm run render -- photo.jpg --quote "…" [--caption-style quote|meme] [--text-color …] [--text-size …]
 *  [--bold] [--bold-outline] [--image-class …] [--prompt "slow zoom in"] [--seconds 8] [--out x.mp4]`
 * Renders one file locally with a progress line, to try styles without running the service.
 * Like the service, it first lets the vision model look at the photo (`--no-vision` skips that: no
 * subject, class from --image-class or the default); --image-class overrides the inferred class.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { CaptionSpec, ImageClass, photoSize, prepareCaption, Renderer, renderVideo } from "@pic2video/renderer"
import { framingInputs, makeVision } from "@pic2video/vision"
import { Effect, Schema } from "effect"
import { parseArgs } from "node:util"

// The scene model's pooled features (720 numbers) are evidence for the model, not for a reader.
const omitFeatures = (key: string, value: unknown) =>
  key === "pooled" && Array.isArray(value) ? `${value.length} values` : value

const usage = `usage: npm run render -- photo.jpg --quote "text" [--caption-style quote|meme]
  [--text-color white|yellow|pastel-yellow] [--text-size tiny|smallest|smaller|default|larger]
  [--bold] [--bold-outline] [--image-class person|doll_figurine|landscape_nature|product_object|interior_space|other]
  [--prompt "slow zoom in"] [--seconds 8] [--out out.mp4] [--overlay-out caption.png] [--no-vision]`

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quote: { type: "string" },
    "caption-style": { type: "string" },
    "text-color": { type: "string" },
    "text-size": { type: "string" },
    bold: { type: "boolean" },
    "bold-outline": { type: "boolean" },
    "image-class": { type: "string" },
    prompt: { type: "string" },
    seconds: { type: "string" },
    out: { type: "string" },
    "overlay-out": { type: "string" },
    "no-vision": { type: "boolean" },
    help: { type: "boolean", short: "h" }
  }
})

if (values.help || positionals.length !== 1) {
  console.log(usage)
  process.exit(values.help ? 0 : 2)
}

const photo = positionals[0]
const outPath = values.out ?? photo.replace(/\.[^./]+$/, "") + ".mp4"
const seconds = Number(values.seconds ?? process.env.RENDER_SECONDS ?? 8)

const program = Effect.gen(function*() {
  const spec = yield* Schema.decodeUnknownEffect(CaptionSpec)({
    quote: values.quote,
    caption_style: values["caption-style"],
    text_color: values["text-color"],
    text_size: values["text-size"],
    bold: values.bold,
    bold_outline: values["bold-outline"]
  })
  const imageClass = values["image-class"]
    ? yield* Schema.decodeUnknownEffect(ImageClass)(values["image-class"])
    : undefined
  const size = yield* photoSize(photo)
  const inferred = values["no-vision"]
    ? null
    : yield* makeVision().infer(photo).pipe(
      Effect.tap((r) => Effect.sync(() => console.log(`vision: ${JSON.stringify(r, omitFeatures)}`))),
      Effect.catch((e) => Effect.as(Effect.logWarning(`vision unavailable: ${e.message}`), null))
    )
  const chosen = framingInputs(imageClass, inferred)
  const started = performance.now()
  const overlay = yield* prepareCaption(spec, { ...size, imageClass: chosen.imageClass, subject: chosen.subject })
  if (overlay && values["overlay-out"]) {
    const { writeFile } = yield* Effect.promise(() => import("node:fs/promises"))
    yield* Effect.promise(() => writeFile(values["overlay-out"]!, overlay))
  }
  const result = yield* renderVideo({
    photo,
    overlay,
    imageClass: chosen.imageClass,
    subject: chosen.subject,
    renderPrompt: values.prompt,
    seconds,
    outPath,
    onProgress: (done, total) =>
      Effect.sync(() =>
        process.stderr.write(`\rrendering ${done}/${total} frames (${Math.round((100 * done) / total)}%)`)
      )
  })
  const secs = ((performance.now() - started) / 1000).toFixed(1)
  process.stderr.write("\n")
  console.log(
    `${outPath}: ${result.width}x${result.height}, ${result.duration_sec}s, ${result.byte_size} bytes, in ${secs}s`
  )
}).pipe(
  Effect.provide(Renderer.layerFromEnv),
  Effect.tapErrorTag("CaptionPrepError", (e) => Effect.logError(`caption failed: ${e.message}`)),
  Effect.tapErrorTag("PhotoRejected", (e) => Effect.logError(`photo rejected: ${e.message}`)),
  Effect.tapErrorTag(
    "RenderFailed",
    (e) => Effect.logError(`render failed (${e.stage}): ${e.message}\n${e.stderrTail ?? ""}`)
  )
)

NodeRuntime.runMain(program)
