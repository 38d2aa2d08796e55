/**
 * Drive v3 calls made with one connection's tokens: folder browsing, folder checks, listing a
 * folder's files and bounded downloads. Requests go through googleapis' generated Drive client
 * (pointed at `GOOGLE_DRIVE_API_URL`); retries, 401 refresh and token persistence are ours.
 *
 * @since 0.1.0
 */
import { type Config, Context, Effect, FileSystem, Layer, Predicate, Redacted, Stream, SynchronizedRef } from "effect"
import type { PlatformError } from "effect/PlatformError"
// The Drive module alone: the `googleapis` entry point loads every Google API (~1.3 s at start-up).
import { drive_v3 } from "googleapis/build/src/apis/drive/v3.js"
import { DriveConfig, layerConfig as driveConfigLayer } from "./DriveConfig.ts"
import { DriveOAuth, layer as oauthLayer } from "./DriveOAuth.ts"
import { type DriveError, FileTooLarge, ProviderRejected, Unauthorized, UnknownFile, UnknownFolder } from "./Errors.ts"
import { describeFailure, DriveRetryPolicy, retrying, toTransient, Transient } from "./Retry.ts"
import type { Tokens } from "./Tokens.ts"

/**
 * @since 0.1.0
 * @category constants
 */
export const FOLDER_MIME_TYPE = "application/vnd.google-apps.folder"

/**
 * @since 0.1.0
 * @category models
 */
export interface DriveFolder {
  readonly id: string
  readonly name: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface FolderPage {
  readonly folders: ReadonlyArray<DriveFolder>
  readonly nextPageToken: string | null
}

/**
 * A direct child of a folder. `size` is `null` for folders and Google-native documents.
 *
 * @since 0.1.0
 * @category models
 */
export interface DriveFile {
  readonly id: string
  readonly name: string
  readonly mimeType: string
  readonly size: number | null
}

/**
 * One connection's tokens, as stored by the caller.
 *
 * @since 0.1.0
 * @category models
 */
export interface DriveAuth {
  readonly tokens: Tokens
  /**
   * Persists refreshed tokens. Without it the session never refreshes: an expired token or a
   * 401 ends in `Unauthorized`. `InvalidGrant` from the refresh means the connection is over.
   */
  readonly onRefresh?: ((tokens: Tokens) => Effect.Effect<void>) | undefined
}

/**
 * Drive calls bound to one connection. Refreshes are shared: concurrent calls that meet an
 * expired token refresh it once.
 *
 * @since 0.1.0
 * @category models
 */
export interface DriveSession {
  /** The tokens as they are now (after any refresh). */
  readonly tokens: Effect.Effect<Tokens>
  /** Direct sub-folders of `parent` (an id or `root`), not trashed, by name. */
  readonly listFolders: (params: {
    readonly parent: string
    readonly pageToken?: string | null | undefined
    readonly pageSize?: number | undefined
  }) => Effect.Effect<FolderPage, UnknownFolder | DriveError>
  /** The folder, or `UnknownFolder` when it is missing, inaccessible, not a folder or trashed. */
  readonly getFolder: (folderId: string) => Effect.Effect<DriveFolder, UnknownFolder | DriveError>
  /** Every direct, non-trashed child (files and folders), across all pages, in the drive's name order. */
  readonly listChildren: (folderId: string) => Effect.Effect<ReadonlyArray<DriveFile>, UnknownFolder | DriveError>
  /**
   * Streams the file's bytes to `toPath` (overwritten). Stops as soon as more than `maxBytes`
   * are announced or received. A body shorter than its Content-Length is retried. On failure
   * `toPath` is removed.
   */
  readonly download: (fileId: string, options: {
    readonly maxBytes: number
    readonly toPath: string
  }) => Effect.Effect<{ readonly bytes: number }, FileTooLarge | UnknownFile | DriveError | PlatformError>
}

/**
 * @since 0.1.0
 * @category models
 */
interface DriveApiShape {
  readonly session: (auth: DriveAuth) => Effect.Effect<DriveSession>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class DriveApi extends Context.Service<DriveApi, DriveApiShape>()("@pic2video/cluster/drive/DriveApi") {}

/** Refresh this long before the provider's expiry so a request does not race it. */
const EXPIRY_MARGIN_MS = 60_000

/** A provider that hands out page tokens forever must not hang an import. */
const MAX_PAGES = 10_000

const CHILD_FIELDS = "nextPageToken, files(id, name, mimeType, size)"

/** Drive query string literal: backslash and quote are the escapes. */
const quote = (value: string) => `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`

// googleapis types a stream response as a Node `Readable`, but with native fetch as gaxios'
// `fetchImplementation` it is the fetch body, a web `ReadableStream`.
const toWebStream = (body: unknown): ReadableStream<Uint8Array> | undefined =>
  body instanceof ReadableStream ? body : undefined

// googleapis turns response headers into a plain object with lower-case keys.
const header = (headers: unknown, name: string): string | undefined => {
  if (headers instanceof Headers) return headers.get(name) ?? undefined
  const value = Predicate.hasProperty(headers, name) ? headers[name] : undefined
  return typeof value === "string" ? value : undefined
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<DriveApiShape, never, DriveConfig | DriveOAuth | FileSystem.FileSystem> = Effect
  .gen(function*() {
    const config = yield* DriveConfig
    const oauth = yield* DriveOAuth
    const fs = yield* FileSystem.FileSystem
    const drive = new drive_v3.Drive({ rootUrl: config.driveApiUrl })

    const requestOptions = (accessToken: Redacted.Redacted<string>, signal: AbortSignal) => ({
      // googleapis builds each URL from the per-call `rootUrl` (else Google's), then re-roots it on
      // the constructor's with `new URL("/drive/v3/...", root)`, which drops a path prefix such as
      // `http://proxy/google/`; passing it per call keeps the prefix.
      rootUrl: config.driveApiUrl,
      headers: { authorization: `Bearer ${Redacted.value(accessToken)}` },
      retry: false,
      fetchImplementation: (input: Parameters<typeof fetch>[0], init: Parameters<typeof fetch>[1]) =>
        fetch(input, init),
      signal
    })

    const driveFailure =
      <E>(operation: string, onNotFound: () => E) =>
      (error: unknown): E | Transient | Unauthorized | ProviderRejected => {
        const failure = describeFailure(error)
        if (failure.status === 401) return new Unauthorized({ operation })
        if (failure.status === 404) return onNotFound()
        return toTransient(failure) ??
          new ProviderRejected({ operation, status: failure.status ?? 0, code: failure.code })
      }

    const session = (auth: DriveAuth): Effect.Effect<DriveSession> =>
      Effect.gen(function*() {
        const current = yield* SynchronizedRef.make(auth.tokens)
        const onRefresh = auth.onRefresh

        /** Refreshes unless another fiber already replaced `stale`. */
        const refreshFrom = (stale: Redacted.Redacted<string>) =>
          SynchronizedRef.modifyEffect(current, (tokens) => {
            if (Redacted.value(tokens.accessToken) !== Redacted.value(stale) || onRefresh === undefined) {
              return Effect.succeed([tokens.accessToken, tokens] as const)
            }
            return oauth.refresh(tokens.refreshToken).pipe(
              Effect.tap(onRefresh),
              Effect.map((fresh) => [fresh.accessToken, fresh] as const)
            )
          })

        const accessToken = Effect.gen(function*() {
          const tokens = yield* SynchronizedRef.get(current)
          const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
          if (onRefresh !== undefined && tokens.expiresAt - EXPIRY_MARGIN_MS <= now) {
            return yield* refreshFrom(tokens.accessToken)
          }
          return tokens.accessToken
        })

        /**
         * Runs one call with the current token under the retry policy; a 401 refreshes once and
         * runs it again.
         */
        const authorized = <A, E>(
          operation: string,
          run: (accessToken: Redacted.Redacted<string>) => Effect.Effect<A, E | Transient | Unauthorized>
        ) =>
          Effect.gen(function*() {
            const token = yield* accessToken
            return yield* retrying(operation, run(token)).pipe(
              Effect.catchTag("Unauthorized", (unauthorized) =>
                onRefresh === undefined
                  ? Effect.fail(unauthorized)
                  : Effect.flatMap(refreshFrom(token), (fresh) => retrying(operation, run(fresh))))
            )
          }).pipe(Effect.withSpan(`DriveSession.${operation}`))

        /** One metadata request, bounded by the policy's request timeout. */
        const call = <A, E>(
          operation: string,
          onNotFound: () => E,
          request: (options: ReturnType<typeof requestOptions>) => Promise<{ readonly data: A }>
        ) =>
        (token: Redacted.Redacted<string>) =>
          Effect.flatMap(DriveRetryPolicy, (policy) =>
            Effect.tryPromise({
              try: (signal) => request(requestOptions(token, signal)),
              catch: driveFailure(operation, onNotFound)
            }).pipe(
              Effect.map((response) => response.data),
              Effect.timeoutOrElse({
                duration: policy.requestTimeout,
                orElse: () => Effect.fail(new Transient({ reason: "timeout", status: null }))
              })
            ))

        const getFolder: DriveSession["getFolder"] = (folderId) =>
          authorized(
            "getFolder",
            call("getFolder", () => new UnknownFolder({ folderId }), (options) =>
              drive.files.get({
                fileId: folderId,
                fields: "id, name, mimeType, trashed",
                supportsAllDrives: true
              }, options))
          ).pipe(
            Effect.flatMap((file) =>
              file.mimeType === FOLDER_MIME_TYPE && file.trashed !== true && file.id
                ? Effect.succeed({ id: file.id, name: file.name ?? "" })
                : Effect.fail(new UnknownFolder({ folderId }))
            )
          )

        const listPage = (
          operation: string,
          folderId: string,
          params: {
            readonly q: string
            readonly fields: string
            readonly pageSize: number
            readonly pageToken?: string
          }
        ) =>
          authorized(
            operation,
            call(operation, () => new UnknownFolder({ folderId }), (options) =>
              drive.files.list({
                ...params,
                orderBy: "name",
                supportsAllDrives: true,
                includeItemsFromAllDrives: true
              }, options))
          )

        const listFolders: DriveSession["listFolders"] = ({ pageSize = 100, pageToken, parent }) =>
          Effect.gen(function*() {
            // On the first page make sure `parent` is a live folder: listing the children of a
            // file or of a trashed folder would just answer an empty page.
            if (!pageToken && parent !== "root") yield* getFolder(parent)
            const page = yield* listPage("listFolders", parent, {
              q: `${quote(parent)} in parents and mimeType = ${quote(FOLDER_MIME_TYPE)} and trashed = false`,
              fields: "nextPageToken, files(id, name)",
              pageSize,
              ...(pageToken ? { pageToken } : {})
            })
            return {
              folders: (page.files ?? []).flatMap((f) => (f.id ? [{ id: f.id, name: f.name ?? "" }] : [])),
              nextPageToken: page.nextPageToken || null
            }
          })

        const listChildren: DriveSession["listChildren"] = (folderId) =>
          Effect.gen(function*() {
            yield* getFolder(folderId)
            const children: Array<DriveFile> = []
            let pageToken: string | undefined
            // Pages may be short or even empty and still carry a token: only its absence ends the list.
            for (let pages = 0; pages < MAX_PAGES; pages++) {
              const page = yield* listPage("listChildren", folderId, {
                q: `${quote(folderId)} in parents and trashed = false`,
                fields: CHILD_FIELDS,
                pageSize: 1000,
                ...(pageToken ? { pageToken } : {})
              })
              for (const f of page.files ?? []) {
                if (!f.id) continue
                const size = f.size === null || f.size === undefined ? null : Number(f.size)
                children.push({
                  id: f.id,
                  name: f.name ?? "",
                  mimeType: f.mimeType ?? "application/octet-stream",
                  size: size !== null && Number.isFinite(size) ? size : null
                })
              }
              if (!page.nextPageToken) return children
              pageToken = page.nextPageToken
            }
            return yield* Effect.fail(
              new ProviderRejected({ operation: "listChildren", status: 200, code: "too_many_pages" })
            )
          })

        const downloadOnce = (fileId: string, maxBytes: number, toPath: string) => (token: Redacted.Redacted<string>) =>
          Effect.flatMap(DriveRetryPolicy, (policy) =>
            Effect.gen(function*() {
              const response = yield* Effect.tryPromise({
                try: (signal) =>
                  drive.files.get(
                    { fileId, alt: "media", supportsAllDrives: true },
                    { ...requestOptions(token, signal), responseType: "stream" }
                  ),
                catch: driveFailure("download", () => new UnknownFile({ fileId }))
              })
              const body = toWebStream(response.data)
              if (body === undefined) {
                return yield* Effect.fail(new ProviderRejected({ operation: "download", status: 200, code: "no_body" }))
              }
              // fetch decodes a compressed body, after which Content-Length no longer counts its bytes.
              const encoded = (header(response.headers, "content-encoding") ?? "identity") !== "identity"
              const lengthHeader = header(response.headers, "content-length")
              const declared = !encoded && lengthHeader !== undefined ? Number(lengthHeader) : null
              if (declared !== null && declared > maxBytes) {
                // Refuse on the announcement: cancelling closes the connection before the body is read.
                yield* Effect.promise(() => body.cancel().catch(() => undefined))
                return yield* Effect.fail(new FileTooLarge({ fileId, maxBytes }))
              }
              let received = 0
              yield* Stream.fromReadableStream({
                evaluate: () => body,
                // undici errors the body when the connection closes before Content-Length bytes came.
                onError: () => new Transient({ reason: "truncated_body", status: null })
              }).pipe(
                Stream.tap((chunk) => {
                  received += chunk.length
                  // Failing the stream cancels the reader, which aborts the response mid-body.
                  return received > maxBytes ? Effect.fail(new FileTooLarge({ fileId, maxBytes })) : Effect.void
                }),
                Stream.run(fs.sink(toPath, { flag: "w" }))
              )
              if (declared !== null && received !== declared) {
                return yield* Effect.fail(new Transient({ reason: "truncated_body", status: null }))
              }
              return { bytes: received }
            }).pipe(
              Effect.timeoutOrElse({
                duration: policy.downloadTimeout,
                orElse: () => Effect.fail(new Transient({ reason: "timeout", status: null }))
              })
            ))

        const download: DriveSession["download"] = (fileId, { maxBytes, toPath }) =>
          authorized("download", downloadOnce(fileId, maxBytes, toPath)).pipe(
            // Interruption included: no half-written file is left behind.
            Effect.onError(() => Effect.ignore(fs.remove(toPath, { force: true })))
          )

        return {
          tokens: SynchronizedRef.get(current),
          listFolders,
          getFolder,
          listChildren,
          download
        }
      })

    return { session }
  })

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<DriveApi, never, DriveConfig | DriveOAuth | FileSystem.FileSystem> = Layer.effect(
  DriveApi,
  make
)

/**
 * `DriveApi`, `DriveOAuth` and `DriveConfig` from the environment; the caller provides the
 * `FileSystem` (e.g. `NodeFileSystem.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<
  DriveApi | DriveOAuth | DriveConfig,
  Config.ConfigError,
  FileSystem.FileSystem
> = layer.pipe(Layer.provideMerge(oauthLayer), Layer.provideMerge(driveConfigLayer))
