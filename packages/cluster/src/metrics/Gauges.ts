import { Clock, Duration, Effect, Option } from "effect"
import { ShardId, Sharding } from "effect/cluster"
import { DatabasePool } from "../database/Database.ts"
import { ClusterRole, failoverSettings } from "../entities/Sharding.ts"
import { BacklogRepo } from "../repositories/BacklogRepo.ts"
import { ClusterRepo } from "../repositories/ClusterRepo.ts"
import * as M from "./Metric.ts"

/**
 * Gauges read when /metrics is scraped, not kept up to date in between: the cluster's backlog and its
 * live runners (from the database, at most once every `backlogEveryMillis` however often it is
 * scraped), the shards this runner holds, and the connection pool.
 *
 * Every process that serves /metrics reports the backlog, and they all report the same cluster-wide
 * numbers: aggregate them with `max` (not `sum`) across processes, or read any one process. That way
 * any single scrape target carries the autoscaling signal and nothing has to elect a reporter.
 */
const backlogEveryMillis = 2_000

const renders = M.each(
  ["queued", "processing"] as const,
  (status) =>
    M.gauge("p2v_renders", "Non-terminal renders in the cluster, by status (cluster-wide: aggregate with max)").of({
      status
    })
)
const imports = M.each(
  ["pending"] as const,
  (status) =>
    M.gauge("p2v_imports", "Non-terminal imports in the cluster, by status (cluster-wide: aggregate with max)").of({
      status
    })
)
const oldestQueued = M.gauge(
  "p2v_render_oldest_queued_seconds",
  "Age of the oldest queued render, 0 when none waits (cluster-wide: aggregate with max); the signal to add runners"
).of().register()
const liveRunners = M.gauge(
  "p2v_cluster_runners_live",
  "Runners heartbeating within the shard lock expiration and healthy (cluster-wide: aggregate with max); 0: no shard is held"
).of().register()
const runnerShards = M.gauge("p2v_runner_shards", "Shards this runner holds (0 in a process that hosts no entities)")
  .of().register()
const connections = M.each(
  ["used", "idle"] as const,
  (state) =>
    M.gauge("p2v_db_pool_connections", "Database connections of this process's pool, by state (used, idle)").of({
      state
    })
)
const pending = M.gauge("p2v_db_pool_pending_requests", "Queries waiting for a connection of this process's pool").of()
  .register()

/** The effect that brings these gauges up to date; run before each scrape's collection. */
export const makeSampler = Effect.gen(function*() {
  const backlogRepo = yield* BacklogRepo
  const clusterRepo = yield* ClusterRepo
  const liveSeconds = Duration.toSeconds(failoverSettings.shardLockExpiration)
  const pool = yield* DatabasePool
  const sharding = yield* Sharding.Sharding
  const hostsEntities = Option.getOrUndefined(yield* Effect.serviceOption(ClusterRole)) !== "client"
  const shardIds = Array.from({ length: failoverSettings.shardsPerGroup }, (_, i) => ShardId.make("default", i + 1))
  let backlogReadAt = Number.NEGATIVE_INFINITY

  const backlog = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    if (now - backlogReadAt < backlogEveryMillis) return
    backlogReadAt = now
    const b = yield* backlogRepo.read
    renders.queued.unsafeUpdate(b.renders.queued, [])
    renders.processing.unsafeUpdate(b.renders.processing, [])
    imports.pending.unsafeUpdate(b.imports.pending, [])
    oldestQueued.unsafeUpdate(b.oldestQueuedSeconds, [])
    liveRunners.unsafeUpdate(yield* clusterRepo.liveRunners(liveSeconds), [])
  })

  const local = Effect.sync(() => {
    runnerShards.unsafeUpdate(hostsEntities ? shardIds.filter((id) => sharding.hasShardId(id)).length : 0, [])
    const usage = pool.usage()
    connections.used.unsafeUpdate(usage.used, [])
    connections.idle.unsafeUpdate(usage.idle, [])
    pending.unsafeUpdate(usage.pending, [])
  })

  // a database that cannot be read leaves the backlog as last read (the scrape still answers)
  return Effect.andThen(
    local,
    backlog.pipe(
      Effect.timeout("2 seconds"),
      Effect.catchCause((cause) => Effect.logWarning("metrics: the backlog could not be read", cause))
    )
  )
})
