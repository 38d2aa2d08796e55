import { fileTypeFromBuffer } from "file-type"
import * as http from "node:http"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, expectOk, expectRateLimitHeaders, type Json } from "../support/limits.ts"
import { client, makeShared, photo, type Service, startService, waitFor } from "../support/service.ts"
import { type Admin, inProcessAdmin, type Keyed, keyed } from "./admin.ts"
import { rawRequest } from "./http.ts"
import { animatedGif, animatedWebp, exifRotatedJpegWithGps, hasTiffTag, solid } from "./photos.ts"

/**
 * The media library's details (spec GET/POST /api/v1/media, preview; contract §5): document
 * shape, defaults, dimensions filled in after upload, newest-first keyset paging, previews, the
 * public base URL, isolation between workspaces, and archiving.
 */
const publicBaseUrl = "https://example.test"
let service: Service
let ops: Admin
let owner: Keyed
let other: Keyed

const mediaKeys = [
  "created_at",
  "file_size_bytes",
  "height",
  "id",
  "label",
  "mime_type",
  "object",
  "preview_expires_at",
  "preview_url",
  "tags",
  "width"
]

beforeAll(async () => {
  service = await startService(await makeShared(), { PUBLIC_BASE_URL: publicBaseUrl })
  ops = inProcessAdmin(service.env)
  const limits = ["--uploads-per-minute", "1000", "--reads-per-minute", "10000"]
  ;[owner, other] = [await keyed(ops, "studio", limits), await keyed(ops, "agency", limits)]
})

afterAll(async () => {
  await ops?.dispose()
  expect(await service?.stop()).toBe(0)
})

const api = (k: Keyed) => client(service.baseUrl, k.secret)
const upload = async (k: Keyed, bytes: Uint8Array, opts: Parameters<ReturnType<typeof client>["upload"]>[1] = {}) =>
  expectOk(await api(k).upload(bytes, opts), 201)
const list = async (k: Keyed, query = "") => expectOk(await api(k).get(`/api/v1/media${query}`))

/** The list entry for `id`, once the service has filled in its dimensions (contract §5: within 5 s). */
const settled = async (k: Keyed, id: string) => {
  let found: Json
  await waitFor(
    async () => {
      const page = await list(k, "?limit=100")
      found = page.data.find((m: { readonly id: string }) => m.id === id)
      return found !== undefined && found.width !== null && found.height !== null
    },
    5_000,
    `dimensions of ${id}`
  )
  return found
}

describe("the upload response", () => {
  it("is a media document: exact fields, width/height null, label \"\" and tags [] by default, preview_url on PUBLIC_BASE_URL", async () => {
    const rocket = photo("rocket.jpg")
    const m = await upload(owner, rocket, { filename: "rocket.jpg" })
    expect(Object.keys(m).sort()).toEqual(mediaKeys)
    expect(m).toMatchObject({
      object: "media",
      label: "",
      tags: [],
      width: null,
      height: null,
      mime_type: "image/jpeg",
      file_size_bytes: rocket.length,
      preview_url: `${publicBaseUrl}/api/v1/media/${m.id}/preview`,
      preview_expires_at: null
    })
    expect(m.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(m.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
    expect(Math.abs(Date.parse(m.created_at) - Date.now())).toBeLessThan(60_000)
  })

  it("keeps the label and repeated tags as sent", async () => {
    const m = await upload(owner, photo("rocket.jpg"), {
      filename: "rocket.jpg",
      label: "Launch 🚀",
      tags: ["space", "rocket", "🚀"]
    })
    expect(m).toMatchObject({ label: "Launch 🚀", tags: ["space", "rocket", "🚀"] })
    const inList = await settled(owner, m.id)
    expect(inList).toMatchObject({ label: "Launch 🚀", tags: ["space", "rocket", "🚀"] })
  })

  it("width and height are null in the 201 and filled in the list, as displayed (EXIF orientation applied)", async () => {
    const png = await upload(owner, photo("chelsea.png"), { filename: "chelsea.png" })
    expect([png.width, png.height]).toEqual([null, null])
    const meta = await sharp(photo("chelsea.png")).metadata()
    expect(await settled(owner, png.id)).toMatchObject({ width: meta.width, height: meta.height })

    // stored 1600×900 with orientation 6 displays as 900×1600
    const rotated = await upload(owner, await exifRotatedJpegWithGps(1600, 900), { filename: "rotated.jpg" })
    expect([rotated.width, rotated.height]).toEqual([null, null])
    expect(await settled(owner, rotated.id)).toMatchObject({ width: 900, height: 1600, mime_type: "image/jpeg" })
  })
})

describe("the list", () => {
  it("is a list wrapper in newest-first order with a default page of 25", async () => {
    const k = await keyed(ops, "studio", ["--uploads-per-minute", "1000"])
    const ids: Array<string> = []
    for (let i = 0; i < 27; i++) ids.push((await upload(k, await solid(8 + i, 8, "png"), { filename: `p${i}.png` })).id)
    const page = await list(k)
    expect(Object.keys(page).sort()).toEqual(["data", "has_more", "next_cursor", "object"])
    expect(page.object).toBe("list")
    expect(page.data.length).toBe(25)
    expect(page.has_more).toBe(true)
    expect(typeof page.next_cursor).toBe("string")
    expect(page.data.map((m: { readonly id: string }) => m.id)).toEqual([...ids].reverse().slice(0, 25))
    for (const m of page.data) expect(Object.keys(m).sort()).toEqual(mediaKeys)
    const times = page.data.map((m: { readonly created_at: string }) => Date.parse(m.created_at))
    expect([...times].sort((x, y) => y - x)).toEqual(times)
    const rest = await list(k, `?cursor=${encodeURIComponent(page.next_cursor)}`)
    expect(rest.data.map((m: { readonly id: string }) => m.id)).toEqual([ids[1], ids[0]])
    expect(rest.has_more).toBe(false)
    expect(rest.next_cursor).toBeNull()
  })

  it("pages with limit and next_cursor (null on the last page); items added while paging do not shift pages", async () => {
    const k = await keyed(ops, "studio", ["--uploads-per-minute", "1000"])
    const ids: Array<string> = []
    for (let i = 0; i < 7; i++) ids.push((await upload(k, await solid(4 + i, 4, "png"), { filename: `p${i}.png` })).id)
    const newestFirst = [...ids].reverse()

    const p1 = await list(k, "?limit=3")
    expect(p1.data.map((m: { readonly id: string }) => m.id)).toEqual(newestFirst.slice(0, 3))
    expect(p1.has_more).toBe(true)

    // two uploads land between page 1 and page 2
    const added = [(await upload(k, await solid(30, 4, "png"))).id, (await upload(k, await solid(31, 4, "png"))).id]

    const p2 = await list(k, `?limit=3&cursor=${encodeURIComponent(p1.next_cursor)}`)
    expect(p2.data.map((m: { readonly id: string }) => m.id)).toEqual(newestFirst.slice(3, 6))
    expect(p2.has_more).toBe(true)
    const p3 = await list(k, `?limit=3&cursor=${encodeURIComponent(p2.next_cursor)}`)
    expect(p3.data.map((m: { readonly id: string }) => m.id)).toEqual(newestFirst.slice(6))
    expect(p3.has_more).toBe(false)
    expect(p3.next_cursor).toBeNull()

    // a page that ends exactly at the last item says so
    const exact = await list(k, "?limit=9")
    expect(exact.data.length).toBe(9)
    expect(exact.has_more).toBe(false)
    expect(exact.next_cursor).toBeNull()
    expect(exact.data.slice(0, 2).map((m: { readonly id: string }) => m.id)).toEqual([...added].reverse())

    // limit=1 walks every item exactly once
    const walked: Array<string> = []
    let cursor: string | null = null
    do {
      const page: Json = await list(k, `?limit=1${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
      walked.push(...page.data.map((m: { readonly id: string }) => m.id))
      cursor = page.next_cursor
    } while (cursor !== null)
    expect(walked).toEqual([...[...added].reverse(), ...newestFirst])
  })

  it("an empty library is an empty list", async () => {
    const k = await keyed(ops, "starter", ["--scopes", "media:read"])
    expect(await list(k)).toEqual({ object: "list", data: [], has_more: false, next_cursor: null })
  })

  it("another workspace's media are invisible: not listed, and 404 on preview", async () => {
    const mine = await upload(owner, photo("rocket.jpg"), { filename: "rocket.jpg" })
    const theirs = await list(other, "?limit=100")
    expect(theirs.data.map((m: { readonly id: string }) => m.id)).not.toContain(mine.id)
    await expectError(await api(other).get(`/api/v1/media/${mine.id}/preview`), 404, "unknown_media")
    // a cursor made from the owner's list does not reveal the owner's items either
    const ownerPage = await list(owner, "?limit=1")
    if (ownerPage.next_cursor !== null) {
      const viaCursor = await list(other, `?limit=100&cursor=${encodeURIComponent(ownerPage.next_cursor)}`)
      const ownerIds = new Set((await list(owner, "?limit=100")).data.map((m: { readonly id: string }) => m.id))
      expect(viaCursor.data.filter((m: { readonly id: string }) => ownerIds.has(m.id))).toEqual([])
    }
  })
})

describe("previews", () => {
  const fetchPreview = async (k: Keyed, id: string) => {
    const res = await api(k).get(`/api/v1/media/${id}/preview`)
    expect(res.status).toBe(200)
    expect(res.headers.get("cache-control")).toBe("private, no-store")
    expect(res.headers.get("x-request-id") ?? "").not.toBe("")
    expectRateLimitHeaders(res)
    const bytes = new Uint8Array(await res.arrayBuffer())
    return { bytes, contentType: res.headers.get("content-type"), sniffed: (await fileTypeFromBuffer(bytes))?.mime }
  }

  it("an EXIF-rotated JPEG with GPS: ≤ 1080 px long side, orientation applied, no EXIF/GPS metadata left", async () => {
    const source = await exifRotatedJpegWithGps(2400, 1200)
    const srcMeta = await sharp(source).metadata()
    expect(srcMeta.orientation).toBe(6)
    expect(hasTiffTag(srcMeta.exif!, 0x8825)).toBe(true) // the source does carry a GPS IFD
    const m = await upload(owner, source, { filename: "gps.jpg" })
    const preview = await fetchPreview(owner, m.id)
    expect(preview.contentType).toBe("image/jpeg")
    expect(preview.sniffed).toBe("image/jpeg")
    const meta = await sharp(preview.bytes).metadata()
    // displayed 1200×2400 → scaled to 540×1080
    expect([meta.width, meta.height]).toEqual([540, 1080])
    expect(meta.orientation ?? 1).toBe(1)
    expect(meta.exif).toBeUndefined()
    expect(meta.xmp).toBeUndefined()
    expect(meta.iptc).toBeUndefined()
    const latin = Buffer.from(preview.bytes).toString("latin1")
    expect(latin).not.toContain("FoundationTestCam")
    expect(latin).not.toContain("Exif\0\0")
    // the pixels really were turned: the stored image is wide, the preview tall
    expect(meta.height!).toBeGreaterThan(meta.width!)
  })

  it("Content-Type follows the source type (JPEG, PNG, WebP); a GIF's preview is an image whose type matches its bytes", async () => {
    const cases: Array<[Uint8Array, string, string]> = [
      [photo("rocket.jpg"), "rocket.jpg", "image/jpeg"],
      [photo("coffee.png"), "coffee.png", "image/png"],
      [await solid(300, 200, "webp"), "pic.webp", "image/webp"]
    ]
    for (const [bytes, filename, type] of cases) {
      const m = await upload(owner, bytes, { filename })
      expect(m.mime_type).toBe(type)
      const p = await fetchPreview(owner, m.id)
      expect(p.contentType, filename).toBe(type)
      expect(p.sniffed, filename).toBe(type)
    }
    const gif = await upload(owner, await solid(50, 40, "gif"), { filename: "still.gif" })
    expect(gif.mime_type).toBe("image/gif")
    const p = await fetchPreview(owner, gif.id)
    expect(p.contentType).toMatch(/^image\/(gif|png|jpeg|webp)$/)
    expect(p.sniffed).toBe(p.contentType)
  })

  it("large sources shrink to 1080 px on the long side; small ones are not enlarged", async () => {
    const big = await upload(owner, await solid(3000, 1500, "webp"), { filename: "big.webp" })
    const bigMeta = await sharp((await fetchPreview(owner, big.id)).bytes).metadata()
    expect([bigMeta.width, bigMeta.height]).toEqual([1080, 540])
    const small = await upload(owner, photo("rocket.jpg"), { filename: "rocket.jpg" })
    const smallMeta = await sharp((await fetchPreview(owner, small.id)).bytes).metadata()
    expect([smallMeta.width, smallMeta.height]).toEqual([640, 427])
  })

  it("an animated GIF is accepted whole; its dimensions are one frame's; the preview is a still image", async () => {
    const gifBytes = await animatedGif(40, 30)
    expect((await sharp(gifBytes).metadata()).pages).toBe(2)
    const m = await upload(owner, gifBytes, { filename: "anim.gif" })
    expect(m).toMatchObject({ mime_type: "image/gif", file_size_bytes: gifBytes.length })
    expect(await settled(owner, m.id)).toMatchObject({ width: 40, height: 30 })
    const p = await fetchPreview(owner, m.id)
    const meta = await sharp(p.bytes).metadata()
    expect([meta.width, meta.height]).toEqual([40, 30])
  })

  it("an animated WebP is accepted whole too", async () => {
    const webp = await animatedWebp(40, 30)
    expect((await sharp(webp).metadata()).pages).toBe(2)
    const m = await upload(owner, webp, { filename: "anim.webp" })
    expect(m).toMatchObject({ mime_type: "image/webp", file_size_bytes: webp.length })
    expect(await settled(owner, m.id)).toMatchObject({ width: 40, height: 30 })
    const p = await fetchPreview(owner, m.id)
    expect(p.contentType).toBe("image/webp")
    const meta = await sharp(p.bytes).metadata()
    expect([meta.width, meta.height]).toEqual([40, 30])
  })

  it("preview_url needs the same Authorization header; its path answers on the service", async () => {
    const m = await upload(owner, photo("rocket.jpg"), { filename: "rocket.jpg" })
    const url = new URL(m.preview_url)
    expect(url.origin).toBe(publicBaseUrl)
    const path = url.pathname
    await expectError(await fetch(`${service.baseUrl}${path}`), 401, "missing_api_key")
    expect((await api(owner).get(path)).status).toBe(200)
    // it is never taken from the Host header
    const viaHost = await expectOk(await api(owner).get("/api/v1/media?limit=1", { host: "evil.example" }))
    expect(viaHost.data[0].preview_url.startsWith(`${publicBaseUrl}/`)).toBe(true)
  })
})

describe("archiving (operator CLI `media archive`)", () => {
  it("archived media leave the list, are 404 on preview, and free their storage", async () => {
    const rocket = photo("rocket.jpg")
    const k = await keyed(ops, "custom", ["--uploads-per-minute", "1000"], [
      "--storage-budget-bytes",
      String(rocket.length + 10)
    ])
    const first = await upload(k, rocket, { filename: "rocket.jpg" })
    await expectError(await api(k).upload(rocket, { filename: "rocket.jpg" }), 402, "quota_exceeded")

    const archived = await ops.ok("media", "archive", first.id)
    expect(archived).toMatchObject({ object: "media", id: first.id })
    expect(Object.keys(archived).sort()).toEqual(mediaKeys)

    expect((await list(k)).data.map((m: { readonly id: string }) => m.id)).not.toContain(first.id)
    await expectError(await api(k).get(`/api/v1/media/${first.id}/preview`), 404, "unknown_media")
    // the freed storage takes the next upload
    const second = await upload(k, rocket, { filename: "rocket.jpg" })
    expect((await list(k)).data.map((m: { readonly id: string }) => m.id)).toEqual([second.id])
    // archiving twice does not free twice
    await ops.ok("media", "archive", first.id)
    await expectError(await api(k).upload(rocket, { filename: "rocket.jpg" }), 402, "quota_exceeded")
  })
})

describe("file names (any Unicode; RFC 7578, 6266 and 8187)", () => {
  const rocket = photo("rocket.jpg")
  const names = ["日本.jpg", "東京タワー.jpg", "€.jpg", "한.jpg", "😀.jpg", "é.jpg", "ü.jpg", "שלום עולם.jpg"]

  /** POST /api/v1/media whose `file` part has exactly this Content-Disposition (UTF-8, as curl and browsers send it). */
  const uploadWith = (k: Keyed, disposition: string | undefined, bytes: Uint8Array = rocket) => {
    const boundary = "----p2v-names"
    const head = disposition === undefined ? "" : `Content-Disposition: ${disposition}\r\n`
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\n${head}Content-Type: application/octet-stream\r\n\r\n`, "utf8"),
      Buffer.from(bytes),
      Buffer.from(`\r\n--${boundary}--\r\n`)
    ])
    return fetch(`${service.baseUrl}/api/v1/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${k.secret}`, "content-type": `multipart/form-data; boundary=${boundary}` },
      body
    })
  }

  it("a name in any script uploads, from a FormData (as browsers send it) and raw (as curl -F sends it)", async () => {
    for (const name of names) {
      const m = await upload(owner, rocket, { filename: name, label: name })
      expect(m, name).toMatchObject({ label: name, mime_type: "image/jpeg", file_size_bytes: rocket.length })
      await expectOk(await uploadWith(owner, `form-data; name="file"; filename="${name}"`), 201)
    }
  })

  it("the name is read exactly: its extension still names a type the bytes contradict (415)", async () => {
    for (const name of ["日本.png", "東京タワー.PNG", "写真😀.png"]) {
      const body = await expectError(
        await uploadWith(owner, `form-data; name="file"; filename="${name}"`),
        415,
        "unsupported_media_type"
      )
      expect(body.error.message, name).toBe(`the bytes are image/jpeg but the file name says image/png (.png)`)
    }
  })

  it("filename* (RFC 8187) in UTF-8, with a language, or in ISO-8859-1, is decoded", async () => {
    await expectOk(await uploadWith(owner, `form-data; name="file"; filename*=utf-8''%E6%97%A5%E6%9C%AC.jpg`), 201)
    await expectOk(await uploadWith(owner, `form-data; name="file"; filename*=UTF-8'ja'%E6%9D%B1%E4%BA%AC.jpg`), 201)
    await expectOk(await uploadWith(owner, `form-data; name="file"; filename*=iso-8859-1''caf%E9.jpg`), 201)
    // the decoded name is the one whose extension counts
    for (
      const disposition of [
        `form-data; name="file"; filename*=UTF-8'ja'%E6%9D%B1%E4%BA%AC.png`,
        `form-data; name="file"; filename*=iso-8859-1''caf%E9.png`
      ]
    ) {
      const body = await expectError(await uploadWith(owner, disposition), 415, "unsupported_media_type")
      expect(body.error.message, disposition).toContain("(.png)")
    }
  })

  it("with both filename and filename*, filename* wins (RFC 6266 §4.3), in either order", async () => {
    for (
      const disposition of [
        `form-data; name="file"; filename="photo.png"; filename*=utf-8''%E6%97%A5.jpg`,
        `form-data; name="file"; filename*=utf-8''%E6%97%A5.jpg; filename="photo.png"`,
        `form-data; name="file"; filename="日本.png"; filename*=utf-8''%E6%97%A5.jpg`
      ]
    ) await expectOk(await uploadWith(owner, disposition), 201)
    const body = await expectError(
      await uploadWith(owner, `form-data; name="file"; filename="日本.jpg"; filename*=utf-8''%E6%97%A5.png`),
      415,
      "unsupported_media_type"
    )
    expect(body.error.message).toContain("(.png)")
  })

  it("a part whose Content-Disposition cannot be read is 400 invalid_request saying what is wrong, and nothing is stored", async () => {
    const k = await keyed(ops, "studio", ["--uploads-per-minute", "1000"])
    const cases: Array<[string | undefined, RegExp]> = [
      [undefined, /^the request body cannot be parsed: part 1 has no Content-Disposition header$/],
      [
        `form-data; filename="日本.jpg"`,
        /^the request body cannot be parsed: part 1's Content-Disposition has no name$/
      ],
      [`form-data; filename="a.jpg"`, /part 1's Content-Disposition has no name$/],
      [`form-data; name=""; filename="a.jpg"`, /part 1's Content-Disposition has an empty name$/],
      [`attachment; name="file"; filename="a.jpg"`, /part 1's Content-Disposition is not form-data$/],
      [
        `form-data; name="file"; filename="日本.jpg`,
        /part 1's Content-Disposition has a quoted string without its closing quote$/
      ],
      [
        `form-data; name="file"; filename*=utf-8''%E6%97`,
        /part 1's Content-Disposition has a filename\* that is not UTF-8/
      ],
      [
        `form-data; name="file"; filename*=utf-8''%ZZ.jpg`,
        /part 1's Content-Disposition has a filename\* that is not an RFC 8187 value/
      ],
      [
        `form-data; name="file"; filename*=%E6%97%A5.jpg`,
        /part 1's Content-Disposition has a filename\* that is not an RFC 8187 value/
      ],
      [
        `form-data; name="file"; filename*=shift_jis''%93%FA.jpg`,
        /part 1's Content-Disposition has a filename\* in a charset other than UTF-8 or ISO-8859-1/
      ],
      [`form-data; name="file"; name="label"`, /part 1's Content-Disposition has the parameter name twice$/],
      [
        `form-data; name="file" filename="a.jpg"`,
        /part 1's Content-Disposition cannot be read at character 24 \(expected ";"\)$/
      ]
    ]
    for (const [disposition, message] of cases) {
      const body = await expectError(await uploadWith(k, disposition), 400, "invalid_request")
      expect(body.error.message, disposition).toMatch(message)
    }
    expect((await list(k)).data).toEqual([])
  })

  it("a malformed part ahead of 10 MiB still gets its 400 to a client that sends it all, on a connection still usable", async () => {
    const boundary = "----p2v-big"
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; filename="日本.jpg"\r\n\r\n`),
      Buffer.alloc(10 * 1024 * 1024, 7),
      Buffer.from(`\r\n--${boundary}--\r\n`)
    ])
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    let connections = 0
    const connect = agent.createConnection.bind(agent)
    agent.createConnection = (...args: Parameters<typeof connect>) => {
      connections++
      return connect(...args)
    }
    try {
      const headers = {
        authorization: `Bearer ${owner.secret}`,
        "content-type": `multipart/form-data; boundary=${boundary}`
      }
      const started = Date.now()
      const res = await rawRequest(`${service.baseUrl}/api/v1/media`, { method: "POST", headers, body, agent })
      expect(res.status, res.text).toBe(400)
      expect(JSON.parse(res.text).error).toEqual({
        code: "invalid_request",
        message: "the request body cannot be parsed: part 1's Content-Disposition has no name"
      })
      const next = await rawRequest(`${service.baseUrl}/api/v1/media?limit=1`, { headers, agent })
      expect(next.status).toBe(200)
      // on the same connection, at once: the rest of the body was drained, not left to stall it
      expect(connections).toBe(1)
      expect(Date.now() - started).toBeLessThan(5_000)
    } finally {
      agent.destroy()
    }
  })
})
