import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import type { DriveEmulator } from "../support/drive-emulator.ts"
import type { Json } from "../support/limits.ts"
import { client, makeShared, type Service } from "../support/service.ts"
import {
  allMedia,
  connectedWorkspace,
  createImport,
  driveEmulatorFor,
  paddedPng,
  reservePort,
  startDriveService,
  waitForImport
} from "./support.ts"

describe("an import whose runner is killed", () => {
  let emulator: DriveEmulator | undefined
  const services: Array<Service> = []

  afterAll(async () => {
    for (const s of services) await s.stop("SIGKILL")
    await emulator?.close()
  })

  it("resumes on the next runner and finishes without importing any file twice", async () => {
    const shared = await makeShared()
    const first = await reservePort()
    const second = await reservePort()
    emulator = await driveEmulatorFor(first.baseUrl, second.baseUrl)
    const service = await startDriveService(shared, emulator, first)
    services.push(service)
    const ws = await connectedWorkspace(service, emulator)

    const files = 12
    const folder = emulator.addFolder({ name: "Crash" })
    for (let i = 0; i < files; i++) {
      emulator.addFile({
        name: `c${String(i).padStart(2, "0")}.png`,
        parent: folder,
        mimeType: "image/png",
        bytes: await paddedPng(192 * 1024)
      })
    }
    // about half a second per file, so the kill lands mid-import
    emulator.slowDownloads({ chunkBytes: 32 * 1024, delayMs: 80 })

    const created = await createImport(ws.api, folder)
    expect(created.status).toBe(202)
    const { id } = await created.json()

    // wait until a few files are in, then kill the process that runs the import
    const deadline = Date.now() + 60_000
    let seen: Json
    while (Date.now() < deadline) {
      seen = await (await ws.api.get(`/api/v1/media/imports/${id}`)).json()
      if (seen.items.length >= 3) break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(seen.status).toBe("pending")
    expect(seen.items.length).toBeGreaterThanOrEqual(3)
    expect(seen.items.length).toBeLessThan(files)
    const exited = new Promise((resolve) => service.process.once("exit", resolve))
    service.process.kill("SIGKILL")
    await exited

    emulator.slowDownloads(null)
    const next = await startDriveService(shared, emulator, second)
    services.push(next)
    const api = client(next.baseUrl, ws.secret)
    const done = await waitForImport(api, id, 100_000)
    expect(done).toMatchObject({
      status: "completed",
      stopped_reason: null,
      counts: { discovered: files, imported: files, skipped: 0, failed: 0 }
    })
    // what was recorded before the kill is kept as it was
    expect(done.items.slice(0, seen.items.length)).toEqual(seen.items)
    expect(done.items.map((i: { readonly name: string }) => i.name)).toEqual(
      Array.from({ length: files }, (_, i) => `c${String(i).padStart(2, "0")}.png`)
    )
    expect(new Set(done.items.map((i: { readonly source_ref: string }) => i.source_ref)).size).toBe(files)
    expect(new Set(done.items.map((i: { readonly media_id: string }) => i.media_id)).size).toBe(files)

    // exactly one media per drive file, each the one its item names
    const media = await allMedia(api)
    expect(media.length).toBe(files)
    expect(new Set(media.map((m) => m.id))).toEqual(
      new Set(done.items.map((i: { readonly media_id: string }) => i.media_id))
    )
    const db = new pg.Client({ connectionString: shared.databaseUrl })
    await db.connect()
    try {
      const rows = await db.query(
        `SELECT source_ref, count(*)::int AS n FROM media WHERE source_ref IS NOT NULL GROUP BY source_ref`
      )
      expect(rows.rows.length).toBe(files)
      expect(rows.rows.every((r) => r.n === 1)).toBe(true)
      const used = await db.query(`SELECT storage_used_bytes FROM workspaces WHERE id = $1`, [ws.workspace.id])
      expect(Number(used.rows[0].storage_used_bytes)).toBe(media.reduce((sum, m) => sum + m.file_size_bytes, 0))
    } finally {
      await db.end()
    }
    expect(await next.stop()).toBe(0)
  })
})
