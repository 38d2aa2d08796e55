import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pollToEnd, uploadPhoto } from "../renders/helpers.ts"
import { expectError } from "../support/limits.ts"
import { client } from "../support/service.ts"
import { parseAnswer, portalSession, streamBody, type Target, target, uploadHead } from "./support.ts"

/**
 * The HTTP level under probing. An upload over the limit is cut off the same way whichever front end
 * takes it; paths match exactly as declared, `;` included; and the small ones: a 404 names the path as received, partial requests that
 * close at once are logged at a bounded rate, captions.vtt keeps a caption with CR line ends, one
 * key-name rule in code points, the OAuth callback's pages carry the portal's security headers.
 */
let t: Target
let port: number
let api: ReturnType<typeof client>

beforeAll(async () => {
  t = await target()
  port = Number(new URL(t.service.baseUrl).port)
  api = client(t.service.baseUrl, t.main.secret)
})
afterAll(() => t?.close())

/** 400 MiB: far more than any limit; the server must stop reading long before the client could send it. */
const huge = 400 * 1024 * 1024

describe("an upload far over 15 MiB", () => {
  const expectCutOff = (r: { text: string; sent: number; ms: number }, what: string) => {
    const { head } = parseAnswer(r.text)
    expect(head, r.text.slice(0, 300)).toMatch(/^http\/1\.1 413/)
    expect(head).toMatch(/\r\nconnection: close(\r\n|$)/)
    // the answer and the close come once the limit is passed (15 MiB, plus what sits in socket
    // buffers and the 5 s linger for a client still sending), not after the whole body
    expect(r.sent, `${what}: ${(r.sent / 2 ** 20).toFixed(0)} MiB sent before the close, in ${r.ms} ms`).toBeLessThan(
      huge / 2
    )
  }

  it("through the API: 413, Connection: close, and the server stops reading", async () => {
    const r = await streamBody(
      port,
      uploadHead("/api/v1/media", huge, { authorization: `Bearer ${t.main.secret}` }),
      huge
    )
    expectCutOff(r, "API")
    expect(JSON.parse(parseAnswer(r.text).body).error.code).toBe("payload_too_large")
  }, 120_000)

  it(
    "through the portal: the same 413 (in the portal's words), Connection: close, and the server stops reading",
    async () => {
      const session = await portalSession(t, t.main.workspace.id)
      const r = await streamBody(
        port,
        uploadHead("/portal/library/upload", huge, { cookie: session.cookie, "x-csrf-token": session.csrf }),
        huge
      )
      expectCutOff(r, "portal")
      expect(parseAnswer(r.text).body).toContain("(payload_too_large)")
    },
    120_000
  )

  it("a portal form over 64 KiB, chunked, is not read past its bound", async () => {
    const session = await portalSession(t, t.main.workspace.id)
    const head =
      `POST /portal/keys HTTP/1.1\r\nHost: x\r\nCookie: ${session.cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
      `Transfer-Encoding: chunked\r\n\r\n`
    // one endless chunk: its size line says 400 MiB
    const r = await streamBody(port, `${head}${huge.toString(16)}\r\ncsrf=${session.csrf}&name=`, huge)
    // the reader stops at the bound and drops the connection (it may not get to answer first)
    if (r.text !== "") expect(parseAnswer(r.text).head).toMatch(/^http\/1\.1 413/)
    expect(r.sent, `${(r.sent / 2 ** 20).toFixed(0)} MiB sent before the close`).toBeLessThan(huge / 2)
  }, 120_000)
})

describe("paths match exactly as declared", () => {
  it("a `;suffix` is part of the path: no endpoint (404 invalid_request), or an id its endpoint does not find", async () => {
    const { id: mediaId } = await uploadPhoto(api, "rocket.jpg", t.service)
    expect((await api.get("/api/v1/usage")).status).toBe(200)
    for (const path of ["/api/v1/usage;x", "/api/v1/usage;", "/api/v1/media;jsessionid=1", "/api/v1/renders;x"]) {
      const r = await api.get(path)
      await expectError(r, 404, "invalid_request")
    }
    // in an id, `;` is a character of the id: no render or photo has it
    const created = await api.postJson("/api/v1/renders", { media_id: mediaId, quote: "" })
    expect(created.status).toBe(202)
    const render = await created.json()
    expect((await api.get(`/api/v1/renders/${render.id}`)).status).toBe(200)
    await expectError(await api.get(`/api/v1/renders/${render.id};x`), 404, "render_not_found")
    await expectError(await api.get(`/api/v1/media/${mediaId};x/preview`), 404, "unknown_media")
  })

  it("a `#` sent in the request line is part of the path too", async () => {
    const r = await rawGet(`/api/v1/usage#x`)
    expect(r).toMatch(/^HTTP\/1\.1 404/)
    expect(r).toContain(`"code":"invalid_request"`)
  })

  it("a 404 names the path as received (`//api/v1/media` is not `/v1/media`)", async () => {
    const r = await api.get("//api/v1/media")
    const body = await r.clone().json()
    await expectError(r, 404, "invalid_request")
    expect(body.error.message).toBe("no endpoint at //api/v1/media")
    const semi = await (await api.get("/api/v1/usage;x?a=1")).json()
    expect(semi.error.message).toBe("no endpoint at /api/v1/usage;x")
  })
})

describe("small ones", () => {
  it("captions.vtt keeps the whole caption when its lines end in CR or CR LF (a CR pair ended the cue)", async () => {
    // a caption whose lines end in bare CRs and CR LFs
    const { id: mediaId } = await uploadPhoto(api, "rocket.jpg", t.service)
    const created = await api.postJson("/api/v1/renders", {
      media_id: mediaId,
      quote: "First line\r\rsecond line\r\nthird --> line"
    })
    expect(created.status).toBe(202)
    const { render } = await pollToEnd(api, (await created.json()).id, 120_000)
    expect(render.status).toBe("completed")
    const session = await portalSession(t, t.main.workspace.id)
    const r = await fetch(`${t.service.baseUrl}/portal/renders/${render.id}/captions.vtt`, {
      headers: { cookie: session.cookie }
    })
    expect(r.status).toBe(200)
    const vtt = await r.text()
    // WebVTT ends a line at CR, LF or CR LF, and a cue at the first blank line
    const blocks = vtt.split(/\r\n|\r|\n/).join("\n").split(/\n\n+/).filter((b) => b.trim() !== "")
    expect(blocks[0]).toBe("WEBVTT")
    expect(blocks.length, vtt).toBe(2)
    expect(blocks[1]!.trimEnd().split("\n").slice(1)).toEqual(["First line", "second line", "third → line"])
  })

  it("a key name is at most 100 characters counted in code points, in the operator CLI and the portal alike", async () => {
    const emoji = (n: number) => "😀".repeat(n)
    const cli = (name: string) =>
      t.admin.attempt("key", "create", t.main.workspace.id, "--scopes", "renders:read", "--name", name)
    expect((await cli(emoji(100))).ok).toBe(true)
    const refused = await cli(emoji(101))
    expect(refused.json.error).toEqual({ code: "validation_failed", message: "name must be at most 100 characters" })
    expect((await cli("x".repeat(5_000))).ok).toBe(false)
    // the portal: 60 emoji (120 UTF-16 units) are 60 characters
    const session = await portalSession(t, t.main.workspace.id)
    const mint = (name: string) =>
      fetch(`${t.service.baseUrl}/portal/keys`, {
        method: "POST",
        headers: { cookie: session.cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrf: session.csrf, name, scopes: "renders:read" })
      })
    const ok = await mint(emoji(60))
    expect(ok.status).toBe(200)
    expect(await ok.text()).toContain("Copy this key now")
    const long = await mint(emoji(101))
    expect(long.status).toBe(422)
    expect(await long.text()).toContain("Name must be at most 100 characters (validation_failed)")
  })

  it("the OAuth callback's pages carry the security headers of every portal page", async () => {
    const portalPage = await fetch(`${t.service.baseUrl}/portal/signed-out`)
    const callback = await fetch(`${t.service.baseUrl}/oauth/cloud_drive/callback?state=nope&code=x`)
    expect(callback.status).toBe(400)
    expect(callback.headers.get("content-type")).toMatch(/^text\/html/)
    for (
      const name of [
        "content-security-policy",
        "x-content-type-options",
        "x-frame-options",
        "referrer-policy",
        "cross-origin-opener-policy"
      ]
    ) {
      expect(portalPage.headers.get(name), name).not.toBeNull()
      expect(callback.headers.get(name), name).toBe(portalPage.headers.get(name))
    }
  })
})

/** One GET on its own connection, the request line exactly as given; the whole answer. */
const rawGet = (target: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    let text = ""
    socket.on("data", (d) => (text += d.toString("latin1")))
    socket.on("error", reject)
    socket.on("close", () => resolve(text))
    socket.once("connect", () =>
      socket.write(
        `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.main.secret}\r\nConnection: close\r\n\r\n`
      ))
  })

describe("client protocol errors", () => {
  it(
    "2,000 partial requests that close at once are logged at a bounded rate, and the service stays healthy",
    async () => {
      const refusedLines = () =>
        t.service.output().split("\n").filter((l) => /HTTP parser|protocol error/i.test(l)).length
      const before = refusedLines()
      const partial = () =>
        new Promise<void>((resolve) => {
          const socket = net.connect(port, "127.0.0.1")
          socket.on("error", () => resolve())
          socket.on("close", () => resolve())
          socket.resume() // read the 400 to its end, so the connection closes
          socket.once("connect", () => socket.end("GET /api/v1/usage HTTP/1.1\r\nHost: x\r\nX-Partial: "))
        })
      for (let i = 0; i < 2_000; i += 50) await Promise.all(Array.from({ length: 50 }, partial))
      await new Promise((r) => setTimeout(r, 500))
      const logged = refusedLines() - before
      expect(logged, t.service.output().slice(-2000)).toBeGreaterThan(0)
      expect(logged, t.service.output().slice(-2000)).toBeLessThanOrEqual(20)
      expect((await fetch(`${t.service.baseUrl}/readyz`)).status).toBe(200)
    },
    120_000
  )
})
