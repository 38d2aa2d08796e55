import { Errors } from "@pic2video/domain"
import * as Bounds from "@pic2video/domain/JsonBody"
import { ByteSize, Effect } from "effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"

/**
 * A JSON request body read within bounds (docs/contract.md H1): at most 1 MiB (a Content-Length
 * over it is refused before reading; a chunked body is cut off at the bound), then parsed once and
 * measured against `maxDepth`. The pipeline reads it; nothing else reads the body again.
 */
const jsonTooLarge = () => Errors.fail("payload_too_large", "a JSON body may be at most 1 MiB")

/** A declared length over the bound, refused before anything is read. */
export const declaredTooLarge = (
  request: HttpServerRequest,
  maxBytes = Bounds.maxBytes,
  failure = jsonTooLarge
) => Number(request.headers["content-length"] ?? 0) > maxBytes ? Effect.fail(failure()) : Effect.void

/**
 * A small body's text, read at most `maxBytes` (a declared length over it is refused before reading;
 * a chunked body is cut off at the bound): 413 `payload_too_large` past it, 400 when it cannot be read.
 * The JSON bodies here, the portal's forms.
 */
export const textWithin = (
  request: HttpServerRequest,
  maxBytes: number,
  failure: () => Errors.ApiFailure
) =>
  Effect.andThen(
    declaredTooLarge(request, maxBytes, failure),
    request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBytes)),
      Effect.mapError((e) =>
        e.reason._tag === "RequestParseError" && e.reason.reason === "BodyTooLarge"
          ? failure()
          : Errors.fail("invalid_request", "the request body cannot be read")
      )
    )
  )

const text = (request: HttpServerRequest) => textWithin(request, Bounds.maxBytes, jsonTooLarge)

/** The body's text and what parsing it gave (the idempotency fingerprint needs both). */
export const read = (request: HttpServerRequest) =>
  Effect.map(text(request), (raw) => ({ text: raw, parsed: Bounds.parse(raw) }))

/** The parsed value: 400 `invalid_request` when it is not JSON, 422 `validation_failed` when too deep. */
export const value = (parsed: Bounds.Parsed) => {
  switch (parsed._tag) {
    case "Invalid":
      return Effect.fail(Errors.fail("invalid_request", "the body is not valid JSON"))
    case "TooDeep":
      return Effect.fail(Errors.fail("validation_failed", Bounds.tooDeepMessage))
    case "Ok":
      return Effect.succeed(parsed.value)
  }
}

/**
 * The bound alone, for the public routes: a body labelled JSON is read within the size bound and
 * refused when too deep; its syntax is left to the endpoint.
 */
export const guard = (request: HttpServerRequest) =>
  /json/i.test(request.headers["content-type"] ?? "")
    ? Effect.flatMap(
      text(request),
      (raw) =>
        Bounds.exceedsDepth(raw) ? Effect.fail(Errors.fail("validation_failed", Bounds.tooDeepMessage)) : Effect.void
    )
    : Effect.void
