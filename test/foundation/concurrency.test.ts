import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, expectOk, expectRateLimitHeaders, type Json } from "../support/limits.ts"
import { client, makeShared, photo, type Service, type Shared, startService } from "../support/service.ts"
import { type Admin, inProcessAdmin, keyed } from "./admin.ts"
import { solid } from "./photos.ts"

/**
 * Races the contract must survive: concurrent uploads never overrun the storage budget
 * (contract §3, "charging is atomic"), and a per-key read budget holds across two service
 * processes that share the database (contract §1, §4.5).
 */
let shared: Shared
let a: Service
let b: Service
let ops: Admin

beforeAll(async () => {
  shared = await makeShared()
  a = await startService(shared)
  b = await startService(shared)
  ops = inProcessAdmin(a.env)
})

afterAll(async () => {
  await ops?.dispose()
  const codes = await Promise.all([a?.stop(), b?.stop()])
  expect(codes).toEqual([0, 0])
})

const listAll = async (baseUrl: string, secret: string) => {
  const api = client(baseUrl, secret)
  const items: Array<Json> = []
  let cursor: string | null = null
  do {
    const page: Json = await expectOk(
      await api.get(`/api/v1/media?limit=100${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
    )
    items.push(...page.data)
    cursor = page.next_cursor
  } while (cursor !== null)
  return items
}

describe("storage budget under concurrency", () => {
  it("20 concurrent uploads against a nearly full budget never exceed it (HTTP outcomes and stored total)", async () => {
    const rocket = photo("rocket.jpg")
    const size = rocket.length
    // room for exactly 5 photos (and not quite a 6th); 2 are uploaded first, so 3 of the 20 fit
    const budget = 6 * size - 1
    const { secret, workspace } = await keyed(ops, "custom", [
      "--uploads-per-minute",
      "1000",
      "--reads-per-minute",
      "1000"
    ], [
      "--storage-budget-bytes",
      String(budget)
    ])
    expect(workspace.storage_budget_bytes).toBe(budget)
    const api = client(a.baseUrl, secret)
    for (let i = 0; i < 2; i++) await expectOk(await api.upload(rocket, { filename: "rocket.jpg" }), 201)

    // spread over both processes, all in flight at once
    const responses = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) => client(i % 2 === 0 ? a.baseUrl : b.baseUrl, secret).upload(rocket, { filename: `r${i}.jpg` })
      )
    )
    const outcomes = await Promise.all(responses.map(async (res) => {
      if (res.status === 201) {
        await res.json()
        return "created"
      }
      await expectError(res, 402, "quota_exceeded")
      expectRateLimitHeaders(res)
      return "refused"
    }))
    expect(outcomes.filter((o) => o === "created").length).toBe(3)
    expect(outcomes.filter((o) => o === "refused").length).toBe(17)

    const stored = await listAll(b.baseUrl, secret)
    const total = stored.reduce((sum, m) => sum + m.file_size_bytes, 0)
    expect(stored.length).toBe(5)
    expect(total).toBe(5 * size)
    expect(total).toBeLessThanOrEqual(budget)

    // the refused uploads left nothing behind: one more small photo that fits is still accepted
    const tiny = await solid(2, 2, "png")
    expect(tiny.length).toBeLessThan(size - 1)
    await expectOk(await api.upload(tiny, { filename: "tiny.png" }), 201)
  })

  it("concurrent uploads of different sizes: the stored total stays within the budget", async () => {
    const files = [photo("rocket.jpg"), photo("chelsea.png"), photo("coffee.png")]
    const budget = files[1].length + files[2].length + 1000 // any subset whose sum fits may win
    const { secret } = await keyed(ops, "custom", ["--uploads-per-minute", "1000", "--reads-per-minute", "1000"], [
      "--storage-budget-bytes",
      String(budget)
    ])
    const responses = await Promise.all(
      Array.from(
        { length: 18 },
        (_, i) =>
          client(i % 2 === 0 ? a.baseUrl : b.baseUrl, secret).upload(files[i % 3], {
            filename: ["a.jpg", "b.png", "c.png"][i % 3]
          })
      )
    )
    let accepted = 0
    for (const res of responses) {
      if (res.status === 201) {
        accepted += (await res.json()).file_size_bytes
      } else await expectError(res, 402, "quota_exceeded")
    }
    const stored = await listAll(a.baseUrl, secret)
    const total = stored.reduce((sum, m) => sum + m.file_size_bytes, 0)
    expect(total).toBe(accepted)
    expect(total).toBeLessThanOrEqual(budget)
    expect(stored.length).toBeGreaterThan(0)
  })
})

describe("read budget across two processes", () => {
  it("a key with --reads-per-minute 5 gets exactly 5 reads then 429, alternating between the two processes", async () => {
    const { secret } = await keyed(ops, "studio", ["--reads-per-minute", "5"])
    const statuses: Array<number> = []
    const remaining: Array<number> = []
    for (let i = 0; i < 8; i++) {
      const res = await client(i % 2 === 0 ? a.baseUrl : b.baseUrl, secret).get("/api/v1/media")
      statuses.push(res.status)
      if (res.status === 200) {
        await res.json()
        remaining.push(expectRateLimitHeaders(res, 5).remaining)
      } else {
        await expectError(res, 429, "rate_limit_exceeded")
        expect(res.headers.get("retry-after") ?? "").toMatch(/^\d+$/)
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429])
    expect(remaining).toEqual([4, 3, 2, 1, 0])
  })

  it("a concurrent burst of 12 reads over both processes admits exactly 5", async () => {
    const { secret } = await keyed(ops, "studio", ["--reads-per-minute", "5"])
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => client(i % 2 === 0 ? a.baseUrl : b.baseUrl, secret).get("/api/v1/media"))
    )
    const statuses = await Promise.all(responses.map(async (res) => {
      if (res.status !== 200) await expectError(res, 429, "rate_limit_exceeded")
      else await res.json()
      return res.status
    }))
    expect(statuses.filter((s) => s === 200).length).toBe(5)
    expect(statuses.filter((s) => s === 429).length).toBe(7)
  })
})
