import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { afterEach, expect, it } from "vitest"
import { makeDatabase, makeShared, root, type Service, type Shared, startService } from "../support/service.ts"

/**
 * Processes started together: what compose, systemd or a Kubernetes rollout does.
 * Five processes (two `api`, three `start`, each a runner, all on one DATABASE_URL) are started at the
 * same instant on an empty database, five times, and every one must answer /readyz; then once more on
 * a database written by release 0.1.0 (test/fixtures/upgrade/0.1.0), which they upgrade together.
 * Without care one of them can die of a concurrent `CREATE TABLE` (`relation
 * "pic2video_migrations" already exists`, `pg_type_typname_nsp_index`); Effect 4.1's migrator catches
 * that race for its history table, and the schema lock (Database.withSchemaLock) serialises the
 * whole set-up — ours, the cluster's tables and the secrets' fingerprints — whatever the migrator does.
 */
const rounds = 5
const entries = ["api", "start", "start", "api", "start"] as const

let running: Array<Service> = []

afterEach(async () => {
  await Promise.all(running.map((s) => s.stop("SIGKILL").catch(() => null)))
  running = []
})

/** Starts every process at once; the failures' output, one entry per process that did not come up. */
const startTogether = async (shared: Shared) => {
  const started = await Promise.allSettled(
    entries.map((entry) => startService(shared, { RENDER_CONCURRENCY: "1" }, entry))
  )
  running = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []))
  // a failure's first line, and the line that says why (the database's error, when there is one)
  return started.flatMap((s, i) => {
    if (s.status === "fulfilled") return []
    const lines = String(s.reason).split("\n")
    const why = lines.find((l) => /already exists|duplicate key|violates|Error:|error:/.test(l)) ??
      lines.slice(1, 6).join(" | ")
    return [`${entries[i]}: ${lines[0]} — ${why.trim()}`]
  })
}

const readyEverywhere = async () => {
  for (const service of running) expect((await fetch(`${service.baseUrl}/readyz`)).status).toBe(200)
}

it(`${entries.length} processes started at once on an empty database all come up, ${rounds} times`, async () => {
  const failures: Array<string> = []
  for (let round = 1; round <= rounds; round++) {
    const began = performance.now()
    const failed = await startTogether(await makeShared())
    console.log(
      `round ${round}: ${running.length}/${entries.length} ready in ${
        ((performance.now() - began) / 1000).toFixed(1)
      } s${failed.length === 0 ? "" : `; failed:\n${failed.join("\n")}`}`
    )
    failures.push(...failed.map((f) => `round ${round}: ${f}`))
    if (failed.length === 0) await readyEverywhere()
    await Promise.all(running.map((s) => s.stop()))
    running = []
  }
  expect(failures).toEqual([])
}, 900_000)

it(`${entries.length} processes started at once on a 0.1.0 database upgrade it together`, async () => {
  const fixture = Path.join(root, "test/fixtures/upgrade/0.1.0")
  const databaseUrl = await makeDatabase()
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  // the dump without psql's own commands, as test/upgrade loads it
  await db.query(
    fs.readFileSync(Path.join(fixture, "database.sql"), "utf8").split("\n").filter((l) => !l.startsWith("\\")).join(
      "\n"
    )
  )
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-older-"))
  expect(spawnSync("tar", ["-xzf", Path.join(fixture, "data.tar.gz"), "-C", dataDir]).status).toBe(0)
  const failed = await startTogether({ databaseUrl, dataDir })
  expect(failed).toEqual([])
  await readyEverywhere()
  const migrated = await db.query("SELECT max(migration_id) AS id FROM public.pic2video_migrations")
  expect(migrated.rows[0].id).toBeGreaterThanOrEqual(6)
  await db.end()
}, 300_000)
