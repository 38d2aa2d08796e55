import type { RateLimit } from "@pic2video/domain"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { EntityId, Sharding } from "effect/cluster"
import { ApiKeyEntity } from "./ApiKeyEntity.ts"
import { RateWindows } from "./RateWindows.ts"
import { ClusterRole } from "./Sharding.ts"

/**
 * Step 5 of the request pipeline (contract §4.5, §14): count a request against its key's window.
 * The window lives with the key's ApiKey entity, i.e. in the process that holds the key's shard.
 * When that is this process (always, for `npm start`), the shared window table is updated directly:
 * the same table the entity's `Admit` handler updates, so the count is the one count, without the
 * cluster's message machinery (an envelope, a request fiber and a reply per request). Otherwise
 * (`npm run api`, or a key whose shard another runner holds) it is the `Admit` message. In a process
 * that only sends (`npm run api`) the message is interruptible, so the pipeline's 3 s timeout bounds
 * it (contract §14.4); a runner waits for the shard (at start it may not hold its shards yet, and
 * answering those requests 503 would be wrong).
 */
export class RateLimiter extends Context.Service<RateLimiter>()("pic2video/RateLimiter", {
  make: Effect.gen(function*() {
    const sharding = yield* Sharding.Sharding
    const windows = yield* RateWindows
    const client = yield* ApiKeyEntity.client
    const clientOnly = Option.getOrUndefined(yield* Effect.serviceOption(ClusterRole)) === "client"
    return {
      admit: (keyId: string, bucket: RateLimit.Bucket, limit: number): Effect.Effect<RateLimit.Decision, unknown> => {
        const entityId = EntityId.make(keyId)
        if (sharding.hasShardId(sharding.getShardId(entityId, ApiKeyEntity.getShardGroup(entityId)))) {
          return Effect.map(Clock.currentTimeMillis, (now) => windows.admit(keyId, bucket, limit, now))
        }
        // the request path runs uninterruptibly: without `interruptible` the pipeline's timeout cannot stop
        // a send that never arrives (no live runner), and the request would be held until the HTTP timeout
        // (~30 s) instead of answering after the 3 s of contract §8.3
        const sent = client(keyId).Admit({ bucket, limit })
        return clientOnly ? Effect.interruptible(sent) : sent
      }
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
