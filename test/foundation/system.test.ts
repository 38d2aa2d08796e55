import * as http from "node:http"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectNoRateLimitHeaders, type Json } from "../support/limits.ts"
import { makeShared, type Service, startService, waitFor } from "../support/service.ts"
import { inProcessAdmin, keyed } from "./admin.ts"
import { multipart } from "./http.ts"
import { pngOfSize } from "./photos.ts"

/**
 * The system surface (contract §1): health and readiness without a key, the OpenAPI 3.1 document
 * and the /docs page generated from the same definition, and a clean exit on SIGTERM.
 */
let service: Service

beforeAll(async () => {
  service = await startService(await makeShared())
})

afterAll(async () => {
  // the last test stops the service itself; this only cleans up after a failure
  if (service?.process.exitCode === null) await service.stop("SIGKILL")
})

describe("health", () => {
  it("/healthz and /readyz answer 200 without a key, with X-Request-Id", async () => {
    for (const [path, body] of [["/healthz", { status: "ok" }], ["/readyz", { status: "ready" }]] as const) {
      const res = await fetch(`${service.baseUrl}${path}`)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual(body)
      expect(res.headers.get("x-request-id") ?? "").not.toBe("")
      expectNoRateLimitHeaders(res)
    }
  })

  it("a bearer header on a public endpoint changes nothing, even an invalid one", async () => {
    const res = await fetch(`${service.baseUrl}/healthz`, { headers: { authorization: "Bearer nonsense" } })
    expect(res.status).toBe(200)
  })
})

describe("OpenAPI document", () => {
  let doc: Json

  beforeAll(async () => {
    const res = await fetch(`${service.baseUrl}/openapi.json`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
    doc = await res.json()
  })

  /** Every `$ref` in the document points at something that exists. */
  const refs = (node: unknown, out: Array<string> = []): Array<string> => {
    if (Array.isArray(node)) node.forEach((n) => refs(n, out))
    else if (node !== null && typeof node === "object") {
      for (const [k, v] of Object.entries(node)) {
        if (k === "$ref" && typeof v === "string") out.push(v)
        else refs(v, out)
      }
    }
    return out
  }
  const resolve = (ref: string) =>
    ref.startsWith("#/")
      ? ref.slice(2).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~")).reduce(
        (n: Json, k) => n?.[k],
        doc
      )
      : undefined

  const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
  const operations = () =>
    Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
      Object.entries(item).filter(([m]) => methods.includes(m)).map(([method, op]) => ({ path, method, op }))
    )

  it("is a structurally valid OpenAPI 3.1 document", () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
    expect(typeof doc.info?.title).toBe("string")
    expect(typeof doc.info?.version).toBe("string")
    expect(typeof doc.paths).toBe("object")
    for (const path of Object.keys(doc.paths)) expect(path.startsWith("/")).toBe(true)
    const ids = new Set<string>()
    for (const { path, method, op } of operations()) {
      expect(typeof op.responses, `${method} ${path}`).toBe("object")
      expect(Object.keys(op.responses).length).toBeGreaterThan(0)
      for (const status of Object.keys(op.responses)) expect(status).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/)
      if (op.operationId !== undefined) {
        expect(ids.has(op.operationId), `duplicate operationId ${op.operationId}`).toBe(false)
        ids.add(op.operationId)
      }
      // every {param} of the path is declared as a required path parameter
      const declared = [...(doc.paths[path].parameters ?? []), ...(op.parameters ?? [])]
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        const p = declared.find((x) => x.in === "path" && x.name === name)
        expect(p, `${method} ${path} declares {${name}}`).toBeDefined()
        expect(p.required).toBe(true)
      }
      for (const req of op.security ?? doc.security ?? []) {
        for (const scheme of Object.keys(req)) expect(doc.components?.securitySchemes?.[scheme], scheme).toBeDefined()
      }
    }
    for (const ref of refs(doc)) expect(resolve(ref), ref).toBeDefined()
  })

  it("lists the media endpoints with bearer security", () => {
    const schemes = doc.components.securitySchemes as Record<string, Json>
    const bearer = Object.keys(schemes).filter((k) =>
      schemes[k].type === "http" && String(schemes[k].scheme).toLowerCase() === "bearer"
    )
    expect(bearer.length).toBeGreaterThan(0)
    for (
      const [path, method] of [["/api/v1/media", "get"], ["/api/v1/media", "post"], [
        "/api/v1/media/{id}/preview",
        "get"
      ]]
    ) {
      const op = doc.paths[path]?.[method]
      expect(op, `${method.toUpperCase()} ${path}`).toBeDefined()
      const security: Array<Record<string, unknown>> = op.security ?? doc.security ?? []
      expect(security.some((req) => Object.keys(req).some((k) => bearer.includes(k))), `${method} ${path} security`)
        .toBe(true)
    }
    expect(Object.keys(doc.paths["/api/v1/media"].post.requestBody.content)).toContain("multipart/form-data")
    // the system endpoints are not part of the documented API surface but must not be documented as keyed either
    for (const { path, op } of operations()) {
      if (path.startsWith("/api/v1/")) expect((op.security ?? doc.security ?? []).length, path).toBeGreaterThan(0)
    }
  })

  it("documents every error response with the one error body `{error:{code,message},request_id}`", () => {
    for (const { path, method, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        if (!/^[45]/.test(status)) continue
        for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
          expect(type).toMatch(/json/)
          const schema = media.schema.$ref !== undefined ? resolve(media.schema.$ref) : media.schema
          const alternatives: Array<Json> = (schema.anyOf ?? schema.oneOf ?? [schema]).map((
            s: Json
          ) => (s.$ref ? resolve(s.$ref) : s))
          for (const alt of alternatives) {
            expect(
              [...(alt.required ?? [])].sort(),
              `${method.toUpperCase()} ${path} ${status}: ${JSON.stringify(alt).slice(0, 200)}`
            ).toEqual(["error", "request_id"])
          }
        }
      }
    }
  })
})

describe("/docs", () => {
  it("returns an HTML page without a key", async () => {
    const res = await fetch(`${service.baseUrl}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type") ?? "").toMatch(/^text\/html/)
    const html = await res.text()
    expect(html).toMatch(/<html/i)
    expect(html).toContain("Pic-to-Video Rendering API")
  })
})

describe("SIGTERM", () => {
  it("lets an in-flight upload finish, stops accepting, and exits 0", async () => {
    const ops = inProcessAdmin(service.env)
    const { secret } = await keyed(ops, "studio")
    await ops.dispose()
    const big = multipart([{
      name: "file",
      filename: "big.png",
      type: "image/png",
      bytes: await pngOfSize(4 * 1024 * 1024)
    }])
    // the request is under way (headers and a first part of the body sent) when the signal arrives;
    // the rest of the body follows after it
    let exitCode: number | null = null
    let socketReady!: () => void
    const connected = new Promise<void>((r) => (socketReady = r))
    const inFlight = new Promise<{ status: number; text: string }>((resolve) => {
      const req = http.request(`${service.baseUrl}/api/v1/media`, {
        method: "POST",
        agent: false,
        headers: {
          authorization: `Bearer ${secret}`,
          "content-type": big.contentType,
          "content-length": String(big.body.length)
        }
      }, (res) => {
        let text = ""
        res.on("data", (d) => (text += d))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
      })
      req.on("error", (e) => resolve({ status: 0, text: e.message }))
      req.on("socket", (s) => s.once("connect", () => socketReady()))
      req.write(big.body.subarray(0, 1024 * 1024))
      void connected.then(async () => {
        await new Promise((r) => setTimeout(r, 300))
        const stopped = service.stop("SIGTERM")
        await new Promise((r) => setTimeout(r, 200))
        req.end(big.body.subarray(1024 * 1024))
        exitCode = await stopped
      })
    })
    const upload = await inFlight
    expect(upload.status, upload.text).toBe(201)
    await waitFor(async () => exitCode !== null, 30_000, "the service to exit")
    expect(exitCode).toBe(0)
    // nothing listens any more
    const port = Number(new URL(service.baseUrl).port)
    const refused = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, "127.0.0.1")
      s.once("connect", () => (s.destroy(), resolve(false)))
      s.once("error", () => resolve(true))
    })
    expect(refused).toBe(true)
  })
})
