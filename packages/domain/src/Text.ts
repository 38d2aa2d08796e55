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

export const TextOfLength = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => {
      if (!isStorable(s)) return "must be well-formed text without U+0000"
      const n = codePoints(s)
      return n >= min && n <= max ? undefined : `must be ${min === 0 ? "at most" : `${min} to`} ${max} characters`
    }, { jsonSchema: { minLength: min, maxLength: max } })
  )
