import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import type { Json } from "./limits.ts"
import { freePort, waitFor } from "./net.ts"

/**
 * A real Prometheus (Debian's `prometheus` package, installed by the project's setup step with the
 * dev dependencies: scripts/setup.mjs) scraping the processes of a test, queried through its HTTP API.
 * Nothing here stands in for Prometheus: the test's PromQL runs in Prometheus itself.
 */
export const prometheusBinary = "/usr/bin/prometheus"
export const promtoolBinary = "/usr/bin/promtool"

export interface Target {
  /** the `job` label */
  readonly job: string
  /** the `instance` label, e.g. "api" or "runner-1" */
  readonly instance: string
  /** host:port of its /metrics listener */
  readonly address: string
}

/** An alert as Prometheus' /api/v1/alerts lists it (pending or firing). */
export interface Alert {
  readonly labels: Record<string, string>
  readonly annotations: Record<string, string>
  readonly state: "pending" | "firing"
  readonly value: string
}

export interface Prometheus {
  readonly url: string
  /** the alerts pending or firing now (with `rules` given to startPrometheus) */
  readonly alerts: () => Promise<Array<Alert>>
  /** an instant query's result vector (throws on a query error) */
  readonly query: (promql: string) => Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>
  /** a query's single value, or undefined when the result is empty */
  readonly scalar: (promql: string) => Promise<number | undefined>
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/**
 * `rules`: the text of a rule file, loaded and evaluated at every scrape interval (the test's
 * Prometheus evaluates as often as it scrapes).
 */
export const startPrometheus = async (
  targets: ReadonlyArray<Target>,
  scrapeSeconds = 1,
  options: { readonly rules?: string } = {}
): Promise<Prometheus> => {
  const dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-prometheus-"))
  const jobs = [...new Set(targets.map((t) => t.job))]
  if (options.rules !== undefined) fs.writeFileSync(Path.join(dir, "rules.yml"), options.rules)
  // a static config per target so `instance` is a readable name, not host:port
  const config = [
    `global:`,
    `  scrape_interval: ${scrapeSeconds}s`,
    `  scrape_timeout: ${scrapeSeconds}s`,
    `  evaluation_interval: ${scrapeSeconds}s`,
    ...(options.rules === undefined ? [] : [`rule_files: ["${Path.join(dir, "rules.yml")}"]`]),
    `scrape_configs:`,
    ...jobs.flatMap((job) => [
      `  - job_name: ${job}`,
      `    static_configs:`,
      ...targets.filter((t) => t.job === job).flatMap((t) => [
        `      - targets: ["${t.address}"]`,
        `        labels: { instance: "${t.instance}" }`
      ])
    ])
  ].join("\n")
  fs.writeFileSync(Path.join(dir, "prometheus.yml"), config + "\n")
  const port = await freePort()
  const child: ChildProcess = spawn(prometheusBinary, [
    `--config.file=${Path.join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${Path.join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=warn"
  ], { stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const url = `http://127.0.0.1:${port}`
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited:\n${output}`)
      return (await fetch(`${url}/-/ready`)).status === 200
    },
    30_000,
    "prometheus"
  ).catch((e) => {
    child.kill("SIGKILL")
    throw new Error(`${e.message}\n${output}`)
  })
  const query = async (promql: string) => {
    const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: promql })}`)
    const body = await res.json() as {
      status: string
      error?: string
      data?: { resultType: string; result: Array<Json> }
    }
    if (body.status !== "success") throw new Error(`PromQL ${promql}: ${body.error}`)
    if (body.data!.resultType === "scalar") {
      return [{ metric: {}, value: body.data!.result as unknown as [number, string] }]
    }
    return body.data!.result
  }
  return {
    url,
    alerts: async () => {
      const body = await (await fetch(`${url}/api/v1/alerts`)).json() as { data: { alerts: Array<Alert> } }
      return body.data.alerts
    },
    query,
    scalar: async (promql) => {
      const r = await query(promql)
      return r.length === 0 ? undefined : Number(r[0].value[1])
    },
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r))
        child.kill("SIGTERM")
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))])
        if (child.exitCode === null) child.kill("SIGKILL")
      }
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** `promtool <args>` (e.g. `check rules FILE`): its exit code and what it said. */
export const promtool = (...args: Array<string>) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(promtoolBinary, args, { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    child.on("exit", (code) => resolve({ code, output }))
  })

/** `promtool check metrics` on an exposition: its exit code and what it said. */
export const promtoolCheck = (exposition: string) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(promtoolBinary, ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    child.on("exit", (code) => resolve({ code, output }))
    child.stdin.end(exposition)
  })
