import { Schema, type SchemaAST, SchemaTransformation } from "effect"
import { Optional } from "./Optional.ts"
import { codePoints, isStorable, TextOfLength, Uuid } from "./Text.ts"

/**
 * Request bodies. Every JSON body is strict: a field not listed is 422 `validation_failed`
 * (the spec names `url`, `storage_path` and `preview_url` explicitly), which `onExcessProperty: "error"`
 * gives us; by default Schema would silently drop them. Effect 4 takes parse options only at the
 * decode call (a schema annotation no longer sets them), so every decode of a request body passes
 * these: `Schema.decodeUnknownEffect(CreateRenderBody)(body, strict)`.
 */
export const strict = { onExcessProperty: "error", errors: "first" } as const satisfies SchemaAST.ParseOptions

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
export type MetadataValue = string | number | boolean | null

const isMetadataValue = (v: unknown): boolean =>
  v === null || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v)) ||
  (typeof v === "string" && isStorable(v) && codePoints(v) <= 500)

/**
 * A metadata value as the document describes it. Its check is the record's (below), so that every way
 * metadata can be wrong is reported on `metadata` with the one message, as Effect 3's message override
 * did; here it only types the value (a declaration, so the encoded type is the value's too).
 */
const MetadataValueSchema = Schema.declare((_: unknown): _ is MetadataValue => true, {
  // the JSON form (and so the document) is the value's own schema
  toCodecJson: () =>
    Schema.link<MetadataValue>()(
      Schema.Union([
        TextOfLength(0, 500),
        Schema.Finite.annotate({ description: "a finite number", title: "finite" }),
        Schema.Boolean,
        Schema.Null
      ]),
      SchemaTransformation.transform({ decode: (v) => v, encode: (v) => v })
    )
})

const metadataProblem = (m: Readonly<Record<string, unknown>>): string | undefined => {
  const keys = Object.keys(m)
  // `__proto__` would be dropped on decoding (assigning it sets the prototype), silently losing a
  // key the client sent; it is refused instead
  if (keys.includes("__proto__")) return "metadata key __proto__ is not allowed"
  if (keys.some((k) => !isStorable(k))) return "metadata keys must be well-formed text without U+0000"
  if (keys.length > 20) return "at most 20 keys"
  const bad = keys.find((k) => codePoints(k) < 1 || codePoints(k) > 40)
  if (bad !== undefined) return `key ${JSON.stringify(bad)} must be 1 to 40 characters`
  return keys.every((k) => isMetadataValue(m[k])) ? undefined : "values must be text, numbers, true/false or null"
}

// one message in the caller's words for every way metadata can be wrong (the schema's own would
// name internals such as `{ readonly [x: string]: … }`); the error formatter prefixes the field
const metadataMessage =
  "must be a JSON object of at most 20 keys (1 to 40 characters each) whose values are text (at most 500 characters), numbers, true/false or null"

// (the message on the record itself before its check: `annotate` after `check` would annotate the check)
const RenderMetadata = Schema.Record(Schema.String, MetadataValueSchema)
  .annotate({ message: metadataMessage })
  .check(Schema.makeFilter(metadataProblem, { message: metadataMessage }))

export const CreateRenderBody = Schema.Struct({
  media_id: Uuid,
  quote: Optional(TextOfLength(0, 500)),
  render_type: Optional(Schema.Literal("aesthetic_quote")),
  caption_style: Optional(Schema.Literals(captionStyles)),
  text_color: Optional(Schema.Literals(textColors)),
  text_size: Optional(Schema.Literals(textSizes)),
  bold: Optional(Schema.Boolean),
  bold_outline: Optional(Schema.Boolean),
  page_theme: Optional(TextOfLength(1, 100)),
  image_class: Optional(Schema.Literals(imageClasses)),
  sub_prompt: Optional(TextOfLength(0, 150)),
  render_prompt: Optional(TextOfLength(0, 200)),
  metadata: Optional(RenderMetadata)
}).annotate({ identifier: "CreateRenderBody" })
export type CreateRenderBody = typeof CreateRenderBody.Type

/**
 * A drive folder id as the client sends it: "a folder id, never a URL" (spec). Only what cannot be an
 * id is refused here (a URL or path: `/`, `?`, `#`, `\\`; whitespace; control characters); whether the drive knows it is
 * the drive's answer (404 `unknown_folder`), since providers' id alphabets differ.
 */
export const isFolderIdShape = (id: string): boolean =>
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  id.length >= 1 && id.length <= 200 && !/[\s/\\?#\u0000-\u001f\u007f]/.test(id)

export const CreateImportBody = Schema.Struct({
  provider: Schema.Literal("cloud_drive"),
  folder_id: Schema.String.check(
    Schema.makeFilter((id: string) => isFolderIdShape(id) || "folder_id must be a drive folder id, not a URL")
  ),
  // reserved: v1 imports only the folder itself (contract §7: true is 422)
  recursive: Optional(Schema.Literal(false))
}).annotate({ identifier: "CreateImportBody" })
export type CreateImportBody = typeof CreateImportBody.Type

/** Upload limits (contract §5); every message and document that states one derives it from here. */
export const maxUploadMiB = 15
export const maxUploadBytes = maxUploadMiB * 1024 * 1024
// digits grouped by hand: toLocaleString loads ICU's number formatting, 10-20 ms at every start of p2v
/** "15 MiB (15,728,640 bytes)" */
export const uploadLimitText = `${maxUploadMiB} MiB (${String(maxUploadBytes).replace(/\B(?=(\d{3})+$)/g, ",")} bytes)`
export const photoTypesText = "JPEG, PNG, WebP or GIF"
export const maxImagePixels = 100_000_000
export const maxLabelLength = 200
export const maxTagLength = 50
export const maxTags = 20
export const UploadLabel = TextOfLength(0, maxLabelLength)
export const UploadTag = TextOfLength(1, maxTagLength)

/** `GET /api/v1/media?limit=`: 1–100 in decimal digits (no `1.0`, `1e1`, `0x10`, `+5`), default 25, never clamped. */
export const ListLimit = Schema.String.check(
  Schema.isPattern(/^[0-9]+$/, { message: "must be a whole number from 1 to 100" })
).pipe(
  Schema.decodeTo(
    Schema.Number.check(Schema.isBetween({ minimum: 1, maximum: 100 })),
    SchemaTransformation.numberFromString
  )
)
export const defaultListLimit = 25
