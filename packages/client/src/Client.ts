import { Api } from "@pic2video/domain/api/Api"
import { FetchHttpClient, HttpClient, HttpClientError, HttpClientRequest, HttpClientResponse } from "effect/http"
import { HttpApi, HttpApiClient } from "effect/http-api"
// domain modules, not its index (which brings node:crypto): this file runs in browsers
import * as ImportState from "@pic2video/domain/ImportState"
import * as RenderState from "@pic2video/domain/RenderState"
import type * as Requests from "@pic2video/domain/Requests"
import * as Resources from "@pic2video/domain/Resources"
import { Context, Duration, Effect, Fiber, Layer, Option, Schema, type SchemaAST, SchemaIssue, Stream } from "effect"
import { ApiError, type ErrorCode, InvalidRequest, TransportError, UnexpectedAnswer, WaitTimeout } from "./Errors.ts"
import * as Guard from "./Guard.ts"
import * as Multipart from "./Multipart.ts"

/**
 * The Pic-to-Video client. Every call is one of the HttpApi definition's endpoints, made by
 * `HttpApiClient` from that definition (packages/domain/src/api/Api.ts), so paths, bodies and success
 * types cannot drift from the server. On top of it: retries that honour `Retry-After`, an
 * automatic `Idempotency-Key` for creates, polling with backoff and a deadline, uploads from bytes,
 * and downloads as a stream. Under both, the guard (Guard.ts): every answer bounded in time, size
 * and nesting, no redirect to another origin. fetch only: Node 24, Deno 2 and browsers.
 */
export interface ClientOptions {
  /** An API key (`P2V_API_KEY`). */
  readonly apiKey: string
  /** The service's origin, e.g. `https://video.example.com` (`P2V_BASE_URL`). */
  readonly baseUrl: string
  /** A fetch to use instead of the global one. */
  readonly fetch?: typeof globalThis.fetch
  /** Attempts per call for retryable answers (429, 503, 409 `idempotency_in_progress`, network errors where safe). Default 5. */
  readonly maxAttempts?: number
  /** Longest wait before one retry, whatever `Retry-After` says. Default 60 s. */
  readonly maxRetryDelay?: Duration.Input
  /**
   * Called before each retry with what is retried and how long the client waits first: a 429
   * `rate_limit_exceeded` is seen here (it never fails the call while attempts remain).
   */
  readonly onRetry?: (error: ApiError | TransportError, delayMillis: number) => void
  /**
   * Send uploads as a stream, so that `onProgress` follows the bytes as they go. Default: yes on
   * Node and Deno; no in a browser, where fetch streams a request body only in Chromium over HTTP/2
   * (elsewhere it fails), and the upload is sent as a FormData, its progress reported when it is done.
   */
  readonly streamUploads?: boolean
  /**
   * Longest wait for an answer to begin: connecting, then from the request (or an upload's last
   * byte) to the answer's status line. Default 60 s. Not applied to an upload sent as a FormData
   * (`streamUploads` off), whose progress fetch does not tell: bound it with a `signal`.
   */
  readonly firstByteTimeout?: Duration.Input
  /** Longest pause while an answer's body arrives, or while an upload's body is taken. Default 30 s. */
  readonly idleTimeout?: Duration.Input
  /** Largest JSON answer (or error body) read. Default 8 MiB. */
  readonly maxJsonBytes?: number
  /** Largest download or preview read when its size is not known (see `DownloadOptions`). Default 256 MiB. */
  readonly maxDownloadBytes?: number
}

/** The documented defaults of the limits above. */
export const defaults = Guard.defaults

const limitsOf = (options: ClientOptions): Guard.Limits => ({
  firstByteMillis: Duration.toMillis(options.firstByteTimeout ?? Guard.defaults.firstByteTimeout),
  idleMillis: Duration.toMillis(options.idleTimeout ?? Guard.defaults.idleTimeout),
  maxJsonBytes: options.maxJsonBytes ?? Guard.defaults.maxJsonBytes,
  maxDownloadBytes: options.maxDownloadBytes ?? Guard.defaults.maxDownloadBytes
})

/** A page or a worker: request streams cannot be relied on (see `streamUploads`). */
const inBrowser = () => "document" in globalThis || "WorkerGlobalScope" in globalThis

/** The progress callback of the upload running in this fiber, read when its request is sent. */
const uploadProgress = Context.Reference<((sent: number, total: number) => void) | undefined>(
  "@pic2video/client/Client/uploadProgress",
  { defaultValue: () => undefined }
)

/**
 * The upload's FormData, written out by this client as a stream whose file bytes are counted as the
 * request pulls them (Multipart.ts). Every attempt encodes afresh, so a retry sends the whole body.
 */
const streamForms = HttpClient.mapRequestEffect((request: HttpClientRequest.HttpClientRequest) =>
  request.body._tag !== "FormData"
    ? Effect.succeed(request)
    : Effect.map(Effect.service(uploadProgress), (onBytes) => {
      const body = Multipart.encode((request.body as { readonly formData: FormData }).formData, onBytes)
      return HttpClientRequest.bodyStream(request, body.stream, {
        contentType: body.contentType,
        contentLength: body.length
      })
    })
)

// ---- the derived client -------------------------------------------------------------------

/**
 * The definition as this client reads it: a refused value is quoted in the error (`actual "x"`), as
 * Effect 3 did by default (Effect 4 keeps the input out of an issue unless asked).
 */
const parseSlots: ReadonlyArray<Context.Key<unknown, SchemaAST.ParseOptions>> = [
  HttpApi.ParseOptions,
  HttpApi.ParamsParseOptions,
  HttpApi.QueryParseOptions,
  HttpApi.HeadersParseOptions,
  HttpApi.PayloadParseOptions,
  HttpApi.SuccessParseOptions,
  HttpApi.ErrorParseOptions
]
const ClientApi = parseSlots.reduce(
  (api, slot) => {
    // a slot's own options (the definition's, at the API level) are kept; only the input is added
    const own = Context.getOrUndefined(api.annotations, slot)
    return slot === HttpApi.ParseOptions || own !== undefined ? api.annotate(slot, { ...own, reportInput: true }) : api
  },
  Api
)

const makeRaw = (options: ClientOptions) =>
  HttpApiClient.make(ClientApi, {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    // errors become ApiError here, before the derived client decodes them by status: the cast is
    // because HttpApiClient types its HTTP client's failures as HttpClientError only
    transformClient: (client) => {
      const authed = HttpClient.mapRequest(client, HttpClientRequest.bearerToken(options.apiKey))
      const bodies = (options.streamUploads ?? !inBrowser()) ? streamForms(authed) : authed
      return failOnError(Guard.guard(limitsOf(options))(bodies)) as unknown as HttpClient.HttpClient
    }
  })

type Raw = Effect.Success<ReturnType<typeof makeRaw>>
type CodesIn<E> = E extends { readonly error: { readonly code: infer C } } ? C & ErrorCode : never
/** An operation of the derived client, whatever it takes: an Effect failing with `E`. */
type Operation<E> = (...args: Array<never>) => Effect.Effect<unknown, E, unknown>
/** The error codes one operation of the derived client can answer, read from the definition. */
export type CodesOf<F> = F extends Operation<infer E> ? CodesIn<E> : never

export type Media = typeof Resources.Media.Type
export type MediaList = typeof Resources.MediaList.Type
export type RenderCreated = typeof Resources.RenderCreated.Type
export type Usage = typeof Resources.Usage.Type
export type MediaImportCreated = typeof Resources.MediaImportCreated.Type
export type CreateRenderBody = typeof Requests.CreateRenderBody.Encoded

/**
 * A render as polled. `status` and `error.code` are read leniently: the contract lets the service add
 * statuses, and a status this client does not know is treated as not finished.
 */
const RenderView = Schema.Struct({
  ...Resources.Render.fields,
  status: Schema.Union([Resources.RenderStatus, Schema.String]),
  error: Schema.NullOr(Schema.Struct({ code: Schema.String, message: Schema.String }))
})
export type Render = typeof RenderView.Type
const ImportView = Schema.Struct({
  ...Resources.MediaImport.fields,
  status: Schema.Union([Resources.ImportStatus, Schema.String]),
  items: Schema.Array(Schema.Struct({ ...Resources.ImportItem.fields, status: Schema.String }))
})
export type MediaImport = typeof ImportView.Type

/** Terminal statuses come from the domain; an unknown status is not terminal (the contract says so). */
export const renderTerminal = (status: string) =>
  (RenderState.terminalStatuses as ReadonlyArray<string>).includes(status)
export const importTerminal = (status: string) =>
  (ImportState.terminalStatuses as ReadonlyArray<string>).includes(status)

// ---- errors ---------------------------------------------------------------------------------

const ErrorBody = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String }),
  request_id: Schema.optional(Schema.String)
})

/** A gateway's own answers: the service behind it was not reached (retried as a network error). */
const gatewayStatuses: ReadonlyArray<number> = [502, 503, 504]

/** One place turns a non-2xx answer into `ApiError` by its code, with the headers a retry needs. */
const failOnError = HttpClient.transformResponse(Effect.flatMap((response: HttpClientResponse.HttpClientResponse) => {
  if (response.status < 400) return Effect.succeed(response)
  const retryAfter = Number(response.headers["retry-after"])
  const label = Guard.describe(response.request)
  return response.json.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(ErrorBody)),
    Effect.matchEffect({
      onFailure: () =>
        Effect.fail(
          gatewayStatuses.includes(response.status)
            ? new TransportError({
              message: `${label}: HTTP ${response.status} from a gateway; the service behind it did not answer`
            })
            : new UnexpectedAnswer({
              reason: "not_the_api",
              message: `${label}: HTTP ${response.status} without the API's error body`,
              status: response.status,
              requestId: response.headers["x-request-id"] ?? null
            })
        ),
      onSuccess: (body) =>
        Effect.fail(
          new ApiError({
            code: body.error.code as ErrorCode,
            message: body.error.message,
            status: response.status,
            requestId: response.headers["x-request-id"] ?? body.request_id ?? null,
            retryAfter: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
            replayed: response.headers["idempotency-replayed"] === "true"
          })
        )
    })
  )
}))

/** A value as Effect 3's messages quoted it (`"not-a-uuid"`, `12`, `null`). */
const quoted = (u: unknown) => {
  try {
    return typeof u === "bigint" ? `${u}n` : JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

/**
 * Issues in the words Effect 3 used (`Expected a Universally Unique Identifier, actual "not-a-uuid"`):
 * the CLI prints them after `error: <field>: `, and its users (and tests) read them so.
 */
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    const said = SchemaIssue.defaultLeafHook(issue)
    if (issue._tag !== "InvalidType" || !SchemaIssue.hasInput(issue)) return said
    // the same issue without its input says what was expected (or the schema's own message, kept as it is)
    const expected = SchemaIssue.defaultLeafHook(new SchemaIssue.InvalidType(issue.ast))
    return said === expected ? said : `${expected}, actual ${quoted(issue.input)}`
  },
  checkHook: (issue) => {
    const annotated = SchemaIssue.defaultCheckHook(issue)
    if (annotated !== undefined) return annotated
    const expected = issue.filter.annotations?.expected
    if (typeof expected !== "string") return undefined
    return SchemaIssue.hasInput(issue) ? `Expected ${expected}, actual ${quoted(issue.input)}` : `Expected ${expected}`
  }
})

/** The first thing a schema found wrong in an answer, in one line. */
const firstIssue = (e: Schema.SchemaError) => {
  const [issue] = formatIssues(e.issue).issues
  const path = issue?.path?.map((p) => (typeof p === "object" ? String(p.key) : String(p))) ?? []
  const line = issue === undefined ? "" : `${path.length > 0 ? `${path.join(".")}: ` : ""}${issue.message}`
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

/**
 * Whatever the derived client failed with, as this client's error types. After an answer arrived,
 * a body or status the endpoint does not give is the answer's fault (`UnexpectedAnswer`), never
 * "unreachable".
 */
const normalize = <C extends ErrorCode>(
  e: unknown,
  seen: Guard.Answered
): ApiError<C> | TransportError | UnexpectedAnswer | InvalidRequest => {
  if (e instanceof ApiError) return e as ApiError<C>
  const own = Guard.ours(e)
  if (own !== undefined) return own
  const answer = seen.answer
  // before any answer, a schema failure is the request's own: encoding it refused a field
  if (answer === undefined && Schema.isSchemaError(e)) return new InvalidRequest({ message: firstIssue(e) })
  if (
    answer !== undefined &&
    (Schema.isSchemaError(e) || (HttpClientError.isHttpClientError(e) && isResponseError(e)))
  ) {
    const message = Schema.isSchemaError(e)
      ? `the answer is not the API's: ${firstIssue(e)}`
      : `HTTP ${answer.status} is not an answer this endpoint gives`
    return new UnexpectedAnswer({
      reason: "not_the_api",
      message: `${answer.label}: ${message}`,
      status: answer.status,
      requestId: answer.requestId
    })
  }
  if (HttpClientError.isHttpClientError(e) && e.reason._tag === "TransportError") {
    const what = Guard.closedBeforeAnswer(e)
      ? "the connection was closed before any answer"
      : "the service could not be reached"
    return new TransportError({
      message: `${Guard.describe(e.request)}: ${what} (${innermost(e.reason.cause)})`,
      cause: e
    })
  }
  return new TransportError({
    message: e instanceof Error ? e.message : String((e as { readonly message?: unknown } | null)?.message ?? e),
    cause: e
  })
}

/** An answer arrived, but not one the endpoint gives (a status it does not declare, an empty body). */
const isResponseError = (e: HttpClientError.HttpClientError) =>
  e.reason._tag === "StatusCodeError" || e.reason._tag === "DecodeError" || e.reason._tag === "EmptyBodyError"

/** The deepest reason a failed fetch gives ("connect ECONNREFUSED 127.0.0.1:9"), in one line. */
const innermost = (cause: unknown): string => {
  let said = String(cause)
  for (let depth = 0; depth < 6 && typeof cause === "object" && cause !== null; depth++) {
    const message = (cause as { readonly message?: unknown }).message
    if (typeof message === "string" && message !== "") said = message
    cause = (cause as { readonly cause?: unknown }).cause
  }
  return said.length > 200 ? `${said.slice(0, 200)}…` : said
}

/** One try of a call, its failure as this client's errors. */
const attempt = <A, C extends ErrorCode>(call: Effect.Effect<A, unknown>) =>
  Effect.suspend(() => {
    const seen: Guard.Answered = {}
    return call.pipe(Effect.provideService(Guard.answered, seen), Effect.mapError((e) => normalize<C>(e, seen)))
  })

// ---- retries --------------------------------------------------------------------------------

const retryableCodes: ReadonlyArray<string> = ["rate_limit_exceeded", "service_unavailable", "idempotency_in_progress"]

/** Exponential backoff with full jitter: 0.5 s, 1 s, 2 s … capped, each a random share of the step. */
const backoff = (attempt: number, cap: number) => Math.random() * Math.min(cap, 500 * 2 ** (attempt - 1))

const retrying = <A, E extends ApiError | TransportError | UnexpectedAnswer | InvalidRequest>(
  attempt: Effect.Effect<A, E>,
  policy: {
    readonly maxAttempts: number
    readonly maxDelayMillis: number
    readonly safeOnNetworkError: boolean
    readonly onRetry?: ((error: ApiError | TransportError, delayMillis: number) => void) | undefined
  }
): Effect.Effect<A, E> => {
  const loop = (n: number): Effect.Effect<A, E> =>
    Effect.catch(attempt, (e) => {
      if (n >= policy.maxAttempts) return Effect.fail(e)
      let millis: number | undefined
      if (e instanceof ApiError && retryableCodes.includes(e.code)) {
        millis = e.retryAfter !== null ? e.retryAfter * 1000 : backoff(n, policy.maxDelayMillis)
      } else if (e instanceof TransportError && policy.safeOnNetworkError && e.timeout !== true) {
        // a timeout is not retried: the caller's bound on waiting is the timeout, not five of them
        millis = backoff(n, policy.maxDelayMillis)
      }
      if (millis === undefined) return Effect.fail(e)
      const delay = Math.min(millis, policy.maxDelayMillis)
      policy.onRetry?.(e as ApiError | TransportError, delay)
      return Effect.andThen(Effect.sleep(delay), loop(n + 1))
    })
  return loop(1)
}

// ---- the ergonomic layer --------------------------------------------------------------------

export interface UploadInput {
  /** The photo's bytes. */
  readonly file: Blob | Uint8Array | ArrayBuffer
  /** The part's file name (the default label). Default `photo`. */
  readonly filename?: string
  /** The part's type; the service reads the type from the bytes either way. */
  readonly contentType?: string
  readonly label?: string
  readonly tags?: ReadonlyArray<string>
  /**
   * Called as the photo's bytes are sent: `sent` grows to `total`, the photo's size (once with
   * `total, total` when `streamUploads` is off: fetch tells nothing before the answer). A retried
   * upload counts again from the start.
   */
  readonly onProgress?: (sent: number, total: number) => void
}

export interface WaitOptions<A> {
  /** Give up waiting after this long (the render or import goes on). Default 20 minutes. */
  readonly deadline?: Duration.Input
  /** First pause between polls; pauses grow by 1.5x up to `maxInterval`, with jitter. Default 1 s. */
  readonly interval?: Duration.Input
  /** Default 10 s. */
  readonly maxInterval?: Duration.Input
  /** Called with each state seen that differs from the previous one. */
  readonly onProgress?: (state: A) => void
}

export interface DownloadOptions {
  /**
   * The video's size, the render's `asset.byte_size`, when known: the download must be exactly
   * this long (longer stops at once, shorter fails at its end). Otherwise `Content-Length` when
   * sent, and never more than `maxDownloadBytes`.
   */
  readonly size?: number | null
}

export interface CreateOptions {
  /** Sent as `Idempotency-Key`; one is made when absent, and kept across this call's own retries. */
  readonly idempotencyKey?: string
}

export const make = (options: ClientOptions) =>
  Effect.gen(function*() {
    const raw: Raw = yield* makeRaw(options)
    const http = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.prependUrl(options.baseUrl.replace(/\/+$/, ""))),
      HttpClient.mapRequest(HttpClientRequest.bearerToken(options.apiKey)),
      Guard.guard(limitsOf(options)),
      failOnError
    )
    const policy = {
      maxAttempts: options.maxAttempts ?? 5,
      maxDelayMillis: Duration.toMillis(options.maxRetryDelay ?? "60 seconds"),
      onRetry: options.onRetry
    }
    const read = <A, C extends ErrorCode>(call: Effect.Effect<A, unknown>) =>
      retrying(attempt<A, C>(call), { ...policy, safeOnNetworkError: true })
    const write = <A, C extends ErrorCode>(call: Effect.Effect<A, unknown>, safeOnNetworkError: boolean) =>
      retrying(attempt<A, C>(call), { ...policy, safeOnNetworkError })
    /** A call whose success is bytes: bounded by their known size, or the download ceiling. */
    const asBytes = <A, E, R>(call: Effect.Effect<A, E, R>, size: number | null | undefined) =>
      Effect.provideService(call, Guard.bytesAnswer, { size: size ?? null })
    const getJson = <S extends Schema.Decoder<unknown>>(path: string, schema: S) =>
      Effect.flatMap(http.get(path), HttpClientResponse.schemaBodyJson(schema))

    const getRender = (id: string) =>
      read<Render, CodesOf<Raw["renders"]["getRender"]>>(
        getJson(`/api/v1/renders/${encodeURIComponent(id)}`, RenderView)
      )
    const getImport = (id: string) =>
      read<MediaImport, CodesOf<Raw["imports"]["getImport"]>>(
        getJson(`/api/v1/media/imports/${encodeURIComponent(id)}`, ImportView)
      )

    /** Polls until `done`, with backoff and jitter, within the deadline. */
    const poll = <A extends { readonly id: string; readonly status: string }, E>(
      get: Effect.Effect<A, E>,
      done: (a: A) => boolean,
      wait: WaitOptions<A>
    ): Effect.Effect<A, E | WaitTimeout> =>
      Effect.gen(function*() {
        const deadline = Date.now() + Duration.toMillis(wait.deadline ?? "20 minutes")
        const maxInterval = Duration.toMillis(wait.maxInterval ?? "10 seconds")
        let interval = Duration.toMillis(wait.interval ?? "1 second")
        let last = ""
        while (true) {
          const state = yield* get
          const seen = JSON.stringify(state)
          if (seen !== last) wait.onProgress?.(state)
          last = seen
          if (done(state)) return state
          // jitter: 80–120% of the step, so many waiting clients do not poll in step
          const pause = interval * (0.8 + Math.random() * 0.4)
          if (Date.now() + pause > deadline) {
            return yield* Effect.fail(
              new WaitTimeout({ message: `still ${state.status} at the deadline`, id: state.id, status: state.status })
            )
          }
          yield* Effect.sleep(pause)
          interval = Math.min(maxInterval, interval * 1.5)
        }
      })

    const upload = (input: UploadInput) => {
      const form = new FormData()
      const blob = input.file instanceof Blob
        ? input.file
        : new Blob(
          [input.file as Uint8Array<ArrayBuffer>],
          input.contentType === undefined ? {} : { type: input.contentType }
        )
      form.append("file", blob, input.filename ?? "photo")
      if (input.label !== undefined) form.append("label", input.label)
      for (const tag of input.tags ?? []) form.append("tags", tag)
      const streamed = options.streamUploads ?? !inBrowser()
      const call = raw.media.uploadMedia({ payload: form }).pipe(
        Effect.tap(() => Effect.sync(() => streamed || input.onProgress?.(blob.size, blob.size))),
        Effect.provideService(uploadProgress, input.onProgress)
      )
      // a network error may have stored the photo: not retried (429 and 503 were refusals, and are)
      return write<Media, CodesOf<Raw["media"]["uploadMedia"]>>(call, false)
    }

    const createRender = (body: CreateRenderBody, create: CreateOptions = {}) => {
      const key = create.idempotencyKey ?? crypto.randomUUID()
      // the key makes a network error safe to retry: the service answers the first attempt's result
      return write<
        { readonly render: RenderCreated; readonly idempotencyKey: string; readonly replayed: boolean },
        CodesOf<Raw["renders"]["createRender"]>
      >(
        Effect.map(
          raw.renders.createRender({
            payload: body,
            headers: { "idempotency-key": key },
            responseMode: "decoded-and-response"
          }),
          ([render, response]) => ({
            render,
            idempotencyKey: key,
            replayed: response.headers["idempotency-replayed"] === "true"
          })
        ),
        true
      )
    }

    const createImport = (folderId: string, create: CreateOptions = {}) => {
      const key = create.idempotencyKey ?? crypto.randomUUID()
      return write<MediaImportCreated, CodesOf<Raw["imports"]["createImport"]>>(
        raw.imports.createImport({
          payload: { provider: "cloud_drive", folder_id: folderId },
          headers: { "idempotency-key": key }
        }),
        true
      )
    }

    /** Answers once the service has said yes (errors come here), with the body still to read. */
    const openDownload = (id: string, download: DownloadOptions = {}) =>
      Effect.map(
        read<HttpClientResponse.HttpClientResponse, CodesOf<Raw["renders"]["downloadRender"]>>(
          asBytes(http.get(`/api/v1/renders/${encodeURIComponent(id)}/download`), download.size)
        ),
        (response) => ({
          /** The size given, else `Content-Length` when sent. */
          size: download.size ??
            Option.getOrNull(
              Option.filter(
                Option.fromNullishOr(response.headers["content-length"]).pipe(Option.map(Number)),
                Number.isFinite
              )
            ),
          stream: Stream.mapError(
            response.stream,
            (e) => Guard.ours(e) ?? new TransportError({ message: "the download broke off", cause: e })
          )
        })
      )

    return {
      /** The client derived from the HttpApi definition, for anything the helpers do not cover. */
      raw,
      listMedia: (query: { readonly limit?: number; readonly cursor?: string } = {}) =>
        read<MediaList, CodesOf<Raw["media"]["listMedia"]>>(raw.media.listMedia({
          query: {
            ...(query.limit !== undefined ? { limit: String(query.limit) } : {}),
            ...(query.cursor !== undefined ? { cursor: query.cursor } : {})
          }
        })),
      upload,
      preview: (mediaId: string) =>
        read<Uint8Array, CodesOf<Raw["media"]["previewMedia"]>>(
          asBytes(raw.media.previewMedia({ params: { id: mediaId } }), null)
        ),
      createRender,
      getRender,
      waitForRender: (id: string, wait: WaitOptions<Render> = {}) =>
        poll(getRender(id), (r) => renderTerminal(r.status), wait),
      /** The finished MP4 in memory (up to a few tens of MB); `downloadStream` for large files. */
      download: (id: string, download: DownloadOptions = {}) =>
        read<Uint8Array, CodesOf<Raw["renders"]["downloadRender"]>>(
          asBytes(raw.renders.downloadRender({ params: { id } }), download.size)
        ),
      openDownload,
      /** The finished MP4 as a stream of chunks. */
      downloadStream: (id: string, download: DownloadOptions = {}) =>
        Stream.unwrap(Effect.map(openDownload(id, download), (d) => d.stream)),
      createImport,
      getImport,
      waitForImport: (id: string, wait: WaitOptions<MediaImport> = {}) =>
        poll(getImport(id), (i) => importTerminal(i.status), wait),
      usage: () => read<Usage, CodesOf<Raw["renders"]["getUsage"]>>(raw.renders.getUsage())
    }
  })

export type Client = Effect.Success<ReturnType<typeof make>>

/** The HTTP layer the client runs on: fetch (the given one, or the global). */
export const layerFetch = (options: Pick<ClientOptions, "fetch">) =>
  options.fetch === undefined
    ? FetchHttpClient.layer
    : FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch)(options.fetch)))

/**
 * Runs a call to its end even when the caller is interrupted (Ctrl-C during a create: the render's
 * id must not be lost). Not `Effect.uninterruptible` around the call: that would make the call's own
 * races (the guard's timers) unable to interrupt their losers, and every call would last until its
 * first-byte timeout. The call runs in a fiber of its own, interruptible inside; only the wait for it is not.
 * With `grace`, an interrupted caller waits that long at most, then the call is interrupted too (a
 * create that retries through a minute of rate limiting must not hold Ctrl-C for that minute).
 */
export const toTheEnd = <A, E, R>(
  call: Effect.Effect<A, E, R>,
  grace?: Duration.Input
): Effect.Effect<A, E, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.forkDetach(Effect.interruptible(call)), (fiber) =>
      grace === undefined
        ? Fiber.join(fiber)
        : restore(Fiber.join(fiber)).pipe(
          Effect.onInterrupt(() =>
            Fiber.await(fiber).pipe(Effect.timeout(grace), Effect.ignore, Effect.andThen(Fiber.interrupt(fiber)))
          )
        ))
  )

/** `make` with its HTTP layer provided. */
export const makeWithFetch = (options: ClientOptions) => Effect.provide(make(options), layerFetch(options))
