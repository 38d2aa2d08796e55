/**
 * Bounds on a JSON request body (docs/contract.md "Hardening" H1). A body is measured before it is
 * parsed, and nothing downstream (schema decoding, error formatting, logging, the idempotency
 * fingerprint) ever recurses over a value nested deeper than `maxDepth`: V8 parses 5,000 nested `[`
 * happily, but every recursive walker after it overflows the stack.
 */
export const maxBytes = 1024 * 1024

/** No request of the API nests anywhere near this deep; `metadata` is the deepest free-form field. */
export const maxDepth = 64

/**
 * Whether the text nests arrays/objects deeper than `limit`. A linear scan that skips string
 * contents (escapes included) and counts brackets, so it needs no stack and stops at the first excess.
 * On text that is not JSON the answer is meaningless but safe; the parser then refuses it.
 */
export const exceedsDepth = (text: string, limit: number = maxDepth): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: the next character is escaped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

export type Parsed =
  | { readonly _tag: "Ok"; readonly value: unknown }
  | { readonly _tag: "Invalid" }
  | { readonly _tag: "TooDeep" }

/** Syntax first (an unparsable body is a 400), then depth (a parsable but too deep one is a 422). */
export const parse = (text: string, limit: number = maxDepth): Parsed => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { _tag: "Invalid" }
  }
  return exceedsDepth(text, limit) ? { _tag: "TooDeep" } : { _tag: "Ok", value }
}

export const tooDeepMessage = `the body nests deeper than ${maxDepth} levels`
