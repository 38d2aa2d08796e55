/**
 * The cost of observability on the request path, one part of `npm run bench:api`: the
 * poll (`GET /api/v1/renders/{id}`, the hottest request) against the same service and data under
 * three configurations, side by side in one run:
 *   - off:     no METRICS_PORT, no OTEL_*: nothing measured, no tracer (the request path as before);
 *   - metrics: METRICS_PORT set, scraped every second meanwhile (route histograms recorded per request);
 *   - traces:  METRICS_PORT and OTEL_EXPORTER_OTLP_ENDPOINT with OTEL_TRACES_SAMPLER=always_on (100 %),
 *              spans exported to a local sink in this process that accepts and discards them.
 * Each is measured `rounds` times, alternating, each round starting with the next configuration
 * (off, metrics, traces; metrics, traces, off; …). Printed: the best round of each (on a shared machine
 * the neighbours only ever slow a round down), and the median of each round's own comparison with
 * that round's off. Budgets: metrics ≤ 5 % and traces ≤ 15 % below off in poll throughput.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"

export interface Measured {
  readonly requests: number
  readonly seconds: number
  readonly latenciesMs: Float64Array
  readonly cpuSeconds: number | undefined
}

export interface Tools {
  readonly root: string
  readonly env: NodeJS.ProcessEnv
  readonly pollPath: string
  readonly auth: Record<string, string>
  readonly load: (name: string, url: string, headers: Record<string, string>, pid?: number) => Promise<Measured>
  readonly freePort: () => Promise<number>
  readonly waitFor: (check: () => Promise<boolean>, ms: number, what: string) => Promise<void>
  readonly quantile: (sorted: Float64Array, q: number) => number
}

const configurations = ["off", "metrics", "traces"] as const
type Configuration = (typeof configurations)[number]

export async function observabilityCost(t: Tools, rounds = Number(process.env.BENCH_OBSERVABILITY_ROUNDS ?? 2)) {
  // the OTLP sink: takes every batch, keeps nothing (the cost measured is the service's, not a collector's)
  let exported = 0
  const sink = http.createServer((req, res) => {
    req.on("data", (d: Buffer) => (exported += d.length))
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
  })
  await new Promise<void>((r) => sink.listen(0, "127.0.0.1", r))
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`

  const best = new Map<Configuration, Measured>()
  const perRound: Array<Map<Configuration, number>> = []
  try {
    for (let round = 0; round < rounds; round++) {
      // each round starts with the next configuration, so none is always measured first
      const order = configurations.map((_, i) => configurations[(i + round) % configurations.length])
      const inRound = new Map<Configuration, number>()
      for (const c of order) {
        const port = await t.freePort()
        const metricsPort = await t.freePort()
        const { METRICS_PORT: _metrics, OTEL_EXPORTER_OTLP_ENDPOINT: _otlp, OTEL_TRACES_SAMPLER: _sampler, ...base } =
          t.env
        const env: NodeJS.ProcessEnv = {
          ...base,
          PORT: String(port),
          // no render executes meanwhile (the poll target is completed; nothing else may use the CPU)
          RENDER_CONCURRENCY: "0",
          ...(c === "off" ? {} : { METRICS_PORT: String(metricsPort) }),
          ...(c === "traces" ? { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_TRACES_SAMPLER: "always_on" } : {})
        }
        const service = await start(t, env, port)
        // a Prometheus-like scraper while the load runs
        const scraping = c === "off"
          ? undefined
          : setInterval(
            () => void fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()).catch(() => {}),
            1000
          )
        try {
          const r = await t.load(
            `observability-${c}-${round}`,
            `http://127.0.0.1:${port}${t.pollPath}`,
            t.auth,
            service.pid
          )
          const previous = best.get(c)
          if (previous === undefined || r.requests > previous.requests) best.set(c, r)
          inRound.set(c, r.requests / r.seconds)
        } finally {
          if (scraping) clearInterval(scraping)
          await stop(service)
        }
      }
      perRound.push(inRound)
      console.log(
        `  round ${round + 1}: ${configurations.map((c) => `${c} ${inRound.get(c)!.toFixed(0)} req/s`).join(", ")}`
      )
    }
  } finally {
    sink.close()
  }

  const off = best.get("off")!
  const rps = (r: Measured) => r.requests / r.seconds
  console.log("")
  console.log(
    `observability cost: GET /api/v1/renders/{id} (the poll), best of ${rounds} alternating rounds per configuration`
  )
  console.log(
    `${"".padEnd(44)}${"req/s".padStart(10)}${"p50 ms".padStart(10)}${"p99 ms".padStart(10)}${
      "CPU ms/req".padStart(12)
    }${"vs off".padStart(10)}`
  )
  const labels: Record<Configuration, string> = {
    off: "off (no METRICS_PORT, no OTEL_*)",
    metrics: "metrics on (METRICS_PORT, scraped 1/s)",
    traces: "metrics + traces, 100 % sampled (OTLP)"
  }
  for (const c of configurations) {
    const r = best.get(c)!
    const cpu = r.cpuSeconds === undefined ? "-" : ((r.cpuSeconds * 1000) / r.requests).toFixed(3)
    const change = c === "off" ? "" : `${(((rps(r) - rps(off)) / rps(off)) * 100).toFixed(1)} %`
    console.log(
      `${labels[c].padEnd(44)}${rps(r).toFixed(0).padStart(10)}${
        t.quantile(r.latenciesMs, 0.5).toFixed(2).padStart(10)
      }` +
        `${t.quantile(r.latenciesMs, 0.99).toFixed(2).padStart(10)}${cpu.padStart(12)}${change.padStart(10)}`
    )
  }
  // the same comparison made within each round (the neighbours a round had, both sides had): the median
  const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
  const paired = (c: Configuration) => median(perRound.map((r) => ((r.get(c)! - r.get("off")!) / r.get("off")!) * 100))
  console.log(
    `  within each round, median change against that round's off: metrics ${paired("metrics").toFixed(1)} %, traces ${
      paired("traces").toFixed(1)
    } %`
  )
  console.log(
    `  spans exported to the sink: ${
      (exported / 1024 / 1024).toFixed(1)
    } MiB of OTLP JSON; budgets: metrics ≤ 5 %, traces ≤ 15 %`
  )
  return { off: rps(off), metrics: rps(best.get("metrics")!), traces: rps(best.get("traces")!) }
}

async function start(t: Tools, env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [Path.join(t.root, "packages/server/src/bin/start.ts")], {
    cwd: t.root,
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)))
  child.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)))
  await t.waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`service exited:\n${output}`)
      return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200
    },
    120_000,
    "the service"
  ).catch((e) => {
    child.kill("SIGKILL")
    throw new Error(`${e.message}\n${output}`)
  })
  return child
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return
  const exited = new Promise((r) => child.once("exit", r))
  child.kill("SIGTERM")
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))])
  if (child.exitCode === null) child.kill("SIGKILL")
}
