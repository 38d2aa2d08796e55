import { HttpIncomingMessage, type HttpServerRequest } from "@effect/platform"
import { Errors } from "@pic2video/domain"
import * as Bounds from "@pic2video/domain/JsonBody"
import { Effect, Option } from "effect"

/**
 * A JSON request body read and parsed within bounds (docs/contract.md H1): at most 1 MiB (a
 * Content-Length over it is refused before reading; a chunked body is cut off at the bound) and at most
 * `maxDepth` levels deep. The text is cached on the request, so whatever reads it later (the
 * idempotency fingerprint, the HttpApi router) reads these same bounded bytes, never more.
 */
const tooLarge = () => Errors.fail("payload_too_large", "a JSON body may be at most 1 MiB")

export const text = (request: HttpServerRequest.HttpServerRequest) =>
  Number(request.headers["content-length"] ?? 0) > Bounds.maxBytes
    ? Effect.fail(tooLarge())
    : request.text.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(Bounds.maxBytes)),
      Effect.mapError((e) =>
        String((e as { cause?: { message?: unknown } }).cause?.message).includes("maxBytes")
          ? tooLarge()
          : Errors.fail("invalid_request", "the request body cannot be read")
      )
    )

/** The parsed body: 400 `invalid_request` when it is not JSON, 422 `validation_failed` when too deep. */
export const parse = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.flatMap(text(request), (raw) => {
    const parsed = Bounds.parse(raw)
    switch (parsed._tag) {
      case "Invalid":
        return Effect.fail(Errors.fail("invalid_request", "the body is not valid JSON"))
      case "TooDeep":
        return Effect.fail(Errors.fail("validation_failed", Bounds.tooDeepMessage))
      case "Ok":
        return Effect.succeed(parsed.value)
    }
  })

/**
 * The bound alone, for routes that take JSON among other kinds (the public ones): a body labelled JSON is
 * read within the size bound and refused when too deep; its syntax is left to the endpoint.
 */
export const guard = (request: HttpServerRequest.HttpServerRequest) =>
  /json/i.test(request.headers["content-type"] ?? "")
    ? Effect.flatMap(text(request), (raw) =>
      Bounds.exceedsDepth(raw) ? Effect.fail(Errors.fail("validation_failed", Bounds.tooDeepMessage)) : Effect.void)
    : Effect.void
