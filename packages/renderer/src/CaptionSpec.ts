import { captionStyles, imageClasses, textColors, textSizes } from "@pic2video/domain/Requests"
import { Schema } from "effect"

/** What the photo shows; the API passes it through from the request. Default: `other`. */
export const ImageClass = Schema.Literals(imageClasses)
export type ImageClass = typeof ImageClass.Type
export const DEFAULT_IMAGE_CLASS: ImageClass = "other"

export const CaptionStyle = Schema.Literals(captionStyles)
export type CaptionStyle = typeof CaptionStyle.Type
export const TextColor = Schema.Literals(textColors)
export type TextColor = typeof TextColor.Type
export const TextSize = Schema.Literals(textSizes)
export type TextSize = typeof TextSize.Type

/** The caption fields of a render request (spec: POST /api/v1/renders). */
export const CaptionSpec = Schema.Struct({
  quote: Schema.optional(Schema.String),
  caption_style: Schema.optional(CaptionStyle),
  text_color: Schema.optional(TextColor),
  text_size: Schema.optional(TextSize),
  bold: Schema.optional(Schema.Boolean),
  bold_outline: Schema.optional(Schema.Boolean)
})
export type CaptionSpec = typeof CaptionSpec.Type

/** CaptionSpec with every default applied. */
export interface ResolvedCaption {
  readonly quote: string
  readonly style: CaptionStyle
  readonly color: TextColor
  readonly size: TextSize
  readonly bold: boolean
  readonly outline: boolean
}

export const resolveCaption = (spec: CaptionSpec): ResolvedCaption => ({
  quote: spec.quote ?? "",
  style: spec.caption_style ?? "quote",
  color: spec.text_color ?? "white",
  size: spec.text_size ?? "default",
  bold: spec.bold ?? false,
  outline: spec.bold_outline ?? false
})
