import { IdempotencyRepo } from "@pic2video/cluster/repositories/IdempotencyRepo"
import { Errors } from "@pic2video/domain"
import { randomBase62 } from "@pic2video/domain/Random"
import { Cause, Context, Effect, Layer, References } from "effect"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServerError from "effect/http/HttpServerError"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as FindMyWay from "find-my-way-ts"
import { causeToResponse } from "./ErrorResponse.ts"
import { InFlight } from "./InFlight.ts"
import { pathOf, routable, routerConfig } from "./RequestPath.ts"
import * as RouteMetrics from "./RouteMetrics.ts"

/**
 * The request pipeline, in the order contract §4 fixes (first failure wins), on HttpApi's own router:
 *
 * 1. route: the router matches; when it finds nothing, the same routes, asked under the other
 *    methods, tell 404 from 405 and fill `Allow` (`make` below);
 * 2–7. authentication, account gates, scope, rate limit, idempotency, body: the `Admission`
 *    middleware (Admission.ts), which runs once the route matched and before anything is decoded;
 * 8. validation: the framework decodes path, headers and query; the handler decodes the body
 *    admission read (`payload` in Admitted.ts).
 *
 * Every answer carries X-Request-Id (and RateLimit-* once step 5 ran), is counted by its error code,
 * and finishes the idempotency record it ran under.
 */

const bodyJson = (response: HttpServerResponse.HttpServerResponse): unknown => {
  if (response.body._tag !== "Uint8Array") return null
  try {
    return JSON.parse(new TextDecoder().decode(response.body.body))
  } catch {
    return null
  }
}

/** The catalogue code of an error answer, for the refusal metrics. */
const codeOf = (body: unknown): Errors.ErrorCode | undefined => {
  const error = typeof body === "object" && body !== null && "error" in body ? body.error : undefined
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined
  return Errors.isErrorCode(code) ? code : undefined
}

/**
 * The request's id where its answer (an ApiFailure answers itself with it: Errors.ts) and every line
 * logged while handling it (and, in JSON, its trace) read it: one change of the fiber's context for both.
 */
const withRequestId = (requestId: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.updateContext(self, (context: Context.Context<R>) =>
    Context.merge(
      context,
      Context.make(Errors.RequestId, requestId).pipe(
        Context.add(References.CurrentLogAnnotations, {
          ...Context.get(context, References.CurrentLogAnnotations),
          request_id: requestId
        })
      )
    ))

const routeNotFound = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some((r) =>
    Cause.isFailReason(r) && HttpServerError.isHttpServerError(r.error) && r.error.reason._tag === "RouteNotFound"
  )

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
    const records = yield* IdempotencyRepo
    const inFlight = yield* InFlight
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
        ? Errors.response(Errors.fail("invalid_request", `no endpoint at ${pathOf(received)}`), requestId).pipe(
          HttpServerResponse.setStatus(404)
        )
        : Errors.response(
          Errors.fail("invalid_request", `${request.method} is not allowed here; use ${allow.join(", ")}`, {
            headers: { allow: allow.join(", ") }
          }),
          requestId
        ).pipe(HttpServerResponse.setStatus(405))
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
            Effect.catchCause((cause) =>
              routeNotFound(cause)
                ? Effect.succeed(notRouted(request, received.url, requestId))
                : causeToResponse(cause, requestId)
            ),
            withRequestId(requestId)
          )
        if (RouteMetrics.routeOf(request) === undefined) nameRoute(request)
        const pending = inFlight.takeRecord(request)
        const body = response.status >= 400 || pending !== undefined ? bodyJson(response) : undefined
        const finished = pending === undefined ?
          response :
          yield* records.finish(pending, response.status, body).pipe(
            Effect.as(response),
            Effect.catchCause((cause) => causeToResponse(cause, requestId))
          )
        // counted as answered: a record that could not be finished turns the answer into a 500
        const code = finished.status < 400 ? undefined : codeOf(finished === response ? body : bodyJson(finished))
        if (code !== undefined) RouteMetrics.refused(code)
        // the headers of every answer, set here rather than as pre-response handlers (a context
        // change and a closure per request each): X-Request-Id, and RateLimit-* once step 5 ran
        const limits = inFlight.rateLimitOf(request)
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
