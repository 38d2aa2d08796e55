/**
 * Makes the upgrade fixture: what an installation of the release checked out here leaves behind when
 * it is stopped hard mid-work — its database (as SQL) and its DATA_DIR (secrets and stored files) —,
 * plus what a user of it knew at that moment (expected.json: key secrets, render ids and states,
 * usage, the completed videos' hashes, the import in flight and the drive content behind it).
 * test/upgrade/upgrade.test.ts starts the current code on a copy of it.
 *
 *   node test/upgrade/make-fixture.ts test/fixtures/upgrade/0.1.0
 *
 * Run it on the release's own checkout (after its `npm ci`); it needs the machine's PostgreSQL at
 * 127.0.0.1:5432 (trust auth) and its `pg_dump`. Everything else goes over HTTP and through the
 * operator CLI, as a user's installation would be driven, so the script runs against any release.
 */
import { spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import sharp from "sharp"
import { startDriveEmulator } from "../support/drive-emulator.ts"
import { freePort, waitFor } from "../support/net.ts"

const out = Path.resolve(process.argv[2] ?? "test/fixtures/upgrade/fixture")
const root = Path.resolve(import.meta.dirname, "../..")
const adminUrl = "postgres://postgres@127.0.0.1:5432/postgres"
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const database = `p2v_upgrade_fixture_${Date.now()}`
const admin0 = new pg.Client({ connectionString: adminUrl })
await admin0.connect()
await admin0.query(`CREATE DATABASE ${database}`)
await admin0.end()
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${database}`
const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-upgrade-data-"))

const clientId = "upgrade-fixture-client.apps.googleusercontent.com"
const clientSecret = "upgrade-fixture-client-secret"
const emulator = await startDriveEmulator({ clientId, clientSecret })
const port = await freePort()
const baseUrl = `http://127.0.0.1:${port}`
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  PORT: String(port),
  HOST: "127.0.0.1",
  PUBLIC_BASE_URL: baseUrl,
  DATA_DIR: dataDir,
  DATABASE_URL: databaseUrl,
  RENDER_SECONDS: "1",
  RENDER_CONCURRENCY: "1",
  DRIVE_RETRY_BASE_MS: "10",
  ...emulator.env()
}

const service = spawn(process.execPath, [Path.join(root, "packages/server/src/bin/start.ts")], {
  cwd: root,
  env,
  stdio: ["ignore", "pipe", "pipe"]
})
let log = ""
service.stdout.on("data", (d) => (log += d))
service.stderr.on("data", (d) => (log += d))
await waitFor(async () => (await fetch(`${baseUrl}/readyz`)).status === 200, 90_000, "the service").catch((e) => {
  console.error(log)
  throw e
})

const adminCli = (...args: Array<string>) => {
  const r = spawnSync(process.execPath, [Path.join(root, "packages/server/src/bin/admin.ts"), ...args], {
    cwd: root,
    env,
    encoding: "utf8"
  })
  if (r.status !== 0) throw new Error(`admin ${args.join(" ")}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const api = (secret: string) => {
  const headers = { authorization: `Bearer ${secret}` }
  const json = async (r: Response) => {
    const text = await r.text()
    if (!r.ok) throw new Error(`${r.url}: ${r.status} ${text}`)
    return JSON.parse(text)
  }
  return {
    get: (path: string) => fetch(`${baseUrl}${path}`, { headers }).then(json),
    bytes: (path: string) =>
      fetch(`${baseUrl}${path}`, { headers }).then(async (r) => {
        if (!r.ok) throw new Error(`${path}: ${r.status}`)
        return new Uint8Array(await r.arrayBuffer())
      }),
    post: (path: string, body: unknown, key: string) =>
      fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body)
      }).then(json),
    upload: (bytes: Uint8Array, filename: string, label: string) => {
      const form = new FormData()
      form.append("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), filename)
      form.append("label", label)
      return fetch(`${baseUrl}/api/v1/media`, { method: "POST", headers, body: form }).then(json)
    }
  }
}

const poll = async <A>(what: string, read: () => Promise<A>, done: (x: A) => boolean, ms = 180_000) => {
  let last: A | undefined
  await waitFor(async () => done(last = await read()), ms, what).catch((e) => {
    console.error(JSON.stringify(last), log.slice(-4000))
    throw e
  })
  return last as A
}

const all = "media:read,media:write,renders:create,renders:read"
const studio = adminCli("workspace", "create", "--name", "Upgrade Studio", "--plan", "studio")
const main = adminCli("key", "create", studio.id, "--scopes", all, "--name", "main")
const capped = adminCli("key", "create", studio.id, "--scopes", all, "--name", "capped", "--spend-cap-24h", "5")
const revoked = adminCli("key", "create", studio.id, "--scopes", "renders:read", "--name", "revoked")
adminCli("key", "revoke", revoked.id)
const custom = adminCli("workspace", "create", "--name", "Upgrade Custom", "--plan", "custom", "--included", "7")
const other = adminCli("key", "create", custom.id, "--scopes", all, "--name", "other")

const a = api(main.secret)
const fixtures = Path.join(root, "test/fixtures")
const photos = [
  await a.upload(new Uint8Array(fs.readFileSync(Path.join(fixtures, "rocket.jpg"))), "rocket.jpg", "rocket"),
  await a.upload(new Uint8Array(fs.readFileSync(Path.join(fixtures, "chelsea.png"))), "chelsea.png", "cat")
]
const otherPhoto = await api(other.secret).upload(
  new Uint8Array(fs.readFileSync(Path.join(fixtures, "rocket.jpg"))),
  "rocket.jpg",
  "rocket"
)

// completed renders, one per workspace, and one the operator cancels (refunded)
const render = (secret: string, media: string, quote: string, key: string) =>
  api(secret).post("/api/v1/renders", { media_id: media, quote, metadata: { fixture: key } }, key)
const completed = [
  await render(main.secret, photos[0].id, "Before the upgrade", "fixture-completed-1"),
  await render(other.secret, otherPhoto.id, "Another workspace", "fixture-completed-2")
]
const completedDone: Array<unknown> = []
for (const [i, r] of completed.entries()) {
  const secret = i === 0 ? main.secret : other.secret
  completedDone.push(
    await poll(`render ${r.id}`, () => api(secret).get(`/api/v1/renders/${r.id}`), (x) => x.status === "completed")
  )
}
const videos = await Promise.all(
  completed.map(async (r, i) => ({
    render_id: r.id,
    secret: i === 0 ? main.secret : other.secret,
    sha256: sha256(await api(i === 0 ? main.secret : other.secret).bytes(`/api/v1/renders/${r.id}/download`))
  }))
)
const canceled = await render(capped.secret, photos[1].id, "Canceled by the operator", "fixture-canceled")
adminCli("render", "cancel", canceled.id)

// an import in flight: small PNGs, sent slowly, so the stop lands between files
await fetch(`${baseUrl}/api/v1/integrations/cloud/connect`, { headers: { authorization: `Bearer ${main.secret}` } })
  .then((r) => r.json())
  .then(async (connect) => {
    const redirect = await emulator.consent(connect.authorization_url)
    const callback = await fetch(`${baseUrl}/oauth/cloud_drive/callback?${new URLSearchParams(redirect)}`)
    if (callback.status !== 200) throw new Error(`consent: ${callback.status} ${await callback.text()}`)
  })
const folderId = emulator.addFolder({ name: "Upgrade", id: "1UpgradeFixtureFolder" })
const driveFiles: Array<{ id: string; name: string; mime_type: string; bytes_base64: string }> = []
for (let i = 0; i < 8; i++) {
  const bytes = new Uint8Array(
    await sharp({ create: { width: 48, height: 32, channels: 3, background: { r: 30 * i, g: 140, b: 200 } } }).png()
      .toBuffer()
  )
  const name = `u${i}.png`
  const id = emulator.addFile({ name, parent: folderId, mimeType: "image/png", bytes, id: `1UpgradeFixtureFile${i}` })
  driveFiles.push({ id, name, mime_type: "image/png", bytes_base64: Buffer.from(bytes).toString("base64") })
}
emulator.slowDownloads({ chunkBytes: 16, delayMs: 40 })
const imported = await a.post(
  "/api/v1/media/import",
  { provider: "cloud_drive", folder_id: folderId },
  "fixture-import"
)
await poll(
  `import ${imported.id} under way`,
  () => a.get(`/api/v1/media/imports/${imported.id}`),
  (x) => x.items.length >= 2,
  120_000
)

// renders waiting when the installation stops: one processing, the rest queued
const pending = [
  await render(main.secret, photos[0].id, "Queued before the upgrade 1", "fixture-pending-1"),
  await render(main.secret, photos[1].id, "Queued before the upgrade 2", "fixture-pending-2"),
  await render(capped.secret, photos[0].id, "Queued before the upgrade 3", "fixture-pending-3")
]
await poll(
  "a render processing",
  () => a.get(`/api/v1/renders/${pending[0].id}`),
  (x) => x.status === "processing",
  120_000
)

// what the user saw just before the stop
const usageMain = await a.get("/api/v1/usage")
const usageOther = await api(other.secret).get("/api/v1/usage")
const importSeen = await a.get(`/api/v1/media/imports/${imported.id}`)
const pendingSeen = await Promise.all(pending.map((r) => a.get(`/api/v1/renders/${r.id}`)))
const media = await a.get("/api/v1/media?limit=100")

service.kill("SIGKILL")
await new Promise((r) => service.once("exit", r))
await emulator.close()

fs.rmSync(out, { recursive: true, force: true })
fs.mkdirSync(out, { recursive: true })
const dump = spawnSync(
  "pg_dump",
  ["--inserts", "--no-owner", "--no-privileges", "--no-comments", "-d", databaseUrl],
  { encoding: "utf8", maxBuffer: 1 << 30 }
)
if (dump.status !== 0) throw new Error(`pg_dump: ${dump.stderr}`)
fs.writeFileSync(Path.join(out, "database.sql"), dump.stdout)
const tar = spawnSync("tar", ["-czf", Path.join(out, "data.tar.gz"), "-C", dataDir, "."])
if (tar.status !== 0) throw new Error(`tar: ${tar.stderr}`)

const release = spawnSync("git", ["describe", "--always", "--dirty"], { cwd: root, encoding: "utf8" }).stdout.trim()
fs.writeFileSync(
  Path.join(out, "expected.json"),
  JSON.stringify(
    {
      made_by: `test/upgrade/make-fixture.ts on ${release}`,
      version: JSON.parse(fs.readFileSync(Path.join(root, "package.json"), "utf8")).version,
      keys: { main: main.secret, capped: capped.secret, revoked: revoked.secret, other: other.secret },
      workspaces: { studio: studio.id, custom: custom.id },
      usage: { main: usageMain, other: usageOther },
      completed: videos.map(({ render_id, sha256 }, i) => ({
        render_id,
        key: i === 0 ? "main" : "other",
        sha256,
        document: completedDone[i]
      })),
      canceled: { render_id: canceled.id, key: "capped" },
      pending: pendingSeen.map((r, i) => ({ render_id: r.id, key: i === 2 ? "capped" : "main", status: r.status })),
      media: media.data.map((m: { readonly id: string }) => m.id),
      import: { id: imported.id, seen: importSeen },
      drive: {
        client_id: clientId,
        client_secret: clientSecret,
        refresh_tokens: emulator.issuedTokens().refreshTokens,
        scope: "https://www.googleapis.com/auth/drive.readonly",
        folder: { id: folderId, name: "Upgrade" },
        files: driveFiles
      }
    },
    null,
    2
  ) + "\n"
)
const dropper = new pg.Client({ connectionString: adminUrl })
await dropper.connect()
await dropper.query(`DROP DATABASE ${database}`)
await dropper.end()
fs.rmSync(dataDir, { recursive: true, force: true })
console.log(`fixture written to ${out}:`)
for (const f of fs.readdirSync(out)) console.log(`  ${f} ${fs.statSync(Path.join(out, f)).size} bytes`)
console.log(
  `  pending: ${
    pendingSeen.map((r) => r.status).join(", ")
  }; import: ${importSeen.items.length} of 8 items; usage ${usageMain.aesthetic_quotes.used}`
)
