import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as Path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import {
  type Alert,
  type Prometheus,
  prometheusBinary,
  promtoolBinary,
  promtoolCheck,
  startPrometheus
} from "../support/prometheus.ts"
import {
  client,
  freePort,
  makeShared,
  root,
  type Service,
  type Shared,
  startService,
  waitFor
} from "../support/service.ts"
import { keyedWithPhoto } from "./support.ts"

/**
 * The metrics against a real Prometheus (Debian's, installed by the project's setup step with the dev
 * dependencies): one API process and two runners on one PostgreSQL, each serving /metrics on its own
 * METRICS_PORT, scraped every second. Renders queue behind one slot per runner; then Prometheus is
 * asked, in PromQL through its HTTP API, how many finished, whether the queue rose and fell back to 0,
 * what the routes were called; promtool checks every process's exposition; every panel query of the
 * Grafana dashboard in the repo answers, and none answers NaN once the deployment is idle; and killing a
 * runner shows in the survivor's shards.
 *
 * This Prometheus evaluates the alerts of deploy/prometheus/alerts.yml (their `for`
 * shortened to 2 s, so the test need not wait out minutes; the expressions are the file's). A healthy
 * deployment fires none; a killed runner fires RunnerDown, and with the last runner killed too,
 * NoRunnerHeartbeats fires from the api's scrape alone.
 */
const alertRules = fs.readFileSync(Path.join(root, "deploy/prometheus/alerts.yml"), "utf8").replace(
  /for: \d+m$/gm,
  "for: 2s"
)
const renders = 5

let shared: Shared
let prometheus: Prometheus | undefined
const services: Array<Service> = []

beforeAll(async () => {
  shared = await makeShared()
})

afterAll(async () => {
  for (const s of services) await s.stop("SIGKILL").catch(() => {})
  await prometheus?.stop()
})

/** A panel of the Grafana dashboard, as far as the test reads it. */
interface Panel {
  readonly title: string
  readonly targets: ReadonlyArray<{ readonly expr: string }>
}

const exposition = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`)
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return res.text()
}

it(
  "a deployment of 1 api + 2 runners, scraped by Prometheus: renders, queue, routes, promtool, the dashboard, a runner lost",
  async () => {
    for (const binary of [prometheusBinary, promtoolBinary]) {
      // installed by scripts/setup.mjs with the dev dependencies; CI installs them, so this never skips
      expect(fs.existsSync(binary), `${binary} (Debian's prometheus package; npm ci installs it as root on Debian)`)
        .toBe(true)
    }
    const secrets = {
      API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64")
    }
    const common = {
      ...secrets,
      RENDER_SECONDS: "1",
      RENDER_CONCURRENCY: "1",
      RENDER_NICE: "0",
      RENDER_X264_PRESET: "superfast"
    }
    const ports = { api: await freePort(), "runner-1": await freePort(), "runner-2": await freePort() }
    // one at a time: the first start of a database creates the schema
    const api = await startService(shared, { ...common, METRICS_PORT: String(ports.api) }, "api")
    services.push(api)
    const r1 = await startService(shared, { ...common, METRICS_PORT: String(ports["runner-1"]) }, "runner")
    services.push(r1)
    const r2 = await startService(shared, { ...common, METRICS_PORT: String(ports["runner-2"]) }, "runner")
    services.push(r2)

    expect(alertRules.match(/for: 2s$/gm)?.length, "every alert's `for` shortened").toBe(
      alertRules.match(/- alert: /g)?.length
    )
    prometheus = await startPrometheus(
      [
        { job: "api", instance: "api", address: `127.0.0.1:${ports.api}` },
        { job: "runner", instance: "runner-1", address: `127.0.0.1:${ports["runner-1"]}` },
        { job: "runner", instance: "runner-2", address: `127.0.0.1:${ports["runner-2"]}` }
      ],
      1,
      { rules: alertRules }
    )
    const prom = prometheus
    const eventually = async (what: string, promql: string, ok: (v: number | undefined) => boolean, ms = 30_000) => {
      let last: unknown
      await waitFor(async () => ok(last = await prom.scalar(promql)), ms, what).catch((e) => {
        throw new Error(`${e.message}: ${promql} answered ${last}`)
      })
    }
    await eventually("every target up", "sum(up)", (v) => v === 3)

    // the listener serves /metrics only, apart from the API: not on the API's port, not in its document
    expect((await fetch(`http://127.0.0.1:${ports.api}/other`)).status).toBe(404)
    expect((await fetch(`${api.baseUrl}/metrics`)).status).toBe(404)
    expect(JSON.stringify(await (await fetch(`${api.baseUrl}/openapi.json`)).json())).not.toContain("/metrics")

    const { http, mediaId } = await keyedWithPhoto(api, "coffee.png")

    // refusals and a path nothing routes, so those series have something in them
    expect((await http.get("/api/v1/renders/rnd_doesnotexist")).status).toBe(404)
    expect((await client(api.baseUrl, "p2v_sk_wrong").get("/api/v1/usage")).status).toBe(401)
    expect((await http.get("/api/v1/no/such/path/9f3c")).status).toBe(404)
    // a request Node's parser cannot read never reaches a route, and is counted all the same
    const refusedByParser = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(
        Number(new URL(api.baseUrl).port),
        "127.0.0.1",
        () => socket.end("BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n")
      )
      let answer = ""
      socket.on("data", (d) => (answer += d)).on("end", () => resolve(answer)).on("error", reject)
    })
    expect(refusedByParser).toMatch(/^HTTP\/1\.1 400 /)
    const replayKey = "observed-replay"
    expect(
      (await http.postJson("/api/v1/renders", { media_id: mediaId, quote: "Seen" }, { "idempotency-key": replayKey }))
        .status
    ).toBe(202)
    expect(
      (await http.postJson("/api/v1/renders", { media_id: mediaId, quote: "Seen" }, { "idempotency-key": replayKey }))
        .status
    ).toBe(202)

    // more renders than slots (one per runner): they wait, queued
    const ids: Array<string> = []
    for (let i = 0; i < renders - 1; i++) {
      const res = await http.postJson("/api/v1/renders", { media_id: mediaId, quote: `Observed ${i}` })
      expect(res.status).toBe(202)
      ids.push((await res.json()).id)
    }
    await waitFor(
      async () => {
        for (const id of ids) {
          const doc = await (await http.get(`/api/v1/renders/${id}`)).json()
          if (doc.status === "failed" || doc.status === "canceled") throw new Error(`render ${id} ended ${doc.status}`)
          if (doc.status !== "completed") return false
        }
        return true
      },
      180_000,
      "the renders to complete"
    )

    // ---- what Prometheus answers
    await eventually(
      `${renders} renders completed`,
      `sum(p2v_renders_finished_total{status="completed"})`,
      (v) => v === renders
    )
    expect(await prom.scalar(`sum(p2v_renders_created_total)`)).toBe(renders)
    await eventually("the queue empty again", `max(p2v_renders{status="queued"})`, (v) => v === 0)
    expect(await prom.scalar(`max(p2v_render_oldest_queued_seconds)`)).toBe(0)
    const peak = await prom.scalar(`max_over_time(max(p2v_renders{status="queued"})[10m:1s])`)
    expect(peak, "the queue rose while renders waited for a slot").toBeGreaterThan(0)
    expect(await prom.scalar(`sum(p2v_render_processing_seconds_count)`)).toBe(renders)
    expect(await prom.scalar(`sum(p2v_render_queue_seconds_count)`)).toBe(renders)
    expect(await prom.scalar(`sum(p2v_media_uploaded_total{source="api"})`)).toBe(1)
    expect(await prom.scalar(`sum(p2v_api_refusals_total{code="render_not_found"})`)).toBe(1)
    expect(await prom.scalar(`sum(p2v_api_refusals_total{code="invalid_api_key"})`)).toBe(1)
    expect(await prom.scalar(`sum(p2v_http_protocol_errors_total)`)).toBe(1)
    expect(await prom.scalar(`sum(p2v_idempotency_total{outcome="new"})`)).toBe(1)
    expect(await prom.scalar(`sum(p2v_idempotency_total{outcome="replayed"})`)).toBe(1)
    await eventually(
      "a classification timed",
      `sum(p2v_vision_inference_seconds_count)`,
      (v) => v !== undefined && v >= 1,
      60_000
    )
    // both runners hold shards and ran renders
    const shards = await prom.query(`p2v_runner_shards{job="runner"}`)
    expect(shards.map((s) => Number(s.value[1])).reduce((a, b) => a + b, 0)).toBe(300)
    expect(shards.every((s) => Number(s.value[1]) > 0)).toBe(true)

    // routes are templates: the poll under its template, the unrouted path as `unmatched`, never a raw path
    const polls = await prom.scalar(
      `sum(http_server_request_duration_seconds_count{http_route="/api/v1/renders/{id}",http_request_method="GET",http_response_status_code="200"})`
    )
    expect(polls).toBeGreaterThan(0)
    expect(
      await prom.scalar(
        `sum(http_server_request_duration_seconds_count{http_route="/api/v1/renders",http_response_status_code="202"})`
      )
    ).toBe(renders + 1)
    // the unrouted path and /metrics asked of the API's port
    expect(
      await prom.scalar(
        `sum(http_server_request_duration_seconds_count{http_route="unmatched",http_response_status_code="404"})`
      )
    ).toBe(2)
    const routes = await (await fetch(`${prom.url}/api/v1/label/http_route/values`)).json() as { data: Array<string> }
    for (const route of routes.data) {
      expect(route === "unmatched" || route === "/openapi.json" || /^(\/([a-z_]+|v1|\{id\}))+$/.test(route), route)
        .toBe(true)
      expect(route).not.toMatch(/rnd_|9f3c|[0-9a-f]{8}-/)
    }

    // what an operator sees (printed for the record): a runner's own series, and the cluster's answers
    const runnerText = await exposition(ports["runner-2"])
    console.log(
      `runner-2 /metrics (p2v_ series):\n${
        runnerText.split("\n").filter((l) => l.startsWith("p2v_") && !l.includes("_bucket")).join("\n")
      }`
    )
    for (
      const q of [
        `sum(p2v_renders_finished_total{status="completed"})`,
        `max_over_time(max(p2v_renders{status="queued"})[10m:1s])`,
        `max(p2v_renders{status="queued"})`,
        `sum by (instance) (p2v_runner_shards)`
      ]
    ) {
      console.log(`PromQL ${q} → ${JSON.stringify((await prom.query(q)).map((r) => [r.metric, r.value[1]]))}`)
    }

    // ---- promtool accepts every process's exposition
    for (const [name, port] of Object.entries(ports)) {
      const checked = await promtoolCheck(await exposition(port))
      expect(checked.code, `${name}: ${checked.output}`).toBe(0)
    }

    // ---- every panel of the dashboard in the repo answers, with data
    const dashboard = JSON.parse(fs.readFileSync(Path.join(root, "deploy/grafana/dashboards/pic2video.json"), "utf8"))
    const panels: ReadonlyArray<Panel> = dashboard.panels
    const queries = panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })))
    expect(queries.length).toBeGreaterThanOrEqual(10)
    for (const { panel, expr } of queries) {
      // Grafana's own variable, as Grafana would fill it for a short range
      const promql = expr.replaceAll("$__rate_interval", "5m")
      const result = await prom.query(promql)
      expect(result.length, `panel "${panel}": ${promql} answered nothing`).toBeGreaterThan(0)
    }

    // ---- idle: no panel answers NaN. With a window shorter than the time since the last request and
    // the last render (Grafana's $__rate_interval at low traffic), a quantile of nothing is NaN unless
    // the query says otherwise
    const window = "5s"
    await eventually(
      "no request and no render in the window",
      `sum(rate(http_server_request_duration_seconds_count[${window}])) + sum(rate(p2v_render_processing_seconds_count[${window}])) + sum(rate(p2v_vision_inference_seconds_count[${window}]))`,
      (v) => v === 0
    )
    for (const { panel, expr } of queries) {
      const promql = expr.replaceAll("$__rate_interval", window)
      const result = await prom.query(promql)
      for (const r of result) {
        expect(
          Number.isFinite(Number(r.value[1])),
          `panel "${panel}" answered ${r.value[1]} for ${JSON.stringify(r.metric)} while idle: ${promql}`
        ).toBe(true)
      }
      // the latency panels still draw their series (at 0), one per route for the routes' panels
      if (expr.includes("histogram_quantile")) expect(result.length, `panel "${panel}": ${promql}`).toBeGreaterThan(0)
    }
    const idleP99 = await prom.query(
      queries.find((q: { panel: string }) => q.panel === "Request latency p99 by route")!.expr.replaceAll(
        "$__rate_interval",
        window
      )
    )
    console.log(
      `idle p99 by route (${window} window): ${JSON.stringify(idleP99.map((r) => [r.metric.http_route, r.value[1]]))}`
    )

    // ---- the alerts: a healthy deployment fires none; both runners heartbeat
    const firing = async () => (await prom.alerts()).filter((a) => a.state === "firing")
    const show = (alerts: Array<Alert>) =>
      alerts.map((a) =>
        `${a.labels.alertname}{${
          Object.entries(a.labels).filter(([k]) => k !== "alertname").map(([k, v]) => `${k}="${v}"`).join(",")
        }} ${a.state}: ${a.annotations.summary} (${a.annotations.runbook})`
      )
    await eventually("both runners live", `max(p2v_cluster_runners_live)`, (v) => v === 2)
    const rulesLoaded = await (await fetch(`${prom.url}/api/v1/rules`)).json() as {
      data: { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> }
    }
    const loaded = rulesLoaded.data.groups.flatMap((g) => g.rules)
    expect(loaded.length).toBe(alertRules.match(/- alert: /g)!.length)
    for (const rule of loaded) expect(rule.health, `${rule.name}: ${rule.lastError}`).toBe("ok")
    expect(show(await prom.alerts()), "no alert while healthy").toEqual([])

    // ---- a runner is killed: the survivor takes every shard, as its own gauge says; RunnerDown fires for it
    await r1.stop("SIGKILL")
    await eventually("runner-1 down", `up{instance="runner-1"}`, (v) => v === 0)
    await eventually("runner-2 holding every shard", `p2v_runner_shards{instance="runner-2"}`, (v) => v === 300, 90_000)
    await eventually("one runner live", `max(p2v_cluster_runners_live)`, (v) => v === 1, 30_000)
    await waitFor(
      async () => (await firing()).some((a) => a.labels.alertname === "RunnerDown"),
      30_000,
      "RunnerDown to fire"
    )
    const oneDown = await firing()
    console.log(`alerts with runner-1 killed:\n${show(oneDown).join("\n")}`)
    expect(oneDown.map((a) => [a.labels.alertname, a.labels.instance, a.labels.severity])).toEqual([[
      "RunnerDown",
      "runner-1",
      "warning"
    ]])
    expect(oneDown[0].annotations.runbook).toBe("docs/operations.md#runnerdown")

    // ---- the last runner is killed: no heartbeat is left, which the api's scrape alone shows
    await r2.stop("SIGKILL")
    await waitFor(
      async () => (await firing()).some((a) => a.labels.alertname === "NoRunnerHeartbeats"),
      60_000,
      "NoRunnerHeartbeats to fire"
    )
    const allDown = await firing()
    console.log(`alerts with both runners killed:\n${show(allDown).join("\n")}`)
    expect(allDown.map((a) => [a.labels.alertname, a.labels.instance ?? "", a.labels.severity]).sort()).toEqual([
      ["NoRunnerHeartbeats", "", "critical"],
      ["RunnerDown", "runner-1", "warning"],
      ["RunnerDown", "runner-2", "warning"]
    ])
  },
  420_000
)
