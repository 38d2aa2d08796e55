import * as KeyAdmission from "@pic2video/cluster/KeyAdmission"
import { RenderService } from "@pic2video/cluster/services/RenderService"
import { Errors, Idempotency as IdempotencyPolicy, Ids, RateLimit, Scopes } from "@pic2video/domain"
import { Admission, Admitted, type AdmittedShape, CurrentImport } from "@pic2video/domain/api/Annotations"
import type { Parsed } from "@pic2video/domain/JsonBody"
import { randomBase62 } from "@pic2video/domain/Random"
import { Cause, Context, Data, Effect, FileSystem, Layer, Option, Path } from "effect"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerError from "effect/http/HttpServerError"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Multipart from "effect/http/Multipart"
import * as FindMyWay from "find-my-way-ts"
import { Authentication, type Caller } from "./Authentication.ts"
import { causeToResponse, errorResponse } from "./ErrorResponse.ts"
import * as Idempotency from "./Idempotency.ts"
import * as JsonBody from "./JsonBody.ts"
import * as RouteMetrics from "./RouteMetrics.ts"
import * as RouteTable from "./RouteTable.ts"
import * as UploadBody from "./UploadBody.ts"

/**
 * The request pipeline, in the order contract §4 fixes (first failure wins), on HttpApi's own router:
 *
 * 1. route: the router matches; when it finds nothing, the same routes, asked under the other
 *    methods, tell 404 from 405 and fill `Allow` (`make` below);
 * 2–7. authentication, account gates, scope, rate limit, idempotency, body: the `Admission`
 *    middleware of every group, which runs once the route matched and before anything is decoded,
 *    and reads what the matched endpoint declares (RouteTable.ts, from the Api.ts annotations);
 * 8. validation: the framework decodes path, headers and query; the handler decodes the body the
 *    pipeline read (`payload` in Principal.ts).
 *
 * Every outcome, the router's included, passes through one error mapping, carries X-Request-Id,
 * and finishes the idempotency record it ran under.
 */
const entityTimeout = "3 seconds"

const rateLimitHeaders = (a: { limit: number; remaining: number; resetSeconds: number }) => ({
  "ratelimit-limit": String(a.limit),
  "ratelimit-remaining": String(a.remaining),
  "ratelimit-reset": String(a.resetSeconds)
})

const bodyJson = (response: HttpServerResponse.HttpServerResponse): unknown => {
  if (response.body._tag !== "Uint8Array") return null
  try {
    return JSON.parse(new TextDecoder().decode(response.body.body))
  } catch {
    return null
  }
}

const outcomes = { New: "new", Replay: "replayed", Conflict: "conflict", InProgress: "in_progress" } as const

/** A remembered outcome: the checks answer it instead of the handler (contract §6). */
class Replay extends Data.TaggedError("Replay")<{ readonly status: number; readonly body: unknown }> {}

/** A replay with a fresh request id in error bodies (contract §6). */
const replayResponse = ({ body, status }: Replay, requestId: string) => {
  const fresh = typeof body === "object" && body !== null && "request_id" in body
    ? { ...body, request_id: requestId }
    : body
  const code = typeof fresh === "object" && fresh !== null && "error" in fresh && typeof fresh.error === "object" &&
      fresh.error !== null &&
      "code" in fresh.error ?
    fresh.error.code :
    undefined
  if (Errors.isErrorCode(code)) RouteMetrics.refused(code)
  return HttpServerResponse.jsonUnsafe(fresh, { status, headers: { "idempotency-replayed": "true" } })
}

/**
 * RateLimit-* of a request once step 5 counted it, for every answer from there on (the 429, the
 * handler's, a replay, a later refusal); set on the answer by `make`. Keyed by the connection's
 * request object (every adjusted view of the request shares it), so an entry lives as long as its
 * request.
 */
const rateLimitHeadersFor = new WeakMap<object, Record<string, string>>()

/** Steps 2–7 for the endpoint the router matched. */
export const layerAdmission = Layer.effect(
  Admission,
  Effect.gen(function*() {
    const records = yield* Idempotency.IdempotencyRepo
    const { authenticate } = yield* Authentication
    const admitTo = yield* KeyAdmission.make
    const renders = yield* RenderService
    // the services a ReplayCurrent annotation names (checked here, at start, for every endpoint)
    const services = yield* Effect.context<CurrentImport>()
    for (const route of RouteTable.routes) {
      if (route.replayCurrent !== undefined) Context.getUnsafe(services, route.replayCurrent)
    }
    // the upload reader spools to temp files
    const files = Effect.provideContext(
      Context.make(FileSystem.FileSystem, yield* FileSystem.FileSystem).pipe(Context.add(Path.Path, yield* Path.Path))
    )

    /** Step 5: the key's entity keeps the window; reads fail open if it cannot be reached in time. */
    const admit = (caller: Caller, bucket: RateLimit.Bucket) =>
      admitTo(caller.keyId, bucket, caller.limits[bucket]).pipe(
        Effect.timeout(entityTimeout),
        Effect.catchCause((cause) =>
          bucket === "reads"
            ? Effect.as(Effect.logWarning("rate-limit entity unreachable; read admitted", cause), {
              allowed: true,
              limit: caller.limits.reads,
              remaining: caller.limits.reads,
              resetSeconds: 60
            })
            : Effect.fail(
              Errors.fail("service_unavailable", "the service is briefly unavailable; retry", { retryAfter: 2 })
            )
        )
      )

    /** Step 6: begin the record, or answer from it. The body is read here, once, for its fingerprint. */
    const idempotency = (
      route: RouteTable.Route,
      caller: Caller,
      key: string,
      request: HttpServerRequest
    ) =>
      Effect.gen(function*() {
        if (!IdempotencyPolicy.isValidKey(key)) {
          return yield* Effect.fail(
            Errors.fail("validation_failed", "Idempotency-Key must be 1 to 255 printable ASCII characters")
          )
        }
        const json = yield* JsonBody.read(request)
        const fingerprint = IdempotencyPolicy.fingerprintParsed(json.text, json.parsed)
        const begun = yield* records.begin(caller.keyId, route.name, key, fingerprint)
        RouteMetrics.idempotency[outcomes[begun._tag]].unsafeUpdate(1, [])
        switch (begun._tag) {
          case "Conflict":
            return yield* Effect.fail(
              Errors.fail("idempotency_conflict", "this Idempotency-Key was used with a different body")
            )
          case "InProgress":
            return yield* Effect.fail(
              Errors.fail("idempotency_in_progress", "a request with this Idempotency-Key is still being handled", {
                retryAfter: 1
              })
            )
          case "Replay": {
            // a success may be answered with the current state of what it created (contract §7)
            const current = route.replayCurrent !== undefined && begun.status < 300
              ? yield* Context.getUnsafe(services, route.replayCurrent).current(caller.workspaceId, begun.body)
              : undefined
            return yield* Effect.fail(new Replay({ status: begun.status, body: current ?? begun.body }))
          }
          case "New":
            // finished by `make` with whatever the request is answered
            Idempotency.setPending(request, begun.recordId)
            return { record: begun.recordId, json }
        }
      })

    /** Step 7: the content type the endpoint takes, and its body read once. */
    const body = (
      route: RouteTable.Route,
      request: HttpServerRequest,
      json: { readonly parsed: Parsed } | undefined
    ) =>
      Effect.gen(function*() {
        const type = (request.headers["content-type"] ?? "").toLowerCase()
        switch (route.body) {
          case "none":
            return Option.none()
          case "multipart": {
            // without a boundary parameter the parser cannot even start
            if (!type.startsWith("multipart/form-data") || !/;\s*boundary=/i.test(type)) {
              return yield* Effect.fail(Errors.fail("invalid_request", "send the upload as multipart/form-data"))
            }
            const parts = files(UploadBody.read(request))
            return Option.some(
              yield* Option.match(route.multipartLimits, {
                onNone: () => parts,
                onSome: (limits) => Effect.provideContext(parts, Multipart.limitsServices(limits))
              })
            )
          }
          case "json": {
            if (!/^application\/([a-z.+-]*\+)?json\b/.test(type)) {
              return yield* Effect.fail(Errors.fail("invalid_request", "send the body as application/json"))
            }
            const value = yield* JsonBody.value((json ?? (yield* JsonBody.read(request))).parsed)
            const refused = route.bodyRule?.(value)
            if (refused !== undefined) return yield* Effect.fail(refused)
            return Option.some(value)
          }
        }
      })

    const check = (name: string) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest
        const matched = yield* HttpRouter.RouteContext
        const route = RouteTable.forEndpoint(name)
        if (route === undefined) return yield* Effect.die(new Error(`no endpoint declared as ${name}`))
        RouteMetrics.setRoute(request, route.template)
        if (route.public) {
          yield* JsonBody.guard(request)
          return {
            principal: Option.none(),
            record: Option.none(),
            body: Option.none(),
            render: Option.none()
          } satisfies AdmittedShape
        }

        // steps 2–4: who is calling, may the account act, does the key hold the scope; a poll's render
        // is read in the key's statement (contract §14), and answered only once every check has passed
        const renderId = route.readsRenderWithKey ? renderIdOf(matched.params.id) : undefined
        const caller = yield* authenticate(request.headers.authorization, renderId)
        if (route.scope !== undefined && !Scopes.grants(caller.scopes, route.scope)) {
          return yield* Effect.fail(Errors.fail("insufficient_scope", `this endpoint needs the ${route.scope} scope`))
        }
        // step 5, with RateLimit-* on every answer from here on
        const admission = yield* admit(caller, route.bucket!)
        rateLimitHeadersFor.set(request.source, rateLimitHeaders(admission))
        if (!admission.allowed) {
          RouteMetrics.rateLimited[route.bucket!].unsafeUpdate(1, [])
          return yield* Effect.fail(Errors.fail("rate_limit_exceeded", "too many requests this minute for this key", {
            retryAfter: admission.resetSeconds
          }))
        }
        // JSON bodies are small; a huge one is refused before it is read (uploads have their own limit)
        if (route.body === "json") yield* JsonBody.declaredTooLarge(request)

        // step 6, when the header is sent on an endpoint that takes it
        const key = route.idempotent ? request.headers["idempotency-key"] : undefined
        const begun = key === undefined ? undefined : yield* idempotency(route, caller, key, request)

        return {
          principal: Option.some({
            keyId: caller.keyId,
            workspaceId: caller.workspaceId,
            scopes: caller.scopes,
            spendCap24h: caller.spendCap24h
          }),
          record: Option.fromNullishOr(begun?.record),
          body: yield* body(route, request, begun?.json),
          render: route.readsRenderWithKey
            ? Option.some(caller.render && renders.document(caller.render))
            : Option.none()
        } satisfies AdmittedShape
      })

    // The middleware declares no failure of its own: a refusal travels as a defect to `make`,
    // which answers every cause with the catalogue's error body (HttpApi would otherwise encode it
    // with the endpoint's error schemas).
    return Admission.of({
      bearer: (handler, { endpoint }) =>
        Effect.flatMap(
          Effect.orDie(check(endpoint.identifier)),
          (admitted) => Effect.provideService(handler, Admitted, admitted)
        )
    })
  })
)

/**
 * Paths match exactly as declared (contract §4.1): case-sensitive, no trailing or doubled slash
 * folded away (find-my-way's defaults fold all three). The router and the 405 probe use the same.
 */
export const routerConfig = { caseSensitive: true, ignoreTrailingSlash: false, ignoreDuplicateSlashes: false }

const isPathInput = (path: string): path is FindMyWay.PathInput => path.startsWith("/")

/** HTTP methods the API's routes are declared under, for `Allow`. */
const methods = ["DELETE", "GET", "PATCH", "POST", "PUT"] as const

/**
 * The pipeline around HttpApi's router: the request id, the router's own answer for a path it
 * does not route (404, or 405 with `Allow`), one error mapping, and the idempotency record finished
 * with the answer. `routes`: every route the router holds (the endpoints, /openapi.json, /docs), for
 * the 405 probe and the metrics of the routes no endpoint's checks named.
 */
export const make = (routes: ReadonlyArray<{ readonly method: string; readonly path: string }>) =>
  Effect.gen(function*() {
    const records = yield* Idempotency.IdempotencyRepo
    const finder = FindMyWay.make<string>(routerConfig)
    for (const route of routes) if (isPathInput(route.path)) finder.on(route.method, route.path, route.path)

    /** Step 1: the methods under which the same router routes this path (none: 404). */
    const allowed = (url: string) => methods.filter((m) => finder.find(m, url) !== undefined)

    /**
     * The route of a request no endpoint's checks named (/openapi.json, /docs), for its metrics: the
     * router's own template, or none (404, 405).
     */
    const nameRoute = (request: HttpServerRequest) => {
      const found = finder.find(request.method === "HEAD" ? "GET" : request.method, request.url)
      if (found !== undefined) RouteMetrics.setRoute(request, RouteMetrics.template(found.handler))
    }

    /** `received`: the path as the client sent it, which the 404 names (not as a URL parser reads it). */
    const notRouted = (request: HttpServerRequest, received: string, requestId: string) => {
      const allow = allowed(request.url)
      // contract §4.1: the route's own statuses (404/405) with the code invalid_request
      return allow.length === 0
        ? errorResponse(Errors.fail("invalid_request", `no endpoint at ${pathOf(received)}`), requestId).pipe(
          HttpServerResponse.setStatus(404)
        )
        : errorResponse(
          Errors.fail("invalid_request", `${request.method} is not allowed here; use ${allow.join(", ")}`, {
            headers: { allow: allow.join(", ") }
          }),
          requestId
        ).pipe(HttpServerResponse.setStatus(405))
    }

    const answer = (
      cause: Cause.Cause<unknown>,
      request: HttpServerRequest,
      received: string,
      requestId: string
    ) => {
      const e = Cause.squash(cause)
      if (e instanceof Replay) return Effect.succeed(replayResponse(e, requestId))
      if (HttpServerError.isHttpServerError(e) && e.reason._tag === "RouteNotFound") {
        return Effect.succeed(notRouted(request, received, requestId))
      }
      return causeToResponse(cause, requestId)
    }

    const handle = <E, R>(
      app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest> =>
      Effect.gen(function*() {
        const received = yield* HttpServerRequest
        const request = routable(received)
        const requestId = `req_${randomBase62(24)}`
        // provided only when adjusted: each provideService copies the request's whole context
        const response = yield* (request === received ? app : Effect.provideService(app, HttpServerRequest, request))
          .pipe(
            Effect.catchCause((cause) => answer(cause, request, received.url, requestId)),
            // every line logged while handling it names the request (and, in JSON, its trace)
            Effect.annotateLogs("request_id", requestId)
          )
        if (RouteMetrics.routeOf(request) === undefined) nameRoute(request)
        const pending = Idempotency.takePending(request)
        const finished = pending === undefined ?
          response :
          yield* records.finish(pending, response.status, bodyJson(response)).pipe(
            Effect.as(response),
            Effect.catchCause((cause) => causeToResponse(cause, requestId))
          )
        // the headers of every answer, set here rather than as pre-response handlers (a context
        // change and a closure per request each): X-Request-Id, and RateLimit-* once step 5 ran
        const limits = rateLimitHeadersFor.get(request.source)
        const identified = HttpServerResponse.setHeader(finished, "x-request-id", requestId)
        return limits === undefined ? identified : HttpServerResponse.setHeaders(identified, limits)
      })

    const tracesReads = yield* ReadsTraced
    return <E, R>(
      app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest> =>
      tracesReads
        ? handle(app)
        : Effect.flatMap(
          HttpServerRequest,
          (request) => untraced(request) ? Effect.withTracerEnabled(handle(app), false) : handle(app)
        )
  })

/**
 * Reads are not traced unless the process exports traces: with no exporter nothing would see their
 * spans, and on the hot reads (the poll, the media list, usage) making them (one span per SQL
 * statement with its text) was a measurable part of the request's CPU and allocations (see
 * docs/operations.md, "Request-path cost"). Writes keep their spans. X-Request-Id and the logs do not
 * come from spans and are the same either way. A process that exports traces (OTEL_EXPORTER_OTLP_*,
 * packages/server/src/Observability.ts) sets `ReadsTraced`, and then every request is traced.
 */
export const untraced = (request: HttpServerRequest): boolean => request.method === "GET" || request.method === "HEAD"

export const ReadsTraced = Context.Reference<boolean>("pic2video/ReadsTraced", { defaultValue: () => false })

/**
 * The platform's own server span (named before routing, every request and response header an
 * attribute) is never made: the process that exports traces makes the request's server span itself,
 * as the HTTP semantic conventions name it (packages/server/src/Observability.ts), and one that does
 * not needs none.
 */
export const layerWithoutPlatformSpan: Layer.Layer<never> = Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)

/** The render id a path names, or null when it is not one (its endpoint answers 404 either way). */
const renderIdOf = (id: string | undefined) => id !== undefined && Ids.isRenderId(id) ? id : null

/** A request target's path: everything before its query. */
const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/**
 * The one place the request is adjusted for the router, so that it matches paths exactly as declared
 * (contract §4.1):
 * - find-my-way ends a path at `;` or `#` (`/usage;x` would be `/usage`, and `/renders/ID;x` the
 *   render ID): both are taken as the characters they are (`%3B`, `%23`), so such a path is no
 *   endpoint's (404), and in an id they are part of the id, which its endpoint does not find (404);
 * - find-my-way refuses a path it cannot percent-decode as if it did not exist: a `%` that starts no
 *   valid escape is taken literally (`%25`), so a malformed path id reaches its endpoint, whose lookup
 *   answers its own 404 (contract §4.8: ids are opaque).
 * Any other request is passed as it came.
 */
const routable = (request: HttpServerRequest): HttpServerRequest => {
  const path = pathOf(request.url)
  const fixed = path.split("/").map((segment) => {
    let decodable = segment
    try {
      decodeURIComponent(segment)
    } catch {
      decodable = segment.replace(/%/g, "%25")
    }
    return decodable.replace(/;/g, "%3B").replace(/#/g, "%23")
  }).join("/")
  return fixed === path ? request : request.modify({ url: fixed + request.url.slice(path.length) })
}
