import { Errors, Requests } from "@pic2video/domain"
import { Effect, Semaphore } from "effect"
import { fileTypeFromFile } from "file-type"
import * as fs from "node:fs/promises"
import sharp from "sharp"

/**
 * What makes a file a photo we accept (spec POST /media, contract §5): size first, then the bytes
 * decide the format, a label that contradicts the bytes is refused, and the image must decode in
 * full within the pixel limit (a truncated or corrupt file is not a photo).
 */
export const accepted = ["image/jpeg", "image/png", "image/webp", "image/gif"] as const
type PhotoType = (typeof accepted)[number]
const isAccepted = (mime: string | undefined): mime is PhotoType => accepted.some((t) => t === mime)

const byExtension: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  jpe: "image/jpeg",
  jfif: "image/jpeg",
  png: "image/png",
  apng: "image/png",
  webp: "image/webp",
  gif: "image/gif",
  svg: "image/svg+xml",
  svgz: "image/svg+xml",
  bmp: "image/bmp",
  tif: "image/tiff",
  tiff: "image/tiff",
  heic: "image/heic",
  heif: "image/heif",
  avif: "image/avif",
  ico: "image/x-icon",
  mp4: "video/mp4",
  mov: "video/quicktime",
  webm: "video/webm",
  txt: "text/plain",
  pdf: "application/pdf",
  html: "text/html",
  json: "application/json"
}

/** Other names in use for the accepted types; a label that uses one names the same type. */
const aliases: Record<string, PhotoType> = {
  "image/jpg": "image/jpeg",
  "image/pjpeg": "image/jpeg",
  "image/x-png": "image/png",
  "image/apng": "image/png",
  "image/x-webp": "image/webp"
}

const normalise = (contentType: string) => {
  const t = contentType.split(";")[0].trim().toLowerCase()
  return aliases[t] ?? t
}

/** A label that names no particular type cannot contradict the bytes. */
const unspecific = (t: string | undefined) =>
  t === undefined || t === "" || t === "application/octet-stream" || t === "image/*"

interface Inspected {
  readonly mimeType: PhotoType
  readonly sizeBytes: number
  /** as displayed, after EXIF orientation */
  readonly width: number
  readonly height: number
}

/**
 * Decodes at once per process (docs/contract.md H4): a photo near the pixel limit costs tens of MiB
 * while it streams through the decoder, so fifteen arriving together wait their turn instead of
 * multiplying that. Uploads, import files and previews share the slots.
 */
const decodeSlots = Semaphore.makeUnsafe(2)
// libvips's operation cache would keep up to 50 MiB of decoded pixels of photos it never sees again
sharp.cache(false)

const refuse = (message: string) => Effect.fail(Errors.fail("unsupported_media_type", message))

export const inspect = (path: string, label: { readonly filename?: string; readonly contentType?: string }) =>
  Effect.gen(function*() {
    const { size } = yield* Effect.promise(() => fs.stat(path))
    if (size === 0) return yield* Effect.fail(Errors.fail("payload_too_large", "the upload is empty"))
    if (size > Requests.maxUploadBytes) {
      return yield* Effect.fail(
        Errors.fail("payload_too_large", `the upload is larger than ${Requests.uploadLimitText}`)
      )
    }
    const sniffed = yield* Effect.promise(() => fileTypeFromFile(path).catch(() => undefined))
    // an animated PNG is a PNG (file-type names it apart); like GIF and WebP it renders from frame one
    const mime = sniffed?.mime === "image/apng" ? "image/png" : sniffed?.mime
    if (!isAccepted(mime)) {
      return yield* refuse(`the file is ${mime ?? "not a recognised image"}; upload JPEG, PNG, WebP or GIF`)
    }
    const declared = label.contentType === undefined ? undefined : normalise(label.contentType)
    if (!unspecific(declared) && declared !== mime) {
      return yield* refuse(`the bytes are ${mime} but the part is labelled ${declared}`)
    }
    const ext = label.filename?.includes(".") ? label.filename.split(".").pop()!.toLowerCase() : undefined
    const named = ext === undefined ? undefined : byExtension[ext]
    if (named !== undefined && named !== mime) {
      return yield* refuse(`the bytes are ${mime} but the file name says ${named} (.${ext})`)
    }
    const decoded = yield* decodeSlots.withPermits(1)(Effect.tryPromise(async () => {
      const image = sharp(path, {
        pages: 1,
        limitInputPixels: Requests.maxImagePixels,
        failOn: "error",
        sequentialRead: true
      })
      const meta = await image.metadata()
      if ((meta.width ?? 0) * (meta.height ?? 0) > Requests.maxImagePixels) throw new Error("over the pixel limit")
      // decode every pixel of the first frame: a truncated or corrupt file fails here, not at render time.
      // Read top to bottom and shrunk as it streams (no rotation: that would need the whole image in
      // memory at once); the oriented size comes from the header.
      await image.clone().resize(256, 256, { fit: "inside" }).raw().toBuffer()
      return meta.autoOrient
    })).pipe(Effect.catch(() => refuse("the image cannot be decoded, or is over 100 megapixels")))
    return { mimeType: mime, sizeBytes: size, width: decoded.width, height: decoded.height } satisfies Inspected
  })

/** Preview: ≤ 1080 px on the long side, oriented, metadata (GPS included) stripped. */
export const preview = (path: string, mimeType: string) =>
  decodeSlots.withPermits(1)(Effect.tryPromise(async () => {
    const image = sharp(path, { pages: 1, limitInputPixels: Requests.maxImagePixels })
      .rotate()
      .resize(1080, 1080, { fit: "inside", withoutEnlargement: true })
    switch (mimeType) {
      case "image/jpeg":
        return { bytes: await image.jpeg({ quality: 85, mozjpeg: false }).toBuffer(), contentType: "image/jpeg" }
      case "image/webp":
        return { bytes: await image.webp({ quality: 85 }).toBuffer(), contentType: "image/webp" }
      default: // PNG, and a GIF's first frame
        return { bytes: await image.png().toBuffer(), contentType: "image/png" }
    }
  })).pipe(Effect.orDie)
