import { checksumOf, keyPrefix, mintToken } from "@pic2video/domain/ApiKeyToken"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, expectOk, expectRateLimitHeaders, type Json } from "../support/limits.ts"
import { client, makeShared, photo, type Service, type Shared, startService } from "../support/service.ts"
import { type Admin, inProcessAdmin, type Keyed, keyed } from "./admin.ts"

/**
 * The poll, `GET /api/v1/renders/{id}`, reads the key and the render in one statement (one
 * database round trip). Every guarantee of the other reads holds on it, in each of two
 * processes sharing the database: revocation, expiry and the account gates count on the very next
 * request, a wrong secret is `invalid_api_key` as an unknown key is, the checks keep their order
 * (key, gates, scope, rate limit, then the render), the read budget is exact across both, and a
 * render of another workspace is 404 like one that does not exist.
 */
let shared: Shared
let a: Service
let b: Service
let ops: Admin
let owner: Keyed
let renderId: string

beforeAll(async () => {
  shared = await makeShared()
  a = await startService(shared)
  b = await startService(shared)
  ops = inProcessAdmin(a.env)
  owner = await keyed(ops, "studio", ["--reads-per-minute", "1000"])
  const api = client(a.baseUrl, owner.secret)
  const media: Json = await expectOk(await api.upload(photo("rocket.jpg"), { filename: "rocket.jpg" }), 201)
  const render: Json = await expectOk(await api.postJson("/api/v1/renders", { media_id: media.id, quote: "" }), 202)
  renderId = render.id
})

afterAll(async () => {
  await ops?.dispose()
  const codes = await Promise.all([a?.stop(), b?.stop()])
  expect(codes).toEqual([0, 0])
})

const poll = (service: Service, secret: string, id = renderId) =>
  client(service.baseUrl, secret).get(`/api/v1/renders/${id}`)
/** Same key id, a different secret, a valid checksum: passes the format check, fails verification. */
const wrongSecret = (token: string) => {
  const body = keyPrefix + token.slice(keyPrefix.length, keyPrefix.length + 16) + mintToken().secret
  return body + checksumOf(body)
}
/** A well-formed token of a key that does not exist. */
const unknownKey = () => {
  const body = keyPrefix + "0000000000000000" + mintToken().secret
  return body + checksumOf(body)
}
const both = () => [a, b]

describe("the poll, read with the key, in either process", () => {
  it("answers the workspace's own render; another workspace's, an unknown and a malformed id are 404 render_not_found", async () => {
    const other = await keyed(ops, "studio")
    for (const s of both()) {
      const doc: Json = await expectOk(await poll(s, owner.secret))
      expect(doc).toMatchObject({ object: "render", id: renderId })
      await expectError(await poll(s, other.secret), 404, "render_not_found")
      await expectError(await poll(s, owner.secret, "rnd_AAAAAAAAAAAAAAAAAAAAAAAA"), 404, "render_not_found")
      await expectError(await poll(s, owner.secret, "not-a-render"), 404, "render_not_found")
    }
  })

  it("a wrong secret and an unknown key are invalid_api_key, also for an existing render", async () => {
    for (const s of both()) {
      await expectError(await poll(s, wrongSecret(owner.secret)), 401, "invalid_api_key")
      await expectError(await poll(s, unknownKey()), 401, "invalid_api_key")
      await expectError(await poll(s, "garbage"), 401, "invalid_api_key")
    }
  })

  it("revocation counts on the very next poll in both processes", async () => {
    const k = await ops.ok("key", "create", owner.workspace.id, "--scopes", "renders:read")
    for (const s of both()) await expectOk(await poll(s, k.secret))
    await ops.ok("key", "revoke", k.id)
    for (const s of both()) {
      await expectError(await poll(s, k.secret), 401, "api_key_revoked")
      await expectError(await poll(s, wrongSecret(k.secret)), 401, "invalid_api_key")
    }
  })

  it("an expired key is api_key_expired", async () => {
    const k = await ops.ok(
      "key",
      "create",
      owner.workspace.id,
      "--scopes",
      "renders:read",
      "--expires-at",
      "2020-01-01T00:00:00Z"
    )
    for (const s of both()) await expectError(await poll(s, k.secret), 401, "api_key_expired")
  })

  it("the account gates count on the next poll, in their order, in both processes", async () => {
    const ws = owner.workspace.id
    await ops.ok("workspace", "update", ws, "--plan", "free")
    for (const s of both()) await expectError(await poll(s, owner.secret), 403, "tier_not_eligible")
    await ops.ok("workspace", "update", ws, "--api-enabled", "false")
    for (const s of both()) await expectError(await poll(s, owner.secret), 403, "api_disabled")
    await ops.ok("workspace", "update", ws, "--status", "inactive")
    for (const s of both()) {
      await expectError(await poll(s, owner.secret), 403, "tenant_inactive")
      await expectError(await poll(s, wrongSecret(owner.secret)), 401, "invalid_api_key")
    }
    await ops.ok("workspace", "update", ws, "--status", "active", "--api-enabled", "true", "--plan", "studio")
    for (const s of both()) await expectOk(await poll(s, owner.secret))
  })

  it("a key without renders:read is 403 insufficient_scope, before the render is looked at", async () => {
    const k = await ops.ok("key", "create", owner.workspace.id, "--scopes", "media:read")
    for (const s of both()) {
      await expectError(await poll(s, k.secret), 403, "insufficient_scope")
      await expectError(await poll(s, k.secret, "rnd_AAAAAAAAAAAAAAAAAAAAAAAA"), 403, "insufficient_scope")
    }
  })

  it("the read budget is exact across the two processes, for found and unknown renders alike", async () => {
    const k = await ops.ok("key", "create", owner.workspace.id, "--scopes", "renders:read", "--reads-per-minute", "4")
    const statuses: Array<number> = []
    for (let i = 0; i < 6; i++) {
      const res = await poll(i % 2 === 0 ? a : b, k.secret, i === 1 ? "rnd_AAAAAAAAAAAAAAAAAAAAAAAA" : renderId)
      statuses.push(res.status)
      if (res.status === 429) await expectError(res, 429, "rate_limit_exceeded")
      else {
        expectRateLimitHeaders(res, 4)
        await res.json()
      }
    }
    expect(statuses).toEqual([200, 404, 200, 200, 429, 429])
  })
})
