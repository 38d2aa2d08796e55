import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { expect, it } from "vitest"
import { client, freePort, startService, waitFor, workspaceWithKey } from "../support/service.ts"
import { useDeployment } from "./support.ts"

/**
 * Export failures: a collector that answers 500, answers 429, hangs, or is down
 * loses the spans sent to it. Each failed export is counted in `p2v_trace_export_failures_total`,
 * its spans (and any dropped from a full export queue) in `p2v_trace_spans_dropped_total`, on the
 * process's /metrics; and the log says so at most once a minute, with the counts.
 *
 * The collector here is test code: an HTTP server whose answer the test switches.
 */
const deployment = useDeployment()

type Mode = "ok" | "500" | "429" | "hang" | "down"

const startCollector = async () => {
  let mode: Mode = "ok"
  const hung: Array<http.ServerResponse> = []
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      if (mode === "ok") res.writeHead(200, { "content-type": "application/json" }).end("{}")
      else if (mode === "500") res.writeHead(500, { "content-type": "text/plain" }).end("collector broke")
      // a retry later than the export's timeout: the exporter gives the batch up at once
      else if (mode === "429") res.writeHead(429, { "retry-after": "30" }).end()
      else hung.push(res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    set: async (next: Mode) => {
      mode = next
      if (next !== "hang") { for (const res of hung.splice(0)) res.destroy() }
      if (next === "down") {
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    },
    close: async () => {
      for (const res of hung.splice(0)) res.destroy()
      server.closeAllConnections()
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

const counter = (text: string, name: string): number => {
  const line = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)
  expect(line, `${name} in:\n${text.split("\n").filter((l) => l.startsWith("p2v_trace")).join("\n")}`).not.toBeNull()
  return Number(line![1])
}

it(
  "OTLP export failures (500, 429, hung, down) and spans dropped from a full queue are counted on /metrics and logged at most once a minute",
  async () => {
    const collector = await startCollector()
    const metricsPort = await freePort()
    try {
      const svc = await startService(deployment.shared, {
        API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
        TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        LOG_FORMAT: "json",
        METRICS_PORT: String(metricsPort),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_TRACES_SAMPLER: "always_on",
        OTEL_EXPORTER_OTLP_TIMEOUT: "1000",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "8",
        OTEL_BSP_MAX_QUEUE_SIZE: "64"
      })
      deployment.services.push(svc)
      const metrics = async () => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
        return {
          failures: counter(text, "p2v_trace_export_failures_total"),
          dropped: counter(text, "p2v_trace_spans_dropped_total")
        }
      }
      // exported from the start, at 0 while the collector answers
      const { secret } = await workspaceWithKey(svc.env)
      const api = client(svc.baseUrl, secret)
      for (let i = 0; i < 5; i++) expect((await api.get("/api/v1/usage")).status).toBe(200)
      await new Promise((r) => setTimeout(r, 500))
      expect(await metrics()).toEqual({ failures: 0, dropped: 0 })

      const started = Date.now()
      let seen = await metrics()
      for (const mode of ["500", "429", "hang", "down"] as const) {
        await collector.set(mode)
        const before = seen
        await waitFor(
          async () => {
            await api.get("/api/v1/usage")
            seen = await metrics()
            return seen.failures > before.failures && seen.dropped > before.dropped
          },
          20_000,
          `a failed export counted with the collector ${mode}`
        )
        console.log(`collector ${mode}: ${JSON.stringify(seen)}`)

        if (mode === "hang") {
          // exports wait out their timeout (1 s) one batch at a time: a burst fills the queue (64) and
          // the rest is dropped there, counted at once
          const burst = await metrics()
          await Promise.all(Array.from({ length: 150 }, () => api.get("/api/v1/usage")))
          await new Promise((r) => setTimeout(r, 1000))
          seen = await metrics()
          console.log(`a burst of 150 polls while the collector hangs: ${JSON.stringify(seen)}`)
          expect(seen.dropped - burst.dropped).toBeGreaterThanOrEqual(100)
        }
      }

      // the log: one line a minute at most, naming the counts
      const lines = svc.output().split("\n").filter((l) => l.includes("traces: "))
      console.log(lines.join("\n"))
      const minutes = Math.floor((Date.now() - started) / 60_000)
      expect(lines.length).toBeGreaterThanOrEqual(1)
      expect(lines.length).toBeLessThanOrEqual(1 + minutes)
      const first = JSON.parse(lines[0])
      expect(first.level).toBe("WARN")
      expect(first.message).toMatch(
        /^traces: \d+ span exports? to the OTLP endpoint failed \(\d+ spans lost; last: .+\)/
      )
    } finally {
      await collector.close()
    }
  },
  180_000
)
