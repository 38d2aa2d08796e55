import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError } from "../support/limits.ts"
import { nested, type Target, target } from "./support.ts"

/**
 * A body nested 5,000 deep, which can overflow the stack in the schema's error formatting and in the
 * log: every JSON endpoint answers 422 `validation_failed`, with or without an Idempotency-Key,
 * alone or 50 at once, and the log carries no stack overflow.
 */
let t: Target
let post: (path: string, body: string, headers?: Record<string, string>) => Promise<Response>

beforeAll(async () => {
  t = await target()
  post = (path, body, headers = {}) =>
    fetch(`${t.service.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.main.secret}`, "content-type": "application/json", ...headers },
      body
    })
})
afterAll(() => t?.close())

const media = "00000000-0000-4000-8000-000000000000"

describe("deeply nested JSON", () => {
  it("is 422 validation_failed on every JSON endpoint and in every field", async () => {
    const bodies: Array<[string, string]> = [
      ["/api/v1/renders", nested(5000)],
      ["/api/v1/renders", `{"media_id":"${media}","metadata":${nested(3000, "{}")}}`],
      ["/api/v1/renders", `{"media_id":"${media}","quote":${nested(3000)}}`],
      ["/api/v1/media/import", `{"provider":"cloud_drive","folder_id":${nested(3000)}}`],
      ["/api/v1/media/import", `{"provider":"cloud_drive","folder_id":"x","metadata":${nested(3000, "{}")}}`],
      ["/api/v1/renders", `{"a":`.repeat(5000) + "1" + "}".repeat(5000)]
    ]
    for (const [path, body] of bodies) {
      const body422 = await expectError(await post(path, body), 422, "validation_failed")
      expect(body422.error.message).toMatch(/nests deeper than 64 levels/)
    }
  })

  it("is 422 with an Idempotency-Key too, and replays as such", async () => {
    const body = nested(5000)
    await expectError(await post("/api/v1/renders", body, { "idempotency-key": "deep-1" }), 422, "validation_failed")
    const again = await post("/api/v1/renders", body, { "idempotency-key": "deep-1" })
    expect(again.headers.get("idempotency-replayed")).toBe("true")
    await expectError(again, 422, "validation_failed")
  })

  it("stays 422 for 50 at once, and nothing overflows the stack in the log", async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => post("/api/v1/renders", nested(5000))))
    for (const r of answers) await expectError(r, 422, "validation_failed")
    expect(t.service.output()).not.toMatch(/Maximum call stack|internal_error|unexpected failure/)
  })

  it("unparsable nesting is 400, shallow nesting is the schema's own 422", async () => {
    await expectError(await post("/api/v1/renders", "[".repeat(5000)), 400, "invalid_request")
    const shallow = await expectError(await post("/api/v1/renders", nested(10)), 422, "validation_failed")
    expect(shallow.error.message).not.toMatch(/nests deeper/)
  })

  it("a chunked body over 1 MiB is 413 without being read whole", async () => {
    const big = new TextEncoder().encode(`{"quote":"${"x".repeat(2 * 1024 * 1024)}"}`)
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < big.length; i += 65536) c.enqueue(big.subarray(i, i + 65536))
        c.close()
      }
    })
    const r = await fetch(`${t.service.baseUrl}/api/v1/renders`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.main.secret}`, "content-type": "application/json" },
      body: stream,
      duplex: "half"
    } as RequestInit).catch((e) => e as Error)
    // the server may close while the client is still sending; either way no 2xx/5xx
    if (r instanceof Response) await expectError(r, 413, "payload_too_large")
  })
})
