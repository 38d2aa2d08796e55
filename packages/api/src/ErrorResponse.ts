import { Errors, Requests } from "@pic2video/domain"
import { Cause, Effect, Option, Predicate, Schema } from "effect"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as HttpServerError from "effect/http/HttpServerError"
import * as IssueMessage from "./IssueMessage.ts"

const tagOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" ? u._tag : undefined

/**
 * Looks through wrapped causes (the multipart writer re-wraps its limit error) for a limit hit.
 * A MultipartError carries its reason as an object (`reason._tag`); multipasta's own limit error is
 * `ReachedLimit`.
 */
const hitLimit = (u: unknown, depth = 0): "size" | "parts" | undefined => {
  if (!Predicate.isObject(u) || depth > 5) return undefined
  const tag = Predicate.hasProperty(u, "_tag") ? u._tag : undefined
  if (tag === "ReachedLimit") {
    const limit = Predicate.hasProperty(u, "limit") ? u.limit : undefined
    return limit === "MaxParts" || limit === "MaxFieldSize" ? "parts" : "size"
  }
  if (tag === "MultipartError" && Predicate.hasProperty(u, "reason")) {
    const reason = Predicate.hasProperty(u.reason, "_tag") ? u.reason._tag : u.reason
    if (reason === "FileTooLarge" || reason === "BodyTooLarge") return "size"
    if (reason === "TooManyParts" || reason === "FieldTooLarge") return "parts"
    if (Predicate.hasProperty(u.reason, "cause")) return hitLimit(u.reason.cause, depth + 1)
  }
  return hitLimit(Predicate.hasProperty(u, "cause") ? u.cause : undefined, depth + 1) ??
    hitLimit(Predicate.hasProperty(u, "error") ? u.error : undefined, depth + 1)
}

/** Schema's message minus the value it got: that can be a whole uploaded file, or a server temp path. */
const withoutActual = (message: string) => {
  const cut = message.replace(/,?\s*actual\b[\s\S]*$/, "")
  return cut.length > 300 ? `${cut.slice(0, 300)}…` : cut
}

/** The first issue of a decode failure as the error body says it: `field: what is wrong` (contract §4.8). */
const describeSchemaError = (error: Schema.SchemaError): string => {
  const first = IssueMessage.first(error.issue)
  if (first === undefined) return "the request is not valid"
  const field = first.path.map(String).join(".")
  return field === "" ? withoutActual(first.message) : `${field}: ${withoutActual(first.message)}`
}

/** A decode failure of a request's parts (path, query, headers, body): 422 validation_failed. */
export const schemaFailure = (error: Schema.SchemaError): Errors.ApiFailure =>
  Errors.fail("validation_failed", describeSchemaError(error))

/**
 * An upload the multipart reader refused: over a limit (413, or 422 for too many fields), or unreadable
 * (400, saying what it could not read when the reader said).
 */
export const multipartFailure = (error: unknown): Errors.ApiFailure => {
  if (error instanceof Errors.ApiFailure) return error
  switch (hitLimit(error)) {
    case "size":
      // the rest of the body is never read: the connection cannot be reused (the answer closes it)
      return Errors.fail("payload_too_large", `the upload is larger than ${Requests.uploadLimitText}`)
    case "parts":
      return Errors.fail("validation_failed", "the form has too many or too large fields")
    case undefined:
      return Errors.fail("invalid_request", "the request body cannot be parsed")
  }
}

/** The catalogue failure a routing, decoding or parsing error stands for; undefined for anything else. */
const classify = (e: unknown): Errors.ApiFailure | undefined => {
  if (hitLimit(e) !== undefined || tagOf(e) === "MultipartError") return multipartFailure(e)
  // path, query and headers as HttpApi decodes them (the body is decoded by the handler: `payload`)
  if (HttpApiError.HttpApiSchemaError.is(e) && e.kind !== "Body" && e.kind !== "ResponseHeaders") {
    return schemaFailure(e.cause)
  }
  if (Schema.isSchemaError(e)) return schemaFailure(e)
  if (HttpServerError.isHttpServerError(e)) {
    if (e.reason._tag === "RouteNotFound") return Errors.fail("invalid_request", "no such endpoint")
    if (e.reason._tag === "RequestParseError") {
      return Errors.fail("invalid_request", "the request body cannot be parsed")
    }
  }
  return undefined
}

/** Maps whatever came out of routing, decoding or a handler to a catalogue failure. */
export const toFailure = (
  cause: Cause.Cause<unknown>
): { readonly failure: Errors.ApiFailure; readonly unexpected: boolean } => Errors.failureOf(cause, classify)

/**
 * What the log says about an unexpected failure: the error's name, message and stack, cut to a few KiB.
 * Never the cause itself: formatting it walks whatever value it carries (a client's body, nested
 * thousands deep, overflowed the stack while being logged).
 */
const summarize = (cause: Cause.Cause<unknown>): string => {
  const e = Option.getOrUndefined(Errors.errorOf(cause))
  const text = e instanceof Error
    ? e.stack ?? `${e.name}: ${e.message}`
    : `${typeof e}${tagOf(e) === undefined ? "" : ` ${tagOf(e)}`}`
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text
}

export const causeToResponse = (cause: Cause.Cause<unknown>, requestId: string) => {
  const { failure, unexpected } = toFailure(cause)
  const response = Errors.response(failure, requestId)
  return unexpected
    ? Effect.as(
      Effect.logError(`unexpected failure: ${summarize(cause)}`).pipe(Effect.annotateLogs("request_id", requestId)),
      response
    )
    : Effect.succeed(response)
}
