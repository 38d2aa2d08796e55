import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { afterAll, beforeAll, expect, it } from "vitest"
import { freePort, makeShared, type Service, startService } from "../support/service.ts"

/**
 * /metrics under a scrape loop and under junk. Every scrape is answered by a
 * rendering that started after it arrived (so it shows what the scraper did just before), at most one
 * rendering a second and one at a time: scrapes at once share one or two renderings, and a client
 * scraping back to back waits for the next one (it renders at most once a second and is answered
 * about once a second), unless it said a timeout the wait would miss (Prometheus does), when it gets the
 * latest. Each body says which rendering it is (p2v_metrics_renderings_total). Then
 * unauthenticated junk (unknown paths and methods, every kind of route without a key) grows the
 * exposition to a bound it does not pass: unknown paths fold into `unmatched`, unknown methods into
 * `_OTHER`, and more junk of the same kinds adds no series.
 */
let service: Service
let metrics: string

beforeAll(async () => {
  const port = await freePort()
  service = await startService(await makeShared(), { METRICS_PORT: String(port) })
  metrics = `http://127.0.0.1:${port}/metrics`
})

afterAll(async () => {
  await service?.stop("SIGKILL")
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A GET of /metrics on the given agent (undefined: a connection of its own): the body and its rendering's number. */
const scrape = (agent?: http.Agent, headers: Record<string, string> = {}) =>
  new Promise<{ body: string; rendering: number; ms: number }>((resolve, reject) => {
    const t0 = performance.now()
    http.get(metrics, { agent: agent ?? false, headers }, (res) => {
      let body = ""
      res.setEncoding("utf8").on("data", (d: string) => (body += d)).on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`${res.statusCode}: ${body.slice(0, 300)}`))
        const rendering = /^p2v_metrics_renderings_total (\d+)$/m.exec(body)
        resolve({ body, rendering: rendering === null ? NaN : Number(rendering[1]), ms: performance.now() - t0 })
      })
    }).on("error", reject)
  })

/** Requests answered so far whose path nothing routes, as the exposition counts them. */
const unmatchedCount = (body: string) =>
  [...body.matchAll(/^http_server_request_duration_seconds_count\{[^}]*http_route="unmatched"[^}]*\} (\d+)$/gm)]
    .reduce((n, m) => n + Number(m[1]), 0)

it("every scrape shows what happened before it; renderings at most one a second, shared; a tight loop waits", async () => {
  // fresh: a request, then at once a scrape on a connection of its own, which counts it
  const before = unmatchedCount((await scrape()).body)
  expect((await fetch(`${service.baseUrl}/no-such-path-${randomBytes(4).toString("hex")}`)).status).toBe(404)
  const after = await scrape()
  expect(unmatchedCount(after.body), "the request just answered is in the next scrape").toBe(before + 1)

  const together = await Promise.all(Array.from({ length: 20 }, () => scrape()))
  expect(together[0].rendering, "each exposition says which rendering it is").toBeGreaterThan(0)
  const shared = [...new Set(together.map((s) => s.rendering))].sort((a, b) => a - b)
  expect(shared.length, `20 scrapes at once, 20 connections: ${shared.join(", ")}`).toBeLessThanOrEqual(2)
  expect(shared[0]).toBeGreaterThan(after.rendering)

  // one keep-alive connection, back to back for 3.5 s: each answer a newer rendering, about one a second
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const seen: Array<{ at: number; rendering: number; ms: number }> = []
  const start = performance.now()
  while (performance.now() - start < 3_500) seen.push({ at: performance.now() - start, ...(await scrape(agent)) })
  agent.destroy()
  console.log(
    `tight loop on one connection: ${seen.length} scrapes in 3.5 s, renderings ${
      seen.map((s) => s.rendering).join(", ")
    }, waits ${seen.map((s) => s.ms.toFixed(0)).join(", ")} ms`
  )
  expect(seen.length).toBeGreaterThanOrEqual(2)
  expect(seen.length).toBeLessThanOrEqual(5)
  for (let i = 1; i < seen.length; i++) {
    expect(seen[i].rendering, "a newer rendering each time").toBeGreaterThan(seen[i - 1].rendering)
    expect(seen[i].ms, "about a second's wait").toBeLessThan(3_000)
  }

  // Prometheus says its timeout: arriving just after another scraper's rendering began, it is not made
  // to wait the second out (it would fail at 1 s and read as a runner down) but gets the latest rendering
  const other = scrape()
  await sleep(50)
  const prometheus = await scrape(undefined, { "x-prometheus-scrape-timeout-seconds": "1" })
  const others = await other
  console.log(`a scrape with a 1 s timeout, 50 ms after another: ${prometheus.ms.toFixed(0)} ms`)
  expect(prometheus.ms, "answered within the timeout Prometheus sent").toBeLessThan(1_000)
  expect(prometheus.rendering, "the latest rendering").toBeGreaterThanOrEqual(others.rendering - 1)

  // HEAD: the length of what GET answers, no body
  const head = await fetch(metrics, { method: "HEAD" })
  expect(head.status).toBe(200)
  expect(Number(head.headers.get("content-length"))).toBeGreaterThan(1_000)
  expect(head.headers.get("cache-control")).toBe("no-store")
})

/** One request as a client of any sort may send it: any method, any path, no credentials. */
const send = (method: string, path: string, body?: string) =>
  new Promise<number>((resolve) => {
    const url = new URL(service.baseUrl)
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method,
      path,
      agent: false,
      headers: body === undefined ? {} : { "content-type": "application/json" }
    }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    // a GET or HEAD with a body goes out without a length (Node's client sends none for them), so
    // the body reads as a second, malformed request, and this client finds its 400 after the first
    // answer's `Connection: close` (HPE_CLOSED_CONNECTION): counted as -1, no concern here
    req.on("error", () => resolve(-1))
    req.end(body)
  })

/** Every kind of junk the probe sent, with fresh random text in it each time. */
const junk = async (n: number) => {
  const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "PROPFIND", "BREW"]
  const statuses = new Map<number, number>()
  for (let i = 0; i < n; i++) {
    const t = randomBytes(6).toString("hex")
    const paths = [
      `/${t}`,
      `/api/v1/${t}`,
      `/api/v1/renders/${t}`,
      `/api/v1/media/${t}/x`,
      `/api/v2/renders/${t}`,
      `/portal/${t}`,
      `/portal/renders/${t}/x`,
      `//api/v1/${t}`,
      `/api/v1/renders/?q=${t}`,
      `/api/v1/usage/`,
      `/${t}.php`,
      `/%2e%2e/${t}`
    ]
    const status = await send(
      methods[i % methods.length],
      paths[Math.floor(i / methods.length) % paths.length],
      i % 3 === 0 ? `{"x":"${t}"}` : undefined
    )
    statuses.set(status, (statuses.get(status) ?? 0) + 1)
  }
  return statuses
}

const routeSeries = (text: string) =>
  new Set(
    text.split("\n").filter((l) => l.startsWith("http_server_request_duration_seconds_count{")).map((l) =>
      l.replace(/ [^ ]+$/, "")
    )
  )

it("unauthenticated junk: unknown paths fold into `unmatched`, and more of the same adds no series", async () => {
  await sleep(1_100)
  const before = (await scrape()).body
  // every (method, path, body) combination once, then all of it again with new random text
  const kinds = 9 * 12 * 3
  const first = await junk(kinds)
  await sleep(1_100)
  const afterFirst = (await scrape()).body
  const second = await junk(kinds)
  await sleep(1_100)
  const afterSecond = (await scrape()).body
  console.log(
    `junk: ${kinds} requests (${JSON.stringify(Object.fromEntries(first))}), then ${kinds} more (${
      JSON.stringify(Object.fromEntries(second))
    }); ` +
      `exposition ${before.length} → ${afterFirst.length} → ${afterSecond.length} bytes, ` +
      `${routeSeries(before).size} → ${routeSeries(afterFirst).size} → ${routeSeries(afterSecond).size} request series`
  )
  expect([...routeSeries(afterSecond)].sort()).toEqual([...routeSeries(afterFirst)].sort())
  const routes = new Set([...afterSecond.matchAll(/http_route="([^"]*)"/g)].map((m) => m[1]))
  expect(routes.has("unmatched")).toBe(true)
  for (const route of routes) {
    // a template or `unmatched`: never a path a client made up
    expect(route === "unmatched" || /^(\/([a-z_-]+|v1|\{id\}|openapi\.json))+$/.test(route), route).toBe(true)
  }
  // methods outside the fixed set are one label
  const methods = new Set([...afterSecond.matchAll(/http_request_method="([^"]*)"/g)].map((m) => m[1]))
  expect(
    [...methods].every((m) => ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "_OTHER"].includes(m)),
    [...methods].join()
  ).toBe(true)
})
