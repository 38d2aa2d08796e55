import { Schema } from "effect"
import { codePoints, isStorable, TextOfLength } from "./Text.ts"

/**
 * Request bodies. Every JSON body is strict: a field not listed is 422 `validation_failed`
 * (the spec names `url`, `storage_path` and `preview_url` explicitly), which `onExcessProperty: "error"`
 * gives us; by default Schema would silently drop them.
 */
const strict = { parseOptions: { onExcessProperty: "error", errors: "first" } } as const

export const textColors = ["white", "yellow", "pastel-yellow"] as const
export const textSizes = ["tiny", "smallest", "smaller", "default", "larger"] as const
export const captionStyles = ["quote", "meme"] as const
export const imageClasses = [
  "person",
  "doll_figurine",
  "landscape_nature",
  "product_object",
  "interior_space",
  "other"
] as const
export type ImageClass = (typeof imageClasses)[number]

/** contract §6: at most 20 keys of 1–40 characters; values string (≤ 500), number, boolean or null. */
export const RenderMetadata = Schema.Record({
  // `__proto__` would be dropped on decoding (assigning it sets the prototype), silently losing a
  // key the client sent; it is refused instead
  key: Schema.String.pipe(
    Schema.filter((k) =>
      k === "__proto__"
        ? "metadata key __proto__ is not allowed"
        : isStorable(k)
        ? undefined
        : "metadata keys must be well-formed text without U+0000"
    )
  ),
  value: Schema.Union(TextOfLength(0, 500), Schema.Number.pipe(Schema.finite()), Schema.Boolean, Schema.Null)
}).pipe(
  Schema.filter((m) => {
    const keys = Object.keys(m)
    if (keys.length > 20) return "at most 20 keys"
    const bad = keys.find((k) => codePoints(k) < 1 || codePoints(k) > 40)
    return bad === undefined ? undefined : `key ${JSON.stringify(bad)} must be 1 to 40 characters`
  })
).annotations({
  // one message in the caller's words for every way metadata can be wrong (the schema's own would
  // name internals such as `{ readonly [x: string]: … }`); the error formatter prefixes the field
  message: () => ({
    message:
      "must be a JSON object of at most 20 keys (1 to 40 characters each) whose values are text (at most 500 characters), numbers, true/false or null",
    override: true
  })
})

export const CreateRenderBody = Schema.Struct({
  media_id: Schema.UUID,
  quote: Schema.optional(TextOfLength(0, 500)),
  render_type: Schema.optional(Schema.Literal("aesthetic_quote")),
  caption_style: Schema.optional(Schema.Literal(...captionStyles)),
  text_color: Schema.optional(Schema.Literal(...textColors)),
  text_size: Schema.optional(Schema.Literal(...textSizes)),
  bold: Schema.optional(Schema.Boolean),
  bold_outline: Schema.optional(Schema.Boolean),
  page_theme: Schema.optional(TextOfLength(1, 100)),
  image_class: Schema.optional(Schema.Literal(...imageClasses)),
  sub_prompt: Schema.optional(TextOfLength(0, 150)),
  render_prompt: Schema.optional(TextOfLength(0, 200)),
  metadata: Schema.optional(RenderMetadata)
}).annotations({ identifier: "CreateRenderBody", ...strict })
export type CreateRenderBody = typeof CreateRenderBody.Type

/**
 * A drive folder id as the client sends it: "a folder id, never a URL" (spec). Only what cannot be an
 * id is refused here (a URL or path: `/`, `?`, `#`, `\\`; whitespace; control characters); whether the drive knows it is
 * the drive's answer (404 `unknown_folder`), since providers' id alphabets differ.
 */
export const isFolderIdShape = (id: string): boolean =>
  id.length >= 1 && id.length <= 200 && !/[\s/\\?#\u0000-\u001f\u007f]/.test(id)

export const CreateImportBody = Schema.Struct({
  provider: Schema.Literal("cloud_drive"),
  folder_id: Schema.String.pipe(
    Schema.filter((id) => isFolderIdShape(id) || "folder_id must be a drive folder id, not a URL")
  ),
  // reserved: v1 imports only the folder itself (contract §7: true is 422)
  recursive: Schema.optional(Schema.Literal(false))
}).annotations({ identifier: "CreateImportBody", ...strict })
export type CreateImportBody = typeof CreateImportBody.Type

/** Upload limits (contract §5); every message and document that states one derives it from here. */
export const maxUploadMiB = 15
export const maxUploadBytes = maxUploadMiB * 1024 * 1024
/** "15 MiB (15,728,640 bytes)" */
export const uploadLimitText = `${maxUploadMiB} MiB (${maxUploadBytes.toLocaleString("en-US")} bytes)`
export const photoTypesText = "JPEG, PNG, WebP or GIF"
export const maxImagePixels = 100_000_000
export const maxLabelLength = 200
export const maxTagLength = 50
export const maxTags = 20
export const UploadLabel = TextOfLength(0, maxLabelLength)
export const UploadTag = TextOfLength(1, maxTagLength)

/** `GET /api/v1/media?limit=`: 1–100 in decimal digits (no `1.0`, `1e1`, `0x10`, `+5`), default 25, never clamped. */
export const ListLimit = Schema.String.pipe(
  Schema.pattern(/^[0-9]+$/, { message: () => "must be a whole number from 1 to 100" }),
  Schema.compose(Schema.NumberFromString),
  Schema.between(1, 100)
)
export const defaultListLimit = 25
