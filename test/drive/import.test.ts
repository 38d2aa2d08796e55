import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { animatedGif, svg, text } from "../foundation/photos.ts"
import type { DriveEmulator } from "../support/drive-emulator.ts"
import { expectError, type Json } from "../support/limits.ts"
import { makeShared, type Service, type Shared } from "../support/service.ts"
import {
  allMedia,
  type Api,
  connectedWorkspace,
  createImport,
  driveEmulatorFor,
  image,
  MiB,
  paddedPng,
  reservePort,
  startDriveService,
  waitForImport
} from "./support.ts"

const creationKeys = ["counts", "created_at", "folder_id", "id", "object", "provider", "status"]
const fullKeys = [...creationKeys, "completed_at", "items", "stopped_reason"].sort()

/** POST /media/import answered 202 with the creation shape: pending, zero counts. */
const accepted = async (r: Response, folderId: string) => {
  const text = await r.text()
  expect(r.status, text).toBe(202)
  const body = JSON.parse(text)
  expect(Object.keys(body).sort()).toEqual(creationKeys)
  expect(body).toMatchObject({
    object: "media_import",
    status: "pending",
    provider: "cloud_drive",
    folder_id: folderId,
    counts: { discovered: 0, imported: 0, skipped: 0, failed: 0 }
  })
  expect(body.id).toMatch(/^imp_[0-9A-Za-z]{20,}$/)
  expect(Number.isNaN(Date.parse(body.created_at))).toBe(false)
  return body
}

const importFolder = async (api: Api, folderId: string, timeoutMs?: number) => {
  const created = await accepted(await createImport(api, folderId), folderId)
  const done = await waitForImport(api, created.id, timeoutMs)
  expect(Object.keys(done).sort()).toEqual(fullKeys)
  expect(done.id).toBe(created.id)
  expect(done.created_at).toBe(created.created_at)
  expect(Date.parse(done.completed_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at))
  const { imported, skipped, failed } = done.counts
  expect(imported + skipped + failed).toBe(done.items.length)
  return done
}

/** Items reduced to what the spec fixes, keys that do not apply absent. */
const shapeOf = (items: ReadonlyArray<Json>) =>
  items.map((i) => {
    expect(Object.keys(i).sort()).toEqual(
      i.status === "imported"
        ? ["media_id", "name", "source_ref", "status"]
        : ["name", "reason", "source_ref", "status"]
    )
    return i.status === "imported"
      ? { name: i.name, status: i.status }
      : { name: i.name, status: i.status, reason: i.reason }
  })

describe("bulk import from a drive folder", () => {
  let emulator: DriveEmulator
  let shared: Shared
  let service: Service
  /** connected workspaces, made up front */
  let main: Awaited<ReturnType<typeof connectedWorkspace>>
  let tight: Awaited<ReturnType<typeof connectedWorkspace>>
  const budgetFileBytes = 40_000

  beforeAll(async () => {
    const at = await reservePort()
    emulator = await driveEmulatorFor(at.baseUrl)
    shared = await makeShared()
    service = await startDriveService(shared, emulator, at)
    ;[main, tight] = await Promise.all([
      connectedWorkspace(service, emulator),
      // room for two of the five files below, not three
      connectedWorkspace(service, emulator, {
        workspaceArgs: ["--storage-budget-bytes", String(Math.floor(budgetFileBytes * 2.5))]
      })
    ])
  })

  afterAll(async () => {
    const code = await service?.stop()
    await emulator?.close()
    expect(code, service?.output().slice(-4000)).toBe(0)
  })

  beforeEach(() => emulator.resetFaults())

  it("imports a mixed folder: images in, the rest skipped or failed with its reason, in name order", async () => {
    const folder = emulator.addFolder({ name: "Mixed" })
    const add = (name: string, mimeType: string, bytes?: Uint8Array, size?: number) =>
      emulator.addFile({
        name,
        parent: folder,
        mimeType,
        ...(bytes === undefined ? {} : { bytes }),
        ...(size === undefined ? {} : { size })
      })
    // added out of order: the drive lists newest first, the import goes by name
    const broken = add("09-broken.png", "image/png", await image("png", 9))
    add("05-notes.txt", "text/plain", text)
    add("03-photo.webp", "image/webp", await image("webp", 3))
    add("06-vector.svg", "image/svg+xml", svg)
    add("01-photo.jpg", "image/jpeg", await image("jpeg", 1))
    add("08-huge.jpg", "image/jpeg", undefined, 15 * MiB + 1)
    add("04-anim.gif", "image/gif", new Uint8Array(await animatedGif(20, 12)))
    add("07-fake.jpg", "image/jpeg", text) // the drive says JPEG, the bytes say otherwise
    add("02-photo.png", "image/png", await image("png", 2))
    add("10-doc", "application/vnd.google-apps.document")
    emulator.addFolder({ name: "11-sub", parent: folder }) // sub-folders are neither items nor counted
    emulator.addFile({
      name: "00-trashed.png",
      parent: folder,
      mimeType: "image/png",
      bytes: await image("png"),
      trashed: true
    })
    // every download attempt of this file fails
    emulator.failNext({ status: 500, count: 50, path: broken })

    const done = await importFolder(main.api, folder)
    expect(done).toMatchObject({
      status: "partial",
      stopped_reason: null,
      counts: { discovered: 10, imported: 4, skipped: 4, failed: 2 }
    })
    expect(shapeOf(done.items)).toEqual([
      { name: "01-photo.jpg", status: "imported" },
      { name: "02-photo.png", status: "imported" },
      { name: "03-photo.webp", status: "imported" },
      { name: "04-anim.gif", status: "imported" },
      { name: "05-notes.txt", status: "skipped", reason: "unsupported_media_type" },
      { name: "06-vector.svg", status: "skipped", reason: "unsupported_media_type" },
      { name: "07-fake.jpg", status: "skipped", reason: "unsupported_media_type" },
      { name: "08-huge.jpg", status: "failed", reason: "payload_too_large" },
      { name: "09-broken.png", status: "failed", reason: "download_failed" },
      { name: "10-doc", status: "skipped", reason: "unsupported_media_type" }
    ])
    for (const item of done.items) expect(emulator.item(item.source_ref)?.name).toBe(item.name)
    // the drive type decides first: text, documents and over-size files are never downloaded
    const downloaded = new Set(emulator.downloads.map((d) => emulator.item(d.fileId)?.name))
    for (const name of ["05-notes.txt", "08-huge.jpg", "10-doc"]) expect(downloaded.has(name)).toBe(false)
    // the failing download was retried before it was given up
    expect(emulator.requests.filter((r) => r.path.endsWith(broken) && r.fault).length).toBeGreaterThan(1)

    // imported media are in the library, labelled with the file name, no tags
    const media = await allMedia(main.api)
    const byId = new Map(media.map((m) => [m.id, m]))
    const types: Record<string, string> = {
      "01-photo.jpg": "image/jpeg",
      "02-photo.png": "image/png",
      "03-photo.webp": "image/webp",
      "04-anim.gif": "image/gif"
    }
    for (const item of done.items.filter((i: { readonly status: string }) => i.status === "imported")) {
      expect(byId.get(item.media_id)).toMatchObject({ label: item.name, tags: [], mime_type: types[item.name] })
    }
    expect(media.length).toBe(4)
  })

  it("skips everything already imported on a re-import; name order is by code point", async () => {
    const folder = emulator.addFolder({ name: "Again" })
    for (const [i, name] of ["c.png", "a.png", "B.png"].entries()) {
      emulator.addFile({ name, parent: folder, mimeType: "image/png", bytes: await image("png", 20 + i) })
    }
    const before = (await allMedia(main.api)).length
    const first = await importFolder(main.api, folder)
    expect(first).toMatchObject({
      status: "completed",
      stopped_reason: null,
      counts: { discovered: 3, imported: 3, skipped: 0, failed: 0 }
    })
    expect(first.items.map((i: { readonly name: string }) => i.name)).toEqual(["B.png", "a.png", "c.png"])
    expect((await allMedia(main.api)).length).toBe(before + 3)

    const second = await importFolder(main.api, folder)
    expect(second.id).not.toBe(first.id)
    expect(second).toMatchObject({
      status: "completed",
      stopped_reason: null,
      counts: { discovered: 3, imported: 0, skipped: 3, failed: 0 }
    })
    expect(shapeOf(second.items)).toEqual(
      ["B.png", "a.png", "c.png"].map((name) => ({ name, status: "skipped", reason: "already_imported" }))
    )
    expect(second.items.map((i: { readonly source_ref: string }) => i.source_ref)).toEqual(
      first.items.map((i: { readonly source_ref: string }) => i.source_ref)
    )
    expect((await allMedia(main.api)).length).toBe(before + 3)
  })

  it("stops at 500 files: partial, file_limit_reached, the first 500 by name considered", async () => {
    const folder = emulator.addFolder({ name: "Many" })
    const bytes = await image("png", 5, 8, 8)
    // added in reverse so the drive's own order is not the name order
    for (let i = 509; i >= 0; i--) {
      emulator.addFile({ name: `img-${String(i).padStart(3, "0")}.png`, parent: folder, mimeType: "image/png", bytes })
    }
    const before = (await allMedia(main.api)).length
    const done = await importFolder(main.api, folder, 120_000)
    expect(done).toMatchObject({
      status: "partial",
      stopped_reason: "file_limit_reached",
      counts: { discovered: 510, imported: 500, skipped: 0, failed: 0 }
    })
    expect(done.items.length).toBe(500)
    expect(done.items[0].name).toBe("img-000.png")
    expect(done.items[499].name).toBe("img-499.png")
    expect(new Set(done.items.map((i: { readonly media_id: string }) => i.media_id)).size).toBe(500)
    expect((await allMedia(main.api)).length).toBe(before + 500)
  })

  it("stops before the file that would cross the storage budget: partial, storage_budget_exceeded", async () => {
    const folder = emulator.addFolder({ name: "Budget" })
    for (let i = 1; i <= 5; i++) {
      emulator.addFile({
        name: `p${i}.png`,
        parent: folder,
        mimeType: "image/png",
        bytes: await paddedPng(budgetFileBytes)
      })
    }
    emulator.addFile({ name: "p6.txt", parent: folder, mimeType: "text/plain", bytes: text })
    const done = await importFolder(tight.api, folder)
    expect(done).toMatchObject({
      status: "partial",
      stopped_reason: "storage_budget_exceeded",
      counts: { discovered: 6, imported: 2, skipped: 0, failed: 0 }
    })
    // the file that did not fit and everything after it have no item
    expect(shapeOf(done.items)).toEqual([{ name: "p1.png", status: "imported" }, {
      name: "p2.png",
      status: "imported"
    }])
    expect((await allMedia(tight.api)).length).toBe(2)
  })

  it("retries rate-limited provider calls (429, 403 rate limit) and still completes", async () => {
    const folder = emulator.addFolder({ name: "Throttled" })
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      ids.push(
        emulator.addFile({
          name: `t${i}.jpg`,
          parent: folder,
          mimeType: "image/jpeg",
          bytes: await image("jpeg", 40 + i)
        })
      )
    }
    // the folder check at creation, the listing, and two downloads are throttled
    emulator.failNext({ status: 429, count: 2, path: folder })
    emulator.failNext({ status: 403, count: 1, path: /^\/drive\/v3\/files$/ })
    emulator.failNext({ status: 429, count: 2, path: ids[0] })
    emulator.failNext({ status: 403, reason: "rateLimitExceeded", count: 2, path: ids[2] })
    const done = await importFolder(main.api, folder)
    expect(done).toMatchObject({
      status: "completed",
      stopped_reason: null,
      counts: { discovered: 3, imported: 3, skipped: 0, failed: 0 }
    })
    expect(emulator.requests.filter((r) => r.fault).length).toBe(7)
  })

  it("Idempotency-Key: the same key and body give the same import in its current state; another body is 409", async () => {
    const folder = emulator.addFolder({ name: "Once" })
    emulator.addFile({ name: "one.png", parent: folder, mimeType: "image/png", bytes: await image("png", 60) })
    const key = { "idempotency-key": `import-${Date.now()}` }
    const created = await accepted(await createImport(main.api, folder, key), folder)
    await waitForImport(main.api, created.id)

    const replayed = await createImport(main.api, folder, key)
    expect(replayed.status).toBe(202)
    expect(replayed.headers.get("idempotency-replayed")).toBe("true")
    const body = await replayed.json()
    expect(Object.keys(body).sort()).toEqual(creationKeys)
    expect(body).toMatchObject({
      id: created.id,
      created_at: created.created_at,
      status: "completed",
      counts: { discovered: 1, imported: 1 }
    })

    await expectError(
      await createImport(main.api, emulator.addFolder({ name: "Twice" }), key),
      409,
      "idempotency_conflict"
    )
    // the same key on another endpoint is another record
    expect((await main.api.postJson("/api/v1/renders", { media_id: "not-a-uuid" }, key)).status).toBe(422)
  })

  it("validates the body strictly and reports unknown imports as 404", async () => {
    const folder = emulator.addFolder({ name: "Strict" })
    const post = (body: unknown) => main.api.postJson("/api/v1/media/import", body)
    await expectError(
      await post({ provider: "cloud_drive", folder_id: folder, recursive: true }),
      422,
      "validation_failed"
    )
    await expectError(await post({ provider: "cloud_drive", folder_id: folder, extra: 1 }), 422, "validation_failed")
    await expectError(await post({ provider: "dropbox", folder_id: folder }), 422, "validation_failed")
    await expectError(
      await post({ provider: "cloud_drive", folder_id: `https://drive.google.com/drive/folders/${folder}` }),
      422,
      "validation_failed"
    )
    await expectError(await post({ provider: "cloud_drive" }), 422, "validation_failed")
    await expectError(await main.api.postJson("/api/v1/media/import", "{not json"), 400, "invalid_request")
    const plain = await accepted(await post({ provider: "cloud_drive", folder_id: folder, recursive: false }), folder)

    await expectError(await main.api.get("/api/v1/media/imports/imp_000000000000000000000000"), 404, "import_not_found")
    await expectError(await main.api.get("/api/v1/media/imports/not-an-import"), 404, "import_not_found")
    // another workspace's import is indistinguishable from an unknown one
    const mine = await accepted(await post({ provider: "cloud_drive", folder_id: folder }), folder)
    await expectError(await tight.api.get(`/api/v1/media/imports/${mine.id}`), 404, "import_not_found")
    // an empty folder completes with nothing to do
    for (const id of [plain.id, mine.id]) {
      expect(await waitForImport(main.api, id)).toMatchObject({
        status: "completed",
        stopped_reason: null,
        items: [],
        counts: { discovered: 0 }
      })
    }
  })

  it("fails an import whose folder went away after it was accepted", async () => {
    const folder = emulator.addFolder({ name: "Vanishing" })
    emulator.addFile({ name: "v.png", parent: folder, mimeType: "image/png", bytes: await image("png", 70) })
    // the check at creation reads the folder itself; the import's listing then finds it gone
    emulator.failNext({ status: 404, reason: "notFound", count: 1, path: /^\/drive\/v3\/files$/ })
    const created = await accepted(await createImport(main.api, folder), folder)
    const done = await waitForImport(main.api, created.id)
    expect(done).toMatchObject({
      status: "failed",
      stopped_reason: "unknown_folder",
      items: [],
      counts: { discovered: 0, imported: 0, skipped: 0, failed: 0 }
    })
  })
})
