import { NodeClusterSocket } from "@effect/platform-node"
import { Context, Effect, Layer, Option } from "effect"
import { RunnerAddress } from "effect/cluster"
import { AppConfig } from "../config/AppConfig.ts"
import { freePort } from "../database/EmbeddedPostgres.ts"

/**
 * Every service process is a runner of one cluster whose message and runner storage is the
 * service's PostgreSQL: one process (npm start) is simply a cluster of one, and more processes
 * on the same DATABASE_URL share the entities. Settings are explicit so the cluster never reads
 * the generic HOST/PORT variables that belong to the HTTP server.
 *
 * Failover: a runner that dies stops refreshing its shard locks; after `shardLockExpiration` (9 s)
 * another takes its shards over, and the health check (every 5 s) notices it sooner when it can.
 */
export const failoverSettings = {
  shardsPerGroup: 300, // fixed for the life of a deployment: changing it strands stored messages
  shardLockExpiration: "9 seconds",
  shardLockRefreshInterval: "3 seconds",
  runnerHealthCheckInterval: "5 seconds",
  entityTerminationTimeout: "10 seconds",
  entityMessagePollInterval: "2 seconds",
  refreshAssignmentsInterval: "2 seconds",
  // messages to entities on this same runner skip the encode/decode round trip (every request's
  // rate-limit check is one); messages between processes are serialised as always
  simulateRemoteSerialization: false,
  // Effect 4 caps the entities resident on a runner (10 000 by default: past it, new volatile sends
  // fail with MailboxFull and stored messages wait); Effect 3 had no cap, and one ApiKey entity per
  // key used in the last two minutes plus one per render and import in flight must not be refused
  maxResidentEntities: "unbounded"
} as const

/**
 * Whether this process hosts entities (`runner`: `npm start`, `npm run runner`) or only sends to
 * them (`client`: `npm run api`). KeyAdmission bounds a client's wait for a runner (contract §14.4).
 */
export class ClusterRole extends Context.Service<ClusterRole, "runner" | "client">()("pic2video/ClusterRole") {}

export const layerRunner = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const port = Option.isSome(config.runnerPort) ? config.runnerPort.value : yield* freePort()
    yield* Effect.logInfo(`cluster runner at ${config.runnerHost}:${port}`)
    return Layer.merge(
      NodeClusterSocket.layer({
        storage: "sql",
        shardingConfig: {
          ...failoverSettings,
          runnerAddress: Option.some(RunnerAddress.make(config.runnerHost, port)),
          runnerListenAddress: Option.some(RunnerAddress.make(config.runnerHost, port))
        }
      }),
      Layer.succeed(ClusterRole, "runner")
    )
  }).pipe(Effect.orDie)
)

/** A process that sends to entities but hosts none (`npm run api`). */
export const layerClientOnly = Layer.merge(
  NodeClusterSocket.layer({
    storage: "sql",
    clientOnly: true,
    shardingConfig: failoverSettings
  }),
  Layer.succeed(ClusterRole, "client")
)
