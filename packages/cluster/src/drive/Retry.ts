/**
 * How provider calls are retried: rate limits (429, 403 rateLimitExceeded /
 * userRateLimitExceeded), 5xx, network errors, timeouts and truncated bodies are retried with
 * exponential backoff and full jitter, a bounded number of times. Every other failure is final.
 *
 * @since 0.1.0
 */
import { Context, Data, Duration, Effect, Predicate, Random, Schedule } from "effect"
import { ProviderUnavailable, type UnavailableReason } from "./Errors.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface DriveRetryPolicyShape {
  /** Attempts in all, the first one included. */
  readonly maxAttempts: number
  /** Cap of the first backoff; doubles per attempt up to `maxDelay`. The delay is uniform in [0, cap). */
  readonly baseDelay: Duration.Input
  readonly maxDelay: Duration.Input
  /** Budget of one metadata / OAuth request (one attempt). */
  readonly requestTimeout: Duration.Input
  /** Budget of one download attempt, body included. */
  readonly downloadTimeout: Duration.Input
}

/**
 * @since 0.1.0
 * @category constants
 */
export const defaults: DriveRetryPolicyShape = {
  maxAttempts: 5,
  baseDelay: Duration.millis(500),
  maxDelay: Duration.seconds(30),
  requestTimeout: Duration.seconds(30),
  downloadTimeout: Duration.minutes(5)
}

/**
 * A `Context.Reference`, so production code needs no layer; tests shrink the delays with
 * `Layer.succeed(DriveRetryPolicy, {...})` or `Effect.provideService`.
 *
 * @since 0.1.0
 * @category tags
 */
export const DriveRetryPolicy = Context.Reference<DriveRetryPolicyShape>(
  "@pic2video/cluster/drive/DriveRetryPolicy",
  { defaultValue: () => defaults }
)

/**
 * A failure worth another attempt. It never leaves this module's callers: once the attempts are
 * spent it becomes `ProviderUnavailable`.
 *
 * @since 0.1.0
 * @category errors
 */
export class Transient extends Data.TaggedError("Transient")<{
  readonly reason: UnavailableReason
  readonly status: number | null
}> {}

/**
 * What a failed HTTP call amounts to, without any of the request (headers and bodies hold tokens).
 *
 * @since 0.1.0
 * @category models
 */
interface HttpFailure {
  /** `null` when no response arrived (connection refused / reset, DNS, abort). */
  readonly status: number | null
  /** OAuth `error` (e.g. `invalid_grant`), Drive `errors[0].reason` (e.g. `notFound`), or a network code. */
  readonly code: string
}

const RATE_LIMIT_REASONS = new Set(["rateLimitExceeded", "userRateLimitExceeded"])

const parseBody = (data: unknown): unknown => {
  if (typeof data !== "string") return data
  try {
    return JSON.parse(data)
  } catch {
    return data
  }
}

/** Drive: `{error:{code,message,errors:[{reason}]}}`; OAuth: `{error:"invalid_grant"}`. */
const providerCode = (body: unknown): string | undefined => {
  if (!Predicate.hasProperty(body, "error")) return undefined
  const error = body.error
  if (typeof error === "string") return error
  if (Predicate.hasProperty(error, "errors") && Array.isArray(error.errors)) {
    const first: unknown = error.errors[0]
    if (Predicate.hasProperty(first, "reason") && typeof first.reason === "string") return first.reason
  }
  if (Predicate.hasProperty(error, "status") && typeof error.status === "string") return error.status
  return undefined
}

/**
 * Reads a gaxios error (or any thrown value) by duck typing; gaxios is not a direct dependency.
 *
 * @since 0.1.0
 * @category classification
 */
export const describeFailure = (error: unknown): HttpFailure => {
  const response = Predicate.hasProperty(error, "response") ? error.response : undefined
  const status = Predicate.hasProperty(response, "status") && typeof response.status === "number"
    ? response.status
    : Predicate.hasProperty(error, "status") && typeof error.status === "number"
    ? error.status
    : null
  if (status === null) {
    const code = Predicate.hasProperty(error, "code") && typeof error.code === "string" ? error.code : "network"
    return { status, code }
  }
  const body = Predicate.hasProperty(response, "data") ? parseBody(response.data) : undefined
  return { status, code: providerCode(body) ?? `http_${status}` }
}

/**
 * @since 0.1.0
 * @category classification
 */
const isRateLimited = (failure: HttpFailure): boolean =>
  failure.status === 429 || (failure.status === 403 && RATE_LIMIT_REASONS.has(failure.code))

/**
 * The retryable subset of failures, as `Transient`; `undefined` for final ones.
 *
 * @since 0.1.0
 * @category classification
 */
export const toTransient = (failure: HttpFailure): Transient | undefined => {
  if (isRateLimited(failure)) return new Transient({ reason: "rate_limited", status: failure.status })
  if (failure.status === null) {
    return new Transient({ reason: failure.code === "TimeoutError" ? "timeout" : "network", status: null })
  }
  if (failure.status >= 500 || failure.status === 408) {
    return new Transient({ reason: "server_error", status: failure.status })
  }
  return undefined
}

/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And Jitter"):
 * attempt n waits uniformly in [0, min(maxDelay, baseDelay * 2^n)), so clients that failed
 * together do not come back together. `Random` is Effect's, so tests can seed it.
 *
 * @since 0.1.0
 * @category schedules
 */
export const backoff = (policy: DriveRetryPolicyShape) => {
  const maxMillis = Duration.toMillis(policy.maxDelay)
  // at most maxAttempts - 1 retries, each after its jittered exponential delay
  return Schedule.max([
    Schedule.exponential(policy.baseDelay, 2).pipe(
      Schedule.modifyDelay(({ duration }) =>
        Effect.map(
          Random.next,
          (r) => Duration.millis(Math.floor(r * Math.min(maxMillis, Duration.toMillis(duration))))
        )
      )
    ),
    Schedule.recurs(Math.max(0, policy.maxAttempts - 1))
  ])
}

/**
 * Runs `self` under the ambient `DriveRetryPolicy`; `Transient` failures are retried, and once the
 * attempts are spent surface as `ProviderUnavailable` for `operation`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const retrying = <A, E, R>(
  operation: string,
  self: Effect.Effect<A, E | Transient, R>
): Effect.Effect<A, Exclude<E, Transient> | ProviderUnavailable, R> =>
  Effect.gen(function*() {
    const policy = yield* DriveRetryPolicy
    let attempts = 0
    return yield* Effect.suspend(() => {
      attempts++
      return self
    }).pipe(
      Effect.retry({ schedule: backoff(policy), while: isTransient }),
      Effect.catchIf(
        isTransient,
        (t) => Effect.fail(new ProviderUnavailable({ operation, reason: t.reason, status: t.status, attempts }))
      )
    )
  })

/**
 * @since 0.1.0
 * @category refinements
 */
const isTransient = (u: unknown): u is Transient => Predicate.isTagged(u, "Transient")
