import { Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as Path from "node:path"
import type { Client, DownloadOptions, Media, UploadInput } from "./Client.ts"
import { TransportError } from "./Errors.ts"

/**
 * Files on disk, for Node and Deno (node:fs); a browser passes a File or bytes to `upload` instead.
 */
const types: Record<string, string> = {
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".png": "image/png",
  ".webp": "image/webp",
  ".gif": "image/gif"
}

export const uploadFile = (
  client: Client,
  path: string,
  options: Omit<UploadInput, "file" | "filename"> = {}
): Effect.Effect<Media, TransportError | Effect.Error<ReturnType<Client["upload"]>>> =>
  Effect.flatMap(
    Effect.tryPromise({
      try: () => fs.promises.readFile(path),
      catch: (e) => new TransportError({ message: `cannot read ${path}: ${(e as Error).message}`, cause: e })
    }),
    (bytes) =>
      client.upload({
        file: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        filename: Path.basename(path),
        contentType: types[Path.extname(path).toLowerCase()],
        ...options
      })
  )

export interface SaveOptions {
  /**
   * Puts the complete file (`partial`) in its place and returns where it went. By default it is
   * renamed to `path`, replacing a file of that name; `p2v batch` gives its own, which never does.
   */
  readonly place?: (partial: string) => string
}

/**
 * Streams the render's MP4 into `path` (written to `path.partial`, renamed when complete, so a
 * broken download never leaves a truncated file under the final name). `onBytes` reports progress.
 * `size` (the render's `asset.byte_size`) bounds the file exactly; without it, `Content-Length` or
 * the client's `maxDownloadBytes` does. `path.partial` is created afresh: whatever had its name (a
 * leftover, or a link planted in a shared directory) is removed, never written through.
 */
export const downloadToFile = (
  client: Client,
  id: string,
  path: string,
  onBytes?: (received: number, total: number | null) => void,
  download: DownloadOptions = {},
  save: SaveOptions = {}
) =>
  Effect.gen(function*() {
    const { size, stream } = yield* client.openDownload(id, download)
    const partial = `${path}.partial`
    const io = (what: string) => (e: unknown) =>
      new TransportError({ message: `cannot ${what} ${partial}: ${(e as Error).message}`, cause: e })
    const file = yield* Effect.tryPromise({
      try: () => fs.promises.rm(partial, { force: true }).then(() => fs.promises.open(partial, "wx")),
      catch: io("create")
    })
    let received = 0
    const written = yield* Stream.runForEach(stream, (chunk) =>
      Effect.tryPromise({
        try: () => file.write(chunk),
        catch: io("write")
      }).pipe(
        Effect.tap(() =>
          Effect.sync(() => {
            received += chunk.byteLength
            onBytes?.(received, size)
          })
        )
      )).pipe(
        Effect.ensuring(Effect.promise(() => file.close())),
        // stopped (Ctrl-C): no partial file is left behind
        Effect.onInterrupt(() => Effect.sync(() => fs.rmSync(partial, { force: true }))),
        Effect.result
      )
    if (written._tag === "Failure") {
      fs.rmSync(partial, { force: true })
      return yield* Effect.fail(written.failure)
    }
    const placed = yield* Effect.try({
      try: () => save.place === undefined ? (fs.renameSync(partial, path), path) : save.place(partial),
      catch: (e) => {
        fs.rmSync(partial, { force: true })
        return io("save")(e)
      }
    })
    return { path: placed, bytes: received }
  })
