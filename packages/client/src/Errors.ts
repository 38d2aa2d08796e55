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
}> {}

/** The request did not reach the service, or its answer was not the documented shape. */
export class TransportError extends Data.TaggedError("TransportError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** `waitForRender` / `waitForImport` reached their deadline; the render or import goes on. */
export class WaitTimeout extends Data.TaggedError("WaitTimeout")<{
  readonly message: string
  readonly id: string
  /** The last status seen. */
  readonly status: string
}> {}

export type ClientError<C extends ErrorCode = ErrorCode> = ApiError<C> | TransportError

export const isApiError = (u: unknown): u is ApiError => u instanceof ApiError

/** The catalogue's codes: `isErrorCode` tells a code this client knows from one a newer service sends. */
export const errorCodes = Errors.errorCodes
export const isErrorCode = Errors.isErrorCode
