import { Cause, Context, Data, Effect, Option } from "effect"
import * as HttpServerRespondable from "effect/http/HttpServerRespondable"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

/**
 * The frozen error catalogue (spec "Errors"): every error body the service sends uses one of these
 * codes. This table is the only place that says which HTTP status a code travels with, and which
 * operations of the API can answer it (`every`: any authenticated operation, from the checks every
 * request passes — contract §4 steps 1–5 — and faults); the contract's per-endpoint error sets,
 * the OpenAPI document and the typed client's error types are derived from it.
 */
export const ErrorCatalogue = {
  // the checks every request passes (contract §4 steps 1–5) and faults
  invalid_request: { status: 400, answeredBy: "every" },
  missing_api_key: { status: 401, answeredBy: "every" },
  invalid_api_key: { status: 401, answeredBy: "every" },
  api_key_revoked: { status: 401, answeredBy: "every" },
  api_key_expired: { status: 401, answeredBy: "every" },
  tenant_inactive: { status: 403, answeredBy: "every" },
  api_disabled: { status: 403, answeredBy: "every" },
  tier_not_eligible: { status: 403, answeredBy: "every" },
  insufficient_scope: { status: 403, answeredBy: "every" },
  rate_limit_exceeded: { status: 429, answeredBy: "every" },
  internal_error: { status: 500, answeredBy: "every" },
  service_unavailable: { status: 503, answeredBy: "every" },
  // what operations answer of their own
  validation_failed: {
    status: 422,
    answeredBy: ["listMedia", "uploadMedia", "createImport", "folders", "createRender"]
  },
  unsupported_render_type: { status: 422, answeredBy: ["createRender"] },
  unsupported_media_type: { status: 415, answeredBy: ["uploadMedia"] },
  payload_too_large: { status: 413, answeredBy: ["uploadMedia", "createImport", "createRender"] },
  unknown_media: { status: 404, answeredBy: ["previewMedia", "createRender"] },
  integration_not_connected: { status: 409, answeredBy: ["createImport", "disconnect", "folders"] },
  unknown_folder: { status: 404, answeredBy: ["createImport", "folders"] },
  idempotency_conflict: { status: 409, answeredBy: ["createImport", "createRender"] },
  idempotency_in_progress: { status: 409, answeredBy: ["createImport", "createRender"] },
  import_not_found: { status: 404, answeredBy: ["getImport"] },
  render_not_found: { status: 404, answeredBy: ["getRender", "downloadRender"] },
  asset_unavailable: { status: 404, answeredBy: ["downloadRender"] },
  spend_cap_reached: { status: 402, answeredBy: ["createRender"] },
  quota_exceeded: { status: 402, answeredBy: ["uploadMedia", "createRender"] },
  caption_prep_failed: { status: 502, answeredBy: ["createRender"] }
} as const

type Catalogue = typeof ErrorCatalogue

export type ErrorCode = keyof Catalogue

export const errorCodes = Object.keys(ErrorCatalogue) as ReadonlyArray<ErrorCode>

export const statusOf = (code: ErrorCode): number => ErrorCatalogue[code].status

export const isErrorCode = (u: unknown): u is ErrorCode => typeof u === "string" && Object.hasOwn(ErrorCatalogue, u)

/** The operations the catalogue names (endpoint names of the HttpApi definition). */
export type OperationName = {
  [C in ErrorCode]: Catalogue[C]["answeredBy"] extends ReadonlyArray<infer O> ? O : never
}[ErrorCode]

/** The codes an operation can answer with: its own, and those every authenticated operation can. */
export type CodesOf<Operation extends string> = {
  [C in ErrorCode]: Catalogue[C]["answeredBy"] extends "every" ? C
    : Operation extends (Catalogue[C]["answeredBy"] extends ReadonlyArray<infer O> ? O : never) ? C
    : never
}[ErrorCode]

export const codesOf = <Operation extends string>(operation: Operation): ReadonlyArray<CodesOf<Operation>> =>
  errorCodes.filter((code): code is CodesOf<Operation> => {
    const by: "every" | ReadonlyArray<string> = ErrorCatalogue[code].answeredBy
    return by === "every" || by.includes(operation)
  })

/** Every operation the catalogue names. */
export const operationNames: ReadonlyArray<OperationName> = [
  ...new Set(
    Object.values(ErrorCatalogue).flatMap((e): ReadonlyArray<OperationName> =>
      e.answeredBy === "every" ? [] : e.answeredBy
    )
  )
]

/** Codes that travel with a given status, for documenting each status once in OpenAPI. */
export const codesWithStatus = (status: number): ReadonlyArray<ErrorCode> =>
  errorCodes.filter((code) => statusOf(code) === status)

/** Error codes a render carries in `render.error.code` (not HTTP statuses). */
export const renderErrorCodes = ["render_failed", "render_timeout", "render_rejected", "render_canceled"] as const
export type RenderErrorCode = (typeof renderErrorCodes)[number]

/**
 * The id of the request being answered (X-Request-Id, and `request_id` in an error body), set by the
 * API's request pipeline for each request.
 */
export const RequestId = Context.Reference<string>("pic2video/RequestId", { defaultValue: () => "" })

/**
 * The one failure type the service's own code raises for anything a client or operator is told
 * about. Over HTTP it is answered as `{error:{code,message},request_id}` with `statusOf(code)`: it is
 * the error the API's middleware and handlers declare, and HttpApi answers it as it answers itself
 * (`Respondable`); the operator CLI prints `{error:{code,message}}`.
 */
export class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly code: ErrorCode
  readonly message: string
  /** seconds, for 429 / 409 in progress / 503 */
  readonly retryAfter?: number
  /** extra response headers (e.g. RateLimit-* on a 429) */
  readonly headers?: Readonly<Record<string, string>>
}> implements HttpServerRespondable.Respondable {
  [HttpServerRespondable.symbol]() {
    return Effect.map(RequestId, (requestId) => response(this, requestId))
  }
}

/** The error body of the contract: exactly `{error:{code,message},request_id}`. */
export const errorBody = (failure: ApiFailure, requestId: string) => ({
  error: { code: failure.code, message: failure.message },
  request_id: requestId
})

/**
 * The headers a failure's answer carries, whichever front end words it (the API's JSON, the portal's
 * page or line of text): one rule for both.
 */
export const failureHeaders = (failure: ApiFailure): Record<string, string> => ({
  // RFC 9110 §11.6.1: a 401 names the scheme it wants
  ...(statusOf(failure.code) === 401 ? { "www-authenticate": "Bearer" } : {}),
  ...(failure.retryAfter !== undefined ? { "retry-after": String(failure.retryAfter) } : {}),
  // a body over a limit may still be arriving, fast or slowly: the connection is never reused
  // (docs/contract.md H3); whatever the client still sends is drained briefly, then closed
  ...(failure.code === "payload_too_large" ? { connection: "close" } : {}),
  ...failure.headers
})

/** A failure's HTTP answer: its code's status, the error body, its headers. */
export const response = (failure: ApiFailure, requestId: string) =>
  HttpServerResponse.jsonUnsafe(errorBody(failure, requestId), {
    status: statusOf(failure.code),
    headers: failureHeaders(failure)
  })

export const fail = (
  code: ErrorCode,
  message: string,
  extra?: { retryAfter?: number; headers?: Record<string, string> }
) => new ApiFailure({ code, message, ...extra })

/** The failure a cause carries, or else its first defect. */
export const errorOf = (cause: Cause.Cause<unknown>): Option.Option<unknown> =>
  Option.orElse(
    Cause.findErrorOption(cause),
    () => Option.map(Option.fromNullishOr(cause.reasons.find(Cause.isDieReason)), (d) => d.defect)
  )

/**
 * What a failed effect is answered or recorded as: the `ApiFailure` it carries, else what `classify`
 * makes of its error (the API's decoding and parsing failures), else 503 when it was only interrupted,
 * else an unexpected fault (500, to be logged).
 */
export const failureOf = (
  cause: Cause.Cause<unknown>,
  classify: (error: unknown) => ApiFailure | undefined = () => undefined
): { readonly failure: ApiFailure; readonly unexpected: boolean } => {
  const error = errorOf(cause)
  if (Option.isSome(error)) {
    const failure = error.value instanceof ApiFailure ? error.value : classify(error.value)
    if (failure !== undefined) return { failure, unexpected: false }
  }
  if (Cause.hasInterruptsOnly(cause)) {
    return { failure: fail("service_unavailable", "the request was interrupted", { retryAfter: 1 }), unexpected: false }
  }
  return { failure: fail("internal_error", "an unexpected fault in the service"), unexpected: true }
}
