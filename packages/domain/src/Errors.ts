import { Data } from "effect"

/**
 * The frozen error catalogue (spec "Errors"): every error body the service sends uses one of these
 * codes, and this table is the only place that says which HTTP status a code travels with.
 */
export const ErrorCatalogue = {
  missing_api_key: 401,
  invalid_request: 400,
  validation_failed: 422,
  unsupported_render_type: 422,
  unsupported_media_type: 415,
  payload_too_large: 413,
  unknown_media: 404,
  idempotency_conflict: 409,
  integration_not_connected: 409,
  render_not_found: 404,
  unknown_folder: 404,
  import_not_found: 404,
  invalid_api_key: 401,
  api_key_revoked: 401,
  api_key_expired: 401,
  insufficient_scope: 403,
  rate_limit_exceeded: 429,
  spend_cap_reached: 402,
  caption_prep_failed: 502,
  idempotency_in_progress: 409,
  asset_unavailable: 404,
  internal_error: 500,
  service_unavailable: 503,
  tenant_inactive: 403,
  tier_not_eligible: 403,
  api_disabled: 403,
  quota_exceeded: 402
} as const

export type ErrorCode = keyof typeof ErrorCatalogue

export const errorCodes = Object.keys(ErrorCatalogue) as ReadonlyArray<ErrorCode>

export const statusOf = (code: ErrorCode): number => ErrorCatalogue[code]

export const isErrorCode = (u: unknown): u is ErrorCode => typeof u === "string" && Object.hasOwn(ErrorCatalogue, u)

/** Codes that travel with a given status, for documenting each status once in OpenAPI. */
export const codesWithStatus = (status: number): ReadonlyArray<ErrorCode> =>
  errorCodes.filter((code) => ErrorCatalogue[code] === status)

/** Error codes a render carries in `render.error.code` (not HTTP statuses). */
export const renderErrorCodes = ["render_failed", "render_timeout", "render_rejected", "render_canceled"] as const
export type RenderErrorCode = (typeof renderErrorCodes)[number]

/**
 * The one failure type the service's own code raises for anything a client or operator is told
 * about. The HTTP layer turns it into `{error:{code,message},request_id}` with `statusOf(code)`;
 * the operator CLI prints `{error:{code,message}}`.
 */
export class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly code: ErrorCode
  readonly message: string
  /** seconds, for 429 / 409 in progress / 503 */
  readonly retryAfter?: number
  /** extra response headers (e.g. RateLimit-* on a 429) */
  readonly headers?: Readonly<Record<string, string>>
}> {}

export const fail = (code: ErrorCode, message: string, extra?: { retryAfter?: number; headers?: Record<string, string> }) =>
  new ApiFailure({ code, message, ...extra })
