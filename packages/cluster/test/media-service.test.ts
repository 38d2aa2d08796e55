import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { MediaRepo } from "../src/repositories/MediaRepo.ts"
import { WorkspacesRepo } from "../src/repositories/WorkspacesRepo.ts"
import { MediaService } from "../src/services/MediaService.ts"
import { SystemService } from "../src/services/SystemService.ts"
import { BlobStore } from "../src/storage/BlobStore.ts"
import * as TestServices from "./support/TestServices.ts"

/**
 * The photo library through MediaService, the one upload path the API and the portal share, on the
 * service graph's test layer: real photos in, documents out, the storage budget kept, archived
 * photos gone — with the blobs in memory and no vision model.
 */
const fixture = (name: string) => Path.join(import.meta.dirname, "../../../test/fixtures", name)

/** An upload as the HTTP layer hands it over: a temp file the store takes. */
const upload = (name: string, fields: { readonly label?: string; readonly tags?: ReadonlyArray<string> } = {}) =>
  Effect.sync(() => {
    const path = Path.join(fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-upload-")), name)
    fs.copyFileSync(fixture(name), path)
    return { path, filename: name, source: "api" as const, ...fields }
  })

describe("MediaService on the test service graph", () => {
  it.layer(TestServices.layer)((it) => {
    it.effect("an upload is a media document; the list, the preview and the stored blob agree", () =>
      Effect.gen(function*() {
        const media = yield* MediaService
        const ws = yield* WorkspacesRepo.use((repo) => repo.create("library", { plan: "studio" }))
        const doc = yield* media.upload(ws.id, yield* upload("rocket.jpg", { label: "Rocket", tags: ["space"] }))
        expect(doc).toMatchObject({
          object: "media",
          label: "Rocket",
          tags: ["space"],
          width: null,
          height: null,
          mime_type: "image/jpeg"
        })
        expect(doc.preview_url).toBe(`${TestServices.publicBaseUrl}/api/v1/media/${doc.id}/preview`)

        const page = yield* media.list(ws.id, {})
        expect(page.data.map((m) => m.id)).toEqual([doc.id])
        expect(page.data[0].width).toBeGreaterThan(0)

        const row = yield* MediaRepo.use((repo) => repo.byId(doc.id))
        const stored = row === undefined ? undefined : yield* (yield* BlobStore).getBytes(row.blob_key)
        expect(stored?.byteLength).toBe(doc.file_size_bytes)
        const preview = yield* media.preview(ws.id, doc.id)
        expect(preview.contentType).toBe("image/jpeg")
        expect(preview.bytes.byteLength).toBeGreaterThan(0)
      }))

    it.effect("bytes that are not a photo are refused, and nothing is stored or budgeted", () =>
      Effect.gen(function*() {
        const media = yield* MediaService
        const ws = yield* WorkspacesRepo.use((repo) => repo.create("library", { plan: "studio" }))
        const path = Path.join(fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-upload-")), "notes.png")
        fs.writeFileSync(path, "not a png at all")
        const refused = yield* Effect.flip(media.upload(ws.id, { path, filename: "notes.png", source: "api" }))
        expect(refused.code).toBe("unsupported_media_type")
        expect((yield* media.list(ws.id, {})).data).toEqual([])
        expect((yield* WorkspacesRepo.use((repo) => repo.get(ws.id))).storage_used_bytes).toBe(0)
      }))

    it.effect("a full storage budget refuses the upload; archiving gives the bytes back", () =>
      Effect.gen(function*() {
        const media = yield* MediaService
        const created = yield* WorkspacesRepo.use((repo) => repo.create("library", { plan: "studio" }))
        const first = yield* media.upload(created.id, yield* upload("coffee.png"))
        const ws = yield* WorkspacesRepo.use((repo) =>
          repo.update(created.id, { storageBudgetBytes: first.file_size_bytes })
        )
        const refused = yield* Effect.flip(media.upload(ws.id, yield* upload("chelsea.png")))
        expect(refused.code).toBe("quota_exceeded")
        yield* media.archive(first.id)
        expect((yield* WorkspacesRepo.use((repo) => repo.get(ws.id))).storage_used_bytes).toBe(0)
        expect((yield* media.list(ws.id, {})).data).toEqual([])
        const again = yield* media.upload(ws.id, yield* upload("coffee.png"))
        expect((yield* WorkspacesRepo.use((repo) => repo.get(ws.id))).storage_used_bytes).toBe(again.file_size_bytes)
      }))

    it.effect("ready while the database answers", () =>
      Effect.gen(function*() {
        expect(yield* (yield* SystemService).ready).toEqual({ status: "ready" })
      }))
  })
})
