import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { type Admin, inProcessAdmin } from "../foundation/admin.ts"
import { admin, client, makeShared, photo, type Service, startService, waitFor } from "../support/service.ts"

/**
 * The backup drill (docs/operations.md "Backup and restore"): an installation with keys, photos and
 * renders — some completed, some still queued while the backup is made — is backed up by the
 * operator CLI, wiped (its database dropped, its DATA_DIR deleted), and restored into a new database
 * and a new DATA_DIR. The restored installation must be the same one: the rows identical table by
 * table, the keys authenticate, usage and history read the same, videos download byte-identical,
 * and the renders that were waiting complete. Then `admin doctor` on a store broken on purpose.
 */
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex")
// both installations print the same links, so their documents compare as they are
const publicBaseUrl = "http://videos.example.test"
const terminal = new Set(["completed", "failed", "canceled"])

/** Every saved table's rows, as the backup writes them (row_to_json, times in UTC), sorted. */
const tableRows = async (databaseUrl: string, tables: ReadonlyArray<string>) => {
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  await db.query("SET TimeZone = 'UTC'")
  const out: Record<string, Array<string>> = {}
  for (const t of tables) {
    const r = await db.query(`SELECT row_to_json(t)::text AS row FROM "${t}" t`)
    out[t] = r.rows.map((x) => x.row as string).sort()
  }
  await db.end()
  return out
}

const dropDatabase = async (databaseUrl: string) => {
  const name = new URL(databaseUrl).pathname.slice(1)
  const db = new pg.Client({ connectionString: inject("pgAdminUrl") })
  await db.connect()
  await db.query(`DROP DATABASE ${name} WITH (FORCE)`)
  await db.end()
}

/** A report printed by a command that found a problem (exit 1, the report on stdout). */
const report = (r: { readonly stdout: string }) => JSON.parse(r.stdout)

const backupLines = (dir: string, table: string) =>
  fs.readFileSync(Path.join(dir, "database", `${table}.jsonl`), "utf8").split("\n").filter((l) => l !== "")

describe("backup and restore, drilled", () => {
  const services: Array<Service> = []
  let operator: Admin | undefined
  afterAll(async () => {
    await operator?.dispose()
    for (const s of services) await s.stop("SIGKILL")
  })

  it(
    "restores keys, usage, history, videos and waiting renders into a new installation; doctor finds a broken store",
    async () => {
      const env = { RENDER_SECONDS: "1", RENDER_CONCURRENCY: "1", PUBLIC_BASE_URL: publicBaseUrl }
      const first = await makeShared()
      const a = await startService(first, env)
      services.push(a)

      // ---- an installation in use: two workspaces, their keys (one revoked), photos, renders
      // (set up through the CLI's own code in this process; the backup commands run as the CLI binary)
      operator = inProcessAdmin(a.env)
      const adminOk = operator.ok
      const wsX = await adminOk("workspace", "create", "--name", "Acme", "--plan", "studio")
      const wsY = await adminOk("workspace", "create", "--name", "Zeta", "--plan", "starter", "--included", "20")
      const scopes = "media:read,media:write,renders:create,renders:read"
      const keyX = (await adminOk("key", "create", wsX.id, "--scopes", scopes)).secret as string
      const keyY = (await adminOk("key", "create", wsY.id, "--scopes", scopes, "--spend-cap-24h", "50"))
        .secret as string
      const revoked = await adminOk("key", "create", wsX.id, "--scopes", scopes, "--name", "old")
      await adminOk("key", "revoke", revoked.id)
      await operator.dispose()
      operator = undefined
      const apiX = client(a.baseUrl, keyX)
      const apiY = client(a.baseUrl, keyY)
      const upload = async (api: ReturnType<typeof client>, name: string) => {
        const r = await api.upload(photo(name), { filename: name, label: name, tags: ["drill"] })
        expect(r.status).toBe(201)
        return (await r.json()).id as string
      }
      const photoX1 = await upload(apiX, "rocket.jpg")
      const photoX2 = await upload(apiX, "coffee.png")
      const photoY = await upload(apiY, "chelsea.png")
      const render = async (api: ReturnType<typeof client>, mediaId: string, quote: string) => {
        const r = await api.postJson("/api/v1/renders", { media_id: mediaId, quote, metadata: { z: 1, a: quote } })
        const body = await r.json()
        expect(r.status, JSON.stringify(body)).toBe(202)
        return body.id as string
      }
      const done = [
        { api: "x", id: await render(apiX, photoX1, "Ad astra") },
        { api: "x", id: await render(apiX, photoX2, "Coffee first") },
        { api: "y", id: await render(apiY, photoY, "Curious cat") }
      ]
      const on = (base: string) => ({ x: client(base, keyX), y: client(base, keyY) })
      const docOf = async (base: string, r: { api: string; id: string }) =>
        (await on(base)[r.api as "x" | "y"].get(`/api/v1/renders/${r.id}`)).json()
      for (const r of done) {
        await waitFor(async () => terminal.has((await docOf(a.baseUrl, r)).status), 120_000, `render ${r.id}`)
        expect((await docOf(a.baseUrl, r)).status).toBe("completed")
      }
      const videoOf = async (base: string, r: { api: string; id: string }) => {
        const res = await on(base)[r.api as "x" | "y"].get(`/api/v1/renders/${r.id}/download`)
        expect(res.status).toBe(200)
        return new Uint8Array(await res.arrayBuffer())
      }
      const videos = new Map<string, string>()
      for (const r of done) videos.set(r.id, sha256(await videoOf(a.baseUrl, r)))

      // ---- more renders, and the backup made while they wait and run (one at a time)
      const waiting = [
        { api: "x", id: await render(apiX, photoX1, "Still queued") },
        { api: "x", id: await render(apiX, photoX2, "Queued too") },
        { api: "y", id: await render(apiY, photoY, "Waiting") },
        { api: "x", id: await render(apiX, photoX1, "Last in line") }
      ]
      const dir = Path.join(fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-backup-")), "backup")
      const created = await admin(a.env, "backup", "create", dir, "--with-secrets", "true")
      expect(created.code, created.stderr).toBe(0)
      // what the users saw at that moment (charges are made at creation, so usage no longer moves)
      const seen = {
        usageX: await (await apiX.get("/api/v1/usage")).json(),
        usageY: await (await apiY.get("/api/v1/usage")).json(),
        mediaX: await (await apiX.get("/api/v1/media?limit=100")).json(),
        mediaY: await (await apiY.get("/api/v1/media?limit=100")).json(),
        done: await Promise.all(done.map((r) => docOf(a.baseUrl, r)))
      }
      await a.stop("SIGKILL")

      const backup = created.json
      expect(backup).toMatchObject({ object: "backup", ok: true, directory: dir, rows_without_blobs: [] })
      expect(backup.secrets).toEqual(expect.arrayContaining(["api-key-hash.key"]))
      const manifest = JSON.parse(fs.readFileSync(Path.join(dir, "manifest.json"), "utf8"))
      const counts = Object.fromEntries(
        manifest.tables.map((t: { readonly name: string; readonly rows: number }) => [t.name, t.rows])
      )
      expect(counts).toMatchObject({ workspaces: 2, api_keys: 3, media: 3, renders: 7 })
      expect(Object.keys(counts)).not.toContain("cluster_runners")
      // the snapshot caught renders still waiting (one runs at a time), each with its stored Start
      const statusInBackup = new Map(backupLines(dir, "renders").map((l) => JSON.parse(l)).map((r) => [r.id, r.status]))
      const pendingInBackup = waiting.filter((r) => !terminal.has(statusInBackup.get(r.id)))
      expect(pendingInBackup.length, JSON.stringify([...statusInBackup])).toBeGreaterThan(0)
      // every blob a row names is in the backup, hashed: 3 photos, the completed renders' videos and posters, captions
      const named = new Set<string>()
      for (const l of backupLines(dir, "media")) named.add(JSON.parse(l).blob_key)
      for (const l of backupLines(dir, "renders")) {
        const r = JSON.parse(l)
        for (const k of [r.caption_blob_key, r.asset_blob_key, r.poster_blob_key]) if (k !== null) named.add(k)
      }
      expect(manifest.blobs.items.map((b: { readonly key: string }) => b.key).sort()).toEqual([...named].sort())
      for (const b of manifest.blobs.items) {
        const bytes = fs.readFileSync(Path.join(dir, "blobs", b.key))
        expect([bytes.length, sha256(bytes)]).toEqual([b.bytes, b.sha256])
      }
      for (const r of done) {
        const key = manifest.blobs.items.find((b: { readonly key: string; readonly sha256: string }) =>
          b.key === `renders/${r.id}.mp4`
        )
        expect(key?.sha256).toBe(videos.get(r.id))
      }

      const verified = await admin({ PATH: process.env.PATH ?? "" }, "backup", "verify", dir)
      expect(verified.code, verified.stderr).toBe(0)
      expect(verified.json).toMatchObject({ ok: true, problems: [], rows: backup.rows, blobs: backup.blobs })

      // ---- wipe everything
      await dropDatabase(first.databaseUrl)
      fs.rmSync(first.dataDir, { recursive: true, force: true })

      // ---- restore into a new database and a new DATA_DIR
      const second = await makeShared()
      const restoreEnv = {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        DATABASE_URL: second.databaseUrl,
        DATA_DIR: second.dataDir
      }
      const restored = await admin(restoreEnv, "backup", "restore", dir)
      expect(restored.code, restored.stderr).toBe(0)
      expect(restored.json).toMatchObject({
        object: "backup_restore",
        rows: backup.rows,
        blobs: backup.blobs,
        migrations_at_next_start: []
      })
      // the rows are the rows that were saved, table by table
      const restoredRows = await tableRows(
        second.databaseUrl,
        manifest.tables.map((t: { readonly name: string }) => t.name)
      )
      for (const t of manifest.tables) expect(restoredRows[t.name], t.name).toEqual(backupLines(dir, t.name).sort())
      // a second restore into it is refused, before anything is written
      const again = await admin(restoreEnv, "backup", "restore", dir)
      expect(again.code).toBe(1)
      expect(again.json.error).toMatchObject({ code: "validation_failed" })
      expect(again.json.error.message).toContain("restore into a new, empty database")

      const b = await startService(second, env)
      services.push(b)
      const apiX2 = client(b.baseUrl, keyX)
      const apiY2 = client(b.baseUrl, keyY)
      // keys authenticate (the revoked one stays revoked); usage and history read the same
      expect(await (await apiX2.get("/api/v1/usage")).json()).toEqual(seen.usageX)
      expect(await (await apiY2.get("/api/v1/usage")).json()).toEqual(seen.usageY)
      const refused = await client(b.baseUrl, revoked.secret).get("/api/v1/usage")
      expect(refused.status).toBe(401)
      expect((await refused.json()).error.code).toBe("api_key_revoked")
      expect(await (await apiX2.get("/api/v1/media?limit=100")).json()).toEqual(seen.mediaX)
      expect(await (await apiY2.get("/api/v1/media?limit=100")).json()).toEqual(seen.mediaY)
      expect(await Promise.all(done.map((r) => docOf(b.baseUrl, r)))).toEqual(seen.done)
      expect((await apiX2.get(`/api/v1/media/${photoX1}/preview`)).status).toBe(200)
      // videos download byte-identical
      for (const r of done) expect(sha256(await videoOf(b.baseUrl, r))).toBe(videos.get(r.id))
      // the renders that were waiting complete, charged once (usage unchanged)
      for (const r of waiting) {
        await waitFor(
          async () => terminal.has((await docOf(b.baseUrl, r)).status),
          180_000,
          `render ${r.id} after restore`
        )
        expect((await docOf(b.baseUrl, r)).status, b.output().slice(-2000)).toBe("completed")
        expect((await videoOf(b.baseUrl, r)).byteLength).toBeGreaterThan(1000)
      }
      expect(await (await apiX2.get("/api/v1/usage")).json()).toEqual(seen.usageX)
      expect(await (await apiY2.get("/api/v1/usage")).json()).toEqual(seen.usageY)
      console.log(
        `drill: ${backup.rows} rows in ${manifest.tables.length} tables (${
          manifest.tables.filter((t: { readonly name: string; readonly rows: number }) => t.rows > 0).map((
            t: { readonly name: string; readonly rows: number }
          ) => `${t.name} ${t.rows}`).join(", ")
        }), ${backup.blobs.count} blobs / ${backup.blobs.bytes} bytes hashed and verified; ` +
          `${pendingInBackup.length} of ${waiting.length} renders were waiting in the backup and completed after the restore`
      )

      // ---- doctor: a healthy store, then one broken on purpose
      const healthy = await admin(b.env, "doctor")
      expect(healthy.code, healthy.stderr).toBe(0)
      expect(healthy.json).toMatchObject({ object: "doctor", ok: true, rows_without_blobs: [], blobs_without_rows: [] })
      const lost = done[0].id
      fs.rmSync(Path.join(second.dataDir, "blobs", "renders", `${lost}.mp4`))
      const orphan = `media/${wsX.id}/not-a-row`
      fs.writeFileSync(Path.join(second.dataDir, "blobs", orphan), "left behind")
      const broken = await admin(b.env, "doctor", "--min-age-seconds", "0")
      console.log(`doctor on a broken store: ${broken.stdout}`)
      expect(broken.code).toBe(1)
      expect(report(broken)).toMatchObject({
        object: "doctor",
        ok: false,
        rows_without_blobs: [{ table: "renders", id: lost, column: "asset_blob_key", key: `renders/${lost}.mp4` }],
        blobs_without_rows: [{ key: orphan, bytes: 11 }]
      })
      // by default a blob younger than a minute is an upload that may still be under way: counted, not judged
      const patient = await admin(b.env, "doctor")
      expect(patient.code).toBe(1)
      expect(report(patient)).toMatchObject({ blobs_without_rows: [], recent_blobs_not_judged: 1 })
      expect(report(patient).rows_without_blobs).toHaveLength(1)

      // ---- a backup changed after it was made does not verify
      const video = Path.join(dir, "blobs", "renders", `${lost}.mp4`)
      fs.appendFileSync(video, "x")
      const tampered = await admin({ PATH: process.env.PATH ?? "" }, "backup", "verify", dir)
      expect(tampered.code).toBe(1)
      expect(report(tampered).problems).toEqual([
        `blob renders/${lost}.mp4: ${fs.statSync(video).size} bytes, the manifest says ${fs.statSync(video).size - 1}`
      ])
    },
    600_000
  )
})
