import {
  FetchHttpClient,
  HttpBody,
  HttpClient,
  HttpClientError,
  HttpClientRequest,
  HttpClientResponse
} from "effect/http"
// the module, not the domain's index (which brings node:crypto): this file runs in browsers
import * as JsonBody from "@pic2video/domain/JsonBody"
import { Clock, Context, Duration, Effect, Option, Stream } from "effect"
import { TransportError, UnexpectedAnswer } from "./Errors.ts"

/**
 * What this client accepts from a server, whoever answers: every answer bounded in time, size and
 * nesting, and no redirect to another origin. One transformation of the HTTP client (`guard`), under
 * both the derived client and the client's own requests, so a hostile or broken server can neither
 * hold the client forever, nor fill its memory or disk, nor send it elsewhere.
 */
export const defaults = {
  /** Connecting and waiting for the answer to begin (fetch does not say when a connection is made). */
  firstByteTimeout: "60 seconds",
  /** The longest pause while an answer's body arrives, or while an upload's body is taken. */
  idleTimeout: "30 seconds",
  /** A JSON answer (or error body): a page of 100 media or an import of 500 items is well under 1 MiB. */
  maxJsonBytes: 8 * 1024 * 1024,
  /** A download or preview of no known size: the service's videos are a few MB (x264 capped at 12 Mbit/s). */
  maxDownloadBytes: 256 * 1024 * 1024
} as const

export interface Limits {
  readonly firstByteMillis: number
  readonly idleMillis: number
  readonly maxJsonBytes: number
  readonly maxDownloadBytes: number
}

/** Set by the calls that read bytes (downloads, previews), with the size when it is known; JSON otherwise. */
export const bytesAnswer = Context.Reference<{ readonly size: number | null } | undefined>(
  "@pic2video/client/Guard/bytesAnswer",
  { defaultValue: () => undefined }
)

/** The answer seen in this call, so that a body failing the endpoint's schema is blamed on it. */
export interface Answered {
  answer?: { readonly label: string; readonly status: number; readonly requestId: string | null }
}
export const answered = Context.Reference<Answered | undefined>("@pic2video/client/Guard/answered", {
  defaultValue: () => undefined
})

/** `GET /api/v1/usage`: how errors name the request (the path only; the origin is the user's own). */
export const describe = (request: HttpClientRequest.HttpClientRequest) => {
  let path = request.url
  try {
    path = new URL(request.url).pathname
  } catch {
    // a relative URL: as it is
  }
  return `${request.method} ${path}`
}

const seconds = (millis: number) => `${Number((millis / 1000).toFixed(3))} s`
const KiB = 1024
const MiB = 1024 * KiB
export const size = (n: number) =>
  n >= MiB && n % MiB === 0 ? `${n / MiB} MiB` : n >= KiB && n % KiB === 0 ? `${n / KiB} KiB` : `${n} bytes`

// ---- timeouts ---------------------------------------------------------------------------------

/** When the current stage of a request must have moved on; an upload's body moves it as it is taken. */
interface Watch {
  deadline: number
  stage: "waiting" | "sending"
}
/** By the request's body, which later steps (the derived client sets the URL last) keep as it is. */
const watches = new WeakMap<HttpBody.HttpBody, Watch>()

/**
 * A streamed request body (an upload) reports each piece fetch takes: while it is taken, the idle
 * timeout applies between pieces; once it is all sent, the first-byte timeout starts.
 */
const watchBody = (limits: Limits) =>
  HttpClient.mapRequest((request: HttpClientRequest.HttpClientRequest) => {
    if (request.body._tag !== "Stream") return request
    const watch: Watch = { deadline: Number.POSITIVE_INFINITY, stage: "waiting" }
    const moved = (stage: Watch["stage"], millis: number) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        watch.stage = stage
        watch.deadline = now + millis
      })
    const body = request.body
    const stream = body.stream.pipe(
      Stream.tap(() => moved("sending", limits.idleMillis)),
      Stream.onEnd(moved("waiting", limits.firstByteMillis))
    )
    const watched = HttpBody.stream(stream, body.contentType, body.contentLength)
    watches.set(watched, watch)
    return HttpClientRequest.setBody(request, watched)
  })

/**
 * Fails when the watch's deadline passes without being moved on. It looks again at least every
 * 250 ms: the body's progress can bring the deadline closer (the idle timeout is the shorter).
 */
const watchdog = (watch: Watch, label: string, limits: Limits): Effect.Effect<never, TransportError> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    now < watch.deadline
      ? Effect.andThen(
        Effect.sleep(Duration.millis(Math.min(watch.deadline - now, 250))),
        watchdog(watch, label, limits)
      )
      : Effect.fail(
        new TransportError({
          message: watch.stage === "waiting"
            ? `${label}: no answer within ${seconds(limits.firstByteMillis)}`
            : `${label}: the service took none of the request for ${seconds(limits.idleMillis)}`,
          timeout: true
        })
      ))

/** One try of the request, bounded until the answer's head arrives. */
const timed = <E, R>(
  send: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>,
  request: HttpClientRequest.HttpClientRequest,
  limits: Limits
) => {
  // a FormData body (a browser upload) goes out without telling how far it got: a first-byte
  // timeout could cut a slow upload short, so its wait is bounded by the caller's signal only
  if (request.body._tag === "FormData") return send
  return Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const watch = watches.get(request.body) ?? { deadline: 0, stage: "waiting" as const }
    watch.stage = "waiting"
    watch.deadline = now + limits.firstByteMillis
    return Effect.raceFirst(send, watchdog(watch, describe(request), limits))
  })
}

// ---- a kept-alive connection closed under a request ---------------------------------------------

const closedWords =
  /other side closed|socket hang up|connection reset|connection closed before message completed|broken pipe/i
const closedCodes: ReadonlyArray<unknown> = ["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "UND_ERR_CLOSED"]

/**
 * The connection was closed or reset before any answer came: what a server closing an idle
 * kept-alive connection does to the request the client has just sent on it. fetch does not say
 * whether the connection was reused, so any such failure counts (Node: undici's `UND_ERR_SOCKET`
 * "other side closed", `ECONNRESET`; Deno: "connection closed before message completed").
 */
export const closedBeforeAnswer = (e: unknown): boolean => {
  if (!HttpClientError.isHttpClientError(e) || e.reason._tag !== "TransportError") return false
  let cause: unknown = e.reason.cause
  for (let depth = 0; depth < 6 && typeof cause === "object" && cause !== null; depth++) {
    const { code, message } = cause as { readonly code?: unknown; readonly message?: unknown }
    if (closedCodes.includes(code) || (typeof message === "string" && closedWords.test(message))) return true
    cause = (cause as { readonly cause?: unknown }).cause
  }
  return false
}

// ---- the answer -------------------------------------------------------------------------------

/** Reads at most one piece of a refused answer's body, which cancels it and frees the connection. */
const discard = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.catchCause(Stream.runDrain(Stream.take(response.stream, 1)), () => Effect.void)

const nullBodyStatuses: ReadonlyArray<number> = [204, 205, 304]

/** The answer again, its body now `body` (checked bytes, or a bounded stream). */
const rebuild = (
  response: HttpClientResponse.HttpClientResponse,
  body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>
) => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(response.headers)) headers.set(name, value)
  return HttpClientResponse.fromWeb(
    response.request,
    new Response(nullBodyStatuses.includes(response.status) ? null : body, { status: response.status, headers })
  )
}

/**
 * The guard: under everything that reads an answer (the error table, the derived client's decoding),
 * over the HTTP client itself.
 */
export const guard = (limits: Limits) => <E, R>(client: HttpClient.HttpClient.With<E, R>) =>
  client.pipe(
    watchBody(limits),
    HttpClient.transform((effect, request) =>
      Effect.gen(function*() {
        const label = describe(request)
        // fetch must hand redirects to this client, which follows them only on the same origin
        const init = Option.getOrElse(yield* Effect.serviceOption(FetchHttpClient.RequestInit), () => ({}))
        const send = Effect.provideService(effect, FetchHttpClient.RequestInit, { ...init, redirect: "manual" })
        // an idempotent request whose connection closed before any answer is sent again once, at
        // once, as browsers do; an upload or a create never is (it may have been received)
        const response = yield* (request.method === "GET" || request.method === "HEAD")
          ? Effect.catchIf(timed(send, request, limits), closedBeforeAnswer, () => timed(send, request, limits))
          : timed(send, request, limits)
        const status = response.status
        const requestId = response.headers["x-request-id"] ?? null
        const seen = yield* answered
        if (seen !== undefined) seen.answer = { label, status, requestId }
        const refusal = (reason: UnexpectedAnswer["reason"], message: string) =>
          new UnexpectedAnswer({ reason, message: `${label}: ${message}`, status, requestId })
        /** Refused before its body is read: the body is canceled. */
        const unexpected = (reason: UnexpectedAnswer["reason"], message: string) =>
          Effect.andThen(discard(response), Effect.fail(refusal(reason, message)))

        if (status === 0 || (status >= 300 && status < 400)) {
          const location = response.headers["location"]
          // status 0: a browser's opaque redirect, whose target it does not tell
          if (status === 0 || location === undefined) {
            return yield* unexpected(
              "redirect",
              `the service answered a redirect (HTTP ${status}) whose target cannot be read`
            )
          }
          let target: URL
          try {
            target = new URL(location, request.url)
          } catch {
            return yield* unexpected("redirect", `the service redirected to an address that is not a URL`)
          }
          if (target.origin !== new URL(request.url).origin) {
            return yield* unexpected(
              "redirect",
              `the service redirected to ${target.href}, another origin; not followed`
            )
          }
          if (request.method !== "GET" && request.method !== "HEAD") {
            return yield* unexpected("redirect", `the service redirected a ${request.method}; not followed`)
          }
          return response // followed below
        }
        if (status < 200 || status > 599) {
          return yield* unexpected("not_the_api", `HTTP ${status} is not an HTTP answer this client reads`)
        }

        // bytes only in a success: an error's body is JSON whatever was asked
        const asked = yield* bytesAnswer
        const bytes = status < 300 ? asked : undefined
        const what = bytes === undefined ? "the answer" : "the download"
        const exact = bytes?.size ?? null
        const limit = bytes === undefined ? limits.maxJsonBytes : exact ?? limits.maxDownloadBytes
        const declaredHeader = response.headers["content-length"]
        const declared = declaredHeader === undefined ? null : Number(declaredHeader)
        if (declared !== null && Number.isFinite(declared)) {
          if (exact !== null && declared !== exact) {
            return yield* unexpected(
              declared > exact ? "too_large" : "too_short",
              `${what} is ${declared} bytes, not the ${exact} bytes expected`
            )
          }
          if (declared > limit) {
            return yield* unexpected("too_large", `${what} is larger than ${size(limit)}`)
          }
        }

        // the body: every pause bounded, every byte counted, its end checked against a known size
        let received = 0
        const body = Stream.suspend(() => {
          received = 0
          return response.stream
        }).pipe(
          Stream.mapError((cause) =>
            new TransportError({ message: `${label}: the connection broke during ${what}`, cause })
          ),
          Stream.timeoutOrElse({
            duration: Duration.millis(limits.idleMillis),
            orElse: () =>
              Stream.fail(
                new TransportError({
                  message: `${label}: ${what} stalled: nothing for ${seconds(limits.idleMillis)}`,
                  timeout: true
                })
              )
          }),
          Stream.mapEffect((chunk): Effect.Effect<Uint8Array, UnexpectedAnswer> => {
            received += chunk.byteLength
            if (received <= limit) return Effect.succeed(chunk)
            const message = exact !== null
              ? `${what} is longer than the ${exact} bytes expected`
              : `${what} is larger than ${size(limit)}`
            return Effect.fail(refusal("too_large", message))
          }),
          Stream.concat(Stream.suspend(() =>
            exact !== null && received < exact
              ? Stream.fail(refusal("too_short", `${what} ended at ${received} of the ${exact} bytes expected`))
              : Stream.empty
          ))
        )
        if (bytes !== undefined) return rebuild(response, yield* Stream.toReadableStreamEffect(body))

        // JSON (and every error body): read whole within the limit, then its nesting and syntax
        // checked before anything parses it (deep nesting overflows the stack of every walker)
        const chunks = yield* Stream.runCollect(body)
        const all = new Uint8Array(received)
        let at = 0
        for (const chunk of chunks) {
          all.set(chunk, at)
          at += chunk.byteLength
        }
        const text = new TextDecoder().decode(all)
        if (JsonBody.exceedsDepth(text)) {
          return yield* Effect.fail(refusal("too_deep", `the answer nests deeper than ${JsonBody.maxDepth} levels`))
        }
        if (status < 400 && text !== "") {
          try {
            JSON.parse(text)
          } catch {
            return yield* Effect.fail(
              refusal(
                "not_json",
                `the answer is not JSON (HTTP ${status}, ${response.headers["content-type"] ?? "no Content-Type"})`
              )
            )
          }
        }
        return rebuild(response, all)
      })
    ),
    HttpClient.followRedirects(5)
  )

/** One of this client's errors, wherever it sits in what a failure carries (a body's stream wraps it). */
export const ours = (e: unknown): TransportError | UnexpectedAnswer | undefined => {
  let cause: unknown = e
  for (let depth = 0; depth < 4 && typeof cause === "object" && cause !== null; depth++) {
    if (cause instanceof TransportError || cause instanceof UnexpectedAnswer) return cause
    cause = (cause as { readonly cause?: unknown }).cause
  }
  return undefined
}
