import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Json } from "./support/limits.ts"
import { client, makeShared, photo, type Service, startService, waitFor, workspaceWithKey } from "./support/service.ts"

describe("render lifecycle", () => {
  let service: Service
  beforeAll(async () => {
    service = await startService(await makeShared())
  })
  afterAll(async () => {
    await service.stop()
  })

  it("uploads, creates, polls to completed and downloads an MP4", async () => {
    const { secret } = await workspaceWithKey(service.env)
    const api = client(service.baseUrl, secret)
    const media = await (await api.upload(photo("rocket.jpg"), { filename: "rocket.jpg" })).json()
    const created = await api.postJson("/api/v1/renders", { media_id: media.id, quote: "Ad astra" })
    const body = await created.json()
    expect(created.status, JSON.stringify(body)).toBe(202)
    expect(Object.keys(body).sort()).toEqual(["id", "object", "status"])
    expect(body).toMatchObject({ object: "render", status: "queued" })
    const seen: Array<string> = []
    let render: Json
    await waitFor(
      async () => {
        render = await (await api.get(`/api/v1/renders/${body.id}`)).json()
        if (seen[seen.length - 1] !== render.status) seen.push(render.status)
        return render.status === "completed" || render.status === "failed"
      },
      90_000,
      "render to finish"
    )
    expect(render.status, JSON.stringify(render)).toBe("completed")
    expect(seen.filter((s) => s !== "queued" && s !== "processing" && s !== "completed")).toEqual([])
    expect(render.progress).toBe(100)
    expect(render.asset).toMatchObject({ content_type: "video/mp4", width: 1080, height: 1920, expires_at: null })
    const download = await api.get(`/api/v1/renders/${body.id}/download`)
    expect(download.status).toBe(200)
    expect(download.headers.get("content-type")).toBe("video/mp4")
    expect(download.headers.get("content-disposition")).toBe(`attachment; filename="${body.id}.mp4"`)
    expect(download.headers.get("cache-control")).toBe("private, no-store")
    const bytes = new Uint8Array(await download.arrayBuffer())
    expect(bytes.length).toBe(render.asset.byte_size)
    const usage = await (await api.get("/api/v1/usage")).json()
    expect(usage).toMatchObject({ object: "usage", aesthetic_quotes: { used: 1, included: 100 } })
  })
})
