import { Schema } from "effect"

/** decisions §6: lengths count Unicode code points, so an emoji is one character. */
export const codePoints = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

export const TextOfLength = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => {
      // PostgreSQL text and jsonb cannot hold U+0000: refused as invalid rather than failing to store
      if (s.includes("\u0000")) return "must not contain the character U+0000"
      const n = codePoints(s)
      return n >= min && n <= max ? undefined : `must be ${min === 0 ? "at most" : `${min} to`} ${max} characters`
    }, { jsonSchema: { minLength: min, maxLength: max } })
  )
