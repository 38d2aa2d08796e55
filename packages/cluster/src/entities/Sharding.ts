import { NodeClusterSocket } from "@effect/platform-node"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { Context, Deferred, Effect, Equal, Layer, Option } from "effect"
import type { Runner } from "effect/cluster"
import { RunnerAddress, RunnerStorage, ShardingConfig, SqlMessageStorage, SqlRunnerStorage } from "effect/cluster"
import * as net from "node:net"
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
 * them (`client`: `npm run api`). RateLimiter bounds a client's wait for a runner (contract §14.4).
 */
export class ClusterRole extends Context.Service<ClusterRole, "runner" | "client">()("pic2video/ClusterRole") {}

/**
 * Opened once this process's entities are registered (`entitiesRegistered`, after the entity layers):
 * until then the runner takes no shard (`startingStorage`).
 */
class EntitiesRegistered extends Context.Service<EntitiesRegistered, Deferred.Deferred<void>>()(
  "pic2video/EntitiesRegistered"
) {}

/** The entity layers of a runner, then the signal that lets it take its shards. */
export const entitiesRegistered = <E, R>(entities: Layer.Layer<never, E, R>) =>
  Layer.effectDiscard(Effect.flatMap(EntitiesRegistered, (registered) => Deferred.succeed(registered, undefined))).pipe(
    Layer.provide(entities)
  )

/** A runner that never hears of its entities takes its shards after this all the same (and says so). */
const registrationWait = "30 seconds"

/** How long a check that a runner's address refuses connections may take; past it, the runner is kept. */
const refusedWithinMillis = 1_000

/** Whether nothing listens at a runner's address (connection refused): its process is gone. */
const refuses = (address: RunnerAddress.RunnerAddress) =>
  Effect.callback<boolean>((resume) => {
    const socket = net.connect({ host: address.host, port: address.port })
    const done = (refused: boolean) => {
      socket.destroy()
      resume(Effect.succeed(refused))
    }
    socket.setTimeout(refusedWithinMillis, () => done(false))
    socket.once("connect", () => done(false))
    socket.once("error", (e: NodeJS.ErrnoException) => done(e.code === "ECONNREFUSED"))
    return Effect.sync(() => socket.destroy())
  })

/**
 * The cluster's SQL runner storage as a starting runner uses it. Two things differ, both for a
 * (re)start, where Effect's own timing left queued renders waiting:
 * - no shard is acquired before this process's entities are registered (`EntitiesRegistered`):
 *   the storage read loop would meet stored messages for entity types it does not have yet, and
 *   Effect logs a multi-line warning per message and read for each (181 after one restart);
 * - the first list of runners it reads leaves out, and unregisters, every other runner whose
 *   address refuses connections: a process killed with SIGKILL keeps its heartbeat fresh for up to
 *   `shardLockExpiration`, and the shards the assignment gave it waited for that. A runner that does
 *   not answer at all (another host, unreachable) is kept and expires as before; a live runner
 *   unregistered by mistake registers itself again at its next refresh.
 */
const startingStorage = (self: RunnerAddress.RunnerAddress) =>
  Layer.effect(
    RunnerStorage.RunnerStorage,
    Effect.gen(function*() {
      const storage = yield* RunnerStorage.RunnerStorage
      const registered = yield* EntitiesRegistered
      yield* Deferred.succeed(registered, undefined).pipe(
        Effect.delay(registrationWait),
        Effect.tap((opened) =>
          opened
            ? Effect.logWarning(
              `cluster: entities not registered ${registrationWait} after start; taking shards anyway`
            )
            : Effect.void
        ),
        Effect.forkScoped
      )
      let firstList = true
      const forgetGone = (runners: Array<readonly [Runner.Runner, boolean]>) =>
        Effect.gen(function*() {
          const others = runners.filter(([runner]) => !Equal.equals(runner.address, self))
          const refused = yield* Effect.forEach(others, ([runner]) => refuses(runner.address), {
            concurrency: "unbounded"
          })
          const gone = others.filter((_, i) => refused[i])
          for (const [runner] of gone) {
            yield* storage.unregister(runner.address)
            yield* Effect.logInfo(
              `cluster: runner ${runner.address.host}:${runner.address.port} is gone (connection refused); its shards are taken now`
            )
          }
          firstList = false
          return runners.filter((r) => !gone.includes(r))
        })
      return RunnerStorage.RunnerStorage.of({
        ...storage,
        getRunners: Effect.flatMap(
          storage.getRunners,
          (runners) => firstList ? forgetGone(runners) : Effect.succeed(runners)
        ),
        acquire: (address, shardIds) => Effect.andThen(Deferred.await(registered), storage.acquire(address, shardIds))
      })
    })
  ).pipe(Layer.provide(Layer.orDie(SqlRunnerStorage.layer)))

export const layerRunner = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const port = Option.isSome(config.runnerPort) ? config.runnerPort.value : yield* freePort()
    yield* Effect.logInfo(`cluster runner at ${config.runnerHost}:${port}`)
    const address = RunnerAddress.make(config.runnerHost, port)
    const shardingConfig = {
      ...failoverSettings,
      runnerAddress: Option.some(address),
      runnerListenAddress: Option.some(address)
    }
    const registered = yield* Deferred.make<void>()
    // the storages NodeClusterSocket makes for `storage: "sql"`, the runner storage as a starting runner uses it
    const storages = Layer.merge(
      SqlMessageStorage.layer.pipe(Layer.provide(NodeCrypto.layerDigest)),
      startingStorage(address)
    ).pipe(Layer.provide(ShardingConfig.layerFromEnv(shardingConfig)))
    return Layer.mergeAll(
      NodeClusterSocket.layer({ storage: "byo", shardingConfig }).pipe(Layer.provideMerge(storages)),
      Layer.succeed(ClusterRole, "runner")
    ).pipe(Layer.provideMerge(Layer.succeed(EntitiesRegistered, registered)))
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
