import { RateLimit } from "@pic2video/domain"
import { Clock, Effect, Layer, Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { ChargeRefused, ChargeResult, Charges, NewRender, resultOf } from "../services/Charges.ts"
import { RateWindows } from "./RateWindows.ts"

/**
 * One entity per API key: the owner of the key's per-minute windows, and the way a key's charges
 * reach the charge (Charges.ts). Window updates are atomic in memory; PostgreSQL is the arbiter of
 * money across messages, runners and crashes (the charge transaction decides the spend cap and the
 * allowance under the key's row lock, so concurrent charges serialise there). Rate windows are
 * memory only, in the process that holds the key's shard (RateWindows.ts), and start empty there
 * (after a failover the worst case is one extra minute's budget).
 */
export const ApiKeyEntity = Entity.make("ApiKey", [
  Rpc.make("Admit", {
    payload: { bucket: Schema.Literals(RateLimit.buckets), limit: Schema.Number },
    success: RateLimit.Decision
  }),
  Rpc.make("Charge", {
    // the charge record as the RenderService made it; the key is the entity's own
    payload: NewRender,
    success: ChargeResult,
    // the charge's own refusal, passed on as it is
    error: ChargeRefused
  })
])

export const layer = ApiKeyEntity.toLayer(
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const keyId = address.entityId
    const charges = yield* Charges
    const windows = yield* RateWindows

    return ApiKeyEntity.of({
      // the window table is shared with RateLimiter's local path (RateWindows.ts)
      Admit: ({ payload }) =>
        Effect.map(Clock.currentTimeMillis, (now) => windows.admit(keyId, payload.bucket, payload.limit, now)),
      Charge: ({ payload }) => Effect.map(charges.charge({ ...payload, payer: { ...payload.payer, keyId } }), resultOf)
    })
  }),
  // Admit is one synchronous update of the window table (RateWindows.ts) and a key's charges serialise on the key's row lock in the
  // charge transaction, so messages need not queue behind each other here: a burst of creates on
  // one key waits in PostgreSQL, not in a mailbox against a timeout.
  { maxIdleTime: "2 minutes", concurrency: "unbounded" }
).pipe(Layer.provide(Charges.layer))
