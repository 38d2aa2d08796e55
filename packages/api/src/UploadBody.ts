import { FileSystem, type HttpServerRequest, Multipart } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Stream } from "effect"
import * as MP from "multipasta"

/**
 * The multipart reader behind `POST /media`. @effect/platform-node's own reader loses the parser's
 * error when a body ends inside a part (multipasta emits it on the file stream before anyone listens),
 * so the request waited for the 30 s socket timeout. This one runs the same parser (multipasta, with the
 * same limits from the endpoint's annotations) over the body and sees every outcome: a body that ends
 * early is `MultipartError` "Parse" (400 invalid_request), a limit stops reading at once (413), and the
 * parts are persisted by the platform's own `toPersisted`, so handlers and schemas see the usual shape.
 *
 * Files are held in memory until the body is complete; the limits (15 MiB + slack per file, 64 parts)
 * bound that.
 */
const parseError = (cause: MP.MultipartError): Multipart.MultipartError => {
  if (cause._tag === "ReachedLimit") {
    const reason = { MaxParts: "TooManyParts", MaxFieldSize: "FieldTooLarge", MaxPartSize: "FileTooLarge", MaxTotalSize: "BodyTooLarge" } as const
    return new Multipart.MultipartError({ reason: reason[cause.limit], cause })
  }
  return new Multipart.MultipartError({ reason: "Parse", cause })
}

// The plain shapes `toPersisted` reads; the file's bytes are already complete when it asks for them.
interface BufferedField {
  readonly _tag: "Field"
  readonly key: string
  readonly contentType: string
  readonly value: string
}
interface BufferedFile {
  readonly _tag: "File"
  readonly key: string
  readonly name: string
  readonly contentType: string
  readonly chunks: Array<Uint8Array>
}

const concat = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0))
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

const persisted = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const config = yield* Multipart.makeConfig(request.headers)
    const parts: Array<BufferedField | BufferedFile> = []
    let failure: MP.MultipartError | undefined
    let complete = false
    const parser = MP.make({
      ...config,
      onField: (info, value) => {
        parts.push({ _tag: "Field", key: info.name, contentType: info.contentType, value: MP.decodeField(info, value) })
      },
      onFile: (info) => {
        const file: BufferedFile = { _tag: "File", key: info.name, name: info.filename ?? info.name, contentType: info.contentType, chunks: [] }
        parts.push(file)
        return (chunk) => {
          if (chunk !== null) file.chunks.push(chunk)
        }
      },
      onError: (e) => {
        failure ??= e
      },
      onDone: () => {
        complete = true
      }
    })
    // Stop reading at the first error (past a limit the rest of the body is never read), but leave the
    // socket alone: the 413 goes out with `Connection: close`, then the server closes it.
    const body = NodeStream.fromReadable(
      () => NodeHttpServerRequest.toIncomingMessage(request),
      (cause) => new Multipart.MultipartError({ reason: "InternalError", cause }),
      { closeOnDone: false }
    )
    yield* body.pipe(
      Stream.takeWhile(() => failure === undefined),
      Stream.runForEach((chunk) => Effect.sync(() => parser.write(chunk)))
    )
    if (failure === undefined) parser.end()
    if (failure !== undefined) return yield* Effect.fail(parseError(failure))
    if (!complete) return yield* Effect.fail(parseError({ _tag: "EndNotReached" }))
    const fs = yield* FileSystem.FileSystem
    return yield* Multipart.toPersisted(
      Stream.fromIterable(parts as unknown as ReadonlyArray<Multipart.Part>),
      (path, file) =>
        fs.writeFile(path, concat((file as unknown as BufferedFile).chunks)).pipe(
          Effect.mapError((cause) => new Multipart.MultipartError({ reason: "InternalError", cause }))
        )
    )
  })

/** The request as the router sees it on an upload route: the same request with this multipart reader. */
export const withUploadBody = (request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest => {
  let cached: HttpServerRequest.HttpServerRequest["multipart"] | undefined
  return Object.create(request, {
    multipart: { get: () => (cached ??= Effect.runSync(Effect.cached(persisted(request)))) }
  })
}
