import { describe, expect, it } from "@effect/vitest"
import * as ByteRange from "../src/ByteRange.ts"

describe("ByteRange.parse", () => {
  const size = 1000
  it("a first-last range, clamped to the last byte", () => {
    expect(ByteRange.parse("bytes=0-99", size)).toEqual({ _tag: "Partial", start: 0, end: 99 })
    expect(ByteRange.parse("bytes=900-5000", size)).toEqual({ _tag: "Partial", start: 900, end: 999 })
  })
  it("an open end runs to the last byte; a suffix is the last N bytes", () => {
    expect(ByteRange.parse("bytes=990-", size)).toEqual({ _tag: "Partial", start: 990, end: 999 })
    expect(ByteRange.parse("bytes=-10", size)).toEqual({ _tag: "Partial", start: 990, end: 999 })
    expect(ByteRange.parse("bytes=-5000", size)).toEqual({ _tag: "Partial", start: 0, end: 999 })
  })
  it("a start past the end (or after the last) is unsatisfiable", () => {
    expect(ByteRange.parse("bytes=1000-", size)).toEqual({ _tag: "Unsatisfiable" })
    expect(ByteRange.parse("bytes=50-10", size)).toEqual({ _tag: "Unsatisfiable" })
    expect(ByteRange.contentRange({ _tag: "Unsatisfiable" }, size)).toBe("bytes */1000")
    expect(ByteRange.contentRange({ _tag: "Partial", start: 0, end: 9 }, size)).toBe("bytes 0-9/1000")
  })
  it("no header, another unit, several ranges or no numbers: the whole resource", () => {
    for (const header of [undefined, "", "bytes=-", "items=0-1", "bytes=0-1,5-6", "bytes=a-b"]) {
      expect(ByteRange.parse(header, size)).toEqual({ _tag: "Whole" })
    }
  })
})
