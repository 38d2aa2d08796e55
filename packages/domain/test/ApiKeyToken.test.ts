import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { prop } from "../../../test/support/prop.ts"
import { checksumOf, crc32, keyIdPart, keyPrefix, mintToken, parseToken, tokenLength } from "../src/ApiKeyToken.ts"
import { base62Alphabet } from "../src/Random.ts"

/** Key format (contract §2): `p2v_live_` + 16 id + 32 secret + 6 checksum, all base62. */
const base62 = (n: number) =>
  fc.array(fc.constantFrom(...base62Alphabet), { minLength: n, maxLength: n }).map((a) => a.join(""))
const token = base62(16).map((idPart) => mintToken(idPart))

describe("ApiKeyToken", () => {
  prop("a minted token parses back to its key id and secret", [token], ([t]) => {
    expect(t.token.length).toBe(tokenLength)
    expect(t.token.startsWith(keyPrefix)).toBe(true)
    expect(t.token).toMatch(/^p2v_live_[0-9A-Za-z]{54}$/)
    expect(parseToken(t.token)).toEqual({ keyId: t.keyId, secret: t.secret })
    expect(keyIdPart(t.keyId)).toBe(t.keyId.slice(4))
  })

  prop(
    "any single-character change is refused",
    [token, fc.nat(), fc.oneof(fc.constantFrom(...base62Alphabet), fc.char(), fc.fullUnicode())],
    ([t, at, replacement]) => {
      const i = at % t.token.length
      fc.pre(t.token[i] !== replacement)
      const tampered = t.token.slice(0, i) + replacement + t.token.slice(i + 1)
      expect(parseToken(tampered)).toBeUndefined()
    },
    { fastCheck: { numRuns: 2000 } }
  )

  prop(
    "inserting or deleting one character is refused",
    [token, fc.nat(), fc.constantFrom(...base62Alphabet)],
    ([t, at, c]) => {
      const i = at % t.token.length
      expect(parseToken(t.token.slice(0, i) + t.token.slice(i + 1))).toBeUndefined()
      expect(parseToken(t.token.slice(0, i) + c + t.token.slice(i))).toBeUndefined()
    }
  )

  prop("swapping two different adjacent characters is refused", [token, fc.nat()], ([t, at]) => {
    const i = at % (t.token.length - 1)
    fc.pre(t.token[i] !== t.token[i + 1])
    const swapped = t.token.slice(0, i) + t.token[i + 1] + t.token[i] + t.token.slice(i + 2)
    expect(parseToken(swapped)).toBeUndefined()
  })

  prop("arbitrary strings never parse unless they carry a valid checksum", [fc.string({ maxLength: 80 })], ([s]) => {
    const parsed = parseToken(s)
    if (parsed !== undefined) expect(checksumOf(s.slice(0, -6))).toBe(s.slice(-6))
  })

  prop("well-shaped strings with a random checksum are refused (unless it happens to match)", [
    base62(48),
    base62(6)
  ], ([body, sum]) => {
    const candidate = keyPrefix + body + sum
    expect(parseToken(candidate) !== undefined).toBe(checksumOf(keyPrefix + body) === sum)
  })

  it("crc32 matches the standard check value", () => {
    expect(crc32("123456789")).toBe(0xcbf43926)
  })

  it("minted tokens differ (secrets are random)", () => {
    const seen = new Set(Array.from({ length: 1000 }, () => mintToken().token))
    expect(seen.size).toBe(1000)
  })
})
