import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError } from "../support/limits.ts"
import { adminOk, client, makeShared, type Service, startService, workspaceWithKey } from "../support/service.ts"
import { type Api, stopOrKill, uploadPhoto } from "./helpers.ts"

/**
 * Validation on POST /api/v1/renders (spec POST /renders, Errors, Limits; contract §4 order, §6
 * lengths and metadata). Bodies that must pass validation are sent with a Starter key, whose every
 * valid create is 402 quota_exceeded (contract §4: validation comes before charges), so no render runs;
 * one 500-emoji caption is rendered for real on Studio.
 */
let service: Service
let studio: Api
let starter: Api
let studioSecret: string
let mediaId: string
let starterMediaId: string
let foreignMediaId: string
let archivedMediaId: string

const emoji = "🚀"
const a = (n: number) => "a".repeat(n)

beforeAll(async () => {
  service = await startService(await makeShared(), { RENDER_CONCURRENCY: "1" })
  const [s, st, f] = await Promise.all([
    workspaceWithKey(service.env, { keyArgs: ["--creates-per-minute", "10000"] }),
    workspaceWithKey(service.env, { plan: "starter", keyArgs: ["--creates-per-minute", "10000"] }),
    workspaceWithKey(service.env, { plan: "agency" })
  ])
  studioSecret = s.secret
  studio = client(service.baseUrl, s.secret)
  starter = client(service.baseUrl, st.secret)
  const foreign = client(service.baseUrl, f.secret)
  ;[mediaId, starterMediaId, foreignMediaId, archivedMediaId] = await Promise.all([
    uploadPhoto(studio, "rocket.jpg", service).then((m) => m.id),
    uploadPhoto(starter, "chelsea.png", service).then((m) => m.id),
    uploadPhoto(foreign, "coffee.png", service).then((m) => m.id),
    uploadPhoto(studio, "astronaut.png", service).then((m) => m.id)
  ])
  await adminOk(service.env, "media", "archive", archivedMediaId)
})

afterAll(async () => {
  await stopOrKill(service)
})

const create = (api: Api, body: unknown, headers?: Record<string, string>) =>
  api.postJson("/api/v1/renders", body, headers)

/** 422 validation_failed whose message names the field (contract §4.8). */
const invalid = async (body: Record<string, unknown>, field: string) => {
  const err = await expectError(await create(starter, { media_id: starterMediaId, ...body }), 422, "validation_failed")
  expect(err.error.message, `message should name ${field}`).toContain(field)
}

/** Valid body: on Starter that is 402 quota_exceeded, which proves validation let it through. */
const valid = async (body: Record<string, unknown>) =>
  expectError(await create(starter, { media_id: starterMediaId, ...body }), 402, "quota_exceeded")

describe("POST /api/v1/renders validation", () => {
  it("refuses unknown fields, including url, storage_path and preview_url", async () => {
    await invalid({ url: "https://example.com/photo.jpg" }, "url")
    await invalid({ storage_path: "/var/data/photo.jpg" }, "storage_path")
    await invalid({ preview_url: "http://localhost/api/v1/media/x/preview" }, "preview_url")
    await invalid({ colour: "white" }, "colour")
    await invalid({ quote: "hi", webhook_url: "https://example.com/hook" }, "webhook_url")
  })

  it("needs media_id", async () => {
    await expectError(await create(starter, { quote: "no photo" }), 422, "validation_failed")
    await expectError(await create(starter, {}), 422, "validation_failed")
  })

  it("counts quote length in code points: 500 emoji pass, 501 characters do not", async () => {
    await valid({ quote: emoji.repeat(500) })
    await valid({ quote: a(500) })
    await valid({ quote: "" })
    await invalid({ quote: a(501) }, "quote")
    await invalid({ quote: emoji.repeat(501) }, "quote")
    await invalid({ quote: 42 }, "quote")
  })

  it("renders a 500-emoji caption (202 on Studio)", async () => {
    const res = await create(studio, { media_id: mediaId, quote: emoji.repeat(500) })
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(202)
    expect(body).toMatchObject({ object: "render", status: "queued" })
  })

  it("text_color is white, yellow or pastel-yellow only", async () => {
    for (const c of ["white", "yellow", "pastel-yellow"]) await valid({ text_color: c })
    for (const c of ["red", "#fff", "#FFFFFF", "White", "", "pastel_yellow"]) {
      await invalid({ text_color: c }, "text_color")
    }
  })

  it("text_size is one of the five sizes", async () => {
    for (const s of ["tiny", "smallest", "smaller", "default", "larger"]) await valid({ text_size: s })
    for (const s of ["huge", "large", "", "DEFAULT"]) await invalid({ text_size: s }, "text_size")
    await invalid({ text_size: 3 }, "text_size")
  })

  it("other enumerations and types", async () => {
    await valid({
      caption_style: "meme",
      bold: true,
      bold_outline: false,
      image_class: "landscape_nature",
      sub_prompt: a(150),
      render_prompt: a(200)
    })
    await invalid({ caption_style: "poster" }, "caption_style")
    await invalid({ image_class: "cat" }, "image_class")
    await invalid({ bold: "yes" }, "bold")
    await invalid({ sub_prompt: a(151) }, "sub_prompt")
    await invalid({ render_prompt: a(201) }, "render_prompt")
  })

  it("page_theme is 1 to 100 characters", async () => {
    await valid({ page_theme: "x" })
    await valid({ page_theme: a(100) })
    await valid({ page_theme: emoji.repeat(100) })
    await invalid({ page_theme: "" }, "page_theme")
    await invalid({ page_theme: a(101) }, "page_theme")
  })

  it("metadata: at most 20 scalar keys of 1–40 characters, strings up to 500", async () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))
    await valid({ metadata: {} })
    await valid({ metadata: keys(20) })
    await valid({ metadata: { [a(40)]: "x", s: a(500), n: 1.5, b: false, z: null, e: emoji.repeat(500) } })
    await invalid({ metadata: keys(21) }, "metadata")
    await invalid({ metadata: { nested: { a: 1 } } }, "metadata")
    await invalid({ metadata: { list: [1, 2] } }, "metadata")
    await invalid({ metadata: { [a(41)]: "x" } }, "metadata")
    await invalid({ metadata: { "": "x" } }, "metadata")
    await invalid({ metadata: { s: a(501) } }, "metadata")
    await invalid({ metadata: "a string" }, "metadata")
    await invalid({ metadata: [1] }, "metadata")
    // text PostgreSQL cannot store is refused as invalid, not a fault
    await invalid({ metadata: { a: "x\u0000y" } }, "metadata")
    await invalid({ metadata: { "a\u0000": "y" } }, "metadata")
    await invalid({ metadata: { a: "\ud800" } }, "metadata")
    await invalid({ sub_prompt: "a\u0000b" }, "sub_prompt")
    await invalid({ render_prompt: "\udc00x" }, "render_prompt")
    await invalid({ quote: "a\u0000" }, "quote")
  })

  it("render_type other than aesthetic_quote is 422 unsupported_render_type", async () => {
    await valid({ render_type: "aesthetic_quote" })
    for (const t of ["slideshow", "video_meme"]) {
      await expectError(
        await create(starter, { media_id: starterMediaId, render_type: t }),
        422,
        "unsupported_render_type"
      )
      await expectError(await create(studio, { media_id: mediaId, render_type: t }), 422, "unsupported_render_type")
    }
  })

  it("400 invalid_request for an unparsable body or a non-JSON content type", async () => {
    const post = (body: string, contentType?: string) =>
      fetch(`${service.baseUrl}/api/v1/renders`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${studioSecret}`,
          ...(contentType === undefined ? {} : { "content-type": contentType })
        },
        body
      })
    const json = JSON.stringify({ media_id: mediaId, quote: "" })
    await expectError(await post("{\"media_id\": ", "application/json"), 400, "invalid_request")
    await expectError(await post("", "application/json"), 400, "invalid_request")
    await expectError(await post("not json at all", "application/json"), 400, "invalid_request")
    await expectError(await post(json, "text/plain"), 400, "invalid_request")
    await expectError(await post(json, "application/x-www-form-urlencoded"), 400, "invalid_request")
    await expectError(await post(json, "multipart/form-data; boundary=x"), 400, "invalid_request")
    // a +json media type is JSON: the create goes on to its lookup
    const unknown = JSON.stringify({ media_id: "00000000-0000-4000-8000-000000000000", quote: "" })
    for (
      const type of ["application/vnd.api+json", "application/merge-patch+json", "APPLICATION/JSON; charset=utf-8"]
    ) {
      await expectError(await post(unknown, type), 404, "unknown_media")
    }
  })

  it("404 unknown_media for unknown, foreign and archived media", async () => {
    await expectError(
      await create(studio, { media_id: "00000000-0000-4000-8000-000000000000", quote: "" }),
      404,
      "unknown_media"
    )
    await expectError(await create(studio, { media_id: foreignMediaId, quote: "" }), 404, "unknown_media")
    await expectError(await create(studio, { media_id: archivedMediaId, quote: "" }), 404, "unknown_media")
  })

  it("validation comes before the media lookup, and the lookup before the charge (contract §4)", async () => {
    await expectError(await create(studio, { media_id: foreignMediaId, text_color: "red" }), 422, "validation_failed")
    await expectError(await create(starter, { media_id: foreignMediaId, quote: "" }), 404, "unknown_media")
  })

  it("a malformed Idempotency-Key is 422 validation_failed", async () => {
    const body = { media_id: starterMediaId, quote: "" }
    await expectError(await create(starter, body, { "idempotency-key": "k".repeat(256) }), 422, "validation_failed")
    await expectError(await create(starter, body, { "idempotency-key": "clé-1" }), 422, "validation_failed")
    await expectError(await create(starter, body, { "idempotency-key": "tab\there" }), 422, "validation_failed")
    // 255 printable ASCII characters (spaces included) are a valid key: the create goes on to its 402
    await expectError(await create(starter, body, { "idempotency-key": "k".repeat(254) + "~" }), 402, "quota_exceeded")
    await expectError(await create(starter, body, { "idempotency-key": "a key with spaces" }), 402, "quota_exceeded")
  })
})
