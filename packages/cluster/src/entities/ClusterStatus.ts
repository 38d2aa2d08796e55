import { Runner, RunnerAddress } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import * as HashRing from "effect/HashRing"
import { failoverSettings } from "./Sharding.ts"

/**
 * The operator's view of the cluster (`admin cluster status`), read from the tables @effect/cluster
 * keeps in the service's PostgreSQL: `cluster_runners` (one row per registered runner, its heartbeat
 * and health) and `cluster_messages` (every persisted message, with the shard it went to). Shard
 * locks are PostgreSQL advisory locks, not rows, so the shards each runner holds are computed the
 * way the runners compute them: the same hash ring over the live, healthy runners. A runner is live
 * while its heartbeat is younger than the shard lock expiration (as the cluster itself reads it).
 */
const shardsPerGroup = failoverSettings.shardsPerGroup
const liveSeconds = Duration.toSeconds(failoverSettings.shardLockExpiration)

interface RunnerRow {
  readonly machine_id: number
  readonly address: string
  readonly runner: string
  readonly healthy: boolean
  readonly last_heartbeat: Date
  readonly live: boolean
  readonly age: number
}

export const status = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // a database no runner has started on yet has no cluster tables
  const [{ present }] = yield* sql<{ present: boolean }>`SELECT to_regclass('cluster_runners') IS NOT NULL
    AND to_regclass('cluster_messages') IS NOT NULL AS present`
  const rows = present
    ? yield* sql<RunnerRow>`
        SELECT machine_id, address, runner, healthy,
          last_heartbeat AT TIME ZONE current_setting('TimeZone') AS last_heartbeat,
          last_heartbeat > localtimestamp - make_interval(secs => ${liveSeconds}) AS live,
          extract(epoch FROM localtimestamp - last_heartbeat)::float8 AS age
        FROM cluster_runners ORDER BY address`
    : []

  // shard -> runner, as every runner computes it from the same rows
  const rings = new Map<string, HashRing.HashRing<RunnerAddress.RunnerAddress>>()
  for (const row of rows) {
    if (!row.live || !row.healthy) continue
    const runner = Runner.Runner.decodeSync(row.runner)
    for (const group of runner.groups) {
      if (!rings.has(group)) rings.set(group, HashRing.make())
      HashRing.add(rings.get(group)!, runner.address, { weight: runner.weight })
    }
  }
  const owner = new Map<string, string>()
  for (const [group, ring] of rings) {
    const shards = HashRing.getShards(ring, shardsPerGroup) ?? []
    shards.forEach((address, i) => owner.set(`${group}:${i + 1}`, `${address.host}:${address.port}`))
  }

  // non-terminal work by the shard its entity lives on
  const inFlight = present
    ? yield* sql<{ kind: "render" | "import"; shard_id: string; n: number }>`
        SELECT 'render' AS kind, m.shard_id, count(DISTINCT r.id)::int AS n
        FROM renders r JOIN cluster_messages m ON m.entity_type = 'Render' AND m.entity_id = r.id AND m.tag = 'Start'
        WHERE r.status = 'processing' GROUP BY m.shard_id
        UNION ALL
        SELECT 'import' AS kind, m.shard_id, count(DISTINCT i.id)::int AS n
        FROM imports i JOIN cluster_messages m ON m.entity_type = 'Import' AND m.entity_id = i.id AND m.tag = 'Start'
        WHERE i.status = 'pending' GROUP BY m.shard_id`
    : []
  const [queue] = yield* sql<{ renders_queued: number; renders_processing: number; imports_pending: number }>`
    SELECT (SELECT count(*)::int FROM renders WHERE status = 'queued') AS renders_queued,
      (SELECT count(*)::int FROM renders WHERE status = 'processing') AS renders_processing,
      (SELECT count(*)::int FROM imports WHERE status = 'pending') AS imports_pending`
  const [messages] = present
    ? yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM cluster_messages WHERE processed = false AND kind = 0`
    : [{ n: 0 }]
  // advisory locks the runners hold on this database (one per shard; freed when a runner's connection drops)
  const [locks] = yield* sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

  const perRunner = (address: string, kind: "render" | "import") =>
    inFlight.filter((f) => f.kind === kind && owner.get(f.shard_id) === address).reduce((n, f) => n + f.n, 0)
  const shardCount = (address: string) => [...owner.values()].filter((a) => a === address).length
  const unassigned = (kind: "render" | "import") => inFlight.filter((f) => f.kind === kind && !owner.has(f.shard_id)).reduce((n, f) => n + f.n, 0)

  return {
    object: "cluster_status" as const,
    shards_per_group: shardsPerGroup,
    runners: rows.map((row) => ({
      address: row.address,
      machine_id: row.machine_id,
      // live (heartbeat within the lock expiration) and not marked unhealthy by the health check
      healthy: row.live && row.healthy,
      last_heartbeat: row.last_heartbeat.toISOString(),
      seconds_since_heartbeat: Math.max(0, Math.round(row.age * 10) / 10),
      shards: shardCount(row.address),
      renders_in_flight: perRunner(row.address, "render"),
      imports_in_flight: perRunner(row.address, "import")
    })),
    shards: { assigned: owner.size, locked: locks.n, total: shardsPerGroup * Math.max(1, rings.size) },
    // work whose shard no healthy runner holds right now (it resumes when one takes the shard)
    unassigned: { renders_in_flight: unassigned("render"), imports_in_flight: unassigned("import") },
    queue: {
      renders_queued: queue.renders_queued,
      renders_processing: queue.renders_processing,
      imports_pending: queue.imports_pending,
      cluster_messages_unprocessed: messages.n
    }
  }
}).pipe(Effect.orDie)
