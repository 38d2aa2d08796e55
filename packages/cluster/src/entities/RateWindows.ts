import { RateLimit } from "@pic2video/domain"
import { Context, Effect, Layer } from "effect"

/**
 * The per-minute windows of the API keys whose ApiKey entity this process hosts (contract §4.5,
 * §8.1, §14). One table per process, shared by the entity's `Admit` handler (messages from other
 * processes) and by `RateLimiter` (requests answered in this process for a key whose shard this
 * runner holds): either way the count of a key lives in exactly one place, the process that owns
 * the key's shard, so limits stay exact. So the composition provides the service once, below both
 * (`layerInfra`). A window is pure data (`RateLimit.admit`) updated synchronously, so no two
 * admissions interleave. Entries whose windows have all run out are swept once a minute: the table
 * holds at most the keys used in the last two minutes.
 */
type Windows = { reads?: RateLimit.Window; creates?: RateLimit.Window; uploads?: RateLimit.Window }

/**
 * A table of its own: `admit` counts a request at `now`; `size` is the keys with a window (the soak
 * benchmark watches it stay bounded).
 */
export const makeTable = () => {
  const table = new Map<string, Windows>()
  let sweptAt = 0

  const sweep = (now: number) => {
    sweptAt = now
    for (const [keyId, windows] of table) {
      const live = RateLimit.buckets.some((b) => {
        const w = windows[b]
        return w !== undefined && now - w.startedAt < RateLimit.windowMillis
      })
      if (!live) table.delete(keyId)
    }
  }

  const admit = (keyId: string, bucket: RateLimit.Bucket, limit: number, now: number): RateLimit.Decision => {
    if (now - sweptAt >= RateLimit.windowMillis) sweep(now)
    let windows = table.get(keyId)
    if (windows === undefined) {
      windows = {}
      table.set(keyId, windows)
    }
    const d = RateLimit.admit(windows[bucket], limit, now)
    windows[bucket] = d.window
    return { allowed: d.allowed, limit: d.limit, remaining: d.remaining, resetSeconds: d.resetSeconds }
  }

  return { admit, size: () => table.size }
}

export class RateWindows extends Context.Service<RateWindows>()("pic2video/RateWindows", {
  make: Effect.sync(makeTable)
}) {
  static readonly layer = Layer.effect(this, this.make)
}
