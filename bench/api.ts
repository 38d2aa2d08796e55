/**
 * `npm run bench:api` — the request path against the real service, each endpoint next to a bare
 * node:http server that answers the same bytes from memory, driven by the same closed-loop load
 * generator (loopback only). `npm run bench:soak` — the mixed load for a long time (see 6).
 *
 *   1. starts the service (`packages/server/src/bin/start.ts`; embedded PostgreSQL under a temp
 *      DATA_DIR, or DATABASE_URL when set), creates a Custom workspace (unlimited renders) and
 *      BENCH_KEYS (8) keys with every scope and a reads budget of 1,000,000/min through the operator
 *      CLI, uploads 25 photos (and waits for their classification, which runs on the same CPU),
 *      and makes one render, waited for until it is completed (the poll target);
 *   2. measures, each with CONNECTIONS keep-alive connections sending their next request when the
 *      previous answer is in (closed loop), WARMUP_S of warm-up then DURATION_S measured:
 *      `GET /api/v1/media?limit=25`, `GET /api/v1/renders/{id}` (the poll), `GET /api/v1/usage`,
 *      and, for context, `/healthz` (no key, no database);
 *   3. starts a bare node:http server in its own process serving those exact bodies, and measures
 *      it the same way; prints each pair and its ratio, the service's CPU time per request (all
 *      threads, from /proc) and, with DATABASE_URL, database transactions per request;
 *   4. the mixed run (BENCH_MIXED_S, 30 s): BENCH_CLIENTS (200) simulated clients, each polling its
 *      5 renders every 2 s (one GET each, on a shared keep-alive pool; a client whose previous polls
 *      are unanswered skips the tick, counted as "skipped"), spread over the keys, while
 *      renders execute: BENCH_RENDERS (12) renders are created as it starts, and a writer adds a
 *      captioned one every 5 s while fewer than that many are queued or processing (its create
 *      latencies are printed too). Prints requests, p50/p99/max and errors (non-200 and failed requests).
 *   5. nothing but loopback: every server listens on 127.0.0.1 and everything stops at the end;
 *   7. the cost of observability (bench/observability.ts; BENCH_OBSERVABILITY=0 skips it): the poll
 *      with metrics off, on, and on with traces at 100 % sampling, side by side;
 *      `--observability` runs only this part (one photo, one render, then BENCH_OBSERVABILITY_ROUNDS rounds).
 *   The service runs with metrics on (METRICS_PORT, its /metrics scraped every second), as deployed.
 *   6. `--soak [--minutes N]` (default 10): steps 1 and 4 only, the mixed load for N minutes,
 *      printing each minute the service's RSS, the minute's p50/p99/errors and the sizes of the
 *      service's per-key tables (logged by the service under P2V_TABLE_STATS_SECONDS).
 *
 * Environment: BENCH_CONNECTIONS (16), BENCH_WARMUP_S (2), BENCH_DURATION_S (10), BENCH_MIXED_S
 * (30), BENCH_CLIENTS (200), BENCH_KEYS (8), BENCH_RENDERS (12), DATABASE_URL (optional),
 * BENCH_CPU_PROF=DIR (profile the service's main thread, written as DIR/main.cpuprofile after the mixed
 * run, see bench/loop-delay.ts; the measured windows, mixed included, are written beside
 * the profile as window-<name>.txt, in the profile's clock). On a shared 2-core VM the load
 * generator and the server compete for the same cores; compare within one run.
 */
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as Path from "node:path"
import { freePort, waitFor } from "../test/support/net.ts"
import { observabilityCost } from "./observability.ts"

// BENCH_ROOT: run another checkout's service (an A/B against this tree) with this benchmark
const root = Path.resolve(process.env.BENCH_ROOT ?? Path.join(import.meta.dirname, ".."))
const node = process.execPath
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const warmupSeconds = Number(process.env.BENCH_WARMUP_S ?? 2)
const durationSeconds = Number(process.env.BENCH_DURATION_S ?? 10)
const mixedSeconds = Number(process.env.BENCH_MIXED_S ?? 30)
const clientCount = Number(process.env.BENCH_CLIENTS ?? 200)
const keyCount = Math.max(1, Number(process.env.BENCH_KEYS ?? 8))
const mixedRenders = Number(process.env.BENCH_RENDERS ?? 12)
const profDir = process.env.BENCH_CPU_PROF
/** BENCH_SERVICE_LOG=FILE: everything the service prints (with its loop-delay lines) is appended there */
const serviceLog = process.env.BENCH_SERVICE_LOG
const pollEveryMs = 2000
const rendersPerClient = 5

// ---------------------------------------------------------------------------------------------

function run(args: Array<string>, env: NodeJS.ProcessEnv) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(node, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(" ")} exited ${code}: ${err}`))))
  })
}

const adminJson = async (env: NodeJS.ProcessEnv, ...args: Array<string>) =>
  JSON.parse(await run([Path.join(root, "packages/server/src/bin/admin.ts"), ...args], env))

interface Result {
  readonly requests: number
  readonly errors: number
  readonly seconds: number
  readonly latenciesMs: Float64Array
  readonly cpuSeconds: number | undefined
  readonly transactions: number | undefined
}

const get = (agent: http.Agent, url: URL, headers: Record<string, string>) =>
  new Promise<{ status: number; body: string }>((resolve) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: "GET", headers, agent },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (d: Buffer) => chunks.push(d))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
        res.on("error", () => resolve({ status: 0, body: "" }))
      }
    )
    req.on("error", () => resolve({ status: 0, body: "" }))
    req.end()
  })

/** CPU seconds (user + system, all threads) a process has used so far; Linux only. */
const cpuSeconds = (pid: number | undefined): number | undefined => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return undefined
  }
}

const rssMiB = (pid: number | undefined): number | undefined => {
  try {
    const line = fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))
    return line === undefined ? undefined : Number(line.replace(/\D+/g, "")) / 1024
  } catch {
    return undefined
  }
}

/** Committed + rolled-back transactions of the database so far (each autocommit statement is one), when DATABASE_URL is set. */
async function transactions(): Promise<number | undefined> {
  if (!process.env.DATABASE_URL) return undefined
  const { default: pg } = await import("pg")
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  try {
    await new Promise((r) => setTimeout(r, 1200)) // statistics are flushed at most once a second
    const { rows } = await client.query("SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()")
    return Number(rows[0].n)
  } finally {
    await client.end()
  }
}

const monotonicMicros = () => process.hrtime.bigint() / 1000n

/**
 * Closed loop: `connections` workers on keep-alive sockets, each issuing its next request on
 * completion. `pid` (the server's) is sampled for CPU time over the measured window.
 */
async function load(name: string, url: string, headers: Record<string, string>, pid?: number, countTransactions = false): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections })
  const target = new URL(url)
  const latencies: Array<number> = []
  let errors = 0
  let measuring = false
  const xactsBefore = countTransactions ? await transactions() : undefined
  const start = performance.now()
  const measureFrom = start + warmupSeconds * 1000
  const end = measureFrom + durationSeconds * 1000
  let cpuAtStart: number | undefined
  let windowStart = 0n
  const startTimer = setTimeout(() => {
    cpuAtStart = cpuSeconds(pid)
    windowStart = monotonicMicros()
  }, warmupSeconds * 1000)
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      const { status } = await get(agent, target, headers)
      const t1 = performance.now()
      if (t0 >= measureFrom && t1 <= end) {
        measuring = true
        latencies.push(t1 - t0)
        if (status !== 200) errors++
      }
    }
  }))
  clearTimeout(startTimer)
  const cpuAtEnd = cpuSeconds(pid)
  if (profDir) fs.writeFileSync(Path.join(profDir, `window-${name}.txt`), `${windowStart} ${monotonicMicros()}\n`)
  agent.destroy()
  const xactsAfter = countTransactions ? await transactions() : undefined
  if (!measuring) throw new Error("no request completed inside the measured window")
  const sorted = Float64Array.from(latencies).sort()
  return {
    requests: latencies.length,
    errors,
    seconds: durationSeconds,
    latenciesMs: sorted,
    cpuSeconds: cpuAtStart === undefined || cpuAtEnd === undefined ? undefined : cpuAtEnd - cpuAtStart,
    // over warm-up and measurement alike: divide by the requests of both
    transactions: xactsBefore === undefined || xactsAfter === undefined
      ? undefined
      : (xactsAfter - xactsBefore) / (latencies.length * (1 + warmupSeconds / durationSeconds))
  }
}

const quantile = (sorted: Float64Array | Array<number>, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

// ---------------------------------------------------------------------------------------------

interface Setup {
  readonly base: string
  readonly env: NodeJS.ProcessEnv
  readonly service: ChildProcess
  readonly secrets: ReadonlyArray<string>
  readonly mediaIds: ReadonlyArray<string>
  readonly tableStats: () => string | undefined
  /** The service's event-loop delay and GC lines (bench/loop-delay.ts) received in [from, to) (performance.now()). */
  readonly loopDelay: (from: number, to: number) => LoopDelaySummary | undefined
}

interface LoopDelayLine {
  readonly at: number
  readonly p99: number
  readonly max: number
  readonly gcMs: number
  readonly gcMax: number
}

interface LoopDelaySummary {
  /** worst per-second p99 and max of the main thread's event-loop delay (ms) */
  readonly p99: number
  readonly max: number
  /** main-thread GC pause per second (ms, mean over the window) and the longest pause */
  readonly gcMsPerS: number
  readonly gcMax: number
}

async function setup(dataDir: string, children: Array<ChildProcess>, photos = 25): Promise<Setup> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    PORT: String(port),
    // metrics on, as deployed (docker-compose, the README): scraped every second below
    METRICS_PORT: String(await freePort()),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    // BENCH_NODE_OPTIONS: flags for the service (and the CLI), e.g. a V8 setting to compare
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {})
  }
  const service = spawn(
    node,
    [
      "--import", Path.join(import.meta.dirname, "loop-delay.ts"),
      Path.join(root, "packages/server/src/bin/start.ts")
    ],
    {
      cwd: root,
      env: { ...env, P2V_TABLE_STATS_SECONDS: "20", ...(profDir ? { BENCH_MAIN_PROF: Path.join(profDir, "main.cpuprofile"), BENCH_MAIN_HEAP: Path.join(profDir, "main.heapprofile") } : {}) },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  children.push(service)
  let serviceOutput = ""
  let lastTables: string | undefined
  const collect = (d: Buffer) => {
    const text = String(d)
    if (serviceLog) fs.appendFileSync(serviceLog, text)
    if (serviceOutput.length < 200_000) serviceOutput += text
    const m = /request-path tables (\{[^}]*\})/g
    for (const match of text.matchAll(m)) lastTables = match[1]
    for (const match of text.matchAll(/loop-delay (\{[^}]*\})/g)) {
      const l = JSON.parse(match[1])
      loopDelays.push({ at: performance.now(), p99: l.p99, max: l.max, gcMs: l.gcMs, gcMax: l.gcMax })
    }
  }
  const loopDelays: Array<LoopDelayLine> = []
  const loopDelay = (from: number, to: number): LoopDelaySummary | undefined => {
    const lines = loopDelays.filter((l) => l.at >= from && l.at < to)
    if (lines.length === 0) return undefined
    return {
      p99: Math.max(...lines.map((l) => l.p99)),
      max: Math.max(...lines.map((l) => l.max)),
      gcMsPerS: lines.reduce((a, l) => a + l.gcMs, 0) / lines.length,
      gcMax: Math.max(...lines.map((l) => l.gcMax))
    }
  }
  service.stdout!.on("data", collect)
  service.stderr!.on("data", collect)
  // a Prometheus-like scraper for the whole run
  const scraper = setInterval(() => void fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`).then((r) => r.text()).catch(() => {}), 1000)
  service.once("exit", () => clearInterval(scraper))
  const base = `http://127.0.0.1:${port}`
  await waitFor(async () => {
    if (service.exitCode !== null) throw new Error(`service exited:\n${serviceOutput}`)
    return (await fetch(`${base}/readyz`)).status === 200
  }, 120_000, "the service").catch((e) => {
    throw new Error(`${e.message}\n${serviceOutput}`)
  })
  const ws = await adminJson(env, "workspace", "create", "--name", "Bench", "--plan", "custom")
  const keys = await Promise.all(Array.from({ length: keyCount }, () =>
    adminJson(
      env, "key", "create", ws.id, "--scopes", "media:read,media:write,renders:create,renders:read",
      "--reads-per-minute", "1000000", "--uploads-per-minute", "1000", "--creates-per-minute", "100000"
    )))
  const secrets = keys.map((k) => k.secret as string)
  const auth = { authorization: `Bearer ${secrets[0]}` }
  const fixtures = ["rocket.jpg", "chelsea.png", "coffee.png", "astronaut.png"]
  const mediaIds: Array<string> = []
  for (let i = 0; i < photos; i++) {
    const name = fixtures[i % fixtures.length]
    const form = new FormData()
    form.append("file", new Blob([fs.readFileSync(Path.join(root, "test/fixtures", name))]), name)
    form.append("label", `Bench photo ${i + 1}`)
    form.append("tags", "bench")
    const res = await fetch(`${base}/api/v1/media`, { method: "POST", headers: auth, body: form })
    if (res.status !== 201) throw new Error(`upload ${i} answered ${res.status}: ${await res.text()}`)
    mediaIds.push((await res.json()).id)
  }
  // photo classification runs on this machine's CPU after each upload: let it finish first
  await waitFor(async () => (await adminJson(env, "media", "show", mediaIds[mediaIds.length - 1])).inferred !== null, 180_000, "classification")
    .catch(() => console.error("(classification did not finish in 180 s; measuring anyway)"))
  return { base, env, service, secrets, mediaIds, tableStats: () => lastTables, loopDelay }
}

const createRender = async (base: string, secret: string, mediaId: string, quote: string) => {
  const res = await fetch(`${base}/api/v1/renders`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ media_id: mediaId, quote })
  })
  const body = await res.json()
  if (res.status !== 202) throw new Error(`render create answered ${res.status}: ${JSON.stringify(body)}`)
  return body.id as string
}

// ---------------------------------------------------------------------------------------------
// the mixed load: many slow pollers while renders execute

interface MixedWindow {
  latencies: Array<number>
  errors: number
  creates: Array<number>
  /** client ticks skipped because that client's previous polls were still unanswered (saturation) */
  skipped: number
}

function startMixed(s: Setup, initialRenders: ReadonlyArray<string>) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clientCount, maxFreeSockets: clientCount })
  const pool = [...initialRenders]
  const status = new Map<string, string>()
  let window: MixedWindow = { latencies: [], errors: 0, creates: [], skipped: 0 }
  let stopped = false
  const timers = new Set<NodeJS.Timeout>()
  const inFlight = new Set<Promise<unknown>>()
  const track = <A>(p: Promise<A>) => {
    inFlight.add(p)
    p.finally(() => inFlight.delete(p))
    return p
  }
  const base = new URL(s.base)

  const client = (i: number) => {
    const secret = s.secrets[i % s.secrets.length]
    const headers = { authorization: `Bearer ${secret}` }
    let outstanding = 0
    const tick = () => {
      if (stopped) return
      const next = setTimeout(tick, pollEveryMs)
      timers.add(next)
      // a client waits for its answers before it polls again: a tick it cannot make is counted, not queued
      if (outstanding > 0) {
        window.skipped++
        return
      }
      for (let j = 0; j < rendersPerClient; j++) {
        const id = pool[(i * rendersPerClient + j) % pool.length]
        const t0 = performance.now()
        const w = window
        outstanding++
        track(get(agent, new URL(`/api/v1/renders/${id}`, base), headers).then(({ status: code, body }) => {
          outstanding--
          w.latencies.push(performance.now() - t0)
          if (code !== 200) w.errors++
          else status.set(id, JSON.parse(body).status)
        }))
      }
    }
    const first = setTimeout(tick, Math.random() * pollEveryMs)
    timers.add(first)
  }
  for (let i = 0; i < clientCount; i++) client(i)

  // keep renders executing: a captioned create every 5 s while fewer than BENCH_RENDERS are queued or processing
  const writer = (async () => {
    let n = 0
    while (!stopped) {
      const active = pool.filter((id) => {
        const st = status.get(id)
        return st === undefined || st === "queued" || st === "processing"
      }).length
      if (active < mixedRenders) {
        const t0 = performance.now()
        const w = window
        try {
          const id = await createRender(s.base, s.secrets[n % s.secrets.length], s.mediaIds[n % s.mediaIds.length], `Bench caption number ${n}`)
          w.creates.push(performance.now() - t0)
          pool.push(id)
          if (pool.length > clientCount * rendersPerClient) pool.shift()
        } catch (e) {
          w.errors++
          console.error(String(e))
        }
        n++
      }
      await new Promise((r) => setTimeout(r, 5000))
    }
  })()

  return {
    /** the figures since the last call, and a fresh window */
    take: () => {
      const taken = window
      window = { latencies: [], errors: 0, creates: [], skipped: 0 }
      return taken
    },
    stop: async () => {
      stopped = true
      for (const t of timers) clearTimeout(t)
      await writer
      await Promise.all([...inFlight])
      agent.destroy()
    }
  }
}

const summary = (w: MixedWindow, seconds: number) => {
  const sorted = Float64Array.from(w.latencies).sort()
  const creates = Float64Array.from(w.creates).sort()
  return {
    rps: w.latencies.length / seconds,
    requests: w.latencies.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
    errors: w.errors,
    skipped: w.skipped,
    creates: w.creates.length,
    createP50: quantile(creates, 0.5),
    createP99: quantile(creates, 0.99)
  }
}

const startMixedRenders = async (s: Setup, count: number) => {
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) ids.push(await createRender(s.base, s.secrets[i % s.secrets.length], s.mediaIds[i % s.mediaIds.length], ""))
  return ids
}

// ---------------------------------------------------------------------------------------------

const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "-").padStart(10)

async function main() {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-api-"))
  const children: Array<ChildProcess> = []
  const stopAll = () => stopChildren(children, dataDir)
  try {
    const s = await setup(dataDir, children)
    const auth = { authorization: `Bearer ${s.secrets[0]}` }
    const pid = s.service.pid

    // the poll target: one render, completed (its document no longer changes)
    const renderId = await createRender(s.base, s.secrets[0], s.mediaIds[0], "A poll target")
    await waitFor(async () => {
      const res = await fetch(`${s.base}/api/v1/renders/${renderId}`, { headers: auth })
      const doc = await res.json()
      if (doc.status === "failed" || doc.status === "canceled") throw new Error(`the poll target ended ${doc.status}`)
      return doc.status === "completed"
    }, 300_000, "the poll target render")

    const endpoints = [
      { name: "media", label: "GET /api/v1/media?limit=25", path: "/api/v1/media?limit=25" },
      { name: "poll", label: "GET /api/v1/renders/{id}", path: `/api/v1/renders/${renderId}` },
      { name: "usage", label: "GET /api/v1/usage", path: "/api/v1/usage" }
    ]
    const bodies: Record<string, string> = {}
    // the stack's own ceiling: /healthz (no key, no database) through the service and from the bare server
    bodies["/healthz"] = await (await fetch(`${s.base}/healthz`)).text()
    for (const e of endpoints) {
      const res = await fetch(`${s.base}${e.path}`, { headers: auth })
      if (res.status !== 200) throw new Error(`${e.path} answered ${res.status}`)
      bodies[new URL(e.path, s.base).pathname] = await res.text()
    }

    // 2. the service, endpoint by endpoint (and its cheapest route: no key, no database)
    const measured: Record<string, Result> = {}
    for (const e of endpoints) measured[e.name] = await load(e.name, `${s.base}${e.path}`, auth, pid, true)
    const health = await load("healthz", `${s.base}/healthz`, {}, pid)

    // 3. the bare server with the same bodies
    const bodyFile = Path.join(dataDir, "bodies.json")
    fs.writeFileSync(bodyFile, JSON.stringify(bodies))
    const barePort = await freePort()
    const bare = spawn(node, [import.meta.filename, "--bare", String(barePort), bodyFile], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
    children.push(bare)
    await new Promise<void>((resolve, reject) => {
      bare.stdout!.once("data", () => resolve())
      bare.once("exit", (code) => reject(new Error(`bare server exited ${code}`)))
    })
    const baseline: Record<string, Result> = {}
    for (const e of endpoints) baseline[e.name] = await load(`bare-${e.name}`, `http://127.0.0.1:${barePort}${e.path}`, auth, bare.pid)
    const bareHealth = await load("bare-healthz", `http://127.0.0.1:${barePort}/healthz`, {}, bare.pid)
    bare.kill("SIGTERM")

    // 4. the mixed run
    const mixed = startMixed(s, [renderId, ...await startMixedRenders(s, mixedRenders)])
    await new Promise((r) => setTimeout(r, 2000)) // every client has started
    mixed.take()
    const mixedFrom = performance.now()
    const mixedFromMicros = monotonicMicros()
    await new Promise((r) => setTimeout(r, mixedSeconds * 1000))
    const mix = summary(mixed.take(), mixedSeconds)
    const mixLoop = s.loopDelay(mixedFrom, performance.now() + 1000)
    if (profDir) {
      fs.writeFileSync(Path.join(profDir, "window-mixed.txt"), `${mixedFromMicros} ${monotonicMicros()}\n`)
      // the main thread's profile is written on SIGUSR2 (bench/loop-delay.ts)
      s.service.kill("SIGUSR2")
      await waitFor(async () => fs.existsSync(Path.join(profDir, "main.cpuprofile")), 30_000, "the main thread's profile")
    }
    await mixed.stop()

    // report
    const loadavg = os.loadavg().map((x) => x.toFixed(2)).join(" ")
    console.log(`bench:api  ${connections} keep-alive connections, closed loop, ${warmupSeconds} s warm-up + ${durationSeconds} s measured each`)
    console.log(`           ${os.cpus().length} CPUs, node ${process.version}, database: ${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded PostgreSQL"}, load average now ${loadavg}`)
    console.log(`           metrics on (METRICS_PORT ${s.env.METRICS_PORT}, /metrics scraped every second); traces off`)
    console.log("")
    console.log(`${"".padEnd(40)}${"req/s".padStart(10)}${"p50 ms".padStart(10)}${"p99 ms".padStart(10)}${"requests".padStart(10)}${"non-200".padStart(10)}${"CPU ms/req".padStart(12)}${"xact/req".padStart(10)}`)
    const line = (label: string, r: Result) =>
      console.log(
        `${label.padEnd(40)}${fmt(r.requests / r.seconds, 0)}${fmt(quantile(r.latenciesMs, 0.5))}${fmt(quantile(r.latenciesMs, 0.99))}` +
          `${String(r.requests).padStart(10)}${String(r.errors).padStart(10)}` +
          `${(r.cpuSeconds === undefined ? "-" : ((r.cpuSeconds * 1000) / r.requests).toFixed(3)).padStart(12)}` +
          `${(r.transactions === undefined ? "-" : r.transactions.toFixed(2)).padStart(10)}`
      )
    let failed = false
    // what the HTTP stack alone allows: /healthz through the service against the bare server
    const ceiling = health.requests / bareHealth.requests
    for (const e of endpoints) {
      const a = measured[e.name]
      const b = baseline[e.name]
      line(`service ${e.label}`, a)
      line(`  bare node:http, same ${Buffer.byteLength(bodies[new URL(e.path, s.base).pathname])} bytes`, b)
      console.log(
        `  service / bare: throughput ${((a.requests) / (b.requests)).toFixed(3)}x` +
          `  (stack ceiling, /healthz service / bare: ${ceiling.toFixed(3)}x; endpoint / ceiling ${(a.requests / b.requests / ceiling).toFixed(2)})`
      )
      if (a.errors > 0) failed = true
    }
    line("service GET /healthz (no key, no database)", health)
    line("  bare node:http, same bytes", bareHealth)
    console.log(`  service / bare: throughput ${ceiling.toFixed(3)}x (the stack's ceiling)`)
    console.log("")
    console.log(
      `mixed: ${clientCount} clients x ${rendersPerClient} renders every ${pollEveryMs / 1000} s over ${s.secrets.length} keys, ${mixedSeconds} s, renders executing`
    )
    console.log(
      `  polls ${mix.requests} (${mix.rps.toFixed(0)}/s)  p50 ${mix.p50.toFixed(2)} ms  p99 ${mix.p99.toFixed(2)} ms  max ${mix.max.toFixed(2)} ms  errors ${mix.errors}` +
        `  ticks skipped (client still waiting) ${mix.skipped}`
    )
    console.log(`  captioned creates ${mix.creates}  p50 ${mix.createP50.toFixed(2)} ms  p99 ${mix.createP99.toFixed(2)} ms`)
    if (mixLoop) {
      console.log(
        `  service main thread: event-loop delay worst 1-s p99 ${mixLoop.p99.toFixed(1)} ms, max ${mixLoop.max.toFixed(1)} ms;` +
          ` GC ${mixLoop.gcMsPerS.toFixed(1)} ms/s, longest pause ${mixLoop.gcMax.toFixed(1)} ms`
      )
    }
    if (mix.errors > 0) failed = true

    // 7. observability's cost: the service alone again, under each configuration in turn
    if (process.env.BENCH_OBSERVABILITY !== "0") await measureObservability(s, renderId)
    if (failed) process.exitCode = 1
  } finally {
    await stopAll()
  }
}

async function soak(minutes: number) {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-soak-"))
  const children: Array<ChildProcess> = []
  try {
    const s = await setup(dataDir, children)
    const pid = s.service.pid
    const mixed = startMixed(s, await startMixedRenders(s, mixedRenders))
    console.log(`bench:soak  ${minutes} min of ${clientCount} clients x ${rendersPerClient} renders every ${pollEveryMs / 1000} s over ${s.secrets.length} keys, renders executing`)
    console.log(`minute  RSS MiB    polls     p50 ms    p99 ms  errors  skipped  creates  load avg   per-key tables`)
    console.log(`     0  ${(rssMiB(pid) ?? NaN).toFixed(1).padStart(7)}`)
    mixed.take()
    let errors = 0
    for (let m = 1; m <= minutes; m++) {
      await new Promise((r) => setTimeout(r, 60_000))
      const w = summary(mixed.take(), 60)
      errors += w.errors
      console.log(
        `${String(m).padStart(6)}  ${(rssMiB(pid) ?? NaN).toFixed(1).padStart(7)}  ${String(w.requests).padStart(7)}` +
          `${fmt(w.p50)}${fmt(w.p99)}  ${String(w.errors).padStart(6)}  ${String(w.skipped).padStart(7)}  ${String(w.creates).padStart(7)}  ${os.loadavg()[0].toFixed(2).padStart(8)}   ${s.tableStats() ?? "-"}`
      )
    }
    await mixed.stop()
    if (errors > 0) process.exitCode = 1
  } finally {
    await stopChildren(children, dataDir)
  }
}

// ---------------------------------------------------------------------------------------------
// the bare server, when this file is started as `node bench/api.ts --bare PORT BODIES_FILE`
// (BODIES_FILE: a JSON object from path to the exact body the service answered)

if (process.argv[2] === "--bare") {
  const port = Number(process.argv[3])
  const bodies = new Map(Object.entries(JSON.parse(fs.readFileSync(process.argv[4], "utf8")) as Record<string, string>)
    .map(([path, body]) => [path, Buffer.from(body)]))
  const server = http.createServer((req, res) => {
    const q = req.url?.indexOf("?") ?? -1
    const body = req.method === "GET" ? bodies.get(q === -1 ? req.url ?? "" : req.url!.slice(0, q)) : undefined
    if (body !== undefined) {
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
      res.end(body)
    } else {
      res.writeHead(404)
      res.end()
    }
  })
  server.keepAliveTimeout = 30_000
  server.listen(port, "127.0.0.1", () => process.stdout.write("ready\n"))
  process.on("SIGTERM", () => server.close(() => process.exit(0)))
} else if (process.argv[2] === "--observability") {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-observability-"))
  const children: Array<ChildProcess> = []
  try {
    const s = await setup(dataDir, children, 1)
    const auth = { authorization: `Bearer ${s.secrets[0]}` }
    const renderId = await createRender(s.base, s.secrets[0], s.mediaIds[0], "A poll target")
    await waitFor(async () => (await (await fetch(`${s.base}/api/v1/renders/${renderId}`, { headers: auth })).json()).status === "completed", 300_000, "the poll target render")
    console.log(`bench:api --observability  ${connections} keep-alive connections, closed loop, ${warmupSeconds} s warm-up + ${durationSeconds} s measured each; load average now ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`)
    await measureObservability(s, renderId)
  } finally {
    await stopChildren(children, dataDir)
  }
} else if (process.argv[2] === "--soak") {
  const i = process.argv.indexOf("--minutes")
  const minutes = i === -1 ? 10 : Number(process.argv[i + 1])
  if (!Number.isInteger(minutes) || minutes < 1) throw new Error("--minutes takes a whole number of minutes, at least 1")
  await soak(minutes)
} else {
  await main()
}

/** Stops the set-up service (its data stays), then the poll under each observability configuration. */
async function measureObservability(s: Setup, renderId: string) {
  const exited = new Promise((r) => s.service.once("exit", r))
  s.service.kill("SIGTERM")
  await exited
  return observabilityCost({
    root,
    env: s.env,
    pollPath: `/api/v1/renders/${renderId}`,
    auth: { authorization: `Bearer ${s.secrets[0]}` },
    load: (name, url, headers, pid) => load(name, url, headers, pid),
    freePort,
    waitFor,
    quantile
  })
}

/** SIGTERM each child (newest first), SIGKILL after 15 s, then remove the data directory. */
async function stopChildren(children: Array<ChildProcess>, dataDir: string) {
  for (const child of children.reverse()) {
    if (child.exitCode !== null) continue
    const exited = new Promise((r) => child.once("exit", r))
    child.kill("SIGTERM")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))])
    if (child.exitCode === null) child.kill("SIGKILL")
  }
  fs.rmSync(dataDir, { recursive: true, force: true })
}
