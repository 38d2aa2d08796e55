import { failoverSettings } from "@pic2video/cluster/entities/Sharding"
import * as WorkMetrics from "@pic2video/cluster/metrics/WorkMetrics"
import { Cause, Config, Data, Effect, Layer, Metric, Option } from "effect"
import { ShardId, Sharding } from "effect/cluster"
import * as Runtime from "effect/Runtime"

/**
 * How a service process starts and stops, as its operator reads it in the log (docs/operations.md,
 * "Stopping a process").
 *
 * Stopping (SIGTERM/SIGINT, or a failure once started) is logged step by step: each step is a layer
 * whose finalizer logs, placed in the role's composition (Server.ts) between the layers whose release
 * it announces — a layer built later is released earlier, so the outermost step speaks first and the
 * innermost last, after the database pool has closed. A process that never finished starting logs no
 * step: its one line says why it could not start.
 *
 * A listener that cannot bind (a port in use, a port the user may not bind) ends the start with one
 * line naming the port and its variable, and exit code 1; no stack (the runtime is told the failure
 * is reported).
 */
export type Role = "all-in-one" | "api" | "runner"

/** A start that failed for a reason already logged in one line. */
export class StartFailed extends Data.TaggedError("StartFailed")<{ readonly message: string }> {
  // NodeRuntime.runMain logs a failure's whole cause unless told it was reported
  override readonly [Runtime.errorReported] = false
}

interface State {
  started: boolean
  signal: string | undefined
  /** shards held when the stop began (the entities' own stop may give some up before the handoff) */
  shards: number
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

const shardIds = Array.from({ length: failoverSettings.shardsPerGroup }, (_, i) => ShardId.make("default", i + 1))

/** Shards this process holds now (none in an api process). */
const heldShards = Effect.map(Sharding.Sharding, (sharding) => shardIds.filter((id) => sharding.hasShardId(id)).length)

/**
 * The logging steps of one role's stop, sharing what they know (started yet, which signal). Place:
 * `outermost` around everything, `beforeCluster` between the work (HTTP, entities) and the cluster,
 * `beforeDatabase` between the cluster and the database, `afterDatabase` beneath the database.
 */
export const steps = (role: Role) => {
  const state: State = { started: false, signal: undefined, shards: 0 }
  const serves = role !== "runner"
  const hosts = role !== "api"

  // only while stopping a process that had started (a failed start says why in its own one line)
  const log = (message: () => string) =>
    Layer.effectDiscard(Effect.addFinalizer(() => (state.started ? Effect.logInfo(message()) : Effect.void)))

  const draining = Effect.gen(function*() {
    // the signal's other listeners run in the same emit: let them (Deno calls ours after the runtime's)
    yield* Effect.yieldNow
    state.shards = yield* heldShards
    const parts: Array<string> = []
    if (serves) parts.push("the HTTP server takes no new connections, requests in flight finish")
    if (hosts) {
      // the gauge p2v_runner_renders_active (its series is typed loosely: read its number)
      const gauge: unknown = yield* Metric.value(WorkMetrics.runnerRendersActive.metric)
      const active = typeof gauge === "object" && gauge !== null && "value" in gauge && typeof gauge.value === "number"
        ? gauge.value
        : 0
      parts.push(
        `${plural(active, "render", "renders")} in flight ${active === 1 ? "is" : "are"} handed back ` +
          `to the cluster (resumed by the runner that takes ${active === 1 ? "its" : "their"} shard)`
      )
    }
    return `stopping${state.signal === undefined ? "" : ` on ${state.signal}`}: draining (${parts.join("; ")})`
  })

  /** Built last (so released first): marks the start complete, remembers the signal, says the stop begins. */
  const outermost = Layer.effectDiscard(Effect.gen(function*() {
    const remember = (signal: string) => () => {
      state.signal ??= signal
    }
    // the runtime's own handlers (NodeRuntime.runMain) interrupt the process, and the first step is
    // logged at once: these only note which signal, so they go first
    const onTerm = remember("SIGTERM")
    const onInt = remember("SIGINT")
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        process.prependOnceListener("SIGTERM", onTerm)
        process.prependOnceListener("SIGINT", onInt)
      }),
      () =>
        Effect.sync(() => {
          process.removeListener("SIGTERM", onTerm)
          process.removeListener("SIGINT", onInt)
        })
    )
    yield* Effect.addFinalizer(() => (state.started ? Effect.flatMap(draining, (m) => Effect.logInfo(m)) : Effect.void))
    state.started = true
  }))

  const beforeCluster = log(() =>
    role === "api"
      ? "HTTP server closed; leaving the cluster"
      : `${serves ? "HTTP server closed, " : ""}entities stopped; releasing ${plural(state.shards, "shard", "shards")}`
  )
  const beforeDatabase = log(() =>
    role === "api" ? "left the cluster; closing the database pool" : "shards released; closing the database pool"
  )
  const afterDatabase = log(() => "database pool closed; stopped")

  return { outermost, beforeCluster, beforeDatabase, afterDatabase }
}

/** Which variable set the port a listener could not bind, by the port's number. */
const portVariables = Config.all({
  PORT: Config.Int("PORT").pipe(Config.withDefault(8080)),
  METRICS_PORT: Config.option(Config.Int("METRICS_PORT")),
  RUNNER_PORT: Config.option(Config.Int("RUNNER_PORT"))
})

interface ListenError {
  readonly code: "EADDRINUSE" | "EACCES"
  readonly port: number
}

const isListenError = (u: object): u is ListenError =>
  "code" in u && (u.code === "EADDRINUSE" || u.code === "EACCES") && "port" in u && typeof u.port === "number"

/** Node's listen error, wherever the platform wrapped it (ServeError.cause, SocketServerError.reason.cause, a defect). */
const findListenError = (cause: Cause.Cause<unknown>): ListenError | undefined => {
  const visit = (u: unknown, depth: number): ListenError | undefined => {
    if (typeof u !== "object" || u === null || depth > 5) return undefined
    if (isListenError(u)) return u
    return ("cause" in u ? visit(u.cause, depth + 1) : undefined) ??
      ("reason" in u ? visit(u.reason, depth + 1) : undefined)
  }
  for (const reason of cause.reasons) {
    const found = Cause.isFailReason(reason)
      ? visit(reason.error, 0)
      : Cause.isDieReason(reason)
      ? visit(reason.defect, 0)
      : undefined
    if (found !== undefined) return found
  }
  return undefined
}

/** The one line for a listener that could not bind. */
const listenFailureLine = (error: ListenError, role: Role) =>
  Effect.gen(function*() {
    const ports = yield* Effect.orElseSucceed(portVariables, () => undefined)
    const candidates: Array<[string, Option.Option<number>]> = ports === undefined ? [] : [
      ...(role === "runner" ? [] : [["PORT", Option.some(ports.PORT)] as [string, Option.Option<number>]]),
      ["METRICS_PORT", ports.METRICS_PORT],
      ["RUNNER_PORT", ports.RUNNER_PORT]
    ]
    const variable = candidates.find(([, p]) => Option.contains(p, error.port))?.[0]
    const named = variable === undefined ? "" : ` (${variable})`
    return error.code === "EADDRINUSE"
      ? `port ${error.port} is already in use${named}: stop what listens there or choose another port`
      : `port ${error.port} may not be bound by this user${named}: choose a port above 1023`
  })

/**
 * A role's composition whose start fails on a listener that cannot bind: logs the one line (through
 * the process's logger, so LOG_FORMAT holds) and fails with `StartFailed`, which the runtime does not
 * print again. Any other failure passes through unchanged.
 */
export const reportingListenFailures = (role: Role) => <A, E, R>(self: Layer.Layer<A, E, R>) =>
  Layer.catchCause(self, (cause) => {
    const error = findListenError(cause)
    return Layer.effectContext<A, E | StartFailed, never>(
      error === undefined ? Effect.failCause(cause) : Effect.gen(function*() {
        const line = yield* listenFailureLine(error, role)
        yield* Effect.logError(line)
        return yield* Effect.fail(new StartFailed({ message: line }))
      })
    )
  })
