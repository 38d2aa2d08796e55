import { Clock, Effect, Layer, Schedule } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ClusterRepo } from "../repositories/ClusterRepo.ts"
import { IdempotencyRepo } from "../repositories/IdempotencyRepo.ts"
import { ImportsRepo } from "../repositories/ImportsRepo.ts"
import { RendersRepo } from "../repositories/RendersRepo.ts"
import * as RenderTransitions from "../services/RenderTransitions.ts"
import { ImportEntity } from "./ImportEntity.ts"
import { RenderEntity } from "./RenderEntity.ts"

/**
 * Background duties of every runner, safe to run on several at once (every change is a
 * conditional update): renders past their time budget fail with `render_timeout` and are
 * refunded, so nothing stays non-terminal forever; idle non-terminal renders and pending imports get
 * their (persisted, deduplicated) Start again in case it was never stored; cluster message and reply rows and
 * idempotency records older than the idempotency window are pruned.
 */
const retentionMillis = 24 * 3600_000
// cluster message ids are snowflakes: milliseconds since 2025-01-01 in the bits above 22
const snowflakeAt = (ms: number) => (BigInt(ms - Date.UTC(2025, 0, 1)) << 22n).toString()

export const sweep = Effect.gen(function*() {
  const config = yield* AppConfig
  const renders = yield* RendersRepo
  const now = yield* Clock.currentTimeMillis
  for (const { id } of yield* renders.overdue(new Date(now - config.renderTimeoutSeconds * 1000))) {
    yield* RenderTransitions.endUnsuccessfully(id, "render_timeout", "the render exceeded its time budget")
  }
  const start = yield* RenderEntity.client
  for (const { id } of yield* renders.idleSince(new Date(now - 60_000))) {
    yield* start(id).Start({ renderId: id }, { discard: true }).pipe(Effect.timeout("2 seconds"), Effect.ignore)
  }
  // imports likewise: a pending import untouched for a minute gets its (deduplicated) Start again
  const startImport = yield* ImportEntity.client
  for (const { id } of yield* (yield* ImportsRepo).idlePending(new Date(now - 60_000))) {
    yield* startImport(id).Start({ importId: id }, { discard: true }).pipe(Effect.timeout("2 seconds"), Effect.ignore)
  }
  const cutoff = snowflakeAt(now - retentionMillis)
  yield* (yield* ClusterRepo).pruneMessages(cutoff).pipe(Effect.catchDefect(() => Effect.void))
  yield* (yield* IdempotencyRepo).pruneExpired.pipe(Effect.catchDefect(() => Effect.void))
})

export const layer = Layer.effectDiscard(Effect.gen(function*() {
  yield* Effect.logInfo("maintenance: render deadlines, resends and retention every 15 s")
  yield* sweep.pipe(
    Effect.catchCause((cause) => Effect.logWarning("maintenance sweep failed", cause)),
    Effect.repeat(Schedule.spaced("15 seconds")),
    Effect.delay("5 seconds"),
    Effect.forkScoped
  )
}))
