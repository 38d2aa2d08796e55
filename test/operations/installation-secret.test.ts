import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import {
  admin,
  adminOk,
  client,
  command,
  makeShared,
  root,
  runCommand,
  type Service,
  type Shared,
  startService
} from "../support/service.ts"

/**
 * One installation secret. The database records a fingerprint of the key-hashing
 * secret and of the drive-token key when the installation is first set up; a process holding other
 * secrets — the operator CLI included — exits non-zero with one line naming the variable, instead of
 * minting keys the API refuses (what `key create` with only DATABASE_URL did: it hashed the key with a
 * secret of its own `./data`).
 */
let shared: Shared
let service: Service
let env: Record<string, string>
let db: pg.Client

const tempDir = () => fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-other-"))

/** The CLI binary in `cwd` with exactly `env` (plus PATH and HOME). */
const adminIn = (cwd: string, vars: Record<string, string>, ...args: Array<string>) =>
  runCommand(...command(Path.join(root, "packages/server/src/bin/admin.ts"), args), {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...vars }
  })

/** A service binary run to its end, killed if it is still running after `ms` (it should have refused). */
const runToEnd = async (entry: string, vars: Record<string, string>, ms = 60_000) => {
  const run = runCommand(...command(Path.join(root, `packages/server/src/bin/${entry}.ts`)), {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...vars }
  })
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${entry} still running after ${ms} ms: it did not refuse`)), ms)
  })
  try {
    return await Promise.race([run, late])
  } finally {
    clearTimeout(timer)
  }
}

const fingerprints = async () =>
  Object.fromEntries(
    (await db.query(`SELECT name, value FROM service_settings WHERE name LIKE '%fingerprint' ORDER BY name`)).rows.map((
      r
    ) => [r.name, r.value])
  )

const keyCount = async () => Number((await db.query("SELECT count(*) AS n FROM api_keys")).rows[0].n)

/** A refusal: exit 1, nothing on stdout, one line on stderr (the CLI's `{"error":…}` document). */
const expectOneLineRefusal = (r: { code: number | null; stdout: string; stderr: string }, variable: string) => {
  expect(r.code, r.stdout + r.stderr).toBe(1)
  expect(r.stdout).toBe("")
  const lines = r.stderr.trim().split("\n")
  expect(lines, r.stderr).toHaveLength(1)
  expect(lines[0]).toContain(variable)
  expect(lines[0]).toContain("DATA_DIR")
  return lines[0]
}

let workspaceId: string

beforeAll(async () => {
  shared = await makeShared()
  service = await startService(shared)
  env = service.env
  db = new pg.Client({ connectionString: shared.databaseUrl })
  await db.connect()
  workspaceId = (await adminOk(env, "workspace", "create", "--name", "Acme", "--plan", "studio")).id
})

afterAll(async () => {
  await db?.end()
  expect(await service?.stop()).toBe(0)
})

it("the installation's first process records fingerprints, never the secrets; its CLI mints keys the API takes", async () => {
  const recorded = await fingerprints()
  expect(Object.keys(recorded)).toEqual(["api_key_hash_key_fingerprint", "token_encryption_key_fingerprint"])
  const secretFiles = ["api-key-hash.key", "token-encryption.key"].map((f) =>
    fs.readFileSync(Path.join(shared.dataDir, "secrets", f), "utf8").trim()
  )
  const settings = JSON.stringify((await db.query("SELECT * FROM service_settings")).rows)
  for (const secret of secretFiles) {
    expect(settings).not.toContain(secret)
    expect(settings).not.toContain(Buffer.from(secret, "base64").toString("base64url"))
  }
  const key = await adminOk(env, "key", "create", workspaceId, "--scopes", "media:read")
  expect((await client(service.baseUrl, key.secret).get("/api/v1/media")).status).toBe(200)
})

it("admin key create with only DATABASE_URL set refuses, and mints nothing", async () => {
  const before = await keyCount()
  // a fresh working directory: its ./data is not the installation's
  const cwd = tempDir()
  const r = await adminIn(
    cwd,
    { DATABASE_URL: shared.databaseUrl },
    "key",
    "create",
    workspaceId,
    "--scopes",
    "media:read"
  )
  const line = expectOneLineRefusal(r, "API_KEY_HASH_KEY")
  expect(JSON.parse(line).error.code).toBe("service_unavailable")
  expect(line).not.toContain("p2v_live_")
  expect(await keyCount()).toBe(before)
  // nor did it make secrets of its own there
  expect(fs.existsSync(Path.join(cwd, "data", "secrets", "api-key-hash.key"))).toBe(false)
  console.log(`admin with only DATABASE_URL: exit ${r.code}, stderr: ${r.stderr.trim()}`)
})

it("admin with another DATA_DIR (holding other secrets) refuses", async () => {
  const other = tempDir()
  fs.mkdirSync(Path.join(other, "secrets"))
  fs.writeFileSync(Path.join(other, "secrets", "api-key-hash.key"), randomBytes(32).toString("base64"))
  const before = await keyCount()
  const r = await adminIn(
    other,
    { DATABASE_URL: shared.databaseUrl, DATA_DIR: other },
    "key",
    "create",
    workspaceId,
    "--scopes",
    "media:read"
  )
  expect(expectOneLineRefusal(r, "API_KEY_HASH_KEY")).toContain("is not the installation's key-hashing secret")
  expect(await keyCount()).toBe(before)
})

it("a runner started with another DATA_DIR exits with one line naming the variable", async () => {
  const other = tempDir()
  const runner = await runToEnd("runner", { DATABASE_URL: shared.databaseUrl, DATA_DIR: other })
  expect(runner.code, runner.stdout + runner.stderr).toBe(1)
  expect(runner.stderr.trim().split("\n"), runner.stderr).toHaveLength(1)
  expect(runner.stderr).toContain("API_KEY_HASH_KEY is not set")
  expect(runner.stderr).toContain("DATA_DIR")
  console.log(`runner with another DATA_DIR: exit ${runner.code}, stderr: ${runner.stderr.trim()}`)

  // the key-hashing secret given as a variable, the drive-token key still missing: that one is named
  const hashKey = fs.readFileSync(Path.join(shared.dataDir, "secrets", "api-key-hash.key"), "utf8").trim()
  const second = await runToEnd("runner", {
    DATABASE_URL: shared.databaseUrl,
    DATA_DIR: other,
    API_KEY_HASH_KEY: hashKey
  })
  expect(second.code).toBe(1)
  expect(second.stderr.trim().split("\n"), second.stderr).toHaveLength(1)
  expect(second.stderr).toContain("TOKEN_ENCRYPTION_KEY is not set")
})

it("a runner with the installation's DATA_DIR joins; a database without fingerprints adopts the first process's", async () => {
  const runner = await startService(shared, {}, "runner")
  expect(runner.process.exitCode).toBeNull()
  expect(await runner.stop()).toBe(0)

  // as a database made before fingerprints: the next process records its own secrets' fingerprints
  const recorded = await fingerprints()
  await db.query(`DELETE FROM service_settings WHERE name LIKE '%fingerprint'`)
  const r = await admin(env, "workspace", "show", workspaceId)
  expect(r.code, r.stderr).toBe(0)
  expect(await fingerprints()).toEqual(recorded)
})
