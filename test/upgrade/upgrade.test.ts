import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { reservePort, waitForImport } from "../drive/support.ts"
import { type DriveEmulator, startDriveEmulator } from "../support/drive-emulator.ts"
import type { Json } from "../support/limits.ts"
import { client, makeDatabase, root, type Service, startService } from "../support/service.ts"

/**
 * An installation of release 0.1.0 stopped hard mid-work (test/fixtures/upgrade/0.1.0, made by
 * make-fixture.ts on that release: its database as SQL, its DATA_DIR, and what its users knew),
 * upgraded in place: the current code starts on it and must carry on as if nothing happened.
 */
const fixture = Path.join(root, "test/fixtures/upgrade/0.1.0")
const expected = JSON.parse(fs.readFileSync(Path.join(fixture, "expected.json"), "utf8"))

/** Loads the dump into a new database (psql's own commands, which need psql, are left out). */
const restore = async (databaseUrl: string) => {
  const sql = fs.readFileSync(Path.join(fixture, "database.sql"), "utf8")
    .split("\n")
    .filter((line) => !line.startsWith("\\"))
    .join("\n")
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  await db.query(sql)
  await db.end()
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/**
 * The fixture was stopped when it was made; the run is later. Every time it holds moves forward so
 * that it stopped a second ago, as an upgrade does: the billing cycle, the 24 h spend-cap window, the
 * 24 h idempotency records and the renders' time budget stand as they stood (the users' view of those
 * times is shifted alike). Whole milliseconds, so the documents' times shift exactly.
 */
let shiftMs = 0
const shiftTimes = async (databaseUrl: string) => {
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  const last = await db.query("SELECT max(created_at) AS at FROM renders")
  shiftMs = Math.max(0, Date.now() - 1000 - (last.rows[0].at as Date).getTime())
  const columns = await db.query(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = 'public' AND data_type = 'timestamp with time zone'`
  )
  for (const { table_name, column_name } of columns.rows) {
    await db.query(
      `UPDATE "${table_name}" SET "${column_name}" = "${column_name}" + $1 * interval '1 millisecond'`,
      [shiftMs]
    )
  }
  await db.end()
}
const isoTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** A document as the users saw it, its times shifted as the database's were and its links on the new origin. */
const seenNow = (doc: unknown, origin: string): unknown =>
  typeof doc === "string"
    ? isoTime.test(doc)
      ? new Date(Date.parse(doc) + shiftMs).toISOString()
      : doc.replace(/^http:\/\/127\.0\.0\.1:\d+/, origin)
    : Array.isArray(doc)
    ? doc.map((d) => seenNow(d, origin))
    : doc !== null && typeof doc === "object"
    ? Object.fromEntries(Object.entries(doc).map(([k, v]) => [k, seenNow(v, origin)]))
    : doc

describe("upgrading an installation of release 0.1.0 in place", () => {
  let emulator: DriveEmulator | undefined
  let service: Service | undefined

  afterAll(async () => {
    await service?.stop("SIGKILL")
    await emulator?.close()
  })

  it("keeps keys, usage, history and videos, and finishes the work that was waiting", async () => {
    const databaseUrl = await makeDatabase()
    await restore(databaseUrl)
    await shiftTimes(databaseUrl)
    const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-upgrade-"))
    const untar = spawnSync("tar", ["-xzf", Path.join(fixture, "data.tar.gz"), "-C", dataDir])
    expect(untar.status, String(untar.stderr)).toBe(0)

    // the drive as it was: same client, same folder and files, the stored grant still good
    emulator = await startDriveEmulator({
      clientId: expected.drive.client_id,
      clientSecret: expected.drive.client_secret
    })
    const folder = emulator.addFolder({ name: expected.drive.folder.name, id: expected.drive.folder.id })
    for (const f of expected.drive.files) {
      emulator.addFile({
        id: f.id,
        name: f.name,
        parent: folder,
        mimeType: f.mime_type,
        bytes: new Uint8Array(Buffer.from(f.bytes_base64, "base64"))
      })
    }
    for (const token of expected.drive.refresh_tokens) emulator.grantRefreshToken(token, expected.drive.scope)

    const at = await reservePort()
    service = await startService({ databaseUrl, dataDir }, {
      ...emulator.env(),
      DRIVE_RETRY_BASE_MS: "10",
      PORT: String(at.port),
      PUBLIC_BASE_URL: at.baseUrl
    })
    const as = (key: string) => client(service!.baseUrl, expected.keys[key])
    const main = as("main")
    const usage = {
      main: seenNow(expected.usage.main, service.baseUrl),
      other: seenNow(expected.usage.other, service.baseUrl)
    }

    // keys: the live ones authenticate, the revoked one stays revoked
    expect((await main.get("/api/v1/usage")).status).toBe(200)
    expect((await as("other").get("/api/v1/usage")).status).toBe(200)
    const refused = await as("revoked").get("/api/v1/usage")
    expect(refused.status).toBe(401)

    // usage as the users last saw it
    expect(await (await main.get("/api/v1/usage")).json()).toEqual(usage.main)
    expect(await (await as("other").get("/api/v1/usage")).json()).toEqual(usage.other)

    // history: completed renders read the same and their videos are byte-identical; the canceled one stays canceled
    for (const c of expected.completed) {
      const api = as(c.key)
      const doc = await (await api.get(`/api/v1/renders/${c.render_id}`)).json()
      expect(doc).toEqual(seenNow(c.document, service.baseUrl))
      const video = await api.get(`/api/v1/renders/${c.render_id}/download`)
      expect(video.status).toBe(200)
      expect(sha256(new Uint8Array(await video.arrayBuffer()))).toBe(c.sha256)
    }
    const canceled = await (await as(expected.canceled.key).get(`/api/v1/renders/${expected.canceled.render_id}`))
      .json()
    expect(canceled).toMatchObject({ status: "canceled", error: { code: "render_canceled" } })
    const mediaIds = (await (await main.get("/api/v1/media?limit=100")).json()).data.map((m: { readonly id: string }) =>
      m.id
    )
    for (const id of expected.media) expect(mediaIds).toContain(id)

    // the work that was waiting: every queued or processing render completes
    const deadline = Date.now() + 240_000
    for (const p of expected.pending) {
      let doc: Json
      while (Date.now() < deadline) {
        doc = await (await as(p.key).get(`/api/v1/renders/${p.render_id}`)).json()
        if (doc.status === "completed" || doc.status === "failed" || doc.status === "canceled") break
        await new Promise((r) => setTimeout(r, 250))
      }
      expect(doc?.status, `${p.render_id} (was ${p.status}): ${JSON.stringify(doc)}\n${service.output().slice(-3000)}`)
        .toBe("completed")
      const video = await as(p.key).get(`/api/v1/renders/${p.render_id}/download`)
      expect(video.status).toBe(200)
      expect(video.headers.get("content-type")).toBe("video/mp4")
      await video.arrayBuffer()
    }
    // …and the import in flight finishes, each file imported once
    const done = await waitForImport(main, expected.import.id, 120_000)
    expect(done).toMatchObject({
      status: "completed",
      counts: { discovered: expected.drive.files.length, imported: expected.drive.files.length, skipped: 0, failed: 0 }
    })
    expect(new Set(done.items.map((i: { readonly source_ref: string }) => i.source_ref)).size).toBe(
      expected.drive.files.length
    )

    // none charged twice: usage still what it was, and one charge row per render in the database
    expect(await (await main.get("/api/v1/usage")).json()).toEqual(usage.main)
    expect(await (await as("other").get("/api/v1/usage")).json()).toEqual(usage.other)
    const db = new pg.Client({ connectionString: databaseUrl })
    await db.connect()
    const renders = await db.query("SELECT id FROM renders")
    await db.end()
    const ids = new Set(renders.rows.map((r) => r.id))
    expect(ids.size).toBe(renders.rows.length)
    expect(renders.rows.length).toBe(expected.completed.length + expected.pending.length + 1)

    // and the upgraded installation takes new work
    const photo = expected.media[0]
    const created = await main.postJson("/api/v1/renders", { media_id: photo, quote: "After the upgrade" })
    expect(created.status).toBe(202)
  })
})
