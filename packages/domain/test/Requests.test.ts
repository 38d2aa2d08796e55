import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import * as fc from "fast-check"
import { prop } from "../../../test/support/prop.ts"
import { CreateImportBody, CreateRenderBody, ListLimit, strict, UploadLabel, UploadTag } from "../src/Requests.ts"
import { codePoints, TextOfLength } from "../src/Text.ts"

/**
 * Strict request bodies (spec "Endpoints": any field not listed is 422, explicitly `url`,
 * `storage_path`, `preview_url`) and lengths in code points (contract §6: an emoji is one).
 */
// request bodies are decoded with the strict options (Effect 4 takes them at the call, not from the schema)
const decodeRender = (u: unknown) => Schema.decodeUnknownExit(CreateRenderBody)(u, strict)
const decodeImport = (u: unknown) => Schema.decodeUnknownExit(CreateImportBody)(u, strict)

const renderFields = [
  "media_id",
  "quote",
  "render_type",
  "caption_style",
  "text_color",
  "text_size",
  "bold",
  "bold_outline",
  "page_theme",
  "image_class",
  "sub_prompt",
  "render_prompt",
  "metadata"
]
const importFields = ["provider", "folder_id", "recursive"]

const validRender = fc.record({
  media_id: fc.uuid(),
  quote: fc.string({ maxLength: 100 }),
  caption_style: fc.constantFrom("quote", "meme"),
  text_color: fc.constantFrom("white", "yellow", "pastel-yellow"),
  bold: fc.boolean(),
  // `__proto__` is the one key refused on purpose (Requests.ts; its own test below)
  metadata: fc.dictionary(
    fc.string({ minLength: 1, maxLength: 40 }).filter((k) => k !== "__proto__"),
    fc.oneof(fc.string({ maxLength: 50 }), fc.integer(), fc.boolean(), fc.constant(null)),
    { maxKeys: 20 }
  )
}, { requiredKeys: ["media_id"] })
const validImport = fc.record({
  provider: fc.constant("cloud_drive"),
  folder_id: fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/),
  recursive: fc.constant(false)
}, { requiredKeys: ["provider", "folder_id"] })

const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant({}), fc.constant([]))
/** Adds the field as an own property, as JSON.parse would (so `__proto__` is a real key too). */
const withField = (body: object, key: string, v: unknown) =>
  JSON.parse(JSON.stringify(Object.fromEntries([...Object.entries(body), [key, v]])))
const unknownKey = (known: Array<string>) =>
  fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom("url", "storage_path", "preview_url", "__proto__", "constructor", "MEDIA_ID", "media_id ")
  )
    .filter((k) => !known.includes(k))

describe("strict bodies", () => {
  prop("valid render bodies decode", [validRender], ([body]) => {
    expect(Exit.isSuccess(decodeRender(body)), JSON.stringify(body)).toBe(true)
  })

  prop(
    "a render body with any unknown field is refused",
    [validRender, unknownKey(renderFields), value],
    ([body, key, v]) => {
      const withExtra = withField(body, key, v)
      expect(Object.hasOwn(withExtra, key)).toBe(true)
      expect(Exit.isFailure(decodeRender(withExtra)), JSON.stringify(withExtra)).toBe(true)
    }
  )

  prop("valid import bodies decode", [validImport], ([body]) => {
    expect(Exit.isSuccess(decodeImport(body)), JSON.stringify(body)).toBe(true)
  })

  prop(
    "an import body with any unknown field is refused",
    [validImport, unknownKey(importFields), value],
    ([body, key, v]) => {
      expect(Exit.isFailure(decodeImport(withField(body, key, v)))).toBe(true)
    }
  )

  it("the fields the spec names explicitly are refused", () => {
    for (const key of ["url", "storage_path", "preview_url"]) {
      expect(Exit.isFailure(decodeRender({ media_id: "00000000-0000-4000-8000-000000000000", [key]: "x" }))).toBe(true)
      expect(Exit.isFailure(decodeImport({ provider: "cloud_drive", folder_id: "abc", [key]: "x" }))).toBe(true)
    }
  })

  prop("a folder id is never a URL", [fc.webUrl()], ([url]) => {
    expect(Exit.isFailure(decodeImport({ provider: "cloud_drive", folder_id: url }))).toBe(true)
  })

  it("a folder id is whatever the drive names it, short of a path or whitespace", () => {
    for (const id of ["abc", "0B1x_y-Z", "folder.v2", "id:42", "~shared", "ünïcode"]) {
      expect(Exit.isSuccess(decodeImport({ provider: "cloud_drive", folder_id: id }))).toBe(true)
    }
    for (const id of ["", "a/b", "a b", "a?b", "a#b", "a\\b", "a\nb", "x".repeat(201)]) {
      expect(Exit.isFailure(decodeImport({ provider: "cloud_drive", folder_id: id }))).toBe(true)
    }
  })

  it("recursive: true is refused (reserved)", () => {
    expect(Exit.isFailure(decodeImport({ provider: "cloud_drive", folder_id: "abc", recursive: true }))).toBe(true)
  })

  prop("metadata: more than 20 keys or a nested value is refused", [
    fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 21, maxLength: 30 })
  ], ([keys]) => {
    const media_id = "00000000-0000-4000-8000-000000000000"
    expect(Exit.isFailure(decodeRender({ media_id, metadata: Object.fromEntries(keys.map((k) => [k, 1])) }))).toBe(true)
    expect(Exit.isFailure(decodeRender({ media_id, metadata: { [keys[0]]: { nested: true } } }))).toBe(true)
    expect(Exit.isFailure(decodeRender({ media_id, metadata: { [keys[0]]: [1] } }))).toBe(true)
  })
})

describe("metadata keys", () => {
  it("a `__proto__` key is refused rather than silently dropped", () => {
    const body = JSON.parse(`{"media_id":"00000000-0000-4000-8000-000000000000","metadata":{"__proto__":1,"a":2}}`)
    expect(Exit.isFailure(decodeRender(body))).toBe(true)
  })
})

describe("lengths count code points", () => {
  const unit = fc.oneof(fc.constantFrom("a", "é", "😀", "🎞", "𝄞", "中", "ß"), fc.fullUnicode())
  const text = fc.array(unit, { maxLength: 260 })

  prop(
    "TextOfLength(min, max) accepts exactly the strings of min..max code points",
    [text, fc.nat(60), fc.nat(260)],
    ([units, min, span]) => {
      const s = units.join("")
      const max = min + span
      const n = [...s].length
      expect(codePoints(s)).toBe(n)
      expect(Exit.isSuccess(Schema.decodeUnknownExit(TextOfLength(min, max))(s))).toBe(n >= min && n <= max)
    }
  )

  prop(
    "an emoji counts as one: quote 500, sub_prompt 150, render_prompt 200, page_theme 1..100, label 200, tag 1..50",
    [fc.constantFrom("😀", "🎞", "𝄞")],
    ([emoji]) => {
      const media_id = "00000000-0000-4000-8000-000000000000"
      const cases: Array<[string, number, number]> = [["quote", 0, 500], ["sub_prompt", 0, 150], [
        "render_prompt",
        0,
        200
      ], ["page_theme", 1, 100]]
      for (const [field, min, max] of cases) {
        expect(Exit.isSuccess(decodeRender({ media_id, [field]: emoji.repeat(max) })), `${field} at ${max}`).toBe(true)
        expect(Exit.isFailure(decodeRender({ media_id, [field]: emoji.repeat(max + 1) })), `${field} at ${max + 1}`)
          .toBe(true)
        if (min === 1) {
          expect(Exit.isFailure(decodeRender({ media_id, [field]: "" }))).toBe(true)
        }
      }
      expect(Exit.isSuccess(Schema.decodeUnknownExit(UploadLabel)(emoji.repeat(200)))).toBe(true)
      expect(Exit.isFailure(Schema.decodeUnknownExit(UploadLabel)(emoji.repeat(201)))).toBe(true)
      expect(Exit.isSuccess(Schema.decodeUnknownExit(UploadTag)(emoji.repeat(50)))).toBe(true)
      expect(Exit.isFailure(Schema.decodeUnknownExit(UploadTag)(emoji.repeat(51)))).toBe(true)
      expect(Exit.isFailure(Schema.decodeUnknownExit(UploadTag)(""))).toBe(true)
    }
  )
})

describe("list limit", () => {
  const numberLike = fc.oneof(
    fc.integer({ min: -1000, max: 1000 }).map(String),
    fc.string({ maxLength: 6 }),
    fc.double().map(String),
    fc.integer({ min: 1, max: 100 }).chain((n) =>
      fc.constantFrom(`${n}.0`, `+${n}`, ` ${n}`, `${n} `, `0x${n.toString(16)}`, `${n}e0`, `0${n}`)
    )
  )
  prop("accepts exactly the integers 1..100 written in decimal digits (no clamping)", [numberLike], ([raw]) => {
    const decoded = Schema.decodeUnknownExit(ListLimit)(raw)
    const n = Number(raw)
    const expected = /^[0-9]+$/.test(raw) && n >= 1 && n <= 100
    expect(Exit.isSuccess(decoded), raw).toBe(expected)
    if (Exit.isSuccess(decoded)) expect(decoded.value).toBe(n)
  })

  it("refuses U+0000 and lone surrogates in any text field (PostgreSQL cannot store them)", () => {
    expect(Exit.isFailure(Schema.decodeUnknownExit(UploadLabel)("a\u0000b"))).toBe(true)
    expect(Exit.isFailure(Schema.decodeUnknownExit(UploadTag)("x\u0000"))).toBe(true)
    const media_id = "00000000-0000-4000-8000-000000000000"
    expect(Exit.isFailure(decodeRender({ media_id, quote: "a\u0000" }))).toBe(true)
    expect(Exit.isFailure(decodeRender({ media_id, metadata: { "k\u0000": 1 } }))).toBe(true)
    expect(Exit.isFailure(decodeRender({ media_id, metadata: { k: "v\u0000" } }))).toBe(true)
    for (const lone of ["\ud800", "a\udc00", "\udc00\ud800"]) {
      expect(Exit.isFailure(decodeRender({ media_id, sub_prompt: lone })), JSON.stringify(lone)).toBe(true)
      expect(Exit.isFailure(decodeRender({ media_id, metadata: { [lone]: 1 } }))).toBe(true)
    }
    expect(Exit.isSuccess(decodeRender({ media_id, quote: "🎬 ok", metadata: { "🎬": "✨" } }))).toBe(true)
  })
})
