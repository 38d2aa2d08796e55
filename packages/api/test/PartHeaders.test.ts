import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import * as PartHeaders from "../src/PartHeaders.ts"

const name = (header: string) => Result.map(PartHeaders.disposition("part 1", header), (d) => [d.name, d.filename])
const refusal = (header: string | ReadonlyArray<string> | undefined) =>
  Result.match(PartHeaders.disposition("part 1", header), { onFailure: (why) => why, onSuccess: () => "accepted" })

describe("PartHeaders.disposition", () => {
  it("a quoted file name holds any Unicode, as browsers and curl send it (UTF-8)", () => {
    for (
      const file of [
        "日本.jpg",
        "東京タワー.jpg",
        "€.jpg",
        "한.jpg",
        "😀.jpg",
        "é.jpg",
        "שלום עולם.jpg",
        "a;b=c.jpg",
        ""
      ]
    ) {
      expect(name(`form-data; name="file"; filename="${file}"`)).toEqual(Result.succeed(["file", file]))
    }
    expect(name(`form-data; name="日本"`)).toEqual(Result.succeed(["日本", undefined]))
  })

  it("names are case-insensitive, space around ; and = is allowed, a stray ; adds nothing, a token needs no quotes", () => {
    expect(name(`Form-Data ;  NAME = file ;FileName="a.jpg";`)).toEqual(Result.succeed(["file", "a.jpg"]))
    expect(name(`form-data; name=file; filename=photo.jpg`)).toEqual(Result.succeed(["file", "photo.jpg"]))
    expect(name(`form-data; name=file; filename=日本.jpg`)).toEqual(Result.succeed(["file", "日本.jpg"]))
  })

  it("\\ escapes only \" and \\; elsewhere it is the character itself (a Windows path as a browser sends it)", () => {
    expect(name(`form-data; name="file"; filename="a\\"b.jpg"`)).toEqual(Result.succeed(["file", `a"b.jpg`]))
    expect(name(`form-data; name="file"; filename="a\\\\b.jpg"`)).toEqual(Result.succeed(["file", `a\\b.jpg`]))
    expect(name(`form-data; name="file"; filename="C:\\photos\\x.jpg"`)).toEqual(
      Result.succeed(["file", `C:\\photos\\x.jpg`])
    )
    // what browsers send for a " in a name: kept as sent
    expect(name(`form-data; name="file"; filename="a%22b.jpg"`)).toEqual(Result.succeed(["file", "a%22b.jpg"]))
  })

  it("filename* is an RFC 8187 value (UTF-8 or ISO-8859-1, any language) and wins over filename, in either order", () => {
    expect(name(`form-data; name="file"; filename*=utf-8''%E6%97%A5%E6%9C%AC.jpg`)).toEqual(
      Result.succeed(["file", "日本.jpg"])
    )
    expect(name(`form-data; name="file"; filename*=UTF-8'ja'%F0%9F%98%80.jpg`)).toEqual(
      Result.succeed(["file", "😀.jpg"])
    )
    expect(name(`form-data; name="file"; filename*=iso-8859-1'fr'caf%E9.jpg`)).toEqual(
      Result.succeed(["file", "café.jpg"])
    )
    // ISO-8859-1 is that charset, not windows-1252: 0x80 is U+0080, not €
    expect(name(`form-data; name="file"; filename*=ISO-8859-1''%80.jpg`)).toEqual(
      Result.succeed(["file", "\u0080.jpg"])
    )
    expect(name(`form-data; name="file"; filename="x.png"; filename*=utf-8''%E2%82%AC.jpg`)).toEqual(
      Result.succeed(["file", "€.jpg"])
    )
    expect(name(`form-data; filename*=utf-8''%E2%82%AC.jpg; name="file"; filename="x.png"`)).toEqual(
      Result.succeed(["file", "€.jpg"])
    )
    expect(name(`form-data; name*=utf-8''%ED%95%9C`)).toEqual(Result.succeed(["한", undefined]))
    expect(name(`form-data; name="file"; filename*=utf-8''`)).toEqual(Result.succeed(["file", ""]))
  })

  it("refuses what is not a form-data part with a name, saying why", () => {
    expect(refusal(undefined)).toBe("part 1 has no Content-Disposition header")
    expect(refusal([`form-data; name="a"`, `form-data; name="b"`])).toBe(
      "part 1 has more than one Content-Disposition header"
    )
    expect(refusal(`form-data; filename="日本.jpg"`)).toBe("part 1's Content-Disposition has no name")
    expect(refusal(`form-data; name=""`)).toBe("part 1's Content-Disposition has an empty name")
    expect(refusal(`attachment; name="file"`)).toBe("part 1's Content-Disposition is not form-data")
    expect(refusal(``)).toBe("part 1's Content-Disposition cannot be read at character 1 (expected a type)")
    expect(refusal(`form-data; name="file"; filename="日本.jpg`)).toBe(
      "part 1's Content-Disposition has a quoted string without its closing quote"
    )
    expect(refusal(`form-data; name="file"; filename="a\\"`)).toBe(
      "part 1's Content-Disposition has a quoted string without its closing quote"
    )
    expect(refusal(`form-data; name="file"; NAME="label"`)).toBe(
      "part 1's Content-Disposition has the parameter name twice"
    )
    expect(refusal(`form-data; name="file" filename="a.jpg"`)).toBe(
      `part 1's Content-Disposition cannot be read at character 24 (expected ";")`
    )
    expect(refusal(`form-data; name`)).toBe(
      `part 1's Content-Disposition cannot be read at character 16 (expected "=")`
    )
    expect(refusal(`form-data; name=`)).toBe(
      `part 1's Content-Disposition cannot be read at character 17 (expected a value)`
    )
    expect(refusal(`form-data; ="x"`)).toBe(
      `part 1's Content-Disposition cannot be read at character 12 (expected a parameter name)`
    )
    expect(refusal(`form-data; name="a\u0001b"`)).toBe(
      "part 1's Content-Disposition has a control character in a quoted string"
    )
  })

  it("refuses a filename* that is not an RFC 8187 value, not UTF-8, or in another charset", () => {
    const notExt =
      "part 1's Content-Disposition has a filename* that is not an RFC 8187 value (charset''percent-encoded bytes: utf-8''%E6%97%A5.jpg)"
    for (const value of [`%E6%97%A5.jpg`, `utf-8''%ZZ.jpg`, `utf-8''%E6%9`, `utf-8''日本.jpg`, `utf-8'%E6.jpg`]) {
      expect(refusal(`form-data; name="file"; filename*=${value}`), value).toBe(notExt)
    }
    expect(refusal(`form-data; name="file"; filename*=utf-8''%E6%97.jpg`)).toBe(
      "part 1's Content-Disposition has a filename* that is not UTF-8 once decoded"
    )
    expect(refusal(`form-data; name="file"; filename*=shift_jis''%93%FA.jpg`)).toBe(
      "part 1's Content-Disposition has a filename* in a charset other than UTF-8 or ISO-8859-1"
    )
  })
})

describe("PartHeaders.contentType", () => {
  it("the media type, lower-cased, with its parameters; absent or unreadable is none", () => {
    expect(PartHeaders.contentType(`Image/PNG`)).toEqual({ value: "image/png", parameters: {} })
    expect(PartHeaders.contentType(`text/plain; charset="ISO-8859-1"`)).toEqual({
      value: "text/plain",
      parameters: { charset: "ISO-8859-1" }
    })
    for (const header of [undefined, ["image/png", "image/jpeg"], "image", "image/png; x=\"", "/png"]) {
      expect(PartHeaders.contentType(header), String(header)).toEqual({ value: "", parameters: {} })
    }
  })
})
