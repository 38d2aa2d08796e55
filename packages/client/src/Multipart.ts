import { Effect, Stream } from "effect"

/**
 * A `FormData` written out as a multipart/form-data body by this client, so that the bytes of its
 * files can be counted as the request pulls them: fetch reports no upload progress, but a
 * `ReadableStream` body (`duplex: "half"`) is read by the runtime only as fast as the connection takes
 * it. The body is each part's head (known in advance), each file's bytes in the chunks its `Blob`
 * streams, and the closing boundary; it is encoded exactly as fetch encodes a FormData (the HTML
 * spec's algorithm: names and file names with `"`, CR and LF escaped, line breaks in values as CRLF).
 *
 * The body's length is known (`length`) and given to the request, but over fetch it goes chunked
 * (HTTP/1.1) without `Content-Length`: effect/http's fetch client removes that header from every
 * request, and Deno drops it from a stream body (Node's fetch would send it). The service reads a
 * chunked upload as it reads any other (packages/api/src/UploadBody.ts).
 */
export interface Encoded {
  readonly contentType: string
  /** Length of the whole body. */
  readonly length: number
  /** Bytes of the form's files: what `onBytes` counts up to. */
  readonly fileBytes: number
  /** The body; each pull yields the next piece. */
  readonly stream: Stream.Stream<Uint8Array, unknown>
}

const escapeName = (s: string) => s.replace(/\n/g, "%0A").replace(/\r/g, "%0D").replace(/"/g, "%22")
const crlf = (s: string) => s.replace(/\r?\n|\r/g, "\r\n")

const boundary = () => {
  const random = crypto.getRandomValues(new Uint8Array(16))
  return `----p2v-${Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("")}`
}

/** Pieces of at most 64 KiB, views of the chunk (no copy). */
const pieceSize = 64 * 1024
const pieceOf = (chunk: Uint8Array): Array<Uint8Array> => {
  if (chunk.byteLength <= pieceSize) return [chunk]
  const out: Array<Uint8Array> = []
  for (let at = 0; at < chunk.byteLength; at += pieceSize) out.push(chunk.subarray(at, at + pieceSize))
  return out
}

/**
 * `onBytes(sent, total)` is called as each piece of a file is pulled: `sent` grows to `total`, the
 * size of the form's files (once with `0, 0` when they are empty).
 */
export const encode = (form: FormData, onBytes?: (sent: number, total: number) => void): Encoded => {
  const text = new TextEncoder()
  const mark = boundary()
  const pieces: Array<Uint8Array | Blob> = []
  for (const [name, value] of form) {
    const head = `--${mark}\r\nContent-Disposition: form-data; name="${escapeName(crlf(name))}"`
    if (typeof value === "string") {
      pieces.push(text.encode(`${head}\r\n\r\n${crlf(value)}\r\n`))
    } else {
      const file = value as Blob & { readonly name?: string }
      const filename = file.name === undefined || file.name === "" ? "" : `; filename="${escapeName(file.name)}"`
      pieces.push(text.encode(`${head}${filename}\r\nContent-Type: ${file.type || "application/octet-stream"}\r\n\r\n`))
      pieces.push(file)
      pieces.push(text.encode("\r\n"))
    }
  }
  pieces.push(text.encode(`--${mark}--\r\n`))
  const size = (p: Uint8Array | Blob) => p instanceof Blob ? p.size : p.byteLength
  const fileBytes = pieces.reduce((n, p) => n + (p instanceof Blob ? p.size : 0), 0)
  // counted afresh each time the body is read (a retried upload starts again from 0)
  const stream = Stream.suspend(() => {
    let sent = 0
    const count = (chunk: Uint8Array) =>
      Effect.sync(() => {
        sent += chunk.byteLength
        if (chunk.byteLength > 0) onBytes?.(sent, fileBytes)
      })
    return Stream.fromIterable(pieces).pipe(
      Stream.flatMap((p) =>
        p instanceof Blob
          ? Stream.fromReadableStream({ evaluate: () => p.stream(), onError: (e) => e }).pipe(
            // a Blob in memory streams as one chunk: cut into pieces, one per pull, so the count
            // advances only as fast as the request takes them
            Stream.map(pieceOf),
            Stream.flattenIterable,
            Stream.rechunk(1),
            Stream.tap(count)
          )
          : Stream.succeed(p)
      ),
      Stream.onEnd(Effect.sync(() => {
        if (fileBytes === 0) onBytes?.(0, 0)
      }))
    )
  })
  return {
    contentType: `multipart/form-data; boundary=${mark}`,
    length: pieces.reduce((n, p) => n + size(p), 0),
    fileBytes,
    stream
  }
}
