import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { operation } from "./Repository.ts"

/**
 * The tables @effect/cluster keeps in the service's PostgreSQL, as the operator's view reads them
 * (entities/ClusterStatus.ts) and the sweeper prunes them (entities/Maintenance.ts). Heartbeats are
 * judged on the database's own clock (`localtimestamp`): the runners write them with it, so the
 * database is the arbiter of how old one is.
 */
const RunnerRow = Schema.Struct({
  machine_id: Schema.Number,
  address: Schema.String,
  runner: Schema.String,
  healthy: Schema.Boolean,
  last_heartbeat: Schema.Date,
  live: Schema.Boolean,
  age: Schema.Number
})
interface RunnerRow extends Schema.Schema.Type<typeof RunnerRow> {}

const Count = Schema.Struct({ n: Schema.Number })
const InFlight = Schema.Struct({
  kind: Schema.Literals(["render", "import"]),
  shard_id: Schema.String,
  n: Schema.Number
})
const Queue = Schema.Struct({
  renders_queued: Schema.Number,
  renders_processing: Schema.Number,
  imports_pending: Schema.Number
})

export class ClusterRepo extends Context.Service<ClusterRepo>()("pic2video/ClusterRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const present = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ present: Schema.Boolean }),
      execute: () =>
        sql`SELECT to_regclass('cluster_runners') IS NOT NULL AND to_regclass('cluster_messages') IS NOT NULL AS present`
    })
    const runners = SqlSchema.findAll({
      Request: Schema.Number,
      Result: RunnerRow,
      execute: (liveSeconds) =>
        sql`
          SELECT machine_id, address, runner, healthy,
            last_heartbeat AT TIME ZONE current_setting('TimeZone') AS last_heartbeat,
            last_heartbeat > localtimestamp - make_interval(secs => ${liveSeconds}) AS live,
            extract(epoch FROM localtimestamp - last_heartbeat)::float8 AS age
          FROM cluster_runners ORDER BY address`
    })
    const inFlight = SqlSchema.findAll({
      Request: Schema.Void,
      Result: InFlight,
      execute: () =>
        sql`
          SELECT 'render' AS kind, m.shard_id, count(DISTINCT r.id)::int AS n
          FROM renders r JOIN cluster_messages m ON m.entity_type = 'Render' AND m.entity_id = r.id AND m.tag = 'Start'
          WHERE r.status = 'processing' GROUP BY m.shard_id
          UNION ALL
          SELECT 'import' AS kind, m.shard_id, count(DISTINCT i.id)::int AS n
          FROM imports i JOIN cluster_messages m ON m.entity_type = 'Import' AND m.entity_id = i.id AND m.tag = 'Start'
          WHERE i.status = 'pending' GROUP BY m.shard_id`
    })
    const queue = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Queue,
      execute: () =>
        sql`
          SELECT (SELECT count(*)::int FROM renders WHERE status = 'queued') AS renders_queued,
            (SELECT count(*)::int FROM renders WHERE status = 'processing') AS renders_processing,
            (SELECT count(*)::int FROM imports WHERE status = 'pending') AS imports_pending`
    })
    // runners the cluster counts on: heartbeat within the shard lock expiration, not marked unhealthy
    const live = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Count,
      execute: (liveSeconds) =>
        sql`
          SELECT count(*)::int AS n FROM cluster_runners
          WHERE healthy AND last_heartbeat > localtimestamp - make_interval(secs => ${liveSeconds})`
    })
    const unprocessed = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Count,
      execute: () => sql`SELECT count(*)::int AS n FROM cluster_messages WHERE processed = false AND kind = 0`
    })
    // advisory locks the runners hold on this database (one per shard; freed when a runner's connection drops)
    const locks = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Count,
      execute: () =>
        sql`
          SELECT count(*)::int AS n FROM pg_locks
          WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
    })
    const prune = SqlSchema.void({
      Request: Schema.String,
      execute: (cutoff) =>
        Effect.andThen(
          sql`DELETE FROM cluster_replies WHERE request_id IN
            (SELECT id FROM cluster_messages WHERE processed AND id < ${cutoff}::bigint)`,
          sql`DELETE FROM cluster_messages WHERE processed AND id < ${cutoff}::bigint`
        )
    })

    // the cluster's tables, once made, stay: no need to look for them again
    let tablesSeen = false
    const tablesPresent = Effect.suspend(() =>
      tablesSeen ? Effect.succeed(true) : Effect.map(present(undefined), (r) => (tablesSeen = r.present))
    )

    return {
      /** Everything `admin cluster status` shows, read from the tables (none yet: no runner has started). */
      snapshot: (liveSeconds: number) =>
        Effect.gen(function*() {
          // a database no runner has started on yet has no cluster tables
          const tables = (yield* present(undefined)).present
          return {
            runners: tables ? yield* runners(liveSeconds) : [],
            inFlight: tables ? yield* inFlight(undefined) : [],
            queue: yield* queue(undefined),
            unprocessed: tables ? (yield* unprocessed(undefined)).n : 0,
            locks: (yield* locks(undefined)).n
          }
        }).pipe(operation("ClusterRepo.snapshot")),
      /** Runners heartbeating within `liveSeconds` and healthy (0 before any runner has started). */
      liveRunners: (liveSeconds: number) =>
        Effect.gen(function*() {
          return (yield* tablesPresent) ? (yield* live(liveSeconds)).n : 0
        }).pipe(operation("ClusterRepo.liveRunners")),
      /** Forgets processed messages (and their replies) with snowflake ids below `cutoff`. */
      pruneMessages: (cutoff: string) => prune(cutoff).pipe(operation("ClusterRepo.pruneMessages"))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
