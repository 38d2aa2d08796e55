/**
 * One `Range: bytes=…` request header against a resource of `size` bytes (RFC 9110 §14.1.2, §14.2),
 * for the responses that serve byte ranges (the portal's video player). Only a single range is
 * served; anything this does not understand is answered whole, as the RFC allows.
 */
export type ByteRange =
  /** no usable Range: the whole resource, 200 */
  | { readonly _tag: "Whole" }
  /** bytes start..end inclusive, 206 with `Content-Range: bytes start-end/size` */
  | { readonly _tag: "Partial"; readonly start: number; readonly end: number }
  /** a range that starts past the end, 416 with `Content-Range: bytes *` + `/size` */
  | { readonly _tag: "Unsatisfiable" }

const single = /^bytes=(\d*)-(\d*)$/

export const parse = (header: string | undefined, size: number): ByteRange => {
  const m = single.exec(header ?? "")
  if (m === null || (m[1] === "" && m[2] === "")) return { _tag: "Whole" }
  // a suffix (bytes=-N) is the last N bytes; an open end (bytes=N-) runs to the last byte
  const start = m[1] === "" ? Math.max(0, size - Number(m[2])) : Number(m[1])
  const end = m[1] === "" || m[2] === "" ? size - 1 : Math.min(size - 1, Number(m[2]))
  return start > end || start >= size ? { _tag: "Unsatisfiable" } : { _tag: "Partial", start, end }
}

/** The `Content-Range` value of a partial or unsatisfiable answer. */
export const contentRange = (range: Exclude<ByteRange, { readonly _tag: "Whole" }>, size: number) =>
  range._tag === "Partial" ? `bytes ${range.start}-${range.end}/${size}` : `bytes */${size}`
