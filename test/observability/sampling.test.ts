import { randomBytes } from "node:crypto"
import { afterAll, expect, it } from "vitest"
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver, traceTree } from "../support/otlp-receiver.ts"
import { type Service, startService, waitFor } from "../support/service.ts"
import { keyedWithPhoto, useDeployment } from "./support.ts"

/**
 * A render's trace is whole or absent (docs/operations.md, "Traces").
 * - 7: with `parentbased_traceidratio` at 0 nothing is exported, neither by the API process nor by
 *   the runner that renders (the sampling decision travels with the render's cluster message), in
 *   one process and in the split api + runner deployment; at 1 every exported span's parent is
 *   exported too.
 * - 8: a client's `traceparent` / `b3` is ignored by default: at ratio 0 a "sampled" header exports
 *   nothing, and the client's trace id is in no span and no log line. With TRACE_TRUST_INCOMING=true
 *   it is honoured: the request's trace continues the client's, down to the runner.
 * Each deployment is stopped (SIGTERM: its exporter flushes) before the next starts, so no runner of
 * one takes the renders of another.
 */
const deployment = useDeployment()
const receivers: Array<OtlpReceiver> = []
afterAll(async () => {
  for (const r of receivers) await r.close()
})

const keys = {
  API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
  TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64")
}

const deploy = async (
  mode: "all-in-one" | "split",
  ratio: "0" | "1",
  extra: Record<string, string> = {}
): Promise<{ receiver: OtlpReceiver; api: Service; services: Array<Service> }> => {
  const receiver = await startOtlpReceiver()
  receivers.push(receiver)
  const env = {
    ...keys,
    RENDER_SECONDS: "1",
    RENDER_NICE: "0",
    RENDER_X264_PRESET: "superfast",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: ratio,
    OTEL_BSP_SCHEDULE_DELAY: "200",
    ...extra
  }
  if (mode === "all-in-one") {
    const api = await startService(deployment.shared, env)
    deployment.services.push(api)
    return { receiver, api, services: [api] }
  }
  const api = await startService(deployment.shared, env, "api")
  deployment.services.push(api)
  const runner = await startService(deployment.shared, env, "runner")
  deployment.services.push(runner)
  return { receiver, api, services: [api, runner] }
}

/** Stops every process gracefully: the tracer provider flushes what it holds on the way out. */
const stopAll = async (services: ReadonlyArray<Service>) => {
  for (const s of services) expect(await s.stop("SIGTERM")).toBe(0)
}

const renderToCompletion = async (
  http: Awaited<ReturnType<typeof keyedWithPhoto>>["http"],
  mediaId: string,
  quote: string,
  headers?: Record<string, string>
) => {
  const created = await http.postJson("/api/v1/renders", { media_id: mediaId, quote }, headers)
  expect(created.status).toBe(202)
  const id = (await created.json()).id as string
  await waitFor(
    async () => {
      const doc = await (await http.get(`/api/v1/renders/${id}`)).json()
      if (doc.status === "failed" || doc.status === "canceled") throw new Error(`render ${id} ended ${doc.status}`)
      return doc.status === "completed"
    },
    120_000,
    `render ${id} to complete`
  )
  return id
}

/** What arrived, for a failure message: span count per trace, and each trace's tree. */
const summary = (spans: ReadonlyArray<ReceivedSpan>) => {
  const byTrace = new Map<string, Array<ReceivedSpan>>()
  for (const s of spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s])
  return `${spans.length} spans in ${byTrace.size} traces:\n` +
    [...byTrace.values()].slice(0, 5).map((t) => traceTree(t)).join("\n---\n")
}

/** Spans whose parent was not exported (the client's own span, when given, excepted). */
const orphans = (spans: ReadonlyArray<ReceivedSpan>, external: ReadonlySet<string> = new Set()) => {
  const ids = new Set(spans.map((s) => s.spanId))
  return spans.filter((s) => s.parentSpanId !== undefined && !ids.has(s.parentSpanId) && !external.has(s.parentSpanId))
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex")

for (const mode of ["split", "all-in-one"] as const) {
  it(`${mode}: at parentbased_traceidratio 0, renders export no span at all (API process and runner)`, async () => {
    const { api, receiver, services } = await deploy(mode, "0")
    const { http, mediaId } = await keyedWithPhoto(api, "coffee.png")
    for (let i = 0; i < 3; i++) await renderToCompletion(http, mediaId, `Unsampled ${i}`)
    await stopAll(services)
    expect(receiver.spans(), summary(receiver.spans())).toEqual([])
    expect(receiver.rejected()).toEqual([])
  }, 300_000)
}

it(
  "split: at parentbased_traceidratio 1, every exported span's parent is exported (whole traces, API to runner)",
  async () => {
    const { api, receiver, services } = await deploy("split", "1")
    const { http, mediaId } = await keyedWithPhoto(api, "coffee.png")
    const ids = [
      await renderToCompletion(http, mediaId, "Sampled 1"),
      await renderToCompletion(http, mediaId, "Sampled 2")
    ]
    await stopAll(services)
    const spans = receiver.spans()
    const missing = orphans(spans)
    expect(missing.map((s) => `${s.service} ${s.name} (parent ${s.parentSpanId})`), summary(spans)).toEqual([])
    // and each render's trace runs from the API's server span to the runner's Render.Start
    for (const id of ids) {
      const start = spans.find((s) => s.name === "Render.Start" && s.attributes["entity.id"] === id)
      expect(start, `Render.Start of ${id}: ${summary(spans)}`).toBeDefined()
      expect(start!.service).toBe("pic2video-runner")
      const trace = spans.filter((s) => s.traceId === start!.traceId)
      const roots = trace.filter((s) => s.parentSpanId === undefined)
      expect(roots.map((s) => s.name), traceTree(trace)).toEqual(["POST /api/v1/renders"])
    }
  },
  300_000
)

it(
  "a client's traceparent or b3 is ignored by default (nothing exported at ratio 0, its trace id in no span or log); TRACE_TRUST_INCOMING=true honours it",
  async () => {
    // ---- by default
    const forced = { traceId: hex(16), spanId: hex(8) }
    const forcing = {
      traceparent: `00-${forced.traceId}-${forced.spanId}-01`,
      b3: `${forced.traceId}-${forced.spanId}-1`,
      "x-b3-traceid": forced.traceId,
      "x-b3-spanid": forced.spanId,
      "x-b3-sampled": "1"
    }
    const plain = await deploy("all-in-one", "0", { LOG_FORMAT: "json" })
    const { http, mediaId } = await keyedWithPhoto(plain.api, "coffee.png")
    await renderToCompletion(http, mediaId, "Forced?", forcing)
    for (let i = 0; i < 20; i++) expect((await http.get("/api/v1/usage", forcing)).status).toBe(200)
    expect((await fetch(`${plain.api.baseUrl}/portal/sign-in`, { headers: forcing })).status).toBeLessThan(500)
    expect((await fetch(`${plain.api.baseUrl}/api/v1/usage`, { headers: { b3: forcing.b3 } })).status).toBe(401)
    await stopAll(plain.services)
    expect(plain.receiver.spans(), summary(plain.receiver.spans())).toEqual([])
    const output = plain.api.output()
    expect(output).toContain("\"trace_id\"")
    expect(output.includes(forced.traceId), "the client's trace id is in the log").toBe(false)

    // ---- opted in: the client's sampled context is continued, even at ratio 0
    const trusted = await deploy("all-in-one", "0", { LOG_FORMAT: "json", TRACE_TRUST_INCOMING: "true" })
    const keyed = await keyedWithPhoto(trusted.api, "coffee.png")
    const w3c = { traceId: hex(16), spanId: hex(8) }
    const renderId = await renderToCompletion(keyed.http, keyed.mediaId, "Trusted", {
      traceparent: `00-${w3c.traceId}-${w3c.spanId}-01`
    })
    const b3 = { traceId: hex(16), spanId: hex(8) }
    expect((await keyed.http.get("/api/v1/usage", { b3: `${b3.traceId}-${b3.spanId}-1` })).status).toBe(200)
    // a context the client says is not sampled stays unsampled
    const unsampled = { traceId: hex(16), spanId: hex(8) }
    expect(
      (await keyed.http.get("/api/v1/usage", { traceparent: `00-${unsampled.traceId}-${unsampled.spanId}-00` })).status
    )
      .toBe(200)
    await stopAll(trusted.services)

    const spans = trusted.receiver.spans()
    expect(new Set(spans.map((s) => s.traceId)), summary(spans)).toEqual(new Set([w3c.traceId, b3.traceId]))
    const renderTrace = spans.filter((s) => s.traceId === w3c.traceId)
    const server = renderTrace.find((s) => s.name === "POST /api/v1/renders")
    expect(server?.parentSpanId, traceTree(renderTrace)).toBe(w3c.spanId)
    const start = renderTrace.find((s) => s.name === "Render.Start")
    expect(start?.attributes["entity.id"], traceTree(renderTrace)).toBe(renderId)
    expect(orphans(renderTrace, new Set([w3c.spanId])), traceTree(renderTrace)).toEqual([])
    expect(spans.find((s) => s.traceId === b3.traceId && s.kind === 2)?.parentSpanId).toBe(b3.spanId)
    // the JSON log names the client's trace on the request's lines
    const accepted = trusted.api.output().split("\n").find((l) => l.includes(`render ${renderId} accepted`))
    expect(accepted).toContain(`"trace_id":"${w3c.traceId}"`)
  },
  300_000
)
