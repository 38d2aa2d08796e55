import { Duration, Effect, HashRing } from "effect"
import { Runner, type RunnerAddress } from "effect/cluster"
import { ClusterRepo } from "../repositories/ClusterRepo.ts"
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

export const status = Effect.gen(function*() {
  const { inFlight, locks, queue, runners: rows, unprocessed } = yield* (yield* ClusterRepo).snapshot(liveSeconds)

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

  const perRunner = (address: string, kind: "render" | "import") =>
    inFlight.filter((f) => f.kind === kind && owner.get(f.shard_id) === address).reduce((n, f) => n + f.n, 0)
  const shardCount = (address: string) => [...owner.values()].filter((a) => a === address).length
  const unassigned = (kind: "render" | "import") =>
    inFlight.filter((f) => f.kind === kind && !owner.has(f.shard_id)).reduce((n, f) => n + f.n, 0)

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
    shards: { assigned: owner.size, locked: locks, total: shardsPerGroup * Math.max(1, rings.size) },
    // work whose shard no healthy runner holds right now (it resumes when one takes the shard)
    unassigned: { renders_in_flight: unassigned("render"), imports_in_flight: unassigned("import") },
    queue: {
      renders_queued: queue.renders_queued,
      renders_processing: queue.renders_processing,
      imports_pending: queue.imports_pending,
      cluster_messages_unprocessed: unprocessed
    }
  }
})
