import { routes } from "@pic2video/api/RouteTable"
import { scopes } from "@pic2video/domain/Scopes"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError } from "../support/limits.ts"
import { makeShared, type Service, startService } from "../support/service.ts"
import { type Admin, inProcessAdmin } from "./admin.ts"

/**
 * Every endpoint × every scope it does not accept → 403 insufficient_scope (contract §4.4: exact
 * match, no scope implies another). The endpoint list is the service's own route table, so an
 * endpoint added later is covered without touching this file.
 */
const authenticated = routes.filter((r) => !r.public)

/** The scope table of the spec ("Authentication"), for the routes it names. */
const specScopes: Record<string, string> = {
  "GET /api/v1/media": "media:read",
  "POST /api/v1/media": "media:write",
  "GET /api/v1/media/:id/preview": "media:read",
  "GET /api/v1/integrations/cloud": "media:read",
  "GET /api/v1/integrations/cloud/folders": "media:read",
  "GET /api/v1/media/imports/:id": "media:read",
  "POST /api/v1/media/import": "media:write",
  "GET /api/v1/integrations/cloud/connect": "media:write",
  "DELETE /api/v1/integrations/cloud": "media:write",
  "POST /api/v1/renders": "renders:create",
  "GET /api/v1/renders/:id": "renders:read",
  "GET /api/v1/renders/:id/download": "renders:read",
  "GET /api/v1/usage": "renders:read"
}

const pathFor = (path: string) =>
  path.replace(
    /:id/g,
    path.startsWith("/api/v1/renders") ? "rnd_AAAAAAAAAAAAAAAAAAAAAAAA" : path.includes("imports")
      ? "imp_AAAAAAAAAAAAAAAAAAAAAAAA"
      : "00000000-0000-4000-8000-000000000000"
  )

const request = (base: string, method: string, path: string, secret: string) => {
  const body = method === "POST" || method === "PUT" || method === "PATCH"
    ? path === "/api/v1/media"
      ? (() => {
        const f = new FormData()
        f.append("file", new Blob([new Uint8Array([1, 2, 3])]), "x.png")
        return f
      })()
      : JSON.stringify({})
    : undefined
  const headers: Record<string, string> = { authorization: `Bearer ${secret}` }
  if (typeof body === "string") headers["content-type"] = "application/json"
  return fetch(`${base}${pathFor(path)}`, { method, headers, body })
}

let service: Service
let ops: Admin
const keyFor: Record<string, string> = {}

beforeAll(async () => {
  service = await startService(await makeShared())
  ops = inProcessAdmin(service.env)
  const ws = await ops.ok("workspace", "create", "--name", "Scopes", "--plan", "studio")
  for (const scope of scopes) {
    keyFor[scope] = (await ops.ok(
      "key",
      "create",
      ws.id,
      "--scopes",
      scope,
      "--reads-per-minute",
      "10000",
      "--uploads-per-minute",
      "10000"
    )).secret
  }
})

afterAll(async () => {
  await ops?.dispose()
  expect(await service?.stop()).toBe(0)
})

describe("scope matrix", () => {
  it("the route table declares the spec's scope for every endpoint it names", () => {
    expect(authenticated.length).toBeGreaterThanOrEqual(3)
    for (const r of authenticated) {
      const expected = specScopes[`${r.method} ${r.path}`]
      expect(expected, `${r.method} ${r.path} is not an endpoint of the spec`).toBeDefined()
      expect(r.scope, `${r.method} ${r.path}`).toBe(expected)
    }
  })

  it("the media endpoints are all in the route table", () => {
    const names = authenticated.map((r) => `${r.method} ${r.path}`)
    expect(names).toEqual(
      expect.arrayContaining(["GET /api/v1/media", "POST /api/v1/media", "GET /api/v1/media/:id/preview"])
    )
  })

  for (const route of authenticated) {
    for (const scope of scopes) {
      if (scope === route.scope) continue
      it(`${route.method} ${route.path} with only ${scope} → 403 insufficient_scope`, async () => {
        const res = await request(service.baseUrl, route.method, route.path, keyFor[scope])
        const body = await expectError(res, 403, "insufficient_scope")
        expect(body.error.message).toContain(route.scope)
      })
    }
    it(`${route.method} ${route.path} with ${route.scope} is not refused for scope`, async () => {
      const res = await request(service.baseUrl, route.method, route.path, keyFor[route.scope!])
      const text = await res.text()
      expect(res.status, text).not.toBe(401)
      if (res.status === 403) expect(JSON.parse(text).error.code).not.toBe("insufficient_scope")
    })
  }

  it("a key holding every other scope is still refused (no implication)", async () => {
    const ws = await ops.ok("workspace", "create", "--name", "Scopes2", "--plan", "studio")
    for (const route of authenticated) {
      const others = scopes.filter((s) => s !== route.scope).join(",")
      const k = await ops.ok("key", "create", ws.id, "--scopes", others)
      await expectError(await request(service.baseUrl, route.method, route.path, k.secret), 403, "insufficient_scope")
    }
  })
})
