import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, makeShared, photo, type Service, startService, workspaceWithKey } from "./support/service.ts"

describe("a new user's first steps", () => {
  let service: Service
  beforeAll(async () => {
    service = await startService(await makeShared())
  })
  afterAll(async () => {
    expect(await service.stop()).toBe(0)
  })

  it("creates a workspace, mints a key, uploads a photo, lists it and fetches its preview", async () => {
    const { secret } = await workspaceWithKey(service.env)
    const api = client(service.baseUrl, secret)
    const created = await api.upload(photo("rocket.jpg"), { filename: "rocket.jpg", label: "Rocket" })
    expect(created.status).toBe(201)
    const media = await created.json()
    expect(media).toMatchObject({
      object: "media",
      label: "Rocket",
      tags: [],
      width: null,
      height: null,
      mime_type: "image/jpeg"
    })
    const list = await (await api.get("/api/v1/media")).json()
    expect(list.data.map((m: { readonly id: string }) => m.id)).toEqual([media.id])
    expect(list.data[0]).toMatchObject({ width: 640, height: 427 })
    const preview = await api.get(`/api/v1/media/${media.id}/preview`)
    expect(preview.status).toBe(200)
    expect(preview.headers.get("content-type")).toBe("image/jpeg")
    expect(preview.headers.get("cache-control")).toBe("private, no-store")
  })
})
