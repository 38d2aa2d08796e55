import { RateLimit } from "@pic2video/domain"

/**
 * The per-minute windows of the API keys whose ApiKey entity this process hosts (contract §4.5,
 * §8.1, §14). One table per process, shared by the entity's `Admit` handler (messages from other
 * processes) and by `KeyAdmission` (requests answered in this process for a key whose shard this
 * runner holds): either way the count of a key lives in exactly one place, the process that owns
 * the key's shard, so limits stay exact. A window is pure data (`RateLimit.admit`) updated
 * synchronously, so no two admissions interleave. Entries whose windows have all run out are swept
 * once a minute: the table holds at most the keys used in the last two minutes.
 */
export interface Admission {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  readonly resetSeconds: number
}

type Windows = { reads?: RateLimit.Window; creates?: RateLimit.Window; uploads?: RateLimit.Window }

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

export const admit = (keyId: string, bucket: RateLimit.Bucket, limit: number, now: number): Admission => {
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

/** Keys with a window in this process (the soak benchmark watches it stay bounded). */
export const size = () => table.size
