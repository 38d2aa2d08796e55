/**
 * `npm run bench:api` — throughput and latency of the authenticated media list against the real
 * service, next to a bare node:http server that answers the same JSON from memory, driven by the
 * same closed-loop load generator (loopback only).
 *
 *   1. starts the service (`packages/api/src/bin/start.ts`; embedded PostgreSQL under a temp
 *      DATA_DIR, or DATABASE_URL when set), creates a workspace and a key with a reads budget of
 *      1,000,000/min through the operator CLI, and uploads 25 photos;
 *   2. measures `GET /api/v1/media?limit=25` with the key: CONNECTIONS keep-alive connections, each
 *      sending its next request when the previous answer is in (closed loop), WARMUP_S of warm-up
 *      then DURATION_S measured;
 *   3. starts a bare node:http server in its own process serving that exact response body, and
 *      measures it the same way;
 *   4. prints both side by side and their ratio (plus, for context, the service's /healthz, which
 *      needs no key and no database, measured the same way).
 *
 * Environment: BENCH_CONNECTIONS (default 16), BENCH_WARMUP_S (2), BENCH_DURATION_S (10),
 * DATABASE_URL (optional). On a shared 2-core VM the load generator and the server compete for
 * the same cores; compare within one run.
 */
import { spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as Path from "node:path"
import { freePort, waitFor } from "../test/support/net.ts"

const root = Path.resolve(import.meta.dirname, "..")
const node = process.execPath
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const warmupSeconds = Number(process.env.BENCH_WARMUP_S ?? 2)
const durationSeconds = Number(process.env.BENCH_DURATION_S ?? 10)

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
  JSON.parse(await run([Path.join(root, "packages/api/src/bin/admin.ts"), ...args], env))

interface Result {
  readonly requests: number
  readonly errors: number
  readonly seconds: number
  readonly latenciesMs: Float64Array
}

/** Closed loop: `connections` workers on keep-alive sockets, each issuing its next request on completion. */
async function load(url: string, headers: Record<string, string>, warmup: number, duration: number): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections })
  const target = new URL(url)
  const once = () =>
    new Promise<number>((resolve) => {
      const req = http.request(
        { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: "GET", headers, agent },
        (res) => {
          res.on("data", () => {})
          res.on("end", () => resolve(res.statusCode ?? 0))
          res.on("error", () => resolve(0))
        }
      )
      req.on("error", () => resolve(0))
      req.end()
    })
  const latencies: Array<number> = []
  let errors = 0
  let measuring = false
  const start = performance.now()
  const measureFrom = start + warmup * 1000
  const end = measureFrom + duration * 1000
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      const status = await once()
      const t1 = performance.now()
      if (t0 >= measureFrom && t1 <= end) {
        measuring = true
        latencies.push(t1 - t0)
        if (status !== 200) errors++
      }
    }
  }))
  agent.destroy()
  if (!measuring) throw new Error("no request completed inside the measured window")
  const sorted = Float64Array.from(latencies).sort()
  return { requests: latencies.length, errors, seconds: duration, latenciesMs: sorted }
}

const quantile = (sorted: Float64Array, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

async function main() {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-bench-api-"))
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {})
  }
  const children: Array<ChildProcess> = []
  const stopAll = async () => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null) continue
      const exited = new Promise((r) => child.once("exit", r))
      child.kill("SIGTERM")
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))])
      if (child.exitCode === null) child.kill("SIGKILL")
    }
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    // 1. the service, a workspace, a key, 25 photos
    const service = spawn(node, [Path.join(root, "packages/api/src/bin/start.ts")], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    children.push(service)
    let serviceOutput = ""
    service.stdout!.on("data", (d) => (serviceOutput += d))
    service.stderr!.on("data", (d) => (serviceOutput += d))
    const base = `http://127.0.0.1:${port}`
    await waitFor(async () => {
      if (service.exitCode !== null) throw new Error(`service exited:\n${serviceOutput}`)
      return (await fetch(`${base}/readyz`)).status === 200
    }, 120_000, "the service").catch((e) => {
      throw new Error(`${e.message}\n${serviceOutput}`)
    })
    const ws = await adminJson(env, "workspace", "create", "--name", "Bench", "--plan", "studio")
    const key = await adminJson(
      env, "key", "create", ws.id, "--scopes", "media:read,media:write", "--reads-per-minute", "1000000", "--uploads-per-minute", "1000"
    )
    const auth = { authorization: `Bearer ${key.secret}` }
    const fixtures = ["rocket.jpg", "chelsea.png", "coffee.png", "astronaut.png"]
    for (let i = 0; i < 25; i++) {
      const name = fixtures[i % fixtures.length]
      const form = new FormData()
      form.append("file", new Blob([fs.readFileSync(Path.join(root, "test/fixtures", name))]), name)
      form.append("label", `Bench photo ${i + 1}`)
      form.append("tags", "bench")
      const res = await fetch(`${base}/api/v1/media`, { method: "POST", headers: auth, body: form })
      if (res.status !== 201) throw new Error(`upload ${i} answered ${res.status}: ${await res.text()}`)
    }
    const listUrl = `${base}/api/v1/media?limit=25`
    let body = ""
    await waitFor(async () => {
      const res = await fetch(listUrl, { headers: auth })
      body = await res.text()
      const page = JSON.parse(body)
      return page.data.length === 25 && page.data.every((m: any) => m.width !== null)
    }, 30_000, "25 listed photos with dimensions")

    // 2. the service (and, for context, its cheapest route: no key, no database)
    const measured = await load(listUrl, auth, warmupSeconds, durationSeconds)
    const health = await load(`${base}/healthz`, {}, warmupSeconds, durationSeconds)

    // 3. the bare server with the same body
    const bodyFile = Path.join(dataDir, "list.json")
    fs.writeFileSync(bodyFile, body)
    const barePort = await freePort()
    const bare = spawn(node, [Path.join(root, "bench/api.ts"), "--bare", String(barePort), bodyFile], { cwd: root, stdio: ["ignore", "pipe", "inherit"] })
    children.push(bare)
    await new Promise<void>((resolve, reject) => {
      bare.stdout!.once("data", () => resolve())
      bare.once("exit", (code) => reject(new Error(`bare server exited ${code}`)))
    })
    const baseline = await load(`http://127.0.0.1:${barePort}/api/v1/media?limit=25`, auth, warmupSeconds, durationSeconds)

    // 4. report
    const row = (name: string, r: Result) => {
      const rps = r.requests / r.seconds
      return { name, rps, p50: quantile(r.latenciesMs, 0.5), p99: quantile(r.latenciesMs, 0.99), requests: r.requests, errors: r.errors }
    }
    const a = row("service  GET /api/v1/media?limit=25", measured)
    const b = row("bare node:http, same JSON", baseline)
    const c = row("(service  GET /healthz, no key)", health)
    const pad = (s: string, n: number) => s.padEnd(n)
    const num = (x: number, digits = 2) => x.toFixed(digits).padStart(10)
    console.log(`bench:api  ${connections} keep-alive connections, closed loop, ${warmupSeconds} s warm-up + ${durationSeconds} s measured each`)
    console.log(`           response body ${Buffer.byteLength(body)} bytes (25 media), ${os.cpus().length} CPUs, node ${process.version}`)
    console.log(`           database: ${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded PostgreSQL"}`)
    console.log("")
    console.log(`${pad("", 36)}${"req/s".padStart(10)}${"p50 ms".padStart(10)}${"p99 ms".padStart(10)}${"requests".padStart(10)}${"non-200".padStart(10)}`)
    for (const r of [a, b, c]) {
      console.log(`${pad(r.name, 36)}${num(r.rps, 0)}${num(r.p50)}${num(r.p99)}${String(r.requests).padStart(10)}${String(r.errors).padStart(10)}`)
    }
    console.log("")
    console.log(`service / bare:  throughput ${(a.rps / b.rps).toFixed(3)}x   p50 ${(a.p50 / b.p50).toFixed(1)}x   p99 ${(a.p99 / b.p99).toFixed(1)}x`)
    if (a.errors > 0) process.exitCode = 1
  } finally {
    await stopAll()
  }
}

// ---------------------------------------------------------------------------------------------
// the bare server, when this file is started as `node bench/api.ts --bare PORT BODY_FILE`

if (process.argv[2] === "--bare") {
  const port = Number(process.argv[3])
  const body = fs.readFileSync(process.argv[4])
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url?.startsWith("/api/v1/media")) {
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
} else {
  await main()
}
