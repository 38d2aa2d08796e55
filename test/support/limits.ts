import { expect } from "vitest"

/**
 * Assertions for the foundation suite: the exact error contract (spec "Errors", contract §4) and
 * the rate-limit headers every authenticated response carries.
 */

/**
 * A JSON document the service answered, typed as `JSON.parse` and `Response.json()` give it: the
 * expectations that follow check its shape, field by field.
 */
export type Json = ReturnType<typeof JSON.parse>

export interface ErrorExpectation {
  readonly status: number
  readonly code: string
}

/**
 * Asserts the error contract exactly: status, `{error:{code,message},request_id}` with no other key,
 * a non-empty message, and `X-Request-Id` equal to `request_id`. Returns the body.
 */
export const expectError = async (res: Response, status: number, code: string) => {
  const text = await res.text()
  let body: Json
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`expected a JSON error body (${status} ${code}), got ${res.status}: ${text.slice(0, 300)}`)
  }
  expect({ status: res.status, code: body?.error?.code }, `body: ${text.slice(0, 300)}`).toEqual({ status, code })
  expect(Object.keys(body).sort()).toEqual(["error", "request_id"])
  expect(Object.keys(body.error).sort()).toEqual(["code", "message"])
  expect(typeof body.error.message).toBe("string")
  expect(body.error.message.length).toBeGreaterThan(0)
  expect(typeof body.request_id).toBe("string")
  expect(body.request_id.length).toBeGreaterThan(0)
  expect(res.headers.get("x-request-id")).toBe(body.request_id)
  expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
  return body as { error: { code: string; message: string }; request_id: string }
}

/** `RateLimit-Limit/Remaining/Reset` as bare integers (contract §4.5). */
export const expectRateLimitHeaders = (res: Response, limit?: number) => {
  const values = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"].map((h) => res.headers.get(h))
  for (const v of values) expect(v ?? "(absent)").toMatch(/^\d+$/)
  const [l, remaining, reset] = values.map(Number)
  if (limit !== undefined) expect(l).toBe(limit)
  expect(remaining).toBeLessThanOrEqual(l)
  expect(reset).toBeGreaterThanOrEqual(0)
  expect(reset).toBeLessThanOrEqual(60)
  return { limit: l, remaining, reset }
}

export const expectNoRateLimitHeaders = (res: Response) => {
  for (const h of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) expect(res.headers.get(h)).toBeNull()
}

/** A success response: status, X-Request-Id present, RateLimit-* present; returns the JSON. */
export const expectOk = async (res: Response, status = 200) => {
  const text = await res.text()
  expect(res.status, text.slice(0, 300)).toBe(status)
  expect(res.headers.get("x-request-id") ?? "").toMatch(/.+/)
  expectRateLimitHeaders(res)
  return JSON.parse(text)
}
