import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createRender, pollToEnd, stopOrKill, uploadPhoto } from "../renders/helpers.ts"
import type { Json } from "../support/limits.ts"
import {
  adminOk,
  client,
  makeShared,
  type Service,
  startService,
  waitFor,
  workspaceWithKey
} from "../support/service.ts"

/**
 * The vision model over the real service (issue #13): an upload is classified after it has answered
 * and `admin media show` prints what was inferred; the public media document is unchanged; a render
 * without image_class uses the inference, one with it overrides the class; and with the model
 * unavailable, uploads and renders still complete (inference null, default framing).
 */
const services: Array<Service> = []
afterAll(async () => {
  await Promise.all(services.map((s) => stopOrKill(s)))
})

const mediaKeys = [
  "created_at",
  "file_size_bytes",
  "height",
  "id",
  "label",
  "mime_type",
  "object",
  "preview_expires_at",
  "preview_url",
  "tags",
  "width"
]

describe("photo classification", () => {
  let service: Service
  let api: ReturnType<typeof client>
  let media: { id: string }
  beforeAll(async () => {
    service = await startService(await makeShared(), { RENDER_CONCURRENCY: "1" })
    services.push(service)
    const { secret } = await workspaceWithKey(service.env)
    api = client(service.baseUrl, secret)
    media = await uploadPhoto(api, "astronaut.png", service)
  })

  it("infers class, confidence, subject and model off the request path; the public document is unchanged", async () => {
    let shown: Json
    await waitFor(
      async () => {
        shown = await adminOk(service.env, "media", "show", media.id)
        return shown.inferred !== null
      },
      60_000,
      "the inference of the uploaded photo"
    )
    expect(shown).toMatchObject({ object: "media", id: media.id, width: 512, height: 512 })
    expect(shown.inferred).toMatchObject({ image_class: "person", model: expect.stringContaining("blazeface") })
    expect(shown.inferred.confidence).toBeGreaterThanOrEqual(0.45)
    // the astronaut's face is around (227, 128) in the 512 px photo
    const s = shown.inferred.subject
    expect(s.x).toBeLessThanOrEqual(227)
    expect(s.x + s.width).toBeGreaterThanOrEqual(227)
    expect(s.y).toBeLessThanOrEqual(128)
    expect(s.y + s.height).toBeGreaterThanOrEqual(128)

    // the public document is exactly the contract's
    const list = await (await api.get("/api/v1/media")).json()
    const doc = list.data.find((m: { readonly id: string }) => m.id === media.id)
    expect(Object.keys(doc).sort()).toEqual(mediaKeys)
  })

  it("a render without image_class uses the inference", async () => {
    const created = await createRender(api, { media_id: media.id, quote: "Framed by what the model saw" })
    const { render } = await pollToEnd(api, created.id, 100_000)
    expect(render.status, JSON.stringify(render)).toBe("completed")
  })

  it("a render with image_class overrides the inferred class", async () => {
    const created = await createRender(api, {
      media_id: media.id,
      quote: "Framed as a landscape",
      image_class: "landscape_nature"
    })
    const { render } = await pollToEnd(api, created.id, 100_000)
    expect(render.status, JSON.stringify(render)).toBe("completed")
  })
})

describe("photo classification without a model", () => {
  it("with the model unavailable, the upload answers, inference stays null and the render still completes", async () => {
    const service = await startService(await makeShared(), {
      RENDER_CONCURRENCY: "1",
      VISION_MODEL_DIR: "/nonexistent/vision-models"
    })
    services.push(service)
    const { secret } = await workspaceWithKey(service.env)
    const api = client(service.baseUrl, secret)
    const media = await uploadPhoto(api, "astronaut.png", service)
    const created = await createRender(api, { media_id: media.id, quote: "No model, still a video" })
    const { render } = await pollToEnd(api, created.id, 200_000)
    expect(render.status, JSON.stringify(render)).toBe("completed")
    const shown = await adminOk(service.env, "media", "show", media.id)
    expect(shown.inferred).toBeNull()
    expect(service.output()).toContain("not classified")
  })
})
