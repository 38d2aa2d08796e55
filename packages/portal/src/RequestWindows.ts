import { RateLimit } from "@pic2video/domain"
import { Clock, Context, Effect, Layer } from "effect"

/**
 * The portal's per-workspace request windows (RateLimit's fixed minute windows), held in this
 * process: every request counts in one bucket, mutations in another as well.
 */
export class RequestWindows extends Context.Service<RequestWindows>()("pic2video/portal/RequestWindows", {
  make: Effect.sync(() => {
    const windows = new Map<string, RateLimit.Window>()
    return {
      /** Counts a request in `bucket`, on the composition's clock: whether it fits within `limit` a minute. */
      admit: (bucket: string, limit: number) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const decision = RateLimit.admit(windows.get(bucket), limit, now)
          windows.set(bucket, decision.window)
          // a window past its minute is as good as none: keep the map from growing without bound
          if (windows.size > 10_000) {
            for (const [k, w] of windows) if (now - w.startedAt >= RateLimit.windowMillis) windows.delete(k)
          }
          return decision
        })
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
