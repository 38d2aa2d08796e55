import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, type Json } from "../support/limits.ts"
import { admin, adminOk, client, makeShared, type Service, startService, workspaceWithKey } from "../support/service.ts"
import { type Api, getRender, stopOrKill, uploadPhoto, usedOf } from "./helpers.ts"

/**
 * Money on POST /api/v1/renders (spec Plans, Limits, Idempotency-Key; contract §3 accounting and
 * refunds, §6 idempotency): atomic charging under concurrency, spend caps, idempotent replays, the
 * Starter and Custom plans, and refunds through `render cancel`. One service for the file, one
 * render slot, captions off (`quote: ""`) wherever a create is only about money.
 */
let service: Service
const all = "media:read,media:write,renders:create,renders:read"
const fast = ["--creates-per-minute", "100000", "--reads-per-minute", "100000"]

/** Every account the file uses, made up front and concurrently (each is two CLI runs and an upload). */
const accounts: Record<string, Account> = {}
const specs: Record<string, Parameters<typeof workspaceWithKey>[1]> = {
  starter: { plan: "starter" },
  starter2: { plan: "starter" },
  unlimited: { plan: "custom", workspaceArgs: ["--included", "unlimited"] },
  customDefault: { plan: "custom" },
  customSeven: { plan: "custom", workspaceArgs: ["--included", "7"] },
  conflict: {},
  remember: {},
  scoped: {},
  burst: {},
  capped: { keyArgs: ["--spend-cap-24h", "10"] },
  allowance: { plan: "studio" }
}

beforeAll(async () => {
  service = await startService(await makeShared(), { RENDER_CONCURRENCY: "1" })
  await Promise.all(
    Object.entries(specs).map(async ([name, spec]) => {
      accounts[name] = await account(spec)
    })
  )
}, 240_000)

afterAll(async () => {
  // the allowance test leaves ~100 renders queued: nothing to wait for
  await stopOrKill(service, 1_000, "SIGKILL")
})

interface Account {
  readonly api: Api
  readonly secret: string
  readonly workspace: Json
  readonly key: Json
  readonly mediaId: string
}

const account = async (opts: Parameters<typeof workspaceWithKey>[1] = {}): Promise<Account> => {
  const { workspace, key, secret } = await workspaceWithKey(service.env, {
    ...opts,
    keyArgs: [...fast, ...(opts.keyArgs ?? [])]
  })
  const api = client(service.baseUrl, secret)
  // a Starter workspace can still upload (reads and media work; only creates are refused)
  const mediaId = (await uploadPhoto(api, "rocket.jpg", service)).id
  return { api, secret, workspace, key, mediaId }
}

const create = (api: Api, body: unknown, headers?: Record<string, string>) =>
  api.postJson("/api/v1/renders", body, headers)

interface Outcome {
  readonly status: number
  readonly body: Json
  readonly headers: Headers
}

const settle = async (res: Response): Promise<Outcome> => ({
  status: res.status,
  body: await res.json(),
  headers: res.headers
})

const tally = (outcomes: ReadonlyArray<Outcome>) => {
  const counts: Record<string, number> = {}
  for (const o of outcomes) {
    const k = o.status === 202 ? "202" : `${o.status} ${o.body?.error?.code}`
    counts[k] = (counts[k] ?? 0) + 1
  }
  return counts
}

const cancel = async (renderId: string) => {
  const r = await admin(service.env, "render", "cancel", renderId)
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

describe("plans", () => {
  it("Starter: every create is 402 quota_exceeded, and unknown media is still 404 first", async () => {
    const s = accounts.starter
    for (
      const body of [{ media_id: s.mediaId }, { media_id: s.mediaId, quote: "" }, {
        media_id: s.mediaId,
        quote: "Hello",
        text_color: "yellow"
      }]
    ) {
      await expectError(await create(s.api, body), 402, "quota_exceeded")
    }
    await expectError(
      await create(s.api, { media_id: "00000000-0000-4000-8000-000000000000", quote: "" }),
      404,
      "unknown_media"
    )
    const usage = await (await s.api.get("/api/v1/usage")).json()
    expect(usage).toMatchObject({ object: "usage", aesthetic_quotes: { used: 0, included: 0 } })
    // reads still work on Starter
    expect((await s.api.get("/api/v1/media")).status).toBe(200)
  })

  it("Custom with --included unlimited reports included null and accepts creates", async () => {
    const c = accounts.unlimited
    const before = await (await c.api.get("/api/v1/usage")).json()
    expect(Object.keys(before).sort()).toEqual(["aesthetic_quotes", "cycle_start", "object"])
    expect(before.aesthetic_quotes).toEqual({ used: 0, included: null })
    expect(Date.parse(before.cycle_start)).toBeLessThanOrEqual(Date.now())
    const res = await create(c.api, { media_id: c.mediaId, quote: "" })
    expect(res.status, await res.clone().text()).toBe(202)
    expect((await (await c.api.get("/api/v1/usage")).json()).aesthetic_quotes).toEqual({ used: 1, included: null })
  })

  it("Custom without --included is unlimited too; --included N is reported", async () => {
    const plain = accounts.customDefault
    expect(plain.workspace.included).toBeNull()
    expect((await (await plain.api.get("/api/v1/usage")).json()).aesthetic_quotes).toEqual({ used: 0, included: null })
    const seven = accounts.customSeven
    expect((await (await seven.api.get("/api/v1/usage")).json()).aesthetic_quotes).toEqual({ used: 0, included: 7 })
  })
})

describe("idempotency", () => {
  it("same key, different body is 409 idempotency_conflict; the original replays with a fresh request id", async () => {
    const s = accounts.conflict
    const body = { media_id: s.mediaId, quote: "", metadata: { n: 1 } }
    const firstResponse = await create(s.api, body, { "idempotency-key": "conflict-1" })
    const firstText = await firstResponse.clone().text()
    const first = await settle(firstResponse)
    expect(first.status, JSON.stringify(first.body)).toBe(202)
    expect(first.headers.get("idempotency-replayed")).toBeNull()
    // the same body with its keys in another order is the same request (canonical JSON)
    const reorderedResponse = await create(s.api, { metadata: { n: 1 }, quote: "", media_id: s.mediaId }, {
      "idempotency-key": "conflict-1"
    })
    // "the original response is replayed": the same bytes, key order included
    expect(await reorderedResponse.clone().text()).toBe(firstText)
    const reordered = await settle(reorderedResponse)
    expect(reordered.status).toBe(202)
    expect(reordered.body).toEqual(first.body)
    expect(reordered.headers.get("idempotency-replayed")).toBe("true")
    expect(reordered.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"))

    await expectError(
      await create(s.api, { ...body, metadata: { n: 2 } }, { "idempotency-key": "conflict-1" }),
      409,
      "idempotency_conflict"
    )
    await expectError(
      await create(s.api, { ...body, quote: "other" }, { "idempotency-key": "conflict-1" }),
      409,
      "idempotency_conflict"
    )
    expect(await usedOf(s.api)).toBe(1)
  })

  it("remembered 422, 404, 400 and 402 outcomes replay with the same status and body and a fresh request_id", async () => {
    const s = accounts.remember
    const starter = accounts.starter2
    const cases: Array<{ api: Api; key: string; body: unknown; raw?: boolean; status: number; code: string }> = [
      {
        api: s.api,
        key: "remember-422",
        body: { media_id: s.mediaId, text_color: "red" },
        status: 422,
        code: "validation_failed"
      },
      {
        api: s.api,
        key: "remember-422-type",
        body: { media_id: s.mediaId, render_type: "slideshow" },
        status: 422,
        code: "unsupported_render_type"
      },
      {
        api: s.api,
        key: "remember-404",
        body: { media_id: "00000000-0000-4000-8000-000000000000", quote: "" },
        status: 404,
        code: "unknown_media"
      },
      { api: s.api, key: "remember-400", body: "{not json", status: 400, code: "invalid_request" },
      {
        api: starter.api,
        key: "remember-402",
        body: { media_id: starter.mediaId, quote: "" },
        status: 402,
        code: "quota_exceeded"
      }
    ]
    for (const c of cases) {
      const first = await expectError(await create(c.api, c.body, { "idempotency-key": c.key }), c.status, c.code)
      const res = await create(c.api, c.body, { "idempotency-key": c.key })
      expect(res.headers.get("idempotency-replayed"), c.key).toBe("true")
      const again = await expectError(res, c.status, c.code)
      expect(again.error).toEqual(first.error)
      expect(again.request_id).not.toBe(first.request_id)
    }
    // a remembered 404 stays remembered even once the request would now succeed... with a new key it succeeds
    const fresh = await create(s.api, { media_id: s.mediaId, quote: "" }, { "idempotency-key": "remember-new" })
    expect(fresh.status).toBe(202)
    expect(await usedOf(s.api)).toBe(1)
  })

  it("is scoped to the API key: the same value on another key is a separate request", async () => {
    const s = accounts.scoped
    const second = await adminOk(service.env, "key", "create", s.workspace.id, "--scopes", all, ...fast)
    const api2 = client(service.baseUrl, second.secret)
    const body = { media_id: s.mediaId, quote: "" }
    const a = await settle(await create(s.api, body, { "idempotency-key": "shared-value" }))
    const b = await settle(await create(api2, body, { "idempotency-key": "shared-value" }))
    expect([a.status, b.status]).toEqual([202, 202])
    expect(b.headers.get("idempotency-replayed")).toBeNull()
    expect(a.body.id).not.toBe(b.body.id)
    expect(await usedOf(s.api)).toBe(2)
  })

  it("50 concurrent identical requests with one key make exactly one render and one charge", async () => {
    const s = accounts.burst
    const body = { media_id: s.mediaId, quote: "" }
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => create(s.api, body, { "idempotency-key": "burst-1" }).then(settle))
    )
    const accepted = outcomes.filter((o) => o.status === 202)
    const inProgress = outcomes.filter((o) => o.status === 409)
    expect(accepted.length + inProgress.length, JSON.stringify(tally(outcomes))).toBe(50)
    expect(accepted.length).toBeGreaterThanOrEqual(1)
    const ids = new Set(accepted.map((o) => o.body.id))
    expect(ids.size, JSON.stringify([...ids])).toBe(1)
    // exactly one original; every other 202 is a replay
    expect(accepted.filter((o) => o.headers.get("idempotency-replayed") === null).length).toBe(1)
    for (const o of accepted.filter((o) => o.headers.get("idempotency-replayed") !== null)) {
      expect(o.headers.get("idempotency-replayed")).toBe("true")
      expect(o.body).toEqual({ object: "render", id: [...ids][0], status: "queued" })
    }
    for (const o of inProgress) {
      expect(o.body.error.code).toBe("idempotency_in_progress")
      expect(o.headers.get("retry-after")).toBe("1")
      expect(o.body.request_id).toBe(o.headers.get("x-request-id"))
    }
    const requestIds = new Set(outcomes.map((o) => o.headers.get("x-request-id")))
    expect(requestIds.size).toBe(50)
    // a retry after the outcome is settled replays it
    const retry = await settle(await create(s.api, body, { "idempotency-key": "burst-1" }))
    expect(retry.status).toBe(202)
    expect(retry.body.id).toBe([...ids][0])
    expect(retry.headers.get("idempotency-replayed")).toBe("true")
    expect(await usedOf(s.api)).toBe(1)
    const render = await getRender(s.api, [...ids][0])
    expect(render.idempotency_key).toBe("burst-1")
  })
})

describe("charging under concurrency", () => {
  it("spend cap 10 under 50 concurrent creates: exactly 10 accepted, the rest spend_cap_reached; a refund frees a slot", async () => {
    const s = accounts.capped
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => create(s.api, { media_id: s.mediaId, quote: "" }).then(settle))
    )
    expect(tally(outcomes)).toEqual({ "202": 10, "402 spend_cap_reached": 40 })
    expect(await usedOf(s.api)).toBe(10)
    // full: one more is refused
    await expectError(await create(s.api, { media_id: s.mediaId, quote: "" }), 402, "spend_cap_reached")

    // refund (contract §3): cancel one, the cap and the allowance both get it back
    const ids = outcomes.filter((o) => o.status === 202).map((o) => o.body.id as string)
    const target = ids[ids.length - 1]
    const canceled = await cancel(target)
    expect(canceled).toMatchObject({ object: "render", id: target, status: "canceled", asset: null })
    expect(canceled.error).toMatchObject({ code: "render_canceled" })
    expect(await usedOf(s.api)).toBe(9)
    const polled = await getRender(s.api, target)
    expect(polled.status).toBe("canceled")
    expect(polled.error.code).toBe("render_canceled")
    expect(typeof polled.error.message).toBe("string")
    expect(polled.completed_at).not.toBeNull()
    expect(polled.asset).toBeNull()
    await expectError(await s.api.get(`/api/v1/renders/${target}/download`), 404, "asset_unavailable")

    const again = await create(s.api, { media_id: s.mediaId, quote: "" })
    expect(again.status, await again.clone().text()).toBe(202)
    await expectError(await create(s.api, { media_id: s.mediaId, quote: "" }), 402, "spend_cap_reached")
    expect(await usedOf(s.api)).toBe(10)
    // canceling twice changes nothing and refunds nothing twice
    const twice = await cancel(target)
    expect(twice.status).toBe("canceled")
    expect(await usedOf(s.api)).toBe(10)
  })

  it(
    "200 concurrent creates against allowance 100: exactly 100 accepted and 100 quota_exceeded; a cancel refunds one",
    async () => {
      const s = accounts.allowance
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, () => create(s.api, { media_id: s.mediaId, quote: "" }).then(settle))
      )
      expect(tally(outcomes)).toEqual({ "202": 100, "402 quota_exceeded": 100 })
      const ids = outcomes.filter((o) => o.status === 202).map((o) => o.body.id as string)
      expect(new Set(ids).size).toBe(100)
      const usage = await (await s.api.get("/api/v1/usage")).json()
      expect(usage.aesthetic_quotes).toEqual({ used: 100, included: 100 })
      await expectError(await create(s.api, { media_id: s.mediaId, quote: "" }), 402, "quota_exceeded")

      // refund: one canceled render gives one back; the next create takes it
      const target = ids[ids.length - 1]
      const canceled = await cancel(target)
      expect(canceled.status).toBe("canceled")
      expect(canceled.error.code).toBe("render_canceled")
      expect(await usedOf(s.api)).toBe(99)
      const again = await create(s.api, { media_id: s.mediaId, quote: "" })
      expect(again.status, await again.clone().text()).toBe(202)
      expect(await usedOf(s.api)).toBe(100)
      await expectError(await create(s.api, { media_id: s.mediaId, quote: "" }), 402, "quota_exceeded")
    },
    180_000
  )
})
