import { checksumOf, keyPrefix, mintToken } from "@pic2video/domain/ApiKeyToken"
import * as http from "node:http"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, expectNoRateLimitHeaders, expectOk, expectRateLimitHeaders } from "../support/limits.ts"
import { admin, makeShared, photo, type Service, startService } from "../support/service.ts"
import { type Admin, inProcessAdmin, type Keyed, keyed } from "./admin.ts"
import { multipart, rawRequest, uploadAlone } from "./http.ts"
import { animatedPng, maxUploadBytes, pngBomb, pngOfSize, solid, svg, text } from "./photos.ts"

/**
 * One test per error code the media/system surface and the generic pipeline can produce
 * (contract §4, spec "Errors"): status, exact body shape, X-Request-Id = request_id, and the
 * headers that go with each (Allow on 405, Retry-After on 429, RateLimit-* on authenticated answers).
 */
let service: Service
let base: string
let env: Record<string, string>
let ops: Admin

let main: Keyed
let foreign: Keyed
let revoked: Keyed
let expired: Keyed
let gated: Keyed
let onlyDisabled: Keyed
let onlyInactive: Keyed
let smallBudget: Keyed
let limitedReads: Keyed
let limitedUploads: Keyed
const rocket = photo("rocket.jpg")

/** Same key id, a different secret, a valid checksum: passes the format check, fails verification. */
const wrongSecret = (token: string) => {
  const idPart = token.slice(keyPrefix.length, keyPrefix.length + 16)
  const body = keyPrefix + idPart + mintToken().secret
  return body + checksumOf(body)
}

const get = (path: string, authorization?: string) =>
  fetch(`${base}${path}`, { headers: authorization === undefined ? {} : { authorization } })

const bearer = (secret: string) => `Bearer ${secret}`

const form = (parts: Array<[string, string | { bytes: Uint8Array; filename: string; type?: string }]>) => {
  const f = new FormData()
  for (const [name, value] of parts) {
    if (typeof value === "string") f.append(name, value)
    else {f.append(
        name,
        new Blob([new Uint8Array(value.bytes)], value.type === undefined ? {} : { type: value.type }),
        value.filename
      )}
  }
  return f
}

const postForm = (secret: string, body: FormData) =>
  fetch(`${base}/api/v1/media`, { method: "POST", headers: { authorization: bearer(secret) }, body })

beforeAll(async () => {
  service = await startService(await makeShared())
  base = service.baseUrl
  env = service.env
  ops = inProcessAdmin(env)
  const k = (plan: string, keyArgs: Array<string> = [], workspaceArgs: Array<string> = []) =>
    keyed(ops, plan, keyArgs, workspaceArgs)
  ;[main, foreign, revoked, expired, gated, onlyDisabled, onlyInactive, smallBudget, limitedReads, limitedUploads] =
    await Promise.all([
      k("studio", ["--uploads-per-minute", "1000", "--reads-per-minute", "1000"]),
      k("agency"),
      k("studio"),
      k("studio", ["--expires-at", "2001-02-03T04:05:06Z"]),
      k("studio"),
      k("studio"),
      k("studio"),
      k("custom", [], ["--storage-budget-bytes", String(rocket.length + 1000)]),
      k("studio", ["--reads-per-minute", "3"]),
      k("studio", ["--uploads-per-minute", "2"])
    ])
  await ops.ok("key", "revoke", revoked.key.id)
  await ops.ok("workspace", "update", onlyDisabled.workspace.id, "--api-enabled", "false")
  await ops.ok("workspace", "update", onlyInactive.workspace.id, "--status", "inactive")
})

afterAll(async () => {
  await ops?.dispose()
  expect(await service?.stop()).toBe(0)
})

describe("invalid_request (route and body, contract §4.1 and §4.7)", () => {
  it("an unknown path is 404 invalid_request, with or without a key, before authentication", async () => {
    for (const path of ["/api/v1/nope", "/nope", "/api/v2/media", "/api/v1/media/", "/api/v1/media/x/preview/y"]) {
      const anonymous = await get(path)
      await expectError(anonymous, 404, "invalid_request")
      expectNoRateLimitHeaders(anonymous)
      await expectError(await get(path, bearer(main.secret)), 404, "invalid_request")
      await expectError(await get(path, "Bearer not-a-key"), 404, "invalid_request")
    }
  })

  it("a wrong method is 405 invalid_request with an Allow header, before authentication", async () => {
    const cases: Array<[string, string, string]> = [
      ["DELETE", "/api/v1/media", "GET, POST"],
      ["PUT", "/api/v1/media", "GET, POST"],
      ["POST", "/api/v1/media/00000000-0000-4000-8000-000000000000/preview", "GET"],
      ["DELETE", "/api/v1/media/00000000-0000-4000-8000-000000000000/preview", "GET"],
      ["POST", "/healthz", "GET"],
      ["DELETE", "/readyz", "GET"],
      ["POST", "/openapi.json", "GET"]
    ]
    for (const [method, path, allow] of cases) {
      for (const headers of [{}, { authorization: bearer(main.secret) }] as Array<Record<string, string>>) {
        const res = await fetch(`${base}${path}`, { method, headers })
        const body = await expectError(res, 405, "invalid_request")
        const allowed = (res.headers.get("allow") ?? "").split(",").map((s) => s.trim()).sort()
        expect(allowed, `${method} ${path}: ${body.error.message}`).toEqual(allow.split(", ").sort())
      }
    }
  })

  it("HEAD is answered as GET, without a body", async () => {
    for (
      const [path, headers] of [["/healthz", {}], ["/api/v1/usage", { authorization: bearer(main.secret) }]] as const
    ) {
      const res = await fetch(`${base}${path}`, { method: "HEAD", headers })
      expect(res.status, path).toBe(200)
      expect(await res.text()).toBe("")
    }
  })

  it("a request Node's HTTP parser refuses (unknown method, broken framing) is 400 invalid_request with a request id", async () => {
    const { hostname, port } = new URL(base)
    for (
      const raw of [
        "FOO /api/v1/usage HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /api/v1/usage HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"
      ]
    ) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), hostname, () => socket.end(raw))
        let text = ""
        socket.on("data", (d) => (text += d))
        socket.on("end", () => resolve(text))
        socket.on("error", reject)
      })
      const [head, body] = answer.split("\r\n\r\n")
      expect(head.split("\r\n")[0], raw).toBe("HTTP/1.1 400 Bad Request")
      const parsed = JSON.parse(body)
      expect(Object.keys(parsed).sort()).toEqual(["error", "request_id"])
      expect(parsed.error.code).toBe("invalid_request")
      expect(head.toLowerCase()).toContain(`x-request-id: ${parsed.request_id.toLowerCase()}`)
    }
  })

  it("a path id that is not valid percent-encoding is the endpoint's own 404", async () => {
    const cases: Array<[string, string]> = [
      ["/api/v1/renders/%E0%A4%A", "render_not_found"],
      ["/api/v1/renders/%/download", "render_not_found"],
      ["/api/v1/media/%ZZ/preview", "unknown_media"],
      ["/api/v1/media/imports/%", "import_not_found"]
    ]
    for (const [path, code] of cases) await expectError(await get(path, bearer(main.secret)), 404, code)
  })

  it("an upload that is not multipart/form-data is 400 invalid_request (after auth, with RateLimit headers)", async () => {
    for (
      const [type, body] of [
        ["application/json", JSON.stringify({ file: "x" })],
        ["text/plain", "hello"],
        ["application/x-www-form-urlencoded", "file=x&label=y"],
        ["image/png", "\x89PNG"]
      ] as const
    ) {
      const res = await fetch(`${base}/api/v1/media`, {
        method: "POST",
        headers: { authorization: bearer(main.secret), "content-type": type },
        body
      })
      await expectError(res, 400, "invalid_request")
      expectRateLimitHeaders(res)
    }
    const none = await fetch(`${base}/api/v1/media`, {
      method: "POST",
      headers: { authorization: bearer(main.secret) }
    })
    await expectError(none, 400, "invalid_request")
  })

  it("a multipart body that cannot be parsed is 400 invalid_request", async () => {
    const bodies: Array<[string, string]> = [
      // a part without headers or a body delimiter
      ["multipart/form-data; boundary=XyZ", "--XyZ\r\ngarbage without a blank line"],
      ["multipart/form-data; boundary=XyZ", "not multipart at all"]
    ]
    for (const [type, body] of bodies) {
      const res = await fetch(`${base}/api/v1/media`, {
        method: "POST",
        headers: { authorization: bearer(main.secret), "content-type": type },
        body,
        signal: AbortSignal.timeout(10_000)
      })
      await expectError(res, 400, "invalid_request")
      expectRateLimitHeaders(res)
    }
  })

  it("multipart/form-data without a boundary parameter is 400 invalid_request (not a 500)", async () => {
    const res = await fetch(`${base}/api/v1/media`, {
      method: "POST",
      headers: { authorization: bearer(main.secret), "content-type": "multipart/form-data" },
      body: "--x\r\nContent-Disposition: form-data; name=\"label\"\r\n\r\nhi\r\n--x--\r\n",
      signal: AbortSignal.timeout(10_000)
    })
    await expectError(res, 400, "invalid_request")
  })

  // a reader that loses this error waits for the socket timeout (as @effect/platform-node's own multipart
  // reader does; uploads go through packages/api/src/UploadBody.ts)
  it("a multipart body that ends inside a part (no closing boundary) is answered 400 promptly, not left hanging", async () => {
    const res = await rawRequest(`${base}/api/v1/media`, {
      method: "POST",
      headers: { authorization: bearer(main.secret), "content-type": "multipart/form-data; boundary=XyZ" },
      body:
        "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG",
      timeoutMs: 5_000
    })
    expect(res.status, res.text).toBe(400)
    expect(JSON.parse(res.text).error.code).toBe("invalid_request")
  })
})

describe("authentication (contract §4.2)", () => {
  it("no Authorization header is 401 missing_api_key on every authenticated endpoint", async () => {
    await expectError(await get("/api/v1/media"), 401, "missing_api_key")
    await expectError(await get("/api/v1/media/00000000-0000-4000-8000-000000000000/preview"), 401, "missing_api_key")
    const post = await fetch(`${base}/api/v1/media`, {
      method: "POST",
      body: form([["file", { bytes: rocket, filename: "r.jpg" }]])
    })
    await expectError(post, 401, "missing_api_key")
    expectNoRateLimitHeaders(post)
  })

  it("an empty Authorization header sends no key: 401 missing_api_key; every 401 names the Bearer scheme", async () => {
    const empty = await get("/api/v1/media", "")
    expect(empty.headers.get("www-authenticate")).toBe("Bearer")
    await expectError(empty, 401, "missing_api_key")
    const wrong = await get("/api/v1/media", "Bearer abc")
    expect(wrong.headers.get("www-authenticate")).toBe("Bearer")
    await expectError(wrong, 401, "invalid_api_key")
  })

  it("malformed, unknown, wrong-secret and tampered keys are all 401 invalid_api_key", async () => {
    const tampered = main.secret.slice(0, 20) + (main.secret[20] === "a" ? "b" : "a") + main.secret.slice(21)
    const cases = [
      "Bearer abc",
      "Bearer ",
      "Bearer",
      `Bearer ${main.secret.slice(0, -1)}`,
      `Bearer ${main.secret}x`,
      `Bearer ${main.secret.replace("p2v_live_", "p2v_test_")}`,
      `Bearer ${tampered}`,
      `Bearer ${mintToken().token}`, // well-formed, valid checksum, no such key
      `Bearer ${wrongSecret(main.secret)}`, // the key exists, the secret is wrong
      `Bearer ${main.secret} extra`
    ]
    for (const authorization of cases) {
      const res = await get("/api/v1/media", authorization)
      await expectError(res, 401, "invalid_api_key")
      expectNoRateLimitHeaders(res)
    }
  })

  it("a scheme other than Bearer is 401 invalid_api_key even with a valid key", async () => {
    for (const scheme of ["Basic", "Token", "Bearer:", "Digest", "ApiKey"]) {
      await expectError(await get("/api/v1/media", `${scheme} ${main.secret}`), 401, "invalid_api_key")
    }
    await expectError(await get("/api/v1/media", main.secret), 401, "invalid_api_key")
    await expectError(await get("/api/v1/media", `Basic ${btoa(`${main.secret}:`)}`), 401, "invalid_api_key")
  })

  it("the scheme compares case-insensitively: `bearer` and `BEARER` are accepted", async () => {
    for (const scheme of ["bearer", "BEARER", "Bearer", "bEaReR"]) {
      const res = await get("/api/v1/media", `${scheme} ${main.secret}`)
      await expectOk(res)
    }
  })

  it("a revoked key is 401 api_key_revoked; with a wrong secret it is invalid_api_key", async () => {
    await expectError(await get("/api/v1/media", bearer(revoked.secret)), 401, "api_key_revoked")
    await expectError(await get("/api/v1/media", bearer(wrongSecret(revoked.secret))), 401, "invalid_api_key")
  })

  it("an expired key (--expires-at in the past) is 401 api_key_expired; with a wrong secret invalid_api_key", async () => {
    expect(expired.key.expires_at).toBe("2001-02-03T04:05:06.000Z")
    await expectError(await get("/api/v1/media", bearer(expired.secret)), 401, "api_key_expired")
    await expectError(await get("/api/v1/media", bearer(wrongSecret(expired.secret))), 401, "invalid_api_key")
  })

  it("revocation takes effect on the next request", async () => {
    const k = await ops.ok("key", "create", main.workspace.id, "--scopes", "media:read")
    await expectOk(await get("/api/v1/media", bearer(k.secret)))
    await ops.ok("key", "revoke", k.id)
    await expectError(await get("/api/v1/media", bearer(k.secret)), 401, "api_key_revoked")
  })
})

describe("account gates (contract §4.3)", () => {
  it("each gate alone: tenant_inactive, api_disabled", async () => {
    await expectError(await get("/api/v1/media", bearer(onlyInactive.secret)), 403, "tenant_inactive")
    await expectError(await get("/api/v1/media", bearer(onlyDisabled.secret)), 403, "api_disabled")
    // gates apply only once the secret verified
    await expectError(await get("/api/v1/media", bearer(wrongSecret(onlyInactive.secret))), 401, "invalid_api_key")
    await expectError(await get("/api/v1/media", bearer(wrongSecret(onlyDisabled.secret))), 401, "invalid_api_key")
  })

  it("order: tenant_inactive before api_disabled before tier_not_eligible, applied live after key creation", async () => {
    const ws = gated.workspace.id
    const probe = () => get("/api/v1/media", bearer(gated.secret))
    const revokedHere = await ops.ok("key", "create", ws, "--scopes", "media:read")
    await ops.ok("key", "revoke", revokedHere.id)
    const expiredHere = await ops.ok(
      "key",
      "create",
      ws,
      "--scopes",
      "media:read",
      "--expires-at",
      "2020-01-01T00:00:00Z"
    )
    await expectOk(await probe())
    await ops.ok("workspace", "update", ws, "--plan", "free")
    await expectError(await probe(), 403, "tier_not_eligible")
    await ops.ok("workspace", "update", ws, "--api-enabled", "false")
    await expectError(await probe(), 403, "api_disabled")
    await ops.ok("workspace", "update", ws, "--status", "inactive")
    const inactive = await probe()
    await expectError(inactive, 403, "tenant_inactive")
    // gates apply only once the secret verified
    await expectError(await get("/api/v1/media", bearer(wrongSecret(gated.secret))), 401, "invalid_api_key")
    // the key's own standing (revoked, expired) is reported before the account gates
    await expectError(await get("/api/v1/media", bearer(revokedHere.secret)), 401, "api_key_revoked")
    await expectError(await get("/api/v1/media", bearer(expiredHere.secret)), 401, "api_key_expired")
    await ops.ok("workspace", "update", ws, "--status", "active", "--api-enabled", "true", "--plan", "studio")
    await expectOk(await probe())
  })
})

describe("insufficient_scope (contract §4.4)", () => {
  it("a key without the endpoint's scope is 403 insufficient_scope, whatever the body", async () => {
    const k = await ops.ok("key", "create", main.workspace.id, "--scopes", "renders:read,renders:create")
    const read = await get("/api/v1/media", bearer(k.secret))
    await expectError(read, 403, "insufficient_scope")
    // scope is checked before the body: an unparsable upload is still 403
    const upload = await fetch(`${base}/api/v1/media`, {
      method: "POST",
      headers: { authorization: bearer(k.secret), "content-type": "application/json" },
      body: "{"
    })
    await expectError(upload, 403, "insufficient_scope")
  })
})

describe("rate_limit_exceeded (contract §4.5)", () => {
  it("reads: exactly the key's budget, then 429 with Retry-After and RateLimit headers as bare integers", async () => {
    const remaining: Array<number> = []
    for (let i = 0; i < 3; i++) {
      const res = await get("/api/v1/media", bearer(limitedReads.secret))
      await expectOk(res)
      remaining.push(expectRateLimitHeaders(res, 3).remaining)
    }
    expect(remaining).toEqual([2, 1, 0])
    // previews share the reads bucket
    const refused = await get("/api/v1/media/00000000-0000-4000-8000-000000000000/preview", bearer(limitedReads.secret))
    await expectError(refused, 429, "rate_limit_exceeded")
    expect(refused.headers.get("retry-after") ?? "").toMatch(/^\d+$/)
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    const h = expectRateLimitHeaders(refused, 3)
    expect(h.remaining).toBe(0)
    await expectError(await get("/api/v1/media", bearer(limitedReads.secret)), 429, "rate_limit_exceeded")
  })

  it("uploads have their own bucket: the third upload in a minute of a 2/min key is 429", async () => {
    const up = () => postForm(limitedUploads.secret, form([["file", { bytes: rocket, filename: "rocket.jpg" }]]))
    const first = await up()
    await expectOk(first, 201)
    expectRateLimitHeaders(first, 2)
    await expectOk(await up(), 201)
    const third = await up()
    await expectError(third, 429, "rate_limit_exceeded")
    expect(third.headers.get("retry-after") ?? "").toMatch(/^\d+$/)
    // the reads bucket is untouched
    const list = await get("/api/v1/media", bearer(limitedUploads.secret))
    await expectOk(list)
    expectRateLimitHeaders(list, 600)
  })
})

describe("validation_failed (contract §4.8, §5)", () => {
  it("limit outside 1–100 or not an integer is 422, never clamped", async () => {
    for (
      const limit of ["0", "101", "abc", "1.5", "-1", "", "1e2x", "10abc", "1.0", "1e1", "0x10", "+5", " 5", "Infinity"]
    ) {
      const res = await get(`/api/v1/media?limit=${encodeURIComponent(limit)}`, bearer(main.secret))
      const body = await expectError(res, 422, "validation_failed")
      expect(body.error.message, `limit=${limit}`).toMatch(/limit/)
      expectRateLimitHeaders(res)
    }
    for (const limit of ["1", "100"]) await expectOk(await get(`/api/v1/media?limit=${limit}`, bearer(main.secret)))
  })

  it("a cursor the endpoint did not hand out is 422", async () => {
    const notOurs = Buffer.from(JSON.stringify({ a: 1 })).toString("base64url")
    const badDate = Buffer.from(JSON.stringify({ t: "yesterday", i: "x" })).toString("base64url")
    for (const cursor of ["garbage!!", "abc", notOurs, badDate, "x".repeat(600), "%%%"]) {
      const res = await get(`/api/v1/media?cursor=${encodeURIComponent(cursor)}`, bearer(main.secret))
      const body = await expectError(res, 422, "validation_failed")
      expect(body.error.message).toMatch(/cursor/)
    }
  })

  // a well-formed cursor document holding a position the service never hands out is 422, not a fault
  for (
    const [what, position] of [
      ["an id that is not a media id", { t: "2024-01-01T00:00:00.000Z", i: "x" }],
      ["an id carrying SQL", { t: "2024-01-01T00:00:00.000Z", i: "'; SELECT 1; --" }],
      ["a time Date.parse accepts but is not ISO 8601", {
        t: "not a date 0",
        i: "00000000-0000-4000-8000-000000000000"
      }],
      ["a time outside the database's range", {
        t: "-271821-04-20T00:00:00.000Z",
        i: "00000000-0000-4000-8000-000000000000"
      }]
    ] as const
  ) {
    it(`a crafted cursor with ${what} is 422`, async () => {
      const cursor = Buffer.from(JSON.stringify(position)).toString("base64url")
      const res = await get(`/api/v1/media?cursor=${cursor}`, bearer(main.secret))
      await expectError(res, 422, "validation_failed")
    })
  }

  it("an unknown multipart field is 422", async () => {
    for (const extra of ["url", "storage_path", "preview_url", "color"]) {
      const res = await postForm(main.secret, form([["file", { bytes: rocket, filename: "rocket.jpg" }], [extra, "x"]]))
      await expectError(res, 422, "validation_failed")
    }
  })

  it("a missing file is 422 (also when `file` is a plain field)", async () => {
    await expectError(await postForm(main.secret, form([["label", "no file"]])), 422, "validation_failed")
    await expectError(await postForm(main.secret, form([["file", "not a file part"]])), 422, "validation_failed")
  })

  it("label over 200 code points is 422; 200 emoji are accepted", async () => {
    const long = await postForm(
      main.secret,
      form([["file", { bytes: rocket, filename: "rocket.jpg" }], ["label", "a".repeat(201)]])
    )
    const body = await expectError(long, 422, "validation_failed")
    expect(body.error.message).toMatch(/label/)
    const emoji = "😀".repeat(200) // 400 UTF-16 units, 200 code points
    const ok = await expectOk(
      await postForm(main.secret, form([["file", { bytes: rocket, filename: "rocket.jpg" }], ["label", emoji]])),
      201
    )
    expect(ok.label).toBe(emoji)
    const over = await postForm(
      main.secret,
      form([["file", { bytes: rocket, filename: "rocket.jpg" }], ["label", "😀".repeat(201)]])
    )
    await expectError(over, 422, "validation_failed")
  })

  it("21 tags, an empty tag or a tag over 50 code points is 422; 20 tags of 50 emoji are accepted", async () => {
    const withTags = (tags: Array<string>) =>
      postForm(
        main.secret,
        form([["file", { bytes: rocket, filename: "rocket.jpg" }], ...tags.map((t): [string, string] => ["tags", t])])
      )
    const many = await expectError(
      await withTags(Array.from({ length: 21 }, (_, i) => `t${i}`)),
      422,
      "validation_failed"
    )
    expect(many.error.message).toMatch(/tag/)
    await expectError(await withTags(["ok", ""]), 422, "validation_failed")
    await expectError(await withTags([""]), 422, "validation_failed")
    await expectError(await withTags(["x".repeat(51)]), 422, "validation_failed")
    const tags = Array.from({ length: 20 }, (_, i) => `${i}` + "🎞".repeat(50 - `${i}`.length))
    const ok = await expectOk(await withTags(tags), 201)
    expect(ok.tags).toEqual(tags)
  })
})

describe("unsupported_media_type (contract §5)", () => {
  const png = photo("chelsea.png")

  it("a text file, SVG, and a JPEG that does not decode are 415", async () => {
    const truncated = rocket.subarray(0, Math.floor(rocket.length / 2))
    const cases: Array<{ bytes: Uint8Array; filename: string; type?: string }> = [
      { bytes: text, filename: "notes.txt", type: "text/plain" },
      { bytes: text, filename: "photo" },
      { bytes: svg, filename: "drawing.svg", type: "image/svg+xml" },
      { bytes: svg, filename: "drawing", type: "application/octet-stream" },
      { bytes: truncated, filename: "rocket.jpg", type: "image/jpeg" },
      { bytes: truncated, filename: "photo" }
    ]
    for (const file of cases) {
      const res = await postForm(main.secret, form([["file", file]]))
      await expectError(res, 415, "unsupported_media_type")
      expectRateLimitHeaders(res)
    }
  })

  it("an image over 100 megapixels is 415 (a 144 MP PNG bomb of 18 KB), and the service stays healthy", async () => {
    const bomb = pngBomb(12000, 12000)
    const started = Date.now()
    await expectError(
      await postForm(main.secret, form([["file", { bytes: bomb, filename: "bomb.png" }]])),
      415,
      "unsupported_media_type"
    )
    expect(Date.now() - started).toBeLessThan(20_000)
    expect((await get("/readyz")).status).toBe(200)
  })

  it("PNG bytes labelled as JPEG (file name or part Content-Type) are 415, naming both types", async () => {
    for (
      const file of [
        { bytes: png, filename: "photo.jpg" },
        { bytes: png, filename: "photo.JPEG", type: "application/octet-stream" },
        { bytes: png, filename: "photo", type: "image/jpeg" },
        { bytes: png, filename: "photo.png", type: "image/jpeg" }
      ]
    ) {
      const body = await expectError(await postForm(main.secret, form([["file", file]])), 415, "unsupported_media_type")
      expect(body.error.message, JSON.stringify({ ...file, bytes: undefined })).toMatch(/png/i)
      expect(body.error.message).toMatch(/jpe?g/i)
    }
  })

  it("the `file` part is the upload whatever its label: no filename but an image type is accepted, a JSON label is 415", async () => {
    const raw = (headers: string, bytes: Uint8Array) => {
      const boundary = "----p2vfilepart"
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"${headers}\r\n\r\n`),
        Buffer.from(bytes),
        Buffer.from(`\r\n--${boundary}--\r\n`)
      ])
      return fetch(`${base}/api/v1/media`, {
        method: "POST",
        headers: { authorization: bearer(main.secret), "content-type": `multipart/form-data; boundary=${boundary}` },
        body
      })
    }
    const png = await solid(8, 8)
    expect((await expectOk(await raw("\r\nContent-Type: image/png", png), 201)).mime_type).toBe("image/png")
    await expectError(
      await raw(`; filename="data.json"\r\nContent-Type: application/json`, png),
      415,
      "unsupported_media_type"
    )
    await expectError(await raw("\r\nContent-Type: application/json", png), 415, "unsupported_media_type")
    // a plain text field named `file` is no file; the error does not echo what was sent
    const plain = await raw("", Buffer.from("x".repeat(5000)))
    const body = await expectError(plain, 422, "validation_failed")
    expect(body.error.message.length).toBeLessThan(400)
    expect(body.error.message).toMatch(/^file: /)
    expect(body.error.message).not.toMatch(/PersistedFile|Expected/)
  })

  it("an animated PNG is a PNG (rendered from its first frame, like GIF and WebP)", async () => {
    const media = await expectOk(
      await postForm(main.secret, form([["file", { bytes: await animatedPng(), filename: "anim.png" }]])),
      201
    )
    expect(media.mime_type).toBe("image/png")
  })

  it("U+0000 in a label or a tag is 422 (it cannot be stored), not a fault", async () => {
    for (const field of ["label", "tags"]) {
      const res = await postForm(
        main.secret,
        form([["file", { bytes: rocket, filename: "rocket.jpg" }], [field, "a\u0000b"]])
      )
      await expectError(res, 422, "validation_failed")
    }
  })

  it("PNG bytes named photo.png, or photo with application/octet-stream, are accepted as image/png (so are other names of PNG)", async () => {
    for (
      const file of [
        { bytes: png, filename: "photo.png" },
        { bytes: png, filename: "photo", type: "application/octet-stream" },
        { bytes: png, filename: "photo.png", type: "image/png" },
        { bytes: png, filename: "photo.png", type: "image/x-png" },
        { bytes: png, filename: "photo.apng", type: "image/apng" },
        { bytes: png, filename: "photo", type: "image/*" }
      ]
    ) {
      const media = await expectOk(await postForm(main.secret, form([["file", file]])), 201)
      expect(media.mime_type).toBe("image/png")
      expect(media.file_size_bytes).toBe(png.length)
    }
  })
})

describe("payload_too_large (contract §5)", () => {
  it("an empty file is 413", async () => {
    const res = await postForm(main.secret, form([["file", { bytes: new Uint8Array(0), filename: "empty.png" }]]))
    await expectError(res, 413, "payload_too_large")
    expectRateLimitHeaders(res)
  })

  it("exactly 15,728,640 bytes of valid PNG is accepted; one byte more is 413", async () => {
    const exact = await pngOfSize(maxUploadBytes)
    // each on a connection of its own: how the server treats a connection after a big upload is tested below
    const media = await expectOk(
      await uploadAlone(base, main.secret, { bytes: exact, filename: "big.png", type: "image/png" }),
      201
    )
    expect(media).toMatchObject({ mime_type: "image/png", file_size_bytes: maxUploadBytes })
    const over = await pngOfSize(maxUploadBytes + 1)
    const refused = await uploadAlone(base, main.secret, { bytes: over, filename: "big.png", type: "image/png" })
    await expectError(refused, 413, "payload_too_large")
    expectRateLimitHeaders(refused)
  })

  it("an upload far over the limit is 413 too (cut off, on its own connection)", async () => {
    const huge = await pngOfSize(maxUploadBytes + 2 * 1024 * 1024)
    await expectError(
      await uploadAlone(base, main.secret, { bytes: huge, filename: "huge.png", type: "image/png" }),
      413,
      "payload_too_large"
    )
  })

  it("after cutting off an oversized upload the connection is closed or still usable (a keep-alive client is not left hanging)", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const huge = multipart([{
        name: "file",
        filename: "huge.png",
        type: "image/png",
        bytes: await pngOfSize(maxUploadBytes + 2 * 1024 * 1024)
      }])
      const cut = await rawRequest(`${base}/api/v1/media`, {
        method: "POST",
        headers: { authorization: bearer(main.secret), "content-type": huge.contentType },
        body: huge.body,
        agent
      })
      expect(cut.status).toBe(413)
      // the same agent (one socket) reuses the connection unless the server said `Connection: close`
      const next = await rawRequest(`${base}/api/v1/media`, {
        headers: { authorization: bearer(main.secret) },
        agent,
        timeoutMs: 3_000
      })
        .catch((e: Error) => ({ status: 0, headers: {}, text: `${e.message}` }))
      expect({
        connection: cut.headers.connection,
        next: next.status,
        error: next.status === 0 ? next.text : undefined
      })
        .toMatchObject({ next: 200 })
    } finally {
      agent.destroy()
    }
  })
})

describe("quota_exceeded (storage budget, contract §3)", () => {
  it("an upload that would cross the workspace's storage budget is 402 quota_exceeded", async () => {
    await expectOk(await postForm(smallBudget.secret, form([["file", { bytes: rocket, filename: "rocket.jpg" }]])), 201)
    const res = await postForm(smallBudget.secret, form([["file", { bytes: rocket, filename: "rocket.jpg" }]]))
    await expectError(res, 402, "quota_exceeded")
    expectRateLimitHeaders(res)
    // a file that still fits is accepted
    const tiny = await solid(4, 4, "png")
    expect(tiny.length).toBeLessThan(1000)
    await expectOk(await postForm(smallBudget.secret, form([["file", { bytes: tiny, filename: "tiny.png" }]])), 201)
  })
})

describe("unknown_media (preview)", () => {
  it("unknown, foreign, archived and malformed ids are all 404 unknown_media", async () => {
    const mine = await expectOk(
      await postForm(main.secret, form([["file", { bytes: rocket, filename: "rocket.jpg" }]])),
      201
    )
    const archived = await expectOk(
      await postForm(main.secret, form([["file", { bytes: rocket, filename: "rocket.jpg" }]])),
      201
    )
    await ops.ok("media", "archive", archived.id)
    const preview = (id: string, secret: string) => get(`/api/v1/media/${id}/preview`, bearer(secret))
    expect((await preview(mine.id, main.secret)).status).toBe(200)
    const cases: Array<[string, string]> = [
      [crypto.randomUUID(), main.secret],
      [mine.id, foreign.secret],
      [archived.id, main.secret],
      ["not-a-uuid", main.secret],
      ["123", main.secret],
      [mine.id.toUpperCase().replace(/-/g, ""), main.secret],
      [`${mine.id}x`, main.secret]
    ]
    for (const [id, secret] of cases) {
      const res = await preview(id, secret)
      await expectError(res, 404, "unknown_media")
      expectRateLimitHeaders(res)
    }
  })
})

describe("every response carries X-Request-Id", () => {
  it("on successes too, unique per request", async () => {
    const ids = new Set<string>()
    for (const path of ["/healthz", "/readyz", "/openapi.json", "/docs"]) {
      const res = await get(path)
      expect(res.status).toBe(200)
      ids.add(res.headers.get("x-request-id") ?? "")
    }
    const list = await get("/api/v1/media", bearer(main.secret))
    ids.add(list.headers.get("x-request-id") ?? "")
    expect(ids.size).toBe(5)
    expect([...ids].every((id) => id.length > 0)).toBe(true)
  })
})

describe("admin CLI failures are catalogue codes too", () => {
  it("media archive of an unknown id is an error document on stderr", async () => {
    const r = await admin(env, "media", "archive", crypto.randomUUID())
    expect(r.code).not.toBe(0)
    expect(r.json.error.code).toBe("unknown_media")
  })
})
