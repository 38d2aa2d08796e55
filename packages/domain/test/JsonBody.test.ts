import { describe, expect, it } from "vitest"
import { fingerprint } from "../src/Idempotency.ts"
import { exceedsDepth, maxDepth, parse } from "../src/JsonBody.ts"

const nested = (n: number) => "[".repeat(n) + "]".repeat(n)

describe("JsonBody", () => {
  it("counts nesting without recursing, up to and past the bound", () => {
    expect(exceedsDepth(nested(maxDepth))).toBe(false)
    expect(exceedsDepth(nested(maxDepth + 1))).toBe(true)
    expect(exceedsDepth(nested(100_000))).toBe(true)
    expect(exceedsDepth(`{"a":${nested(3)},"b":{"c":[{}]}}`, 4)).toBe(false)
    expect(exceedsDepth(`{"a":${nested(3)},"b":{"c":[{}]}}`, 3)).toBe(true)
  })

  it("brackets inside strings, escaped quotes included, do not count", () => {
    expect(exceedsDepth(`{"q":"${"[".repeat(500)}"}`)).toBe(false)
    expect(exceedsDepth(`{"q":"a\\"${"{".repeat(500)}\\\\"}`)).toBe(false)
    expect(exceedsDepth(`{"q":"\\\\",${"[".repeat(70)}`)).toBe(true)
  })

  it("parse: unparsable is Invalid before TooDeep; shallow values come back", () => {
    expect(parse("[".repeat(5000))._tag).toBe("Invalid")
    expect(parse(nested(5000))._tag).toBe("TooDeep")
    expect(parse(`{"a":[1,{"b":null}]}`)).toEqual({ _tag: "Ok", value: { a: [1, { b: null }] } })
  })

  it("the idempotency fingerprint of a body past the bound is its bytes' hash, without overflowing", () => {
    const deep = new TextEncoder().encode(nested(200_000))
    expect(fingerprint(deep)).toMatch(/^[0-9a-f]{64}$/)
    expect(fingerprint(new TextEncoder().encode(`{"b":1,"a":2}`))).toBe(
      fingerprint(new TextEncoder().encode(`{ "a": 2, "b": 1 }`))
    )
  })
})
