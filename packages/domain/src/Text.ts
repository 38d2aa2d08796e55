import { Schema } from "effect"

/** contract §6: lengths count Unicode code points, so an emoji is one character. */
export const codePoints = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** Half of a surrogate pair with no other half: JSON can carry it, UTF-8 (and so PostgreSQL) cannot. */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Text PostgreSQL can store as sent: no U+0000 and no lone surrogate (both are refused, not mangled). */
export const isStorable = (s: string): boolean => !s.includes("\u0000") && !loneSurrogate.test(s)

/** What is wrong with a text of `min` to `max` characters (code points), or undefined. */
export const lengthProblem = (s: string, min: number, max: number): string | undefined => {
  if (!isStorable(s)) return "must be well-formed text without U+0000"
  const n = codePoints(s)
  return n >= min && n <= max ? undefined : `must be ${min === 0 ? "at most" : `${min} to`} ${max} characters`
}

export const TextOfLength = (min: number, max: number) =>
  Schema.String.check(
    Schema.makeFilter((s: string) => lengthProblem(s, min, max), {
      toJsonSchema: () => ({ minLength: min, maxLength: max })
    })
  )

/**
 * A UUID by its shape only (8-4-4-4-12 hex digits, any version or variant), as Effect 3's `Schema.UUID`
 * accepted: Effect 4's `isUUID` also checks the version and variant bits, which would refuse ids
 * clients hold. Documented as v3 did (`UUID` component, `format: uuid`).
 */
const uuidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/i
export const Uuid = Schema.String.check(
  Schema.isPattern(uuidPattern, {
    expected: "a Universally Unique Identifier",
    toJsonSchema: () => ({ format: "uuid", pattern: uuidPattern.source })
  })
).annotate({ identifier: "UUID", description: "a Universally Unique Identifier" })

/** An API key's name, wherever it is minted (operator CLI, portal): at most 100 characters. */
export const maxKeyNameLength = 100

/**
 * CR LF and a bare CR are line breaks, as LF is: in a caption's lines (the renderer) and in its text
 * track's cue (captions.vtt, where a blank line would end the cue).
 */
export const normaliseLineBreaks = (s: string): string => s.replace(/\r\n?/g, "\n")
