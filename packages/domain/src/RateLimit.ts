import { Schema } from "effect"

/**
 * Per-key, per-minute request budgets (contract §4.5). A bucket is a fixed one-minute window that
 * opens with its first request; a refused request does not consume. Pure: the ApiKey entity keeps
 * the windows and feeds in the clock.
 */
export const buckets = ["reads", "creates", "uploads"] as const
export type Bucket = (typeof buckets)[number]

export const windowMillis = 60_000

export interface Window {
  readonly startedAt: number
  readonly count: number
}

/** Whether a request is admitted, and what RateLimit-* say about its window. */
export const Decision = Schema.Struct({
  allowed: Schema.Boolean,
  limit: Schema.Number,
  remaining: Schema.Number,
  /** whole seconds until the window refills (RateLimit-Reset, Retry-After) */
  resetSeconds: Schema.Number
})
export interface Decision extends Schema.Schema.Type<typeof Decision> {}

/** The decision on one request, and the window it leaves. */
export const admit = (
  window: Window | undefined,
  limit: number,
  now: number
): Decision & { readonly window: Window } => {
  const current = window === undefined || now - window.startedAt >= windowMillis ? { startedAt: now, count: 0 } : window
  const resetSeconds = Math.max(1, Math.ceil((current.startedAt + windowMillis - now) / 1000))
  if (current.count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds, window: current }
  const next = { startedAt: current.startedAt, count: current.count + 1 }
  return { allowed: true, limit, remaining: limit - next.count, resetSeconds, window: next }
}
