import * as Errors from "@pic2video/domain/Errors"
import { Data } from "effect"

export type ErrorCode = Errors.ErrorCode

/**
 * An error answered by the service, typed by its `code` (the frozen catalogue), not by the HTTP
 * status. `C` narrows to the codes one operation can answer (see `CodesOf`).
 */
export class ApiError<C extends ErrorCode = ErrorCode> extends Data.TaggedError("ApiError")<{
  readonly code: C
  readonly message: string
  readonly status: number
  /** The response's `X-Request-Id` (also the body's `request_id`): quote it when reporting a problem. */
  readonly requestId: string | null
  /** Seconds, from `Retry-After` (429, 503, 409 `idempotency_in_progress`). */
  readonly retryAfter: number | null
  /**
   * `Idempotency-Replayed: true`: a create's remembered refusal answered again, not a new decision
   * (a spend cap refusal replayed after the cap has refilled).
   */
  readonly replayed?: boolean
}> {}

/**
 * The service could not be reached, the connection broke, or the service did not answer in time
 * (`timeout`: the first-byte or idle timeout passed; not retried).
 */
export class TransportError extends Data.TaggedError("TransportError")<{
  readonly message: string
  readonly cause?: unknown
  readonly timeout?: boolean
}> {}

/**
 * The service answered, but not as the API does: this client does not read such an answer and does
 * not retry it. `reason`: `too_large` (over `maxJsonBytes`, `maxDownloadBytes` or the download's
 * known size), `too_short` (a download ended before its known size), `not_json`, `too_deep` (JSON
 * nested deeper than 64 levels), `redirect` (to another origin, or one a browser hides), `not_the_api`
 * (an answer that is not one of the endpoint's documented shapes or statuses).
 */
export class UnexpectedAnswer extends Data.TaggedError("UnexpectedAnswer")<{
  readonly message: string
  readonly reason: "too_large" | "too_short" | "not_json" | "too_deep" | "redirect" | "not_the_api"
  /** The answer's HTTP status. */
  readonly status: number
  readonly requestId: string | null
}> {}

/**
 * The request does not fit the API (a field the contract refuses, such as a `media_id` that is not a
 * UUID): found by the client before sending, so nothing was sent and nothing can have happened.
 */
export class InvalidRequest extends Data.TaggedError("InvalidRequest")<{
  readonly message: string
}> {}

/** `waitForRender` / `waitForImport` reached their deadline; the render or import goes on. */
export class WaitTimeout extends Data.TaggedError("WaitTimeout")<{
  readonly message: string
  readonly id: string
  /** The last status seen. */
  readonly status: string
}> {}

export type ClientError<C extends ErrorCode = ErrorCode> =
  | ApiError<C>
  | TransportError
  | UnexpectedAnswer
  | InvalidRequest

export const isApiError = (u: unknown): u is ApiError => u instanceof ApiError

/** The catalogue's codes: `isErrorCode` tells a code this client knows from one a newer service sends. */
export const errorCodes = Errors.errorCodes
export const isErrorCode = Errors.isErrorCode
