import { randomBytes } from "node:crypto"
import { expect, it } from "vitest"
import { type ReceivedSpan, traceTree } from "../support/otlp-receiver.ts"
import { startService, waitFor } from "../support/service.ts"
import { keyedWithPhoto, useDeployment } from "./support.ts"

/**
 * Traces: an API process and a runner export spans over OTLP/HTTP (the standard
 * OTEL_* variables) to a small receiver written for this test (test/support/otlp-receiver.ts). One
 * render is followed from its `POST /api/v1/renders` server span in the API process, through the
 * charge and the entity message, into the runner process, down to the render's stages and its final
 * transition: one trace id across both processes. An upload likewise: the upload's span, storing the
 * photo, and the classification that follows it.
 */
const deployment = useDeployment()

const ancestors = (span: ReceivedSpan, all: ReadonlyArray<ReceivedSpan>) => {
  const byId = new Map(all.map((s) => [s.spanId, s]))
  const chain: Array<ReceivedSpan> = []
  for (
    let p = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId);
    p !== undefined;
    p = p.parentSpanId === undefined ? undefined : byId.get(p.parentSpanId)
  ) {
    chain.push(p)
  }
  return chain
}

it("one render is one trace from the API's server span to the runner's stages; an upload's trace holds its storage and classification", async () => {
  const env = {
    API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    RENDER_SECONDS: "1",
    RENDER_NICE: "0",
    OTEL_EXPORTER_OTLP_ENDPOINT: deployment.receiver.endpoint,
    OTEL_TRACES_SAMPLER: "always_on",
    // the batch processor's delay, shortened so the test does not wait 5 s per batch
    OTEL_BSP_SCHEDULE_DELAY: "200"
  }
  const api = await startService(deployment.shared, env, "api")
  deployment.services.push(api)
  const runner = await startService(deployment.shared, env, "runner")
  deployment.services.push(runner)

  // ---- an upload: its server span, the store, the classification after the answer
  const { secret, http, mediaId } = await keyedWithPhoto(api, "rocket.jpg")
  const uploadRoot = () => deployment.receiver.spans().find((s) => s.name === "POST /api/v1/media" && s.kind === 2)
  await waitFor(
    async () => {
      const root = uploadRoot()
      return root !== undefined &&
        deployment.receiver.spans().some((s) => s.traceId === root.traceId && s.name === "vision.infer")
    },
    90_000,
    "the upload's trace with its classification"
  )
  const uploadTrace = deployment.receiver.spans().filter((s) => s.traceId === uploadRoot()!.traceId)
  for (const name of ["MediaLibrary.ingest", "media.store", "media.classify", "vision.infer"]) {
    const span = uploadTrace.find((s) => s.name === name)
    expect(span, `${name} in the upload's trace:\n${traceTree(uploadTrace)}`).toBeDefined()
    expect(ancestors(span!, uploadTrace).at(-1)?.name).toBe("POST /api/v1/media")
  }
  console.log(`upload trace ${uploadRoot()!.traceId}:\n${traceTree(uploadTrace)}`)

  // ---- a render
  const created = await http.postJson("/api/v1/renders", { media_id: mediaId, quote: "Followed through" })
  expect(created.status).toBe(202)
  const renderId = (await created.json()).id as string
  await waitFor(
    async () => {
      const doc = await (await http.get(`/api/v1/renders/${renderId}`)).json()
      if (doc.status === "failed" || doc.status === "canceled") throw new Error(`render ended ${doc.status}`)
      return doc.status === "completed"
    },
    120_000,
    "the render to complete"
  )

  const root = deployment.receiver.spans().find((s) => s.name === "POST /api/v1/renders" && s.kind === 2)!
  expect(root, "the create's server span").toBeDefined()
  const inTrace = () => deployment.receiver.spans().filter((s) => s.traceId === root.traceId)
  // the entity's span ends last, once the render is written completed: wait for the runner's batch with it
  await waitFor(
    async () =>
      inTrace().some((s) => s.name === "RendersRepo.apply" && s.attributes["p2v.render.event"] === "Finished") &&
      inTrace().some((s) => s.name === "Render.Start"),
    30_000,
    "the runner's spans"
  )
  const trace = inTrace()
  const tree = traceTree(trace)
  console.log(`render ${renderId}, trace ${root.traceId}:\n${tree}`)

  // the server span, as the HTTP semantic conventions name it
  expect(root.service).toBe("pic2video-api")
  expect(root.parentSpanId).toBeUndefined()
  expect(root.attributes["http.request.method"]).toBe("POST")
  expect(root.attributes["http.route"]).toBe("/api/v1/renders")
  expect(root.attributes["http.response.status_code"]).toBe(202)
  expect(root.attributes["url.path"]).toBe("/api/v1/renders")
  expect(JSON.stringify(root.attributes)).not.toContain(secret)

  // one trace id across the two processes
  expect(new Set(trace.map((s) => s.service))).toEqual(new Set(["pic2video-api", "pic2video-runner"]))
  const named = (name: string, service?: string) => {
    const span = trace.find((s) => s.name === name && (service === undefined || s.service === service))
    expect(span, `${name}${service ? ` in ${service}` : ""}:\n${tree}`).toBeDefined()
    // every stage hangs from the create's server span
    expect(ancestors(span!, trace).at(-1)?.spanId, `${name}'s root:\n${tree}`).toBe(root.spanId)
    return span!
  }
  named("prepareCaption", "pic2video-api")
  named("RendersRepo.charge")
  const start = named("Render.Start", "pic2video-runner")
  expect(start.attributes["entity.id"]).toBe(renderId)
  for (const stage of ["renderVideo", "prepareBase", "encode", "frames", "verify", "render.upload"]) {
    const span = named(stage, "pic2video-runner")
    expect(ancestors(span, trace).map((s) => s.spanId)).toContain(start.spanId)
  }
  const frames = named("frames", "pic2video-runner")
  expect(ancestors(frames, trace)[0].name).toBe("encode")
  const finished = trace.find((s) => s.name === "RendersRepo.apply" && s.attributes["p2v.render.event"] === "Finished")!
  expect(ancestors(finished, trace).map((s) => s.spanId)).toContain(start.spanId)

  // database spans as the database semantic conventions name them
  const statements = trace.filter((s) =>
    s.attributes["db.system.name"] === "postgresql" && s.attributes["db.query.text"] !== undefined
  )
  expect(statements.length).toBeGreaterThan(3)
  for (const s of statements) {
    expect(s.kind).toBe(3)
    expect(s.name).toMatch(/^[A-Z]+( [a-z_]+)?$/)
    expect(s.name.split(" ")[0]).toBe(s.attributes["db.operation.name"])
  }
  expect(statements.some((s) => s.name === "UPDATE renders" && s.attributes["db.collection.name"] === "renders")).toBe(
    true
  )

  // reads are traced too while traces are exported (and the poll is named by its route)
  expect(
    deployment.receiver.spans().some((s) =>
      s.name === "GET /api/v1/renders/{id}" && s.attributes["http.route"] === "/api/v1/renders/{id}"
    )
  ).toBe(true)
  expect(deployment.receiver.rejected()).toEqual([])
})
