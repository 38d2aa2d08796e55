import { Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { RateLimit } from "@pic2video/domain"
import { Clock, Effect, Ref, Schema } from "effect"

/**
 * One entity per API key: the serialisation point for the key's per-minute windows (and, with
 * renders, its spend cap and idempotency). Messages to one key are handled one at a time, so a
 * check-then-count has no race; the windows are memory only and start empty when the entity
 * activates (after a restart the worst case is one extra minute's budget).
 */
export const Admission = Schema.Struct({
  allowed: Schema.Boolean,
  limit: Schema.Number,
  remaining: Schema.Number,
  resetSeconds: Schema.Number
})
export type Admission = typeof Admission.Type

export const ApiKeyEntity = Entity.make("ApiKey", [
  Rpc.make("Admit", {
    payload: { bucket: Schema.Literal(...RateLimit.buckets), limit: Schema.Number },
    success: Admission
  })
])

export const layer = ApiKeyEntity.toLayer(
  Effect.gen(function*() {
    const windows = yield* Ref.make(new Map<RateLimit.Bucket, RateLimit.Window>())
    return ApiKeyEntity.of({
      Admit: ({ payload }) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          return yield* Ref.modify(windows, (m) => {
            const d = RateLimit.admit(m.get(payload.bucket), payload.limit, now)
            const next = new Map(m)
            next.set(payload.bucket, d.window)
            return [{ allowed: d.allowed, limit: d.limit, remaining: d.remaining, resetSeconds: d.resetSeconds }, next]
          })
        })
    })
  }),
  { maxIdleTime: "2 minutes" }
)
