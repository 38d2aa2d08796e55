/**
 * Text a server sent, made safe to print on a terminal: every control character (C0 but the line
 * break when `lines` is set, DEL, C1) and every bidirectional control (U+061C, U+200E/F,
 * U+202A–U+202E, U+2066–U+2069) becomes a `\uXXXX` escape, so that no escape sequence, bell or
 * reordering reaches the terminal. The escape is JSON's own, so a JSON document stays valid and
 * means the same. The one place `p2v` escapes what it prints.
 */
// \p{Cc} is C0, DEL and C1
const unsafe = /(?!\n)[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu
const unsafeWithBreaks = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu

const escape = (c: string) => c === "\n" ? "\\n" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

export const printable = (text: string, options: { readonly lines?: boolean } = {}): string =>
  text.replace(options.lines === true ? unsafe : unsafeWithBreaks, escape)
