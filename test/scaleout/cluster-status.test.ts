import { randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type Admin, inProcessAdmin, keyed } from "../foundation/admin.ts"
import { client, makeShared, photo, type Service, type Shared, startService, waitFor } from "../support/service.ts"

/**
 * `admin cluster status` before any runner has started on the database (no cluster tables yet) and
 * its refusals. The status of a live cluster (runners joining, draining, killed) is checked in
 * joinleave.test.ts against real runner processes; here, that an idle cluster's queue is empty,
 * `cluster_messages_unprocessed` included (a reply the cluster never stored would leave one message
 * per render a remote runner ran, with nothing queued).
 */
let ops: Admin
let shared: Shared
const services: Array<Service> = []
const secrets = {
  API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
  TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64")
}

beforeAll(async () => {
  shared = await makeShared()
  ops = inProcessAdmin({ DATABASE_URL: shared.databaseUrl, DATA_DIR: shared.dataDir, ...secrets })
})

afterAll(async () => {
  for (const s of services) await s.stop("SIGKILL").catch(() => {})
  await ops?.dispose()
})

it("a database no runner has joined yet: no runners, no shards assigned, an empty queue", async () => {
  expect(await ops.ok("cluster", "status")).toEqual({
    object: "cluster_status",
    shards_per_group: 300,
    runners: [],
    shards: { assigned: 0, locked: 0, total: 300 },
    unassigned: { renders_in_flight: 0, imports_in_flight: 0 },
    queue: { renders_queued: 0, renders_processing: 0, imports_pending: 0, cluster_messages_unprocessed: 0 }
  })
})

it("takes no arguments or options", async () => {
  for (const args of [["cluster", "status", "extra"], ["cluster", "status", "--verbose", "true"]]) {
    const r = await ops.attempt(...args)
    expect(r.ok).toBe(false)
    expect(r.json.error.code).toBe("validation_failed")
  }
})

it("renders run by a runner for an api, then idle: nothing queued, processing or unprocessed", async () => {
  const common = {
    ...secrets,
    RENDER_SECONDS: "1",
    RENDER_CONCURRENCY: "1",
    RENDER_NICE: "0",
    RENDER_X264_PRESET: "superfast"
  }
  const api = await startService(shared, common, "api")
  services.push(api)
  services.push(await startService(shared, common, "runner"))
  const { secret } = await keyed(ops, "studio")
  const http = client(api.baseUrl, secret)
  const upload = await http.upload(photo("coffee.png"), { filename: "coffee.png" })
  expect(upload.status).toBe(201)
  const mediaId = (await upload.json()).id
  const ids: Array<string> = []
  for (let i = 0; i < 4; i++) {
    const res = await http.postJson("/api/v1/renders", { media_id: mediaId, quote: `Idle ${i}` })
    expect(res.status).toBe(202)
    ids.push((await res.json()).id)
  }
  await waitFor(
    async () => {
      for (const id of ids) {
        if ((await (await http.get(`/api/v1/renders/${id}`)).json()).status !== "completed") return false
      }
      return true
    },
    180_000,
    "the renders to complete"
  )

  // handled means handled: the cluster stored each Start's reply once its render ended
  const db = new pg.Client({ connectionString: shared.databaseUrl })
  await db.connect()
  try {
    await waitFor(
      async () => (await ops.ok("cluster", "status")).queue.cluster_messages_unprocessed === 0,
      30_000,
      "nothing unprocessed"
    )
    const { rows } = await db.query(
      `SELECT entity_id, processed FROM cluster_messages WHERE entity_type = 'Render' AND tag = 'Start' AND entity_id = ANY($1)`,
      [ids]
    )
    expect(rows.map((r) => r.entity_id).sort()).toEqual([...ids].sort())
    expect(rows.every((r) => r.processed), JSON.stringify(rows)).toBe(true)
  } finally {
    await db.end()
  }
  // and it stays so while idle (past a maintenance sweep, which re-sends Start to idle renders)
  await new Promise((r) => setTimeout(r, 20_000))
  const status = await ops.ok("cluster", "status")
  expect(status.queue).toEqual({
    renders_queued: 0,
    renders_processing: 0,
    imports_pending: 0,
    cluster_messages_unprocessed: 0
  })
  expect(
    status.runners.map((
      r: { readonly healthy: boolean; readonly renders_in_flight: number }
    ) => [r.healthy, r.renders_in_flight])
  ).toEqual([[true, 0]])
}, 300_000)
