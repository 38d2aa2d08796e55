/**
 * `npm run bench:cli` — how long `p2v` takes to start and how much memory it takes: `p2v --version`,
 * `p2v --help` and `p2v usage` (against a local service), each run BENCH_RUNS (10) times after a
 * warm-up, medians printed beside `node -e 0` (Node alone) for:
 *
 * - before: the source entry, `node packages/client/src/bin/p2v.ts` (Node strips the types; every
 *   module loaded as it is), or BENCH_BEFORE (another entry, e.g. an older p2v.ts);
 * - after: the bundle the package ships, `node packages/client/dist/bin/p2v.js` (built first, by
 *   `scripts/build-client.ts --bin`);
 * - standalone: packages/client/standalone/p2v when it has been built (`npm run build:p2v-standalone`).
 *
 * Wall time is from spawn to exit; peak RSS is the process's maximum resident set (GNU time's %M).
 * The targets are printed beside the figures, not enforced: on a shared 2-core VM every
 * figure depends on what else runs, so compare within one run. The service: one all-in-one process,
 * its database a fresh one on DATABASE_URL's (or TEST_DATABASE_URL's) server, else its embedded PostgreSQL.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { freePort, waitFor } from "../test/support/net.ts"
import { freshDatabase } from "./database.ts"

const root = Path.resolve(import.meta.dirname, "..")
const node = process.execPath
const runs = Number(process.env.BENCH_RUNS ?? 10)
const adminUrl = [process.env.DATABASE_URL, process.env.TEST_DATABASE_URL].find((u) => u !== undefined && u !== "")

const built = spawnSync(node, [Path.join(root, "scripts/build-client.ts"), "--bin"], { cwd: root, stdio: "inherit" })
if (built.status !== 0) throw new Error("the build failed")

const work = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-cli-"))
fs.chmodSync(work, 0o755) // the embedded postgres' uid must traverse it when we run as root
const timeFile = Path.join(work, "time")

interface Sample {
  readonly millis: number
  readonly rssMiB: number
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** One run: wall time from spawn to exit, peak RSS from GNU time (whose own cost is in every row alike). */
const sample = (command: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<Sample>((resolve) => {
    const started = performance.now()
    const child = spawn("/usr/bin/time", ["-f", "%M", "-o", timeFile, ...command], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("exit", (code) => {
      const millis = performance.now() - started
      const kib = Number(fs.readFileSync(timeFile, "utf8").trim().split("\n").at(-1))
      resolve({ millis, rssMiB: kib / 1024, code, stdout, stderr })
    })
  })

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const measure = async (command: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  const warm = await sample(command, env)
  if (warm.code !== 0) throw new Error(`${command.join(" ")} exited ${warm.code}:\n${warm.stdout}${warm.stderr}`)
  const all: Array<Sample> = []
  for (let i = 0; i < runs; i++) all.push(await sample(command, env))
  const failed = all.find((s) => s.code !== 0)
  if (failed !== undefined) throw new Error(`${command.join(" ")} exited ${failed.code}:\n${failed.stderr}`)
  return { millis: median(all.map((s) => s.millis)), rssMiB: median(all.map((s) => s.rssMiB)) }
}

const port = await freePort()
const serviceEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  HOST: "127.0.0.1",
  PORT: String(port),
  DATA_DIR: Path.join(work, "data"),
  ...(adminUrl !== undefined ? { DATABASE_URL: await freshDatabase(adminUrl) } : {})
}
const service = spawn(node, [Path.join(root, "packages/server/src/bin/start.ts")], {
  cwd: root,
  env: serviceEnv,
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
  const admin = (...args: Array<string>) => {
    const r = spawnSync(node, [Path.join(root, "packages/server/src/bin/admin.ts"), ...args], {
      cwd: root,
      env: serviceEnv,
      encoding: "utf8"
    })
    if (r.status !== 0) throw new Error(`admin ${args.join(" ")}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const workspace = admin("workspace", "create", "--name", "Bench", "--plan", "studio")
  const key = admin("key", "create", workspace.id, "--scopes", "renders:read")
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    P2V_API_KEY: key.secret,
    P2V_BASE_URL: baseUrl
  }

  const standalone = Path.join(root, "packages/client/standalone/p2v")
  const subjects: Array<{ readonly name: string; readonly command: ReadonlyArray<string> }> = [
    {
      name: "before: node src/bin/p2v.ts",
      command: [node, process.env.BENCH_BEFORE ?? Path.join(root, "packages/client/src/bin/p2v.ts")]
    },
    { name: "after: node dist/bin/p2v.js", command: [node, Path.join(root, "packages/client/dist/bin/p2v.js")] },
    ...(fs.existsSync(standalone) ? [{ name: "standalone p2v", command: [standalone] }] : [])
  ]
  const cases = [
    { args: ["--version"], target: "≤ 100 ms, ≤ 80 MB" },
    { args: ["--help"], target: "≤ 150 ms, ≤ 80 MB" },
    { args: ["usage"], target: "≤ 250 ms" }
  ]

  const baseline = await measure([node, "-e", "0"], env)
  console.log(
    `p2v start-up: medians of ${runs} runs after a warm-up; Node ${process.version}, ${os.availableParallelism()} cores`
  )
  const row = (what: string, m: { millis: number; rssMiB: number }, target = "") =>
    console.log(
      `${what.padEnd(44)} ${m.millis.toFixed(1).padStart(8)} ms ${m.rssMiB.toFixed(1).padStart(7)} MiB  ${target}`
    )
  console.log(`${"".padEnd(44)} ${"wall".padStart(11)} ${"peak RSS".padStart(11)}  target`)
  row("node -e 0", baseline)
  for (const c of cases) {
    for (const s of subjects) {
      row(`p2v ${c.args.join(" ")}  (${s.name})`, await measure([...s.command, ...c.args], env), c.target)
    }
  }
} finally {
  service.kill("SIGTERM")
  await new Promise((resolve) => service.once("exit", resolve))
  fs.rmSync(work, { recursive: true, force: true })
}
