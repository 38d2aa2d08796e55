import { checksumOf, keyPrefix, mintToken } from "@pic2video/domain/ApiKeyToken"
import * as net from "node:net"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Keyed, keyed } from "../foundation/admin.ts"
import { multipart, rawRequest, uploadAlone } from "../foundation/http.ts"
import { pngBomb, svg } from "../foundation/photos.ts"
import { uploadPhoto } from "../renders/helpers.ts"
import { expectError } from "../support/limits.ts"
import { client } from "../support/service.ts"
import { type Target, target } from "./support.ts"

/**
 * The attacks a hostile client can try that the service holds against, kept so they keep holding: decompression bombs,
 * polyglots, path tricks, header injection, timing of unknown keys against wrong secrets, and ids of
 * another workspace. One service; every attack bounded in count.
 */
let t: Target
let other: Keyed
let api: ReturnType<typeof client>
let mine: { id: string }

beforeAll(async () => {
  t = await target()
  other = await keyed(t.admin, "studio")
  api = client(t.service.baseUrl, t.main.secret)
  mine = await uploadPhoto(api, "rocket.jpg", t.service)
})
afterAll(() => t?.close())

const healthy = async () => expect((await fetch(`${t.service.baseUrl}/readyz`)).status).toBe(200)

describe("decompression bombs", () => {
  it("15 bombs of 400 MP at once are all 415, and the service stays healthy", async () => {
    const bomb = pngBomb(20_000, 20_000)
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, i) => api.upload(bomb, { filename: `bomb-${i}.png` }))
    )
    for (const r of answers) await expectError(r, 415, "unsupported_media_type")
    await healthy()
  })
})

describe("polyglots", () => {
  it("a JPEG with HTML and script appended is a JPEG; its preview is re-encoded and carries none of it", async () => {
    const jpeg = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#336699" } }).jpeg()
      .toBuffer()
    const payload = Buffer.from("<html><script>alert(document.cookie)</script></html>")
    const res = await api.upload(new Uint8Array(Buffer.concat([jpeg, payload])), { filename: "cat.jpg" })
    const media = await res.json()
    expect(res.status, JSON.stringify(media)).toBe(201)
    expect(media.mime_type).toBe("image/jpeg")
    const preview = await api.get(`/api/v1/media/${media.id}/preview`)
    expect(preview.status).toBe(200)
    expect(preview.headers.get("content-type")).toBe("image/jpeg")
    expect(Buffer.from(await preview.arrayBuffer()).includes("<script>")).toBe(false)
  })

  it("HTML named .jpg, SVG with script, and a PDF with a JPEG inside are 415", async () => {
    const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#000" } }).jpeg().toBuffer()
    const files: Array<[string, Uint8Array]> = [
      ["page.jpg", new TextEncoder().encode("<!doctype html><html><script>alert(1)</script></html>")],
      ["image.svg", svg],
      [
        "doc.jpg",
        new Uint8Array(
          Buffer.concat([
            Buffer.from("%PDF-1.4\n1 0 obj\n<<>>\nstream\n"),
            jpeg,
            Buffer.from("\nendstream\nendobj\n%%EOF\n")
          ])
        )
      ]
    ]
    for (const [filename, bytes] of files) {
      await expectError(await api.upload(bytes, { filename }), 415, "unsupported_media_type")
    }
  })
})

describe("path tricks", () => {
  it("traversal in ids and file names reaches nothing outside the library", async () => {
    for (
      const path of [
        "/api/v1/media/..%2F..%2F..%2Fetc%2Fpasswd/preview",
        "/api/v1/media/%2e%2e%2f%2e%2e%2fetc%2fpasswd/preview",
        "/api/v1/media/....//....//etc/passwd/preview",
        `/api/v1/media/${mine.id}%00.png/preview`,
        "/api/v1/renders/..%2F..%2Fpostgres%2Fpostmaster.pid/download"
      ]
    ) {
      const r = await api.get(path)
      expect([400, 404], `${path}: ${r.status}`).toContain(r.status)
      // the answer is the error shape (it may echo the id it did not find), never a file's contents
      const body = await r.json()
      expect(Object.keys(body).sort()).toEqual(["error", "request_id"])
      expect(JSON.stringify(body)).not.toMatch(/root:x?:0:|listen_addresses|PGDATA/)
    }
    // a file name that walks up is just a name: the photo lands in the library, nowhere else
    const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#0f0" } }).jpeg().toBuffer()
    const res = await uploadAlone(t.service.baseUrl, t.main.secret, {
      bytes: new Uint8Array(jpeg),
      filename: "../../../../tmp/evil.jpg",
      type: "image/jpeg"
    })
    expect(res.status).toBe(201)
    const media = await res.json()
    expect(JSON.stringify(media)).not.toMatch(/\.\.\//)
  })
})

describe("header injection", () => {
  it("CR/LF in a multipart file name or label never becomes a response header", async () => {
    const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#f00" } }).jpeg().toBuffer()
    const form = multipart([
      { name: "file", filename: "a.jpg\r\nSet-Cookie: pwned=1", type: "image/jpeg", bytes: new Uint8Array(jpeg) },
      { name: "label", value: "x\r\nSet-Cookie: pwned=2" }
    ])
    const r = await rawRequest(`${t.service.baseUrl}/api/v1/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.main.secret}`, "content-type": form.contentType },
      body: form.body
    })
    expect(r.headers["set-cookie"]).toBeUndefined()
    expect([201, 400, 415, 422]).toContain(r.status)
  })

  it("a header with a bare CR, or a folded header, is 400 invalid_request in the error shape", async () => {
    for (
      const head of [
        `GET /api/v1/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.main.secret}\rX-Evil: 1\r\n\r\n`,
        `GET /api/v1/media HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n Set-Cookie: pwned=1\r\n\r\n`
      ]
    ) {
      const text = await new Promise<string>((resolve) => {
        const s = net.connect(Number(new URL(t.service.baseUrl).port), "127.0.0.1", () => s.write(head))
        let out = ""
        s.on("data", (d) => (out += d))
        s.on("close", () => resolve(out))
        s.on("error", () => resolve(out))
        s.setTimeout(10_000, () => s.destroy())
      })
      expect(text).toMatch(/^HTTP\/1\.1 400/)
      expect(text.toLowerCase()).not.toMatch(/set-cookie/)
      expect(text).toMatch(/"invalid_request"/)
    }
    await healthy()
  })

  it("an Idempotency-Key with control characters is refused, not stored or echoed", async () => {
    const r = await rawRequest(`${t.service.baseUrl}/api/v1/renders`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${t.main.secret}`,
        "content-type": "application/json",
        "idempotency-key": "a\tb"
      },
      body: JSON.stringify({ media_id: mine.id, quote: "" })
    })
    expect(r.status).toBe(422)
    expect(r.headers["idempotency-key"]).toBeUndefined()
  })
})

describe("timing of keys", () => {
  /** Same key id, another secret, a valid checksum: passes the format check, fails verification. */
  const wrongSecret = (token: string) => {
    const body = keyPrefix + token.slice(keyPrefix.length, keyPrefix.length + 16) + mintToken().secret
    return body + checksumOf(body)
  }
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const timed = async (token: string) => {
    const t0 = performance.now()
    const r = await fetch(`${t.service.baseUrl}/api/v1/media`, { headers: { authorization: `Bearer ${token}` } })
    await r.text()
    return { ms: performance.now() - t0, status: r.status }
  }

  it("an unknown key and a known key with a wrong secret answer alike and take comparable time", async () => {
    const unknown = mintToken().token
    const wrong = wrongSecret(t.main.secret)
    const a: Array<number> = []
    const b: Array<number> = []
    // warm-up
    for (let i = 0; i < 5; i++) {
      await timed(unknown)
      await timed(wrong)
    }
    for (let i = 0; i < 30; i++) {
      const x = await timed(unknown)
      const y = await timed(wrong)
      expect(x.status).toBe(401)
      expect(y.status).toBe(401)
      a.push(x.ms)
      b.push(y.ms)
    }
    const [ma, mb] = [median(a), median(b)]
    // loose on purpose (a shared machine): an early exit for unknown ids would show as a large, steady gap
    expect(Math.abs(ma - mb), `medians ${ma.toFixed(2)} ms vs ${mb.toFixed(2)} ms`).toBeLessThan(
      Math.max(25, 2 * Math.min(ma, mb))
    )
    const bodies = await Promise.all(
      [unknown, wrong].map(async (k) =>
        (await expectError(
          await fetch(`${t.service.baseUrl}/api/v1/media`, { headers: { authorization: `Bearer ${k}` } }),
          401,
          "invalid_api_key"
        )).error.message
      )
    )
    expect(bodies[0]).toBe(bodies[1])
  })
})

describe("foreign ids", () => {
  it("another workspace's photo, render and import are indistinguishable from ids that do not exist", async () => {
    const theirs = client(t.service.baseUrl, other.secret)
    const render = await (await api.postJson("/api/v1/renders", { media_id: mine.id, quote: "" })).json()
    expect(render.object).toBe("render")
    const unknownUuid = "00000000-0000-4000-8000-000000000000"
    for (
      const [path, code] of [
        [`/api/v1/media/${mine.id}/preview`, "unknown_media"],
        [`/api/v1/renders/${render.id}`, "render_not_found"],
        [`/api/v1/renders/${render.id}/download`, "render_not_found"]
      ] as const
    ) {
      const foreign = await expectError(await theirs.get(path), 404, code)
      const missing = await expectError(
        await theirs.get(path.replace(mine.id, unknownUuid).replace(render.id, "rnd_doesnotexist0000000000")),
        404,
        code
      )
      expect(foreign.error.message.replace(/\S*[0-9a-f]{8}-\S*|rnd_\w+/g, "ID")).toBe(
        missing.error.message.replace(/\S*[0-9a-f]{8}-\S*|rnd_\w+/g, "ID")
      )
    }
    await expectError(await theirs.postJson("/api/v1/renders", { media_id: mine.id, quote: "" }), 404, "unknown_media")
    const list = await (await theirs.get("/api/v1/media")).json()
    expect(JSON.stringify(list)).not.toContain(mine.id)
  })
})
