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
 *   3. starts, each in its own process, a bare node:http server serving those exact bodies from
 *      memory, and a bare node:http + `pg` server (a pool of the service's 20) that runs for each
 *      request exactly the statements the service ran for one such request (recorded from the
 *      service by bench/query-log.ts over 20 requests in a row, printed), then answers the same
 *      bytes: the fair limit. Measures them the same way; prints each endpoint's req/s, latency,
 *      non-200 answers, requests that failed at the socket (no HTTP answer; with the error, whether
 *      the socket was reused and its idle time), CPU time per request of the server process (all
 *      threads, from /proc), database round trips (statements) per request, the server process's
 *      largest RSS in the window (VmRSS, sampled twice a second), and
 *      `service / bare` and `service / bare+pg` throughput;
 *      `--before DIR` runs DIR's service (another checkout, e.g. main's head) beside this one under
 *      the same load, its own bare+pg server running its own statements; the measurements alternate
 *      over BENCH_ROUNDS rounds (2 with --before, else 1) and are summed. The load generator honours
 *      `Keep-Alive: timeout=N` as fetch and browsers do;
 *   4. the mixed run (BENCH_MIXED_S, 30 s): BENCH_CLIENTS (200) simulated clients, each polling its
 *      5 renders every 2 s (one GET each, on a shared keep-alive pool; a client whose previous polls
 *      are unanswered skips the tick, counted as "skipped"), spread over the keys, while
 *      renders execute: BENCH_RENDERS (12) renders are created as it starts, and a writer adds a
 *      captioned one every 5 s while fewer than that many are queued or processing (its create
 *      latencies are printed too). Prints requests, p50/p99/max, errors (non-200 and failed
 *      requests) and the service's RSS (the largest seen, and at the end).
 *   5. nothing but loopback: every server listens on 127.0.0.1 and everything stops at the end;
 *   7. the cost of observability (bench/observability.ts; BENCH_OBSERVABILITY=0 skips it): the poll
 *      with metrics off, on, and on with traces at 100 % sampling, side by side;
 *      `--observability` runs only this part (one photo, one render, then BENCH_OBSERVABILITY_ROUNDS rounds).
 *   8. `--scrape-loop` (bench/scrape-loop.ts): only the poll, alone and with one local client scraping
 *      /metrics in a tight loop (on one keep-alive connection; a new connection per scrape), side by
 *      side with their ratio to the poll alone, over BENCH_ROUNDS (3) rounds in rotating order.
 *   The service runs with metrics on (METRICS_PORT, its /metrics scraped every second), as deployed.
 *   6. `--soak [--minutes N]` (default 10): steps 1 and 4 only, the mixed load for N minutes,
 *      printing each minute the service's RSS, the minute's p50/p99/errors and the sizes of the
 *      service's per-key tables (logged by the service under P2V_TABLE_STATS_SECONDS).
 *
 * Environment: BENCH_CONNECTIONS (16), BENCH_WARMUP_S (2), BENCH_DURATION_S (10), BENCH_MIXED_S
 * (30), BENCH_CLIENTS (200), BENCH_KEYS (8), BENCH_RENDERS (12), DATABASE_URL (optional),
 * BENCH_CPU_PROF=DIR (profile the service's main thread, written as DIR/main.cpuprofile after the mixed
 * run, see bench/loop-delay.ts; the measured windows, mixed included, are written beside
 * the profile as window-<name>.txt, in the profile's clock, with the requests answered in each). On a shared 2-core VM the load
 * generator and the server compete for the same cores; compare within one run.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type * as net from "node:net"
import * as os from "node:os"
import * as Path from "node:path"
import { freePort, waitFor } from "../test/support/net.ts"
import { observabilityCost } from "./observability.ts"
import { decode, type Statement } from "./query-log.ts"
import { scrapeLoopCost } from "./scrape-loop.ts"

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

function run(root: string, args: Array<string>, env: NodeJS.ProcessEnv) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(node, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.on(
      "exit",
      (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(" ")} exited ${code}: ${err}`)))
    )
  })
}

const adminJson = async (root: string, env: NodeJS.ProcessEnv, ...args: Array<string>) =>
  JSON.parse(await run(root, [Path.join(root, "packages/server/src/bin/admin.ts"), ...args], env))

interface Result {
  readonly requests: number
  /** answers other than 200 */
  readonly errors: number
  /** requests that failed at the socket (reset, hang-up): no HTTP answer at all */
  readonly socketFailures: ReadonlyArray<SocketFailure>
  readonly seconds: number
  readonly latenciesMs: Float64Array
  readonly cpuSeconds: number | undefined
  readonly transactions: number | undefined
  /** statements sent to the database per request over the measured window */
  readonly roundTrips: number | undefined
  /** the server process's largest resident set (VmRSS) seen in the measured window, sampled twice a second */
  readonly rssMiB: number | undefined
}

/** A request that got no answer: the socket's error, whether it was a reused keep-alive socket, and how long it had been idle then. */
interface SocketFailure {
  readonly code: string
  readonly reused: boolean
  readonly idleMs: number | undefined
}

/** When each socket's last answer ended (performance.now()), for the idle time of a failed reuse. */
const lastAnswered = new WeakMap<net.Socket, number>()

/**
 * The load generator's client honours `Keep-Alive: timeout=N` as browsers and fetch do: Node's Agent
 * applies the hint (less a second) only when it has a timeout of its own, so it is given one.
 */
const agentOptions = (sockets: number): http.AgentOptions => ({
  keepAlive: true,
  maxSockets: sockets,
  maxFreeSockets: sockets,
  timeout: 120_000
})

const get = (agent: http.Agent, url: URL, headers: Record<string, string>) =>
  new Promise<{ status: number; body: string; failure?: SocketFailure }>((resolve) => {
    let idleMs: number | undefined
    let socket: net.Socket | undefined
    const fail = (e: NodeJS.ErrnoException) =>
      resolve({ status: 0, body: "", failure: { code: e.code ?? e.message, reused: req.reusedSocket, idleMs } })
    const req = http.request(
      { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: "GET", headers, agent },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (d: Buffer) => chunks.push(d))
        res.on("end", () => {
          if (socket !== undefined) lastAnswered.set(socket, performance.now())
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() })
        })
        res.on("error", fail)
      }
    )
    req.on("socket", (s) => {
      socket = s
      const at = lastAnswered.get(s)
      idleMs = at === undefined ? undefined : performance.now() - at
    })
    req.on("error", fail)
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
    const { rows } = await client.query(
      "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()"
    )
    return Number(rows[0].n)
  } finally {
    await client.end()
  }
}

const monotonicMicros = () => process.hrtime.bigint() / 1000n

/**
 * Closed loop: `connections` workers on keep-alive sockets, each issuing its next request on
 * completion. `pid` (the server's) is sampled for CPU time over the measured window; `queries`, when
 * given, reads the server's count of database statements, sampled over the same window.
 */
async function load(
  name: string,
  url: string,
  headers: Record<string, string>,
  pid?: number,
  options: { readonly transactions?: boolean; readonly queries?: () => Promise<number> } = {}
): Promise<Result> {
  const agent = new http.Agent(agentOptions(connections))
  const target = new URL(url)
  const latencies: Array<number> = []
  const socketFailures: Array<SocketFailure> = []
  let errors = 0
  let measuring = false
  const xactsBefore = options.transactions ? await transactions() : undefined
  const start = performance.now()
  const measureFrom = start + warmupSeconds * 1000
  const end = measureFrom + durationSeconds * 1000
  let cpuAtStart: number | undefined
  let queriesAtStart: Promise<number> | undefined
  let windowStart = 0n
  let rssPeak: number | undefined
  const sampleRss = () => {
    const rss = rssMiB(pid)
    if (rss !== undefined) rssPeak = Math.max(rssPeak ?? 0, rss)
  }
  let rssTimer: ReturnType<typeof setInterval> | undefined
  const startTimer = setTimeout(() => {
    cpuAtStart = cpuSeconds(pid)
    queriesAtStart = options.queries?.()
    windowStart = monotonicMicros()
    sampleRss()
    rssTimer = setInterval(sampleRss, 500)
  }, warmupSeconds * 1000)
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      const { failure, status } = await get(agent, target, headers)
      const t1 = performance.now()
      if (t0 >= measureFrom && t1 <= end) {
        measuring = true
        latencies.push(t1 - t0)
        if (failure !== undefined) socketFailures.push(failure)
        else if (status !== 200) errors++
      }
    }
  }))
  clearTimeout(startTimer)
  clearInterval(rssTimer)
  sampleRss()
  const cpuAtEnd = cpuSeconds(pid)
  const queriesAtEnd = await options.queries?.()
  // the window and the requests answered in it: profile-summary.ts gives µs per request from them
  if (profDir) {
    fs.writeFileSync(
      Path.join(profDir, `window-${name}.txt`),
      `${windowStart} ${monotonicMicros()} ${latencies.length}\n`
    )
  }
  agent.destroy()
  const xactsAfter = options.transactions ? await transactions() : undefined
  if (!measuring) throw new Error("no request completed inside the measured window")
  const sorted = Float64Array.from(latencies).sort()
  const queriesFrom = await queriesAtStart
  return {
    requests: latencies.length,
    errors,
    socketFailures,
    seconds: durationSeconds,
    latenciesMs: sorted,
    cpuSeconds: cpuAtStart === undefined || cpuAtEnd === undefined ? undefined : cpuAtEnd - cpuAtStart,
    // over warm-up and measurement alike: divide by the requests of both
    transactions: xactsBefore === undefined || xactsAfter === undefined
      ? undefined
      : (xactsAfter - xactsBefore) / (latencies.length * (1 + warmupSeconds / durationSeconds)),
    roundTrips: queriesFrom === undefined || queriesAtEnd === undefined
      ? undefined
      : (queriesAtEnd - queriesFrom) / latencies.length,
    rssMiB: rssPeak
  }
}

/** Rounds of one measurement as one: requests, seconds, CPU and statements summed, latencies pooled, the largest RSS. */
const combine = (rs: ReadonlyArray<Result>): Result => {
  const sum = (f: (r: Result) => number | undefined) =>
    rs.some((r) => f(r) === undefined) ? undefined : rs.reduce((a, r) => a + f(r)!, 0)
  const requests = rs.reduce((a, r) => a + r.requests, 0)
  const trips = sum((r) => r.roundTrips === undefined ? undefined : r.roundTrips * r.requests)
  const xacts = sum((r) => r.transactions === undefined ? undefined : r.transactions * r.requests)
  return {
    requests,
    errors: rs.reduce((a, r) => a + r.errors, 0),
    socketFailures: rs.flatMap((r) => r.socketFailures),
    seconds: rs.reduce((a, r) => a + r.seconds, 0),
    latenciesMs: Float64Array.from(rs.flatMap((r) => [...r.latenciesMs])).sort(),
    cpuSeconds: sum((r) => r.cpuSeconds),
    transactions: xacts === undefined ? undefined : xacts / requests,
    roundTrips: trips === undefined ? undefined : trips / requests,
    rssMiB: rs.some((r) => r.rssMiB === undefined) ? undefined : Math.max(...rs.map((r) => r.rssMiB!))
  }
}

const quantile = (sorted: Float64Array | Array<number>, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

// ---------------------------------------------------------------------------------------------

interface Setup {
  /** the checkout whose service this is */
  readonly root: string
  readonly base: string
  readonly env: NodeJS.ProcessEnv
  readonly service: ChildProcess
  readonly secrets: ReadonlyArray<string>
  readonly mediaIds: ReadonlyArray<string>
  readonly tableStats: () => string | undefined
  /** the service's count of database statements so far, and its recording of them (bench/query-log.ts) */
  readonly queryLog: <A>(command: "count" | "start" | "stop" | "connection") => Promise<A>
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

async function setup(root: string, dataDir: string, children: Array<ChildProcess>, photos = 25): Promise<Setup> {
  const port = await freePort()
  const queryLogPort = await freePort()
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
      "--import",
      Path.join(import.meta.dirname, "loop-delay.ts"),
      "--import",
      Path.join(import.meta.dirname, "query-log.ts"),
      Path.join(root, "packages/server/src/bin/start.ts")
    ],
    {
      cwd: root,
      env: {
        ...env,
        P2V_TABLE_STATS_SECONDS: "20",
        BENCH_QUERY_LOG_PORT: String(queryLogPort),
        ...(profDir
          ? {
            BENCH_MAIN_PROF: Path.join(profDir, "main.cpuprofile"),
            BENCH_MAIN_HEAP: Path.join(profDir, "main.heapprofile")
          }
          : {})
      },
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
  const scraper = setInterval(
    () => void fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`).then((r) => r.text()).catch(() => {}),
    1000
  )
  service.once("exit", () => clearInterval(scraper))
  const base = `http://127.0.0.1:${port}`
  await waitFor(
    async () => {
      if (service.exitCode !== null) throw new Error(`service exited:\n${serviceOutput}`)
      return (await fetch(`${base}/readyz`)).status === 200
    },
    120_000,
    "the service"
  ).catch((e) => {
    throw new Error(`${e.message}\n${serviceOutput}`)
  })
  const ws = await adminJson(root, env, "workspace", "create", "--name", "Bench", "--plan", "custom")
  const keys = await Promise.all(Array.from({ length: keyCount }, () =>
    adminJson(
      root,
      env,
      "key",
      "create",
      ws.id,
      "--scopes",
      "media:read,media:write,renders:create,renders:read",
      "--reads-per-minute",
      "1000000",
      "--uploads-per-minute",
      "1000",
      "--creates-per-minute",
      "100000"
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
  await waitFor(
    async () => (await adminJson(root, env, "media", "show", mediaIds[mediaIds.length - 1])).inferred !== null,
    180_000,
    "classification"
  )
    .catch(() => console.error("(classification did not finish in 180 s; measuring anyway)"))
  const queryLog = async <A>(command: string) =>
    (await (await fetch(`http://127.0.0.1:${queryLogPort}/${command}`)).json()) as A
  return { root, base, env, service, secrets, mediaIds, tableStats: () => lastTables, loopDelay, queryLog }
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
  /** answers other than 200, and failed creates */
  errors: number
  /** polls that failed at the socket (no HTTP answer) */
  socketFailures: Array<SocketFailure>
  creates: Array<number>
  /** client ticks skipped because that client's previous polls were still unanswered (saturation) */
  skipped: number
}

function startMixed(s: Setup, initialRenders: ReadonlyArray<string>) {
  const agent = new http.Agent(agentOptions(clientCount))
  const pool = [...initialRenders]
  const status = new Map<string, string>()
  let window: MixedWindow = { latencies: [], errors: 0, socketFailures: [], creates: [], skipped: 0 }
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
        track(
          get(agent, new URL(`/api/v1/renders/${id}`, base), headers).then(({ body, failure, status: code }) => {
            outstanding--
            w.latencies.push(performance.now() - t0)
            if (failure !== undefined) w.socketFailures.push(failure)
            else if (code !== 200) w.errors++
            else status.set(id, JSON.parse(body).status)
          })
        )
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
          const id = await createRender(
            s.base,
            s.secrets[n % s.secrets.length],
            s.mediaIds[n % s.mediaIds.length],
            `Bench caption number ${n}`
          )
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
      window = { latencies: [], errors: 0, socketFailures: [], creates: [], skipped: 0 }
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
    socketFailures: w.socketFailures,
    skipped: w.skipped,
    creates: w.creates.length,
    createP50: quantile(creates, 0.5),
    createP99: quantile(creates, 0.99)
  }
}

const startMixedRenders = async (s: Setup, count: number) => {
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    ids.push(await createRender(s.base, s.secrets[i % s.secrets.length], s.mediaIds[i % s.mediaIds.length], ""))
  }
  return ids
}

// ---------------------------------------------------------------------------------------------

const fmt = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : "-").padStart(10)

interface Endpoint {
  readonly name: string
  readonly label: string
  readonly path: string
}

/** One service under test: this tree's, or the `--before` checkout's. */
interface Target {
  readonly label: string
  readonly s: Setup
  readonly renderId: string
  readonly endpoints: ReadonlyArray<Endpoint>
  /** path (without query) → the exact body the service answered */
  readonly bodies: Record<string, string>
  /** endpoint name → the statements the service runs for one such request, in order */
  readonly statements: Record<string, ReadonlyArray<Statement>>
}

/**
 * The statements one request makes: `n` requests in a row are recorded, and the statements whose text
 * occurs a whole multiple of n times are the request's (the cluster's own background statements do
 * not line up); the last request's share, with its parameters, is kept.
 */
async function captureStatements(s: Setup, url: string, headers: Record<string, string>, n = 20) {
  await s.queryLog("start")
  for (let i = 0; i < n; i++) await (await fetch(url, { headers })).arrayBuffer()
  const log = await s.queryLog<Array<Statement>>("stop")
  const counts = new Map<string, number>()
  for (const q of log) counts.set(q.text, (counts.get(q.text) ?? 0) + 1)
  const kept = log.filter((q) => counts.get(q.text)! % n === 0)
  return kept.slice(kept.length - kept.length / n)
}

async function prepare(label: string, root: string, dataDir: string, children: Array<ChildProcess>): Promise<Target> {
  fs.mkdirSync(dataDir, { recursive: true })
  const s = await setup(root, dataDir, children)
  const auth = { authorization: `Bearer ${s.secrets[0]}` }
  // the poll target: one render, completed (its document no longer changes)
  const renderId = await createRender(s.base, s.secrets[0], s.mediaIds[0], "A poll target")
  await waitFor(
    async () => {
      const res = await fetch(`${s.base}/api/v1/renders/${renderId}`, { headers: auth })
      const doc = await res.json()
      if (doc.status === "failed" || doc.status === "canceled") throw new Error(`the poll target ended ${doc.status}`)
      return doc.status === "completed"
    },
    300_000,
    "the poll target render"
  )
  const endpoints = [
    { name: "media", label: "GET /api/v1/media?limit=25", path: "/api/v1/media?limit=25" },
    { name: "poll", label: "GET /api/v1/renders/{id}", path: `/api/v1/renders/${renderId}` },
    { name: "usage", label: "GET /api/v1/usage", path: "/api/v1/usage" }
  ]
  const bodies: Record<string, string> = {}
  const statements: Record<string, ReadonlyArray<Statement>> = {}
  bodies["/healthz"] = await (await fetch(`${s.base}/healthz`)).text()
  for (const e of endpoints) {
    const res = await fetch(`${s.base}${e.path}`, { headers: auth })
    if (res.status !== 200) throw new Error(`${e.path} answered ${res.status}`)
    bodies[new URL(e.path, s.base).pathname] = await res.text()
    statements[e.name] = await captureStatements(s, `${s.base}${e.path}`, auth)
  }
  return { label, s, renderId, endpoints, bodies, statements }
}

/** A bare server process (`--bare` from memory, or `--bare-pg` with the target's statements), started and ready. */
async function startBare(kind: "--bare" | "--bare-pg", specFile: string, children: Array<ChildProcess>) {
  const port = await freePort()
  const child = spawn(node, [import.meta.filename, kind, String(port), specFile], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"]
  })
  children.push(child)
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve())
    child.once("exit", (code) => reject(new Error(`bare server exited ${code}`)))
  })
  const base = `http://127.0.0.1:${port}`
  return { child, base, queries: async () => Number(await (await fetch(`${base}/__queries`)).json()) }
}

const failuresText = (fs: ReadonlyArray<SocketFailure>) =>
  fs.slice(0, 5).map((f) =>
    `${f.code} on a ${f.reused ? "reused" : "new"} socket${
      f.idleMs === undefined ? "" : ` idle ${f.idleMs.toFixed(0)} ms`
    }`
  ).join("; ") +
  (fs.length > 5 ? `; … ${fs.length - 5} more` : "")

async function main() {
  const beforeAt = process.argv.indexOf("--before")
  const beforeRoot = beforeAt === -1 ? undefined : Path.resolve(process.argv[beforeAt + 1])
  const rounds = Number(process.env.BENCH_ROUNDS ?? (beforeRoot === undefined ? 1 : 2))
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-api-"))
  const children: Array<ChildProcess> = []
  const stopAll = () => stopChildren(children, dataDir)
  try {
    const targets: Array<Target> = [
      await prepare(beforeRoot === undefined ? "service" : "after", root, Path.join(dataDir, "after"), children)
    ]
    if (beforeRoot !== undefined) {
      targets.push(await prepare("before", beforeRoot, Path.join(dataDir, "before"), children))
    }
    const main = targets[0]

    // the bare servers: from memory (this tree's bodies), and with each target's statements on its own database
    const bodyFile = Path.join(dataDir, "bodies.json")
    fs.writeFileSync(bodyFile, JSON.stringify(main.bodies))
    const bare = await startBare("--bare", bodyFile, children)
    const barePg: Record<string, Awaited<ReturnType<typeof startBare>>> = {}
    for (const t of targets) {
      const spec: BarePgSpec = {
        connection: await t.s.queryLog("connection"),
        routes: Object.fromEntries(
          t.endpoints.map((
            e
          ) => [new URL(e.path, t.s.base).pathname, {
            body: t.bodies[new URL(e.path, t.s.base).pathname],
            statements: t.statements[e.name]
          }])
        )
      }
      const specFile = Path.join(dataDir, `bare-pg-${t.label}.json`)
      fs.writeFileSync(specFile, JSON.stringify(spec))
      barePg[t.label] = await startBare("--bare-pg", specFile, children)
    }

    // 2–3. each measurement, the rounds alternating between the services and the bare servers
    const measured: Record<string, Array<Result>> = {}
    const add = (key: string, r: Result) => (measured[key] ??= []).push(r)
    for (let round = 0; round < rounds; round++) {
      for (const e of main.endpoints) {
        for (const t of targets) {
          const te = t.endpoints.find((x) => x.name === e.name)!
          const auth = { authorization: `Bearer ${t.s.secrets[0]}` }
          add(
            `${t.label} ${e.name}`,
            await load(`${t.label}-${e.name}`, `${t.s.base}${te.path}`, auth, t.s.service.pid, {
              transactions: true,
              queries: () => t.s.queryLog("count")
            })
          )
        }
        add(`bare ${e.name}`, await load(`bare-${e.name}`, `${bare.base}${e.path}`, {}, bare.child.pid))
        for (const t of targets) {
          const te = t.endpoints.find((x) => x.name === e.name)!
          add(
            `bare+pg ${t.label} ${e.name}`,
            await load(
              `bare-pg-${t.label}-${e.name}`,
              `${barePg[t.label].base}${te.path}`,
              {},
              barePg[t.label].child.pid,
              { queries: barePg[t.label].queries }
            )
          )
        }
      }
      for (const t of targets) {
        add(`${t.label} healthz`, await load(`${t.label}-healthz`, `${t.s.base}/healthz`, {}, t.s.service.pid))
      }
      add("bare healthz", await load("bare-healthz", `${bare.base}/healthz`, {}, bare.child.pid))
    }
    bare.child.kill("SIGTERM")
    for (const t of targets) barePg[t.label].child.kill("SIGTERM")
    const r = (key: string) => combine(measured[key])

    // 4. the mixed run, one service at a time (the other idle)
    const mixes: Array<{
      label: string
      mix: ReturnType<typeof summary>
      loop: LoopDelaySummary | undefined
      rss: { readonly peak: number; readonly end: number } | undefined
    }> = []
    for (const t of targets) {
      const mixed = startMixed(t.s, [t.renderId, ...await startMixedRenders(t.s, mixedRenders)])
      await new Promise((r) => setTimeout(r, 2000)) // every client has started
      mixed.take()
      const mixedFrom = performance.now()
      const mixedFromMicros = monotonicMicros()
      // the service's resident set through the run: its largest, and where it ended
      let rssPeak = 0
      const rssTimer = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(t.s.service.pid) ?? 0)), 500)
      await new Promise((r) => setTimeout(r, mixedSeconds * 1000))
      clearInterval(rssTimer)
      const rssEnd = rssMiB(t.s.service.pid)
      const rss = rssEnd === undefined ? undefined : { peak: Math.max(rssPeak, rssEnd), end: rssEnd }
      const mix = summary(mixed.take(), mixedSeconds)
      const loop = t.s.loopDelay(mixedFrom, performance.now() + 1000)
      if (profDir && t === main) {
        fs.writeFileSync(Path.join(profDir, "window-mixed.txt"), `${mixedFromMicros} ${monotonicMicros()}\n`)
        // the main thread's profile is written on SIGUSR2 (bench/loop-delay.ts)
        t.s.service.kill("SIGUSR2")
        await waitFor(
          async () => fs.existsSync(Path.join(profDir, "main.cpuprofile")),
          30_000,
          "the main thread's profile"
        )
      }
      await mixed.stop()
      mixes.push({ label: t.label, mix, loop, rss })
    }

    // report
    const loadavg = os.loadavg().map((x) => x.toFixed(2)).join(" ")
    console.log(
      `bench:api  ${connections} keep-alive connections, closed loop, ${warmupSeconds} s warm-up + ${durationSeconds} s measured each, ${rounds} round(s) alternating`
    )
    console.log(
      `           ${os.cpus().length} CPUs, node ${process.version}, database: ${
        process.env.DATABASE_URL ? "DATABASE_URL" : "embedded PostgreSQL"
      }, load average now ${loadavg}`
    )
    console.log(`           metrics on (/metrics scraped every second); traces off`)
    if (beforeRoot !== undefined) console.log(`           after: ${root}   before: ${beforeRoot}`)
    console.log("")
    console.log(
      `${"".padEnd(44)}${"req/s".padStart(9)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"requests".padStart(10)}${
        "non-200".padStart(9)
      }${"socket".padStart(8)}${"CPU ms/req".padStart(12)}${"db trips".padStart(10)}${"RSS MiB".padStart(9)}`
    )
    const line = (label: string, r: Result) =>
      console.log(
        `${label.padEnd(44)}${(r.requests / r.seconds).toFixed(0).padStart(9)}${
          quantile(r.latenciesMs, 0.5).toFixed(2).padStart(9)
        }${quantile(r.latenciesMs, 0.99).toFixed(2).padStart(9)}` +
          `${String(r.requests).padStart(10)}${String(r.errors).padStart(9)}${
            String(r.socketFailures.length).padStart(8)
          }` +
          `${(r.cpuSeconds === undefined ? "-" : ((r.cpuSeconds * 1000) / r.requests).toFixed(3)).padStart(12)}` +
          `${(r.roundTrips === undefined ? "-" : r.roundTrips.toFixed(2)).padStart(10)}` +
          `${(r.rssMiB === undefined ? "-" : r.rssMiB.toFixed(0)).padStart(9)}`
      )
    let failed = false
    const x = (a: Result, b: Result) => (a.requests / a.seconds / (b.requests / b.seconds)).toFixed(3)
    for (const e of main.endpoints) {
      const b = r(`bare ${e.name}`)
      for (const t of targets) {
        const a = r(`${t.label} ${e.name}`)
        const bp = r(`bare+pg ${t.label} ${e.name}`)
        line(`${t.label} ${e.label}`, a)
        line(`  bare+pg: node:http, pg pool, same SQL`, bp)
        console.log(`  service / bare: throughput ${x(a, b)}x   service / bare+pg: throughput ${x(a, bp)}x`)
        if (a.socketFailures.length > 0) console.log(`  socket failures: ${failuresText(a.socketFailures)}`)
        if (a.errors > 0 || a.socketFailures.length > 0) failed = true
      }
      line(
        `  bare node:http, same ${
          Buffer.byteLength(main.bodies[new URL(e.path, main.s.base).pathname])
        } bytes from memory`,
        b
      )
      console.log("")
    }
    const bh = r("bare healthz")
    for (const t of targets) {
      const h = r(`${t.label} healthz`)
      line(`${t.label} GET /healthz (no key, no database)`, h)
      console.log(`  service / bare: throughput ${x(h, bh)}x (the stack's ceiling)`)
    }
    line("  bare node:http, same bytes", bh)
    console.log("")
    console.log(
      `statements per request (recorded from the service; the bare+pg server runs them, with these parameters):`
    )
    for (const t of targets) {
      for (const e of t.endpoints) {
        console.log(`  ${t.label} ${e.name}: ${t.statements[e.name].length}`)
        for (const q of t.statements[e.name]) console.log(`    ${q.text.replace(/\s+/g, " ").slice(0, 150)}`)
      }
    }
    console.log("")
    for (const { label, loop, mix, rss } of mixes) {
      console.log(
        `mixed (${label}): ${clientCount} clients x ${rendersPerClient} renders every ${
          pollEveryMs / 1000
        } s over ${keyCount} keys, ${mixedSeconds} s, renders executing`
      )
      console.log(
        `  polls ${mix.requests} (${mix.rps.toFixed(0)}/s)  p50 ${mix.p50.toFixed(2)} ms  p99 ${
          mix.p99.toFixed(2)
        } ms  max ${mix.max.toFixed(2)} ms` +
          `  non-200 ${mix.errors}  socket failures ${mix.socketFailures.length}  ticks skipped (client still waiting) ${mix.skipped}`
      )
      if (mix.socketFailures.length > 0) console.log(`  socket failures: ${failuresText(mix.socketFailures)}`)
      console.log(
        `  captioned creates ${mix.creates}  p50 ${mix.createP50.toFixed(2)} ms  p99 ${mix.createP99.toFixed(2)} ms`
      )
      if (rss) console.log(`  service RSS ${rss.peak.toFixed(0)} MiB at most, ${rss.end.toFixed(0)} MiB at the end`)
      if (loop) {
        console.log(
          `  service main thread: event-loop delay worst 1-s p99 ${loop.p99.toFixed(1)} ms, max ${
            loop.max.toFixed(1)
          } ms;` +
            ` GC ${loop.gcMsPerS.toFixed(1)} ms/s, longest pause ${loop.gcMax.toFixed(1)} ms`
        )
      }
      if (mix.errors > 0 || mix.socketFailures.length > 0) failed = true
    }

    // 7. observability's cost: the service alone again, under each configuration in turn
    if (beforeRoot === undefined && process.env.BENCH_OBSERVABILITY !== "0") {
      await measureObservability(main.s, main.renderId)
    }
    if (failed) process.exitCode = 1
  } finally {
    await stopAll()
  }
}

async function soak(minutes: number) {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-soak-"))
  const children: Array<ChildProcess> = []
  try {
    const s = await setup(root, dataDir, children)
    const pid = s.service.pid
    const mixed = startMixed(s, await startMixedRenders(s, mixedRenders))
    console.log(
      `bench:soak  ${minutes} min of ${clientCount} clients x ${rendersPerClient} renders every ${
        pollEveryMs / 1000
      } s over ${s.secrets.length} keys, renders executing`
    )
    console.log(
      `minute  RSS MiB    polls     p50 ms    p99 ms  non-200  socket  skipped  creates  load avg   per-key tables`
    )
    console.log(`     0  ${(rssMiB(pid) ?? NaN).toFixed(1).padStart(7)}`)
    mixed.take()
    let errors = 0
    for (let m = 1; m <= minutes; m++) {
      await new Promise((r) => setTimeout(r, 60_000))
      const w = summary(mixed.take(), 60)
      errors += w.errors + w.socketFailures.length
      if (w.socketFailures.length > 0) console.log(`  socket failures: ${failuresText(w.socketFailures)}`)
      console.log(
        `${String(m).padStart(6)}  ${(rssMiB(pid) ?? NaN).toFixed(1).padStart(7)}  ${String(w.requests).padStart(7)}` +
          `${fmt(w.p50)}${fmt(w.p99)}  ${String(w.errors).padStart(7)}  ${
            String(w.socketFailures.length).padStart(6)
          }  ${String(w.skipped).padStart(7)}  ${String(w.creates).padStart(7)}  ${
            os.loadavg()[0].toFixed(2).padStart(8)
          }   ${s.tableStats() ?? "-"}`
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

interface BarePgSpec {
  readonly connection: Record<string, unknown>
  /** path → the body to answer and the statements to run first, one after another, as the service does */
  readonly routes: Record<string, { readonly body: string; readonly statements: ReadonlyArray<Statement> }>
}

const pathOnly = (url: string | undefined) => {
  const q = url?.indexOf("?") ?? -1
  return q === -1 ? url ?? "" : url!.slice(0, q)
}

if (process.argv[2] === "--bare") {
  const port = Number(process.argv[3])
  const bodies = new Map(
    Object.entries(JSON.parse(fs.readFileSync(process.argv[4], "utf8")) as Record<string, string>)
      .map(([path, body]) => [path, Buffer.from(body)])
  )
  const server = http.createServer((req, res) => {
    const body = req.method === "GET" ? bodies.get(pathOnly(req.url)) : undefined
    if (body !== undefined) {
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
      res.end(body)
    } else {
      res.writeHead(404)
      res.end()
    }
  })
  server.listen(port, "127.0.0.1", () => process.stdout.write("ready\n"))
  process.on("SIGTERM", () => server.close(() => process.exit(0)))
} else if (process.argv[2] === "--bare-pg") {
  // the fair limit: node:http and a `pg` pool of the service's size (20, packages/cluster/src/database/Database.ts),
  // running for each request the statements the service ran for it (bench/query-log.ts), then the same bytes
  const port = Number(process.argv[3])
  const spec = JSON.parse(fs.readFileSync(process.argv[4], "utf8")) as BarePgSpec
  const { default: pg } = await import("pg")
  const int8AsNumber = new pg.TypeOverrides()
  int8AsNumber.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v))
  const pool = new pg.Pool({ ...spec.connection, max: 20, types: int8AsNumber })
  const routes = new Map(
    Object.entries(spec.routes).map(([path, r]) => [path, {
      body: Buffer.from(r.body),
      statements: r.statements.map((q) => ({ text: q.text, values: q.values.map(decode) }))
    }])
  )
  let queries = 0
  let failedOnce = false
  const server = http.createServer(async (req, res) => {
    const path = pathOnly(req.url)
    if (path === "/__queries") return res.end(String(queries))
    const route = req.method === "GET" ? routes.get(path) : undefined
    if (route === undefined) {
      res.writeHead(404)
      return res.end()
    }
    try {
      for (const q of route.statements) {
        queries++
        await pool.query(q.text, q.values)
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": route.body.length })
      res.end(route.body)
    } catch (e) {
      if (!failedOnce) console.error(`bare+pg: ${String(e)}`)
      failedOnce = true
      res.writeHead(500)
      res.end(String(e))
    }
  })
  await pool.query("SELECT 1")
  server.listen(port, "127.0.0.1", () => process.stdout.write("ready\n"))
  process.on("SIGTERM", () => server.close(() => pool.end().then(() => process.exit(0))))
} else if (process.argv[2] === "--observability") {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-observability-"))
  const children: Array<ChildProcess> = []
  try {
    const s = await setup(root, dataDir, children, 1)
    const auth = { authorization: `Bearer ${s.secrets[0]}` }
    const renderId = await createRender(s.base, s.secrets[0], s.mediaIds[0], "A poll target")
    await waitFor(
      async () =>
        (await (await fetch(`${s.base}/api/v1/renders/${renderId}`, { headers: auth })).json()).status === "completed",
      300_000,
      "the poll target render"
    )
    console.log(
      `bench:api --observability  ${connections} keep-alive connections, closed loop, ${warmupSeconds} s warm-up + ${durationSeconds} s measured each; load average now ${
        os.loadavg().map((x) => x.toFixed(2)).join(" ")
      }`
    )
    await measureObservability(s, renderId)
  } finally {
    await stopChildren(children, dataDir)
  }
} else if (process.argv[2] === "--scrape-loop") {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-scrape-loop-"))
  const children: Array<ChildProcess> = []
  try {
    const s = await setup(root, dataDir, children, 1)
    const auth = { authorization: `Bearer ${s.secrets[0]}` }
    const renderId = await createRender(s.base, s.secrets[0], s.mediaIds[0], "A poll target")
    await waitFor(
      async () =>
        (await (await fetch(`${s.base}/api/v1/renders/${renderId}`, { headers: auth })).json()).status === "completed",
      300_000,
      "the poll target render"
    )
    console.log(
      `bench:api --scrape-loop  GET /api/v1/renders/{id}, ${connections} keep-alive connections, closed loop, ${warmupSeconds} s warm-up + ${durationSeconds} s measured each; ${os.cpus().length} CPUs, load average now ${
        os.loadavg().map((x) => x.toFixed(2)).join(" ")
      }`
    )
    await scrapeLoopCost({
      pollUrl: `${s.base}/api/v1/renders/${renderId}`,
      metricsUrl: `http://127.0.0.1:${s.env.METRICS_PORT}/metrics`,
      auth,
      pid: s.service.pid,
      load: (name, url, headers, pid) => load(name, url, headers, pid),
      quantile,
      children
    })
  } finally {
    await stopChildren(children, dataDir)
  }
} else if (process.argv[2] === "--soak") {
  const i = process.argv.indexOf("--minutes")
  const minutes = i === -1 ? 10 : Number(process.argv[i + 1])
  if (!Number.isInteger(minutes) || minutes < 1) {
    throw new Error("--minutes takes a whole number of minutes, at least 1")
  }
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
