import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Errors } from "@pic2video/domain"
import { Context, Effect, FileSystem, Inspectable, Stream } from "effect"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Multipart from "effect/http/Multipart"
import * as MP from "multipasta"
import * as nodeFs from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import * as Path from "node:path"
import * as MultipartParser from "./MultipartParser.ts"

/**
 * The multipart reader behind `POST /media` and the portal's upload. @effect/platform-node's own reader
 * loses the parser's error when a body ends inside a part (multipasta emits it on the file stream
 * before anyone listens), so the request waited for the 30 s socket timeout. This one runs
 * `MultipartParser` (multipasta's boundary search and header reader, with RFC 7578/6266/8187 part
 * headers: a file name in any script, `filename*`), with the limits from the endpoint's annotations,
 * over the body and sees every outcome: a body that is not multipart/form-data (one that ends early,
 * a part without a readable Content-Disposition) is 400 invalid_request saying what is wrong, a limit
 * stops reading at once (413), and the parts are persisted by the platform's own `toPersisted`, so
 * handlers and schemas see the usual shape.
 *
 * File parts are spooled to a temp file as they arrive, with backpressure (the next body chunk is read
 * only when the disk has taken the last), so an upload costs a few chunks of memory whatever its size
 * or however many arrive at once (docs/contract.md H4); the temp directory goes with the request's scope.
 */
const limitReason = {
  MaxParts: "TooManyParts",
  MaxFieldSize: "FieldTooLarge",
  MaxPartSize: "FileTooLarge",
  MaxTotalSize: "BodyTooLarge"
} as const

const parseError = (cause: MultipartParser.Failure) =>
  cause._tag === "ReachedLimit"
    ? Multipart.MultipartError.fromReason(limitReason[cause.limit], cause)
    : Errors.fail("invalid_request", `the request body cannot be parsed: ${cause.message}`)

const internal = (cause: unknown) => Multipart.MultipartError.fromReason("InternalError", cause)

/**
 * The reader's limits, as the endpoint set them (`Multipart.limitsServices`, from its definition) or
 * the platform's defaults; multipasta counts in numbers.
 */
const config = (headers: Record<string, string>) =>
  Effect.withFiber((fiber) => {
    const size = (b: bigint | undefined) => b === undefined ? undefined : Number(b)
    const mimeTypes = Context.get(fiber.context, Multipart.FieldMimeTypes)
    return Effect.succeed<MP.BaseConfig>({
      headers,
      maxParts: fiber.getRef(Multipart.MaxParts),
      maxFieldSize: size(fiber.getRef(Multipart.MaxFieldSize)),
      maxPartSize: size(fiber.getRef(Multipart.MaxFileSize)),
      maxTotalSize: size(fiber.getRef(HttpIncomingMessage.MaxBodySize)),
      isFile: mimeTypes.length === 0 ?
        undefined :
        (info: MP.PartInfo): boolean => !mimeTypes.some((_) => info.contentType.includes(_)) && MP.defaultIsFile(info)
    })
  })

// The parts as `toPersisted` reads them; a file's bytes are already on disk when it asks for them.
class BufferedField extends Inspectable.Class implements Multipart.Field {
  readonly [Multipart.TypeId]: typeof Multipart.TypeId = Multipart.TypeId
  readonly _tag = "Field"
  readonly key: string
  readonly contentType: string
  readonly value: string
  constructor(key: string, contentType: string, value: string) {
    super()
    this.key = key
    this.contentType = contentType
    this.value = value
  }
  toJSON() {
    return {
      _id: "@effect/platform/Multipart/Part",
      _tag: this._tag,
      key: this.key,
      contentType: this.contentType,
      value: this.value
    }
  }
}

class SpooledFile extends Inspectable.Class implements Multipart.File {
  readonly [Multipart.TypeId]: typeof Multipart.TypeId = Multipart.TypeId
  readonly _tag = "File"
  readonly key: string
  readonly name: string
  readonly contentType: string
  /** where the part's bytes were spooled */
  readonly path: string
  readonly sink: nodeFs.WriteStream
  constructor(key: string, name: string, contentType: string, path: string) {
    super()
    this.key = key
    this.name = name
    this.contentType = contentType
    this.path = path
    this.sink = nodeFs.createWriteStream(path)
  }
  get content() {
    return NodeStream.fromReadable({ evaluate: () => nodeFs.createReadStream(this.path), onError: internal })
  }
  get contentEffect(): Effect.Effect<Uint8Array, Multipart.MultipartError> {
    return Effect.tryPromise({ try: () => nodeFs.promises.readFile(this.path), catch: internal }).pipe(
      Effect.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength))
    )
  }
  toJSON() {
    return {
      _id: "@effect/platform/Multipart/Part",
      _tag: this._tag,
      key: this.key,
      name: this.name,
      contentType: this.contentType
    }
  }
}

/** Waits until every sink has written what it was given (or failed). */
const settled = (sinks: ReadonlyArray<nodeFs.WriteStream>) =>
  Effect.promise(() =>
    Promise.all(
      sinks.map((s) => s.closed || s.destroyed ? undefined : new Promise<void>((r) => s.once("close", () => r())))
    )
  )

/**
 * The upload's parts, read once by the request pipeline (contract §4.7) within the limits in force
 * (`Multipart.limitsServices`, from the endpoint's definition).
 */
export const read = (request: HttpServerRequest) =>
  Effect.gen(function*() {
    const base = yield* config(request.headers)
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped().pipe(Effect.mapError(internal))
    const parts: Array<BufferedField | SpooledFile> = []
    const sinks: Array<nodeFs.WriteStream> = []
    let failure: MultipartParser.Failure | undefined
    let diskError: unknown
    const parser = MultipartParser.make({
      ...base,
      // The `file` part is the upload whatever it is labelled (a part without a filename but with an
      // image type, or labelled JSON): the bytes decide, and a label that contradicts them is a 415.
      // Only a plain text field (no filename, no type) stays a field, and is refused as no file.
      isFile: (info) =>
        info.name === "file"
          ? info.filename !== undefined || info.contentType !== "text/plain"
          : (base.isFile ?? MP.defaultIsFile)(info),
      onField: (info, value) => {
        parts.push(new BufferedField(info.name, info.contentType, MP.decodeField(info, value)))
      },
      onFile: (info) => {
        const file = new SpooledFile(
          info.name,
          info.filename ?? info.name,
          info.contentType,
          Path.join(dir, `part-${parts.length}`)
        )
        const sink = file.sink
        sink.on("error", (e) => (diskError ??= e))
        sinks.push(sink)
        parts.push(file)
        return (chunk) => {
          if (chunk === null) sink.end()
          else sink.write(chunk)
        }
      },
      onError: (e) => {
        failure = e
      },
      onDone: () => {}
    })
    /** the next chunk is read once the disk has caught up (both listeners go: one wait per chunk) */
    const drained = Effect.promise(() =>
      Promise.all(
        sinks.filter((s) => s.writableNeedDrain && !s.destroyed).map((s) =>
          new Promise<void>((r) => {
            const done = () => {
              s.off("drain", done)
              s.off("close", done)
              r()
            }
            s.on("drain", done)
            s.on("close", done)
          })
        )
      )
    )
    // Stop parsing at the first error (what follows is dropped unread by `discardRest`), but leave the
    // socket alone: the answer goes out first, then the connection is closed or serves the next request.
    // The request's own stream (it leaves the socket open when done): reading it is what answers a
    // client waiting on `Expect: 100-continue`, and what the server counts as read of the body.
    const body = request.stream.pipe(Stream.mapError(internal))
    yield* body.pipe(
      Stream.takeWhile(() => failure === undefined && diskError === undefined),
      Stream.runForEach((chunk) => Effect.andThen(Effect.sync(() => parser.write(chunk)), drained))
    ).pipe(Effect.onExit(() => Effect.sync(() => sinks.forEach((s) => s.end()))))
    // a body read to its end is complete or not (the parser says which); one cut short by the disk is not judged
    if (failure === undefined && diskError === undefined) parser.end()
    for (const s of sinks) s.end()
    yield* settled(sinks)
    if (failure !== undefined) discardRest(request)
    if (failure !== undefined) return yield* Effect.fail(parseError(failure))
    if (diskError !== undefined) return yield* Effect.fail(internal(diskError))
    return yield* Multipart.toPersisted(
      Stream.fromIterable(parts),
      // every file part is spooled: moved into place, not copied
      (path, file) =>
        file instanceof SpooledFile
          ? fs.rename(file.path, path).pipe(Effect.mapError(internal))
          : Effect.fail(internal(file))
    )
  })

/** How long what a client still sends after its upload was refused is drained. */
const lingerMillis = 5_000

/**
 * Once the reader stops (past a limit, or at a part that cannot be read) the rest of the body is
 * discarded, never stored. Leaving it unread would stall the connection (the client blocked sending,
 * its next request unread), and closing the socket while the client is still sending makes the
 * client's kernel see a reset, and clients such as fetch then report EPIPE instead of the answer.
 * So what the client still sends is read and dropped until its body ends, for at most
 * `lingerMillis`, then the connection is closed. A 413 goes out with `Connection: close` and that
 * close lingers (as nginx's does): our side half-closes once the answer is written. After a 400 the
 * connection serves the client's next request once the body has ended.
 */
const discardRest = (request: HttpServerRequest) => {
  draining.add(request.source)
  // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- platform seam: the service serves HTTP/1.1
  const req = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage
  // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- platform seam: the service serves HTTP/1.1
  const res = NodeHttpServerRequest.toServerResponse(request) as ServerResponse
  // @effect/platform-node tears an unread body down itself once the answer is sent (it reads at most
  // 256 KiB more, or destroys a closing connection 500 ms after the answer): this reader's own
  // discarding below takes its place for this request
  for (const listener of res.rawListeners("finish")) {
    if (String(listener).includes("teardownBody")) Reflect.apply(res.removeListener, res, ["finish", listener])
  }
  req.resume()
  const socket = req.socket
  if (!req.complete) {
    const timer = setTimeout(() => socket.destroy(), lingerMillis)
    req.once("end", () => clearTimeout(timer))
  }
  // A 413 closes the connection; so does a 400 whose unread rest is large (the server adds
  // `Connection: close` then): either way the close lingers as above
  socket.destroySoon = function(this: Socket) {
    if (this.writable) this.end()
    const timer = setTimeout(() => this.destroy(), lingerMillis)
    const close = () => {
      clearTimeout(timer)
      if (this.writableFinished) this.destroy()
      else this.once("finish", () => this.destroy())
    }
    if (req.complete) close()
    else {
      req.once("end", close)
      req.once("close", close)
    }
  }
}

/** Requests whose unread rest `discardRest` is draining. */
const draining = new WeakSet<object>()

/**
 * The answer to a request whose rest is being drained, as sent: @effect/platform-node closes a
 * connection whose unread body is over 256 KiB when it writes the answer's head (`Connection:
 * close`), unless the answer is streamed (its handler may still read the body). After a 400 the
 * connection is to serve the client's next request once the body has ended (contract §8.31), so
 * such an answer's bytes go out as a stream of one chunk, its length and headers unchanged. A 413
 * says `Connection: close` itself.
 */
export const keepOpen = (
  request: HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  if (!draining.has(request.source) || response.body._tag !== "Uint8Array" || response.headers.connection === "close") {
    return response
  }
  const body = response.body
  return HttpServerResponse.setBody(
    response,
    HttpBody.stream(Stream.succeed(body.body), body.contentType, body.contentLength)
  )
}
