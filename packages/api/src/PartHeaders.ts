import { Result } from "effect"

/**
 * The headers of a multipart/form-data part, as RFC 7578 has them: `Content-Disposition: form-data;
 * name="…"` with an optional `filename`, and an optional `Content-Type`. A value is `type *( ";"
 * parameter )` (RFC 9110 §5.6.6), each parameter a token or a quoted string, read here as follows:
 *
 * - A quoted string holds any Unicode but control characters: browsers and curl send a file's name
 *   as UTF-8 bytes there, and the part's headers are read as UTF-8. `\` escapes only `"` and `\`
 *   (elsewhere it is the character itself: browsers send `\` in a name unescaped).
 * - A parameter whose name ends in `*` is an RFC 8187 ext-value (`utf-8''%E6%97%A5.jpg`, or
 *   `iso-8859-1'fr'caf%E9.jpg`) and wins over the plain parameter (RFC 6266 §4.3).
 * - Parameter names are case-insensitive; one given twice makes the header unreadable (RFC 6266 §4.1).
 *
 * Pure and self-contained: a `Left` says why, in words that follow the header's name.
 */
export interface Parameters {
  /** the type, lower-cased: `form-data`, `image/png` */
  readonly value: string
  /** names lower-cased; an ext-value decoded under the plain name */
  readonly parameters: Readonly<Record<string, string>>
}

const tchar = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/
/** a token may also hold non-ASCII characters (a file name some client left unquoted) */
const isTokenChar = (c: string) => tchar.test(c) || c.charCodeAt(0) > 0x7f
const isControl = (c: string) => {
  const code = c.charCodeAt(0)
  return (code < 0x20 && c !== "\t") || code === 0x7f
}
const isSpace = (c: string | undefined) => c === " " || c === "\t"

/** RFC 8187 §3.2.1: charset "'" [ language ] "'" value-chars */
const extValue = /^([!#$%&+\-^_`{}~0-9A-Za-z]+)'([0-9A-Za-z-]*)'((?:%[0-9A-Fa-f]{2}|[!#$&+\-.^_`|~0-9A-Za-z])*)$/
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

const decodeExtValue = (name: string, raw: string): Result.Result<string, string> => {
  const match = extValue.exec(raw)
  if (match === null) {
    return Result.fail(
      `has a ${name} that is not an RFC 8187 value (charset''percent-encoded bytes: utf-8''%E6%97%A5.jpg)`
    )
  }
  const charset = match[1].toLowerCase()
  const text = match[3]
  const bytes: Array<number> = []
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "%") {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16))
      i += 2
    } else bytes.push(text.charCodeAt(i))
  }
  if (charset === "utf-8") {
    try {
      return Result.succeed(utf8.decode(new Uint8Array(bytes)))
    } catch {
      return Result.fail(`has a ${name} that is not UTF-8 once decoded`)
    }
  }
  // ISO-8859-1 is each byte's code point (TextDecoder's "iso-8859-1" is windows-1252)
  if (charset === "iso-8859-1") return Result.succeed(String.fromCharCode(...bytes))
  return Result.fail(`has a ${name} in a charset other than UTF-8 or ISO-8859-1`)
}

const readable = (at: number, expected: string) => `cannot be read at character ${at + 1} (expected ${expected})`

/** A header value: its type and parameters, or why it cannot be read. */
export const parse = (header: string): Result.Result<Parameters, string> => {
  let i = 0
  const skipSpace = () => {
    while (isSpace(header[i])) i++
  }
  const token = () => {
    const start = i
    while (i < header.length && isTokenChar(header[i])) i++
    return header.slice(start, i)
  }
  skipSpace()
  const start = i
  while (i < header.length && (isTokenChar(header[i]) || header[i] === "/")) i++
  const value = header.slice(start, i).toLowerCase()
  if (value === "") return Result.fail(readable(i, "a type"))
  const plain: Record<string, string> = {}
  const extended: Record<string, string> = {}
  const seen = new Set<string>()
  for (;;) {
    skipSpace()
    if (i >= header.length) break
    if (header[i] !== ";") return Result.fail(readable(i, `";"`))
    i++
    skipSpace()
    // a stray ";" (or one at the end) adds nothing
    if (i >= header.length || header[i] === ";") continue
    const nameAt = i
    const name = token().toLowerCase()
    if (name === "" || /[^\x21-\x7e]/.test(name)) return Result.fail(readable(nameAt, "a parameter name"))
    skipSpace()
    if (header[i] !== "=") return Result.fail(readable(i, `"="`))
    i++
    skipSpace()
    let raw = ""
    if (header[i] === "\"") {
      i++
      let closed = false
      while (i < header.length) {
        const c = header[i]
        if (c === "\"") {
          closed = true
          i++
          break
        }
        if (isControl(c)) return Result.fail(`has a control character in a quoted string`)
        if (c === "\\" && (header[i + 1] === "\"" || header[i + 1] === "\\")) {
          raw += header[i + 1]
          i += 2
        } else {
          // a surrogate pair is two UTF-16 units: both are copied, one at a time
          raw += c
          i++
        }
      }
      if (!closed) return Result.fail("has a quoted string without its closing quote")
    } else {
      const valueAt = i
      raw = token()
      if (raw === "") return Result.fail(readable(valueAt, "a value"))
    }
    if (seen.has(name)) {
      return Result.fail(`has the parameter ${name.length > 40 ? `${name.slice(0, 40)}…` : name} twice`)
    }
    seen.add(name)
    if (name.endsWith("*")) {
      const decoded = decodeExtValue(name, raw)
      if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
      extended[name.slice(0, -1)] = decoded.success
    } else plain[name] = raw
  }
  return Result.succeed({ value, parameters: { ...plain, ...extended } })
}

/** A form-data part's field name and file name (RFC 7578 §4.2). */
export interface Disposition {
  readonly name: string
  readonly filename: string | undefined
  readonly parameters: Readonly<Record<string, string>>
}

/**
 * The part's `Content-Disposition` header (as the headers parser gives it: absent, once, or repeated):
 * `form-data` with a non-empty `name`, or why not, as a sentence about `part` ("part 2").
 */
export const disposition = (
  part: string,
  header: string | ReadonlyArray<string> | undefined
): Result.Result<Disposition, string> => {
  if (header === undefined) return Result.fail(`${part} has no Content-Disposition header`)
  if (typeof header !== "string") return Result.fail(`${part} has more than one Content-Disposition header`)
  const refused = (why: string) => Result.fail(`${part}'s Content-Disposition ${why}`)
  return Result.match(parse(header), {
    onFailure: refused,
    onSuccess: ({ parameters, value }) => {
      const name = parameters.name
      if (value !== "form-data") return refused("is not form-data")
      if (name === undefined) return refused("has no name")
      if (name === "") return refused("has an empty name")
      return Result.succeed({ name, filename: parameters.filename, parameters })
    }
  })
}

/**
 * The part's `Content-Type`: its media type (lower-cased) and parameters; absent or unreadable is
 * none (the bytes decide a file's type, and a field is then text in UTF-8).
 */
export const contentType = (header: string | ReadonlyArray<string> | undefined): Parameters => {
  const none = { value: "", parameters: {} }
  if (typeof header !== "string") return none
  return Result.match(parse(header), {
    onFailure: () => none,
    onSuccess: (p) => /^[^/]+\/[^/]+$/.test(p.value) ? p : none
  })
}
