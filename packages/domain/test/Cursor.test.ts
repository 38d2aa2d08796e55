import { describe, expect, it } from "@effect/vitest"
import { Predicate } from "effect"
import * as fc from "fast-check"
import { prop } from "../../../test/support/prop.ts"
import { decodeCursor, decodePageToken, encodeCursor, encodePageToken } from "../src/Cursor.ts"

/** Keyset cursors are opaque: what we encode decodes to the same position, anything else is refused. */
const date = fc.date({
  min: new Date("1970-01-01T00:00:00Z"),
  max: new Date("2200-01-01T00:00:00Z"),
  noInvalidDate: true
})
const position = fc.record({
  // as stored: ISO 8601, sometimes with microseconds
  createdAt: fc.tuple(date, fc.integer({ min: 0, max: 999 })).map(([d, micro]) =>
    micro % 2 === 0 ? d.toISOString() : d.toISOString().replace("Z", `${String(micro).padStart(3, "0")}Z`)
  ),
  id: fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 128 }))
})
const b64url = (s: string) => Buffer.from(s, "utf8").toString("base64url")

describe("Cursor", () => {
  prop("round-trips every position", [position], ([p]) => {
    const c = encodeCursor(p)
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeCursor(c)).toEqual(p)
  })

  prop("never throws, and whatever it accepts is a well-formed position", [fc.string({ maxLength: 600 })], ([s]) => {
    const p = decodeCursor(s)
    if (p !== undefined) {
      expect(Number.isNaN(Date.parse(p.createdAt))).toBe(false)
      expect(p.id.length).toBeGreaterThan(0)
      expect(p.id.length).toBeLessThanOrEqual(128)
    }
  })

  prop("a character outside base64url makes any cursor invalid", [
    position,
    fc.nat(),
    fc.constantFrom("+", "/", "=", " ", "!", "%", ".", "é", "\n")
  ], ([p, at, bad]) => {
    const c = encodeCursor(p)
    const i = at % (c.length + 1)
    expect(decodeCursor(c.slice(0, i) + bad + c.slice(i))).toBeUndefined()
  })

  prop("base64url of JSON that is not a position is refused", [fc.jsonValue()], ([v]) => {
    const looksLikePosition = typeof v === "object" && v !== null && !Array.isArray(v) &&
      Predicate.hasProperty(v, "t") && typeof v.t === "string" && Predicate.hasProperty(v, "i") &&
      typeof v.i === "string"
    fc.pre(!looksLikePosition)
    expect(decodeCursor(b64url(JSON.stringify(v)))).toBeUndefined()
  })

  // the service only ever writes ISO 8601 UTC times (toISOString); Date.parse is far more lenient
  // ("not a date 0" and "x 1" parse as years), so a time check must be on the form, not Date.parse
  prop(
    "positions whose time is not an ISO 8601 timestamp are refused",
    [fc.oneof(fc.string(), fc.constantFrom("not a date 0", "x 1", "2024", "May 5", "1/2/3", "0"))],
    ([t]) => {
      fc.pre(!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(t))
      expect(decodeCursor(b64url(JSON.stringify({ t, i: "00000000-0000-4000-8000-000000000000" })))).toBeUndefined()
    }
  )

  prop("positions with an empty or oversized id are refused", [
    fc.oneof(fc.constant(""), fc.string({ minLength: 129, maxLength: 200 }))
  ], ([i]) => {
    expect(decodeCursor(b64url(JSON.stringify({ t: "2024-01-01T00:00:00.000Z", i })))).toBeUndefined()
  })

  it("refuses the empty string and over-long input", () => {
    expect(decodeCursor("")).toBeUndefined()
    expect(decodeCursor(encodeCursor({ createdAt: "2024-01-01T00:00:00.000Z", id: "x".repeat(128) }) + "A".repeat(600)))
      .toBeUndefined()
  })

  prop(
    "drive page tokens round-trip with their folder",
    [fc.string({ minLength: 1, maxLength: 1000 }), fc.string()],
    ([token, parent]) => {
      expect(decodePageToken(encodePageToken({ token, parent }))).toEqual({ token, parent })
    }
  )

  it("refuses folder cursors without a token or a folder", () => {
    expect(decodePageToken(b64url(JSON.stringify({ p: "abc" })))).toBeUndefined()
    expect(decodePageToken(b64url(JSON.stringify({ p: "", f: "root" })))).toBeUndefined()
    expect(decodePageToken("")).toBeUndefined()
  })
})
