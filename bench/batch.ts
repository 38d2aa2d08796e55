/**
 * `npm run bench:batch` — the wall time of `p2v batch` over BENCH_PHOTOS (24) photos at
 * `--concurrency` 1, 2 and 4 (BENCH_CONCURRENCY, comma-separated), against one service process (the
 * all-in-one `bin/start.ts`: one runner, its default RENDER_CONCURRENCY of cores / 2) with
 * RENDER_SECONDS=BENCH_RENDER_SECONDS (1, as the tests). The database: a fresh one on DATABASE_URL's server when
 * set, else the service's embedded PostgreSQL. Each concurrency runs the real CLI as a user would,
 * with a fresh key (so nothing is replayed) and an empty --out; the photos are distinct 640x480
 * JPEGs made from the test fixtures. Printed: wall time, renders per minute, and the mean seconds a
 * photo held its upload and render slots (the manifest's `seconds`).
 *
 * On a shared 2-core VM every figure depends on what else runs; compare within one run.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import sharp from "sharp"
import { freePort, waitFor } from "../test/support/net.ts"
import { freshDatabase } from "./database.ts"

const root = Path.resolve(import.meta.dirname, "..")
const node = process.execPath
const photoCount = Number(process.env.BENCH_PHOTOS ?? 24)
const concurrencies = (process.env.BENCH_CONCURRENCY ?? "1,2,4").split(",").map(Number)
const renderSeconds = process.env.BENCH_RENDER_SECONDS ?? "1"
const externalDb = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
  ? process.env.DATABASE_URL
  : undefined

const run = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(file, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

const admin = async (env: NodeJS.ProcessEnv, ...args: Array<string>) => {
  const r = await run(node, [Path.join(root, "packages/server/src/bin/admin.ts"), ...args], env)
  if (r.code !== 0) throw new Error(`admin ${args.join(" ")}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const work = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-batch-"))
fs.chmodSync(work, 0o755) // the embedded postgres' uid must traverse it when we run as root
const photos = Path.join(work, "photos")
fs.mkdirSync(photos)
const sources = ["rocket.jpg", "chelsea.png", "coffee.png", "astronaut.png"]
for (let i = 0; i < photoCount; i++) {
  await sharp(Path.join(root, "test/fixtures", sources[i % sources.length]))
    .resize(640, 480)
    .modulate({ hue: i * 15 })
    .jpeg({ quality: 85 })
    .toFile(Path.join(photos, `photo-${String(i + 1).padStart(2, "0")}.jpg`))
}

const port = await freePort()
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  HOST: "127.0.0.1",
  PORT: String(port),
  DATA_DIR: Path.join(work, "data"),
  RENDER_SECONDS: renderSeconds,
  ...(externalDb !== undefined ? { DATABASE_URL: await freshDatabase(externalDb) } : {})
}
const service = spawn(node, [Path.join(root, "packages/server/src/bin/start.ts")], {
  cwd: root,
  env,
  stdio: ["ignore", "pipe", "pipe"]
})
let output = ""
service.stdout.on("data", (d) => (output += d))
service.stderr.on("data", (d) => (output += d))
const baseUrl = `http://127.0.0.1:${port}`
try {
  await waitFor(
    async () => {
      if (service.exitCode !== null) throw new Error(`the service exited:\n${output}`)
      return (await fetch(`${baseUrl}/readyz`)).status === 200
    },
    120_000,
    "the service"
  )

  console.log(
    `p2v batch: ${photoCount} photos (640x480 JPEG), RENDER_SECONDS=${renderSeconds}, one service process, ${os.availableParallelism()} cores`
  )
  console.log("concurrency  wall time  renders/min  mean s/photo")
  for (const concurrency of concurrencies) {
    const ws = await admin(env, "workspace", "create", "--name", `Bench ${concurrency}`, "--plan", "custom")
    const key = await admin(
      env,
      "key",
      "create",
      ws.id,
      "--scopes",
      "media:read,media:write,renders:create,renders:read",
      "--creates-per-minute",
      "100000",
      "--reads-per-minute",
      "100000",
      "--uploads-per-minute",
      "100000"
    )
    const out = Path.join(work, `out-${concurrency}`)
    const started = performance.now()
    const r = await run(node, [
      Path.join(root, "packages/client/src/bin/p2v.ts"),
      "batch",
      photos,
      "--out",
      out,
      "--quote",
      "Measured, not guessed",
      "--concurrency",
      String(concurrency),
      "--json"
    ], {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      P2V_API_KEY: key.secret,
      P2V_BASE_URL: baseUrl
    })
    const seconds = (performance.now() - started) / 1000
    if (r.code !== 0) throw new Error(`p2v batch --concurrency ${concurrency} exited ${r.code}:\n${r.stderr}`)
    const result = JSON.parse(r.stdout)
    if (result.counts.completed !== photoCount) {
      throw new Error(`only ${result.counts.completed} of ${photoCount} completed`)
    }
    const mean = result.entries.reduce((n: number, e: { seconds: number }) => n + e.seconds, 0) / photoCount
    console.log(
      `${String(concurrency).padStart(11)}  ${`${seconds.toFixed(1)} s`.padStart(9)}  ${
        (photoCount / (seconds / 60)).toFixed(1).padStart(11)
      }  ${mean.toFixed(1).padStart(12)}`
    )
  }
} finally {
  service.kill("SIGTERM")
  await new Promise((resolve) => service.once("exit", resolve))
  fs.rmSync(work, { recursive: true, force: true })
}
