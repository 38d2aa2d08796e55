import { afterAll, beforeAll, expect, it } from "vitest"
import { type Admin, inProcessAdmin } from "../foundation/admin.ts"
import { makeShared } from "../support/service.ts"

/**
 * `admin cluster status` before any runner has started on the database (no cluster tables yet) and
 * its refusals. The status of a live cluster (runners joining, draining, killed) is checked in
 * joinleave.test.ts against real runner processes.
 */
let ops: Admin

beforeAll(async () => {
  const shared = await makeShared()
  ops = inProcessAdmin({ DATABASE_URL: shared.databaseUrl, DATA_DIR: shared.dataDir })
})

afterAll(async () => {
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
