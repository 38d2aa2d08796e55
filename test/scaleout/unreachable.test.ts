import * as fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { inProcessAdmin, keyed } from "../foundation/admin.ts"
import { downloadAndProbe, pollToEnd, usedOf } from "../renders/helpers.ts"
import { expectError } from "../support/limits.ts"
import { type S3Server, startS3Server } from "../support/s3-server.ts"
import { client, makeShared, type Service, startService } from "../support/service.ts"

/**
 * The service on the S3 store (s3rver, a fake of S3; test/support/s3-server.ts), then the store goes
 * away: uploads, downloads and captioned creates are 503 `service_unavailable` with Retry-After (never
 * a 500) and charge nothing; a render already accepted is retried by its runner, then fails with
 * `render_failed` and is refunded.
 */
let s3: S3Server
let service: Service

beforeAll(async () => {
  s3 = await startS3Server({ buckets: ["p2v"] })
  service = await startService(await makeShared(), s3.env("p2v"))
})

afterAll(async () => {
  await service?.stop("SIGKILL")
  await s3?.close().catch(() => {})
})

it(
  "an unreachable object store is 503 on the request path and a refunded render on the runner, never a 500 or a lost charge",
  async () => {
    const ops = inProcessAdmin(service.env)
    const owner = await keyed(ops, "studio")
    await ops.dispose()
    const api = client(service.baseUrl, owner.secret)
    const rocket = new Uint8Array(fs.readFileSync(Path.join(import.meta.dirname, "../fixtures/rocket.jpg")))

    // with the store up: the upload, a captioned render and its download go through S3
    const up = await api.upload(rocket, { filename: "rocket.jpg" })
    expect(up.status).toBe(201)
    const mediaId = (await up.json()).id
    const first = await (await api.postJson("/api/v1/renders", { media_id: mediaId, quote: "Stored elsewhere" })).json()
    expect((await pollToEnd(api, first.id, 180_000)).render.status).toBe("completed")
    await downloadAndProbe(api, first.id)
    const usedBefore = await usedOf(api)

    await s3.close()

    const retryAfter = (res: Response) => {
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
      return res
    }
    await expectError(retryAfter(await api.upload(rocket, { filename: "rocket.jpg" })), 503, "service_unavailable")
    await expectError(retryAfter(await api.get(`/api/v1/renders/${first.id}/download`)), 503, "service_unavailable")
    await expectError(
      retryAfter(await api.postJson("/api/v1/renders", { media_id: mediaId, quote: "Nowhere to put it" })),
      503,
      "service_unavailable"
    )
    expect(await usedOf(api)).toBe(usedBefore)

    // a render without a caption needs no store to be accepted; its runner finds the photo in its
    // scratch cache (fetched for the first render) but cannot store the video: retried, then refunded
    const accepted = await api.postJson("/api/v1/renders", { media_id: mediaId, quote: "" })
    expect(accepted.status).toBe(202)
    const id = (await accepted.json()).id
    expect(await usedOf(api)).toBe(usedBefore + 1)
    const { render } = await pollToEnd(api, id, 180_000)
    expect(render.status).toBe("failed")
    expect(render.error.code).toBe("render_failed")
    expect(await usedOf(api)).toBe(usedBefore)
    expect(service.output()).not.toMatch(/internal_error/)
  },
  400_000
)
