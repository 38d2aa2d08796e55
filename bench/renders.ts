/**
 * `npm run bench:renders` — what renders cost on this machine, against the real service:
 *
 *   1. create latency: the service in embedded single-process mode (`bin/start.ts`, a temp DATA_DIR
 *      and its own embedded PostgreSQL, or DATABASE_URL when set), a Custom workspace with an
 *      unlimited allowance and a key allowed 100,000 creates a minute; BENCH_CREATES (200) sequential
 *      `POST /api/v1/renders` without a caption (`quote: ""`) and as many with a ~60-character
 *      caption (the caption is composited before the 202), after a short warm-up. Client-side wall
 *      time per request, p50/p90/p99/max. Twice: with the runner idle (RENDER_TIMEOUT_SECONDS=0, so
 *      each queued render ends `render_timeout` as soon as it is picked up) and busy (the queued
 *      renders run for real, one encoding throughout, at the renderer's lowered priority).
 *   2. throughput: a fresh single process at the default RENDER_CONCURRENCY (cores / 2) and
 *      RENDER_SECONDS (BENCH_RENDER_SECONDS, default 8): a batch of BENCH_BATCH (6) captioned renders
 *      created at once, polled to completion; renders per minute = batch / (first create → last
 *      completion).
 *   3. failover: two `bin/runner.ts` processes and one `bin/api.ts` on one PostgreSQL (DATABASE_URL,
 *      or an embedded server the bench starts), RENDER_SECONDS as above and RENDER_CONCURRENCY=1;
 *      one render; once a runner's ffmpeg child is encoding it, `kill -9` that runner and time, from
 *      the kill: the render moving again (its `updated_at` advances: the survivor took it over),
 *      the survivor's ffmpeg starting, and the render completing. Repeated BENCH_FAILOVER_RUNS (1).
 *
 * On a shared 2-core VM every figure depends on what else runs; compare within one run.
 */
import { importEmbeddedPostgres } from "@pic2video/cluster/database/EmbeddedPostgres"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { freePort, waitFor } from "../test/support/net.ts"
import { freshDatabase } from "./database.ts"

const root = Path.resolve(import.meta.dirname, "..")
const node = process.execPath
const createsPerCase = Number(process.env.BENCH_CREATES ?? 200)
const batch = Number(process.env.BENCH_BATCH ?? 6)
const renderSeconds = process.env.BENCH_RENDER_SECONDS ?? "8"
const failoverRuns = Number(process.env.BENCH_FAILOVER_RUNS ?? 1)
const externalDb = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
  ? process.env.DATABASE_URL
  : undefined
const quote60 = "Stars do not ask for permission to shine, and neither do you."

// ---------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(Path.join(os.tmpdir(), prefix))
  fs.chmodSync(dir, 0o755) // the postgres uid must traverse it when we run as root
  return dir
}

interface Proc {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly env: NodeJS.ProcessEnv
  readonly output: () => string
  readonly exited: Promise<number | null>
}

const live: Array<Proc> = []

async function startProc(entry: "start" | "api" | "runner", env: Record<string, string>): Promise<Proc> {
  const port = await freePort()
  const fullEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    HOST: "127.0.0.1",
    PORT: String(port),
    ...env
  }
  const child = spawn(node, [Path.join(root, `packages/server/src/bin/${entry}.ts`)], {
    cwd: root,
    env: fullEnv,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (d) => (out += d))
  child.stderr!.on("data", (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const proc: Proc = { child, baseUrl: `http://127.0.0.1:${port}`, env: fullEnv, output: () => out, exited }
  live.push(proc)
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`${entry} exited early:\n${out}`)
      if (entry === "runner") return out.includes("cluster runner at")
      return (await fetch(`${proc.baseUrl}/readyz`)).status === 200
    },
    120_000,
    `${entry} to be ready`
  ).catch((e) => {
    throw new Error(`${(e as Error).message}\n${out.slice(-3000)}`)
  })
  return proc
}

async function stopProc(p: Proc, signal: NodeJS.Signals = "SIGTERM", graceMs = 30_000) {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return
  p.child.kill(signal)
  const timer = setTimeout(() => p.child.kill("SIGKILL"), graceMs)
  await p.exited
  clearTimeout(timer)
}

/** The admin CLI's JSON answer, of the shape `A` the caller reads. */
function adminCli<A>(env: NodeJS.ProcessEnv, ...args: Array<string>) {
  return new Promise<A>((resolve, reject) => {
    const child = spawn(node, [Path.join(root, "packages/server/src/bin/admin.ts"), ...args], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.on(
      "exit",
      (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`admin ${args.join(" ")}: ${err}`)))
    )
  })
}

const childCommands = (pid: number) =>
  new Promise<Array<string>>((resolve) =>
    execFile(
      "ps",
      ["--ppid", String(pid), "-o", "comm="],
      (_e, stdout) => resolve(stdout.split("\n").map((s) => s.trim()).filter(Boolean))
    )
  )
const isEncoding = async (pid: number) => (await childCommands(pid)).some((c) => c.startsWith("ffmpeg"))

/** What the bench reads of a render document. */
interface RenderDocument {
  readonly id: string
  readonly status: string
  readonly updated_at: string
}

interface Client {
  /** POST /api/v1/renders; the body is the created render (an error document when the status is not 202) */
  readonly post: (body: unknown) => Promise<{ status: number; body: { readonly id: string } }>
  /** a GET answered with JSON of the shape `A` */
  readonly get: <A>(path: string) => Promise<{ status: number; body: A }>
}

async function account(proc: Proc, plan: Array<string>): Promise<Client> {
  const ws = await adminCli<{ readonly id: string }>(
    proc.env,
    "workspace",
    "create",
    "--name",
    "Bench",
    "--plan",
    ...plan
  )
  const key = await adminCli<{ readonly secret: string }>(
    proc.env,
    "key",
    "create",
    ws.id,
    "--scopes",
    "media:read,media:write,renders:create,renders:read",
    "--creates-per-minute",
    "100000",
    "--reads-per-minute",
    "100000"
  )
  const auth = { authorization: `Bearer ${key.secret}` }
  const form = new FormData()
  form.append("file", new Blob([fs.readFileSync(Path.join(root, "test/fixtures/rocket.jpg"))]), "rocket.jpg")
  const up = await fetch(`${proc.baseUrl}/api/v1/media`, { method: "POST", headers: auth, body: form })
  const media = await up.json()
  if (up.status !== 201) throw new Error(`upload: ${up.status} ${JSON.stringify(media)}`)
  const client: Client = {
    post: async (body) => {
      const r = await fetch(`${proc.baseUrl}/api/v1/renders`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ media_id: media.id, ...(body as object) })
      })
      return { status: r.status, body: await r.json() }
    },
    get: async (path) => {
      const r = await fetch(`${proc.baseUrl}${path}`, { headers: auth })
      return { status: r.status, body: await r.json() }
    }
  }
  return client
}

const pct = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
const ms = (n: number) => `${n.toFixed(1)} ms`
const s = (n: number) => `${(n / 1000).toFixed(1)} s`

// ---------------------------------------------------------------------------------------------

async function singleProcessEnv(extra: Record<string, string>) {
  const dataDir = tempDir("p2v-bench-data-")
  const env: Record<string, string> = { DATA_DIR: dataDir, ...extra }
  if (externalDb !== undefined) env.DATABASE_URL = await freshDatabase(externalDb)
  return { env, dataDir }
}

/**
 * Create latency in one runner state: `idle` (RENDER_TIMEOUT_SECONDS=0: every render ends
 * `render_timeout` the moment it is picked up, so nothing decodes or encodes beside the creates) or
 * `busy` (default settings: the creates queue hundreds of renders and one encodes the whole time).
 */
async function createLatency(runner: "idle" | "busy") {
  const { env, dataDir } = await singleProcessEnv(
    runner === "idle" ? { RENDER_TIMEOUT_SECONDS: "0" } : { RENDER_SECONDS: renderSeconds }
  )
  const proc = await startProc("start", env)
  try {
    const api = await account(proc, ["custom", "--included", "unlimited"])
    const measure = async (body: object, n: number) => {
      const times: Array<number> = []
      for (let i = 0; i < n; i++) {
        const t = performance.now()
        const r = await api.post(body)
        times.push(performance.now() - t)
        if (r.status !== 202) throw new Error(`create answered ${r.status} ${JSON.stringify(r.body)}`)
      }
      return times.sort((a, b) => a - b)
    }
    await measure({ quote: "" }, 10)
    await measure({ quote: quote60 }, 5)
    if (runner === "busy") {
      await waitFor(async () => isEncoding(proc.child.pid!), 60_000, "a render to be encoding")
    }
    const rows: Array<[string, Array<number>]> = [
      ["no caption (quote \"\")", await measure({ quote: "" }, createsPerCase)],
      [`caption (${[...quote60].length} chars)`, await measure({ quote: quote60 }, createsPerCase)]
    ]
    const encoding = runner === "busy" ? await isEncoding(proc.child.pid!) : false
    console.log(
      `   runner ${runner}${
        runner === "busy" ? ` (a render ${encoding ? "still" : "no longer"} encoding at the end)` : ""
      }`
    )
    for (const [label, t] of rows) {
      const mean = t.reduce((a, b) => a + b, 0) / t.length
      console.log(
        `     ${label.padEnd(24)} p50 ${ms(pct(t, 50)).padStart(9)}  p90 ${ms(pct(t, 90)).padStart(9)}  p99 ${
          ms(pct(t, 99)).padStart(9)
        }  max ${ms(t[t.length - 1]).padStart(9)}  mean ${ms(mean)}`
      )
    }
  } finally {
    await stopProc(proc)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function benchCreateLatency() {
  console.log(
    `\n1. create latency, ${createsPerCase} sequential POST /api/v1/renders each (single process, ${
      externalDb ? "DATABASE_URL" : "embedded PostgreSQL"
    })`
  )
  await createLatency("idle")
  await createLatency("busy")
}

async function benchThroughput() {
  const { env, dataDir } = await singleProcessEnv({ RENDER_SECONDS: renderSeconds })
  const proc = await startProc("start", env)
  try {
    const api = await account(proc, ["custom", "--included", "unlimited"])
    const t0 = Date.now()
    const ids: Array<string> = []
    for (let i = 0; i < batch; i++) {
      const r = await api.post({ quote: `${quote60} (${i + 1})` })
      if (r.status !== 202) throw new Error(`create answered ${r.status} ${JSON.stringify(r.body)}`)
      ids.push(r.body.id)
    }
    const started = new Map<string, number>()
    const ended = new Map<string, { at: number; status: string }>()
    while (ended.size < ids.length) {
      for (const id of ids) {
        if (ended.has(id)) continue
        const r = (await api.get<RenderDocument>(`/api/v1/renders/${id}`)).body
        if (r.status !== "queued" && !started.has(id)) started.set(id, Date.now())
        if (["completed", "failed", "canceled"].includes(r.status)) ended.set(id, { at: Date.now(), status: r.status })
      }
      if (Date.now() - t0 > 30 * 60_000) throw new Error("batch did not finish in 30 minutes")
      await sleep(500)
    }
    const elapsed = Math.max(...[...ended.values()].map((e) => e.at)) - t0
    const completed = [...ended.values()].filter((e) => e.status === "completed").length
    const each = ids.map((id) => ended.get(id)!.at - (started.get(id) ?? t0))
    const concurrency = Math.max(1, Math.floor(os.availableParallelism() / 2))
    console.log(
      `\n2. throughput: ${batch} captioned renders of ${renderSeconds} s at RENDER_CONCURRENCY ${concurrency} (default on ${os.availableParallelism()} cores)`
    )
    console.log(
      `   ${completed}/${batch} completed in ${s(elapsed)}  →  ${
        (completed / (elapsed / 60_000)).toFixed(2)
      } renders per minute`
    )
    console.log(
      `   per render (processing → terminal, as polled every 0.5 s): mean ${
        s(each.reduce((a, b) => a + b, 0) / each.length)
      }, min ${s(Math.min(...each))}, max ${s(Math.max(...each))}`
    )
  } finally {
    await stopProc(proc)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function benchFailover() {
  let databaseUrl: string
  let stopDb: () => Promise<void> = async () => {}
  const dataDir = tempDir("p2v-bench-shared-")
  if (externalDb !== undefined) {
    databaseUrl = await freshDatabase(externalDb)
  } else {
    const EmbeddedPostgres = await importEmbeddedPostgres()
    const port = await freePort()
    const pgDir = tempDir("p2v-bench-pg-")
    const pg = new EmbeddedPostgres({
      databaseDir: Path.join(pgDir, "data"),
      port,
      user: "postgres",
      password: "postgres",
      persistent: false,
      createPostgresUser: true,
      initdbFlags: ["--encoding=UTF8", "--locale=C"],
      postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
      onLog: () => {},
      onError: () => {}
    })
    await pg.initialise()
    await pg.start()
    await pg.createDatabase("pic2video")
    databaseUrl = `postgres://postgres:postgres@127.0.0.1:${port}/pic2video`
    stopDb = async () => {
      await pg.stop()
      fs.rmSync(pgDir, { recursive: true, force: true })
    }
  }
  const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, RENDER_SECONDS: renderSeconds, RENDER_CONCURRENCY: "1" }
  const procs: Array<Proc> = []
  try {
    procs.push(await startProc("runner", env))
    procs.push(await startProc("runner", env))
    const apiProc = await startProc("api", env)
    procs.push(apiProc)
    const api = await account(apiProc, ["custom", "--included", "unlimited"])
    console.log(
      `\n3. failover: kill -9 of the runner encoding a render (2 runners + api, RENDER_SECONDS ${renderSeconds}, shard lock 9 s, health check 5 s)`
    )
    for (let run = 1; run <= failoverRuns; run++) {
      const runners = procs.filter((p) => p !== apiProc && p.child.exitCode === null && p.child.signalCode === null)
      while (runners.length < 2) {
        const p = await startProc("runner", env)
        procs.push(p)
        runners.push(p)
        await sleep(6_000) // let it take its shards
      }
      const created = await api.post({ quote: "Survives a crash" })
      if (created.status !== 202) throw new Error(`create answered ${created.status} ${JSON.stringify(created.body)}`)
      const id = created.body.id
      let victim: Proc | undefined
      await waitFor(
        async () => {
          const flags = await Promise.all(runners.map((r) => isEncoding(r.child.pid!)))
          const hits = runners.filter((_, i) => flags[i])
          if (hits.length === 1) victim = hits[0]
          return hits.length === 1
        },
        180_000,
        "a runner to start encoding"
      )
      const survivor = runners.find((r) => r !== victim)!
      await sleep(1_000) // mid-render, not at its first frame
      victim!.child.kill("SIGKILL")
      await victim!.exited
      const killedAt = Date.now()
      const frozen = (await api.get<RenderDocument>(`/api/v1/renders/${id}`)).body
      let movedAt: number | undefined
      let encodingAt: number | undefined
      let endedAt: number | undefined
      let final: RenderDocument | undefined
      while (endedAt === undefined) {
        const r = (await api.get<RenderDocument>(`/api/v1/renders/${id}`)).body
        if (
          movedAt === undefined &&
          (Date.parse(r.updated_at) > Date.parse(frozen.updated_at) || r.status !== frozen.status)
        ) movedAt = Date.now()
        if (encodingAt === undefined && (await isEncoding(survivor.child.pid!))) encodingAt = Date.now()
        if (["completed", "failed", "canceled"].includes(r.status)) {
          endedAt = Date.now()
          final = r
        }
        if (Date.now() - killedAt > 10 * 60_000) throw new Error("render did not finish within 10 minutes of the kill")
        await sleep(200)
      }
      const usage = (await api.get<{ readonly aesthetic_quotes: { readonly used: number } }>("/api/v1/usage")).body
      console.log(
        `   run ${run}: moved again after ${movedAt ? s(movedAt - killedAt) : "—"}; survivor encoding after ${
          encodingAt ? s(encodingAt - killedAt) : "— (not seen)"
        }; ` +
          `${final?.status} after ${
            s(endedAt - killedAt)
          }; charged ${usage.aesthetic_quotes.used} render(s) so far in this workspace (${run} created)`
      )
    }
  } finally {
    await Promise.all(procs.map((p) => stopProc(p, "SIGTERM", 20_000)))
    await stopDb()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const main = async () => {
  console.log(
    `bench:renders on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), load average ${
      os.loadavg().map((l) => l.toFixed(2)).join(" ")
    }, node ${process.version}`
  )
  const phases = (process.env.BENCH_PHASES ?? "latency,throughput,failover").split(",")
  if (phases.includes("latency")) await benchCreateLatency()
  if (phases.includes("throughput")) await benchThroughput()
  if (phases.includes("failover")) await benchFailover()
  console.log(`\nload average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`)
}

main().catch(async (e) => {
  console.error(e)
  for (const p of live) if (p.child.exitCode === null) p.child.kill("SIGKILL")
  process.exit(1)
})
