import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, type Json } from "../support/limits.ts"
import {
  adminOk,
  client,
  makeShared,
  type Service,
  startService,
  waitFor,
  workspaceWithKey
} from "../support/service.ts"
import {
  type Api,
  createRender,
  downloadAndProbe,
  findEncoder,
  getRender,
  pollToEnd,
  renderFields,
  stopOrKill,
  uploadPhoto,
  usedOf
} from "./helpers.ts"

/**
 * Render lifecycle details (spec "render", "States and transitions", GET/download; contract §6):
 * the statuses a poll sees, every field with its exact null, 404s that never reveal a foreign
 * render, asset_unavailable before completion, exact download headers, and a probed MP4.
 */
let service: Service
let api: Api
let secret: string
let other: Api
let mediaId: string
let foreignRenderId: string

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

beforeAll(async () => {
  service = await startService(await makeShared(), { RENDER_CONCURRENCY: "1" })
  const [mine, theirs] = await Promise.all([
    workspaceWithKey(service.env),
    workspaceWithKey(service.env, { plan: "agency" })
  ])
  secret = mine.secret
  api = client(service.baseUrl, secret)
  other = client(service.baseUrl, theirs.secret)
  mediaId = (await uploadPhoto(api, "rocket.jpg", service)).id
  const theirMedia = await uploadPhoto(other, "coffee.png", service)
  foreignRenderId = (await createRender(other, { media_id: theirMedia.id, quote: "" })).id
})

afterAll(async () => {
  await stopOrKill(service)
})

/** Field-by-field shape of a render document that is not terminal yet. */
const expectPending = (r: Json, id: string) => {
  expect(Object.keys(r).sort()).toEqual(renderFields)
  expect(r).toMatchObject({
    object: "render",
    id,
    type: "aesthetic_quote",
    asset: null,
    error: null,
    completed_at: null
  })
  expect(["queued", "processing"]).toContain(r.status)
  expect(Number.isInteger(r.progress)).toBe(true)
  expect(r.progress).toBeGreaterThanOrEqual(0)
  expect(r.progress).toBeLessThanOrEqual(100)
  expect(r.created_at).toMatch(iso)
  expect(r.updated_at).toMatch(iso)
}

describe("render lifecycle details", () => {
  it(
    "a render without Idempotency-Key or metadata: queued → processing → completed, exact nulls throughout",
    async () => {
      const created = await createRender(api, { media_id: mediaId, quote: "Every field, every null" })
      expect(Object.keys(created).sort()).toEqual(["id", "object", "status"])
      expect(created.id).toMatch(/^rnd_[A-Za-z0-9]{20,}$/)

      const first = await getRender(api, created.id)
      expectPending(first, created.id)
      expect(first.idempotency_key).toBeNull()
      expect(first.metadata).toEqual({})

      // the file is not there before completion: asset_unavailable (the render exists and is ours)
      await expectError(await api.get(`/api/v1/renders/${created.id}/download`), 404, "asset_unavailable")

      let lastProgress = 0
      const { render, seen } = await pollToEnd(api, created.id, 200_000, (r) => {
        if (r.status !== "completed") {
          expectPending(r, created.id)
          if (r.status === "queued") expect(r.progress).toBe(0)
        }
        expect(r.progress).toBeGreaterThanOrEqual(lastProgress)
        lastProgress = r.progress
        expect(r.idempotency_key).toBeNull()
        expect(r.metadata).toEqual({})
      })
      expect(render.status, JSON.stringify(render)).toBe("completed")
      // only these statuses, in this order (a fast poll may miss one, never reorder them)
      const order = ["queued", "processing", "completed"]
      expect(seen.every((s) => order.includes(s))).toBe(true)
      expect(seen).toEqual([...seen].sort((a, b) => order.indexOf(a) - order.indexOf(b)))

      expect(Object.keys(render).sort()).toEqual(renderFields)
      expect(render.progress).toBe(100)
      expect(render.error).toBeNull()
      expect(render.completed_at).toMatch(iso)
      expect(Date.parse(render.completed_at)).toBeGreaterThanOrEqual(Date.parse(render.created_at))
      expect(Date.parse(render.updated_at)).toBeGreaterThanOrEqual(Date.parse(render.created_at))
      expect(Object.keys(render.asset).sort()).toEqual([
        "byte_size",
        "content_type",
        "duration_sec",
        "expires_at",
        "height",
        "url",
        "width"
      ])
      expect(render.asset).toMatchObject({ expires_at: null, content_type: "video/mp4", width: 1080, height: 1920 })
      expect(render.asset.url).toBe(`http://localhost:${service.env.PORT}/api/v1/renders/${created.id}/download`)
      // contract §6: duration_sec is the video's length (RENDER_SECONDS=1), not wall-clock time
      expect(render.asset.duration_sec).toBeGreaterThan(0.5)
      expect(render.asset.duration_sec).toBeLessThan(1.5)

      const { bytes, probe } = await downloadAndProbe(api, created.id)
      expect(bytes.length).toBe(render.asset.byte_size)
      expect(probe.profile).toBe("High")
      expect(probe.fps).toBeCloseTo(30, 0)
      expect(probe.durationSec).toBeGreaterThan(0.5)
      expect(probe.durationSec).toBeLessThan(1.5)

      // re-download is free and identical; the asset url as given works with the same Authorization header
      const again = await fetch(render.asset.url, { headers: { authorization: `Bearer ${secret}` } })
      expect(again.status).toBe(200)
      const second = new Uint8Array(await again.arrayBuffer())
      expect(Buffer.from(second).equals(Buffer.from(bytes))).toBe(true)

      // a terminal render stays as it is
      const later = await getRender(api, created.id)
      expect(later).toEqual(render)
    },
    240_000
  )

  it("echoes the Idempotency-Key and the metadata sent", async () => {
    const metadata = { order: "A-17", count: 3, ratio: 0.5, vip: true, note: null, emoji: "✨🚀", a: 1 }
    const created = await createRender(api, { media_id: mediaId, quote: "", metadata }, {
      "idempotency-key": "lifecycle-echo-1"
    })
    const r = await getRender(api, created.id)
    expect(Object.keys(r).sort()).toEqual(renderFields)
    expect(r.idempotency_key).toBe("lifecycle-echo-1")
    expect(r.metadata).toEqual(metadata)
    // an echo keeps the order the keys were sent in
    expect(JSON.stringify(r.metadata)).toBe(JSON.stringify(metadata))
    const { render } = await pollToEnd(api, created.id, 200_000)
    expect(render.status).toBe("completed")
    expect(render.idempotency_key).toBe("lifecycle-echo-1")
    expect(render.metadata).toEqual(metadata)
  }, 240_000)

  it("unknown renders are 404 render_not_found on GET and download", async () => {
    for (
      const id of ["rnd_AAAAAAAAAAAAAAAAAAAAAAAA", "rnd_x", "not-a-render-id", "00000000-0000-0000-0000-000000000000"]
    ) {
      await expectError(await api.get(`/api/v1/renders/${id}`), 404, "render_not_found")
      await expectError(await api.get(`/api/v1/renders/${id}/download`), 404, "render_not_found")
    }
  })

  it(
    "a foreign render is 404 render_not_found on GET and download, never asset_unavailable, completed or not",
    async () => {
      // right after creation (queued or processing): download must not reveal it with asset_unavailable
      await expectError(await api.get(`/api/v1/renders/${foreignRenderId}`), 404, "render_not_found")
      await expectError(await api.get(`/api/v1/renders/${foreignRenderId}/download`), 404, "render_not_found")
      const { render } = await pollToEnd(other, foreignRenderId, 200_000)
      expect(render.status).toBe("completed")
      await expectError(await api.get(`/api/v1/renders/${foreignRenderId}`), 404, "render_not_found")
      await expectError(await api.get(`/api/v1/renders/${foreignRenderId}/download`), 404, "render_not_found")
      // and its owner can download it
      await downloadAndProbe(other, foreignRenderId)
    },
    240_000
  )
})

describe("canceling a render that is processing", () => {
  let slow: Service | undefined
  afterAll(async () => {
    await stopOrKill(slow, 1_000, "SIGKILL")
  })

  it("ends it canceled and refunded, stops its work and frees the slot for the next queued render", async () => {
    // long renders and one slot, so a render that kept encoding after the cancel would hold the slot for a while
    slow = await startService(await makeShared(), { RENDER_CONCURRENCY: "1", RENDER_SECONDS: "12" })
    const { secret: s } = await workspaceWithKey(slow.env)
    const sapi = client(slow.baseUrl, s)
    const media = (await uploadPhoto(sapi, "rocket.jpg", slow)).id
    const first = await createRender(sapi, { media_id: media, quote: "" })
    const second = await createRender(sapi, { media_id: media, quote: "" })
    expect(await usedOf(sapi)).toBe(2)
    await findEncoder([slow.process.pid!], 120_000)
    expect((await getRender(sapi, first.id)).status).toBe("processing")
    expect((await getRender(sapi, second.id)).status).toBe("queued")

    const canceled = await adminOk(slow.env, "render", "cancel", first.id)
    const canceledAt = Date.now()
    expect(canceled).toMatchObject({
      id: first.id,
      status: "canceled",
      asset: null,
      error: { code: "render_canceled" }
    })
    expect(await usedOf(sapi)).toBe(1)
    // "the running render sees it is no longer processing at its next progress step and stops" (Cli.ts):
    // progress is written every 500 ms, so the next render must get the slot within seconds
    await waitFor(
      async () => (await getRender(sapi, second.id)).status === "processing",
      20_000,
      "the next queued render to start after the processing one was canceled"
    ).catch((e) => {
      throw new Error(`${(e as Error).message} (${Date.now() - canceledAt} ms after the cancel)`)
    })
    const after = await getRender(sapi, first.id)
    expect(after).toMatchObject({ status: "canceled", asset: null, error: { code: "render_canceled" } })
    expect(after.completed_at).not.toBeNull()
    await expectError(await sapi.get(`/api/v1/renders/${first.id}/download`), 404, "asset_unavailable")
  }, 240_000)
})
