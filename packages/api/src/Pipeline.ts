import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import * as Imports from "@pic2video/cluster/Imports"
import * as KeyAdmission from "@pic2video/cluster/KeyAdmission"
import { KeyHasher } from "@pic2video/cluster/KeyHasher"
import { Errors, Idempotency as IdempotencyPolicy, RateLimit, Scopes } from "@pic2video/domain"
import { randomBase62 } from "@pic2video/domain/Random"
import { Effect, Exit, Option } from "effect"
import { Api } from "./Api.ts"
import { authenticate, type Caller } from "./Authentication.ts"
import { causeToResponse, errorResponse } from "./ErrorResponse.ts"
import * as Idempotency from "./Idempotency.ts"
import * as JsonBody from "./JsonBody.ts"
import { CurrentPrincipal } from "./Principal.ts"
import * as RouteTable from "./RouteTable.ts"
import { withUploadBody } from "./UploadBody.ts"

/**
 * The request pipeline, in the order contract §4 fixes (first failure wins): route (404/405),
 * authentication, account gates, scope, rate limit, idempotency, body, validation; then the
 * handler. It wraps the HttpApi router so that every outcome, the router's decoding failures
 * included, passes through one error mapping and can be remembered for idempotent replay.
 */
const entityTimeout = "3 seconds"
const maxJsonBytes = 1024 * 1024

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

export const layer = HttpApiBuilder.middleware(
  Api,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hasher = yield* KeyHasher
    const admitTo = yield* KeyAdmission.make

    /** Step 5: the key's entity keeps the window; reads fail open if it cannot be reached in time. */
    const admit = (caller: Caller, bucket: RateLimit.Bucket) =>
      admitTo(caller.keyId, bucket, caller.limits[bucket]).pipe(
        Effect.timeout(entityTimeout),
        Effect.catchAllCause((cause) =>
          bucket === "reads"
            ? Effect.as(Effect.logWarning("rate-limit entity unreachable; read admitted", cause), {
              allowed: true, limit: caller.limits.reads, remaining: caller.limits.reads, resetSeconds: 60
            })
            : Effect.fail(Errors.fail("service_unavailable", "the service is briefly unavailable; retry", { retryAfter: 2 }))
        )
      )

    /** Steps 7–8 that need the raw body: content type, JSON syntax, and the render type. */
    const checkBody = (route: RouteTable.Route, request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const type = (request.headers["content-type"] ?? "").toLowerCase()
        if (route.body === "multipart") {
          // without a boundary parameter the parser cannot even start
          if (!type.startsWith("multipart/form-data") || !/;\s*boundary=/i.test(type)) {
            return yield* Effect.fail(Errors.fail("invalid_request", "send the upload as multipart/form-data"))
          }
          return
        }
        if (route.body !== "json") return
        if (!/^application\/([a-z.+-]*\+)?json\b/.test(type)) {
          return yield* Effect.fail(Errors.fail("invalid_request", "send the body as application/json"))
        }
        const body = yield* JsonBody.parse(request)
        if (route.name === "createRender" && typeof body === "object" && body !== null && !Array.isArray(body)) {
          const type = (body as Record<string, unknown>).render_type
          if (typeof type === "string" && type !== "aesthetic_quote") {
            return yield* Effect.fail(Errors.fail("unsupported_render_type", "only render_type `aesthetic_quote` is available"))
          }
        }
      })

    const run = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>, requestId: string) =>
      Effect.catchAllCause(app, (cause) => causeToResponse(cause, requestId))

    const handle = (app: HttpApp.Default, request: HttpServerRequest.HttpServerRequest, requestId: string) =>
      Effect.gen(function*() {
        const url = new URL(request.url, "http://localhost")
        const matched = RouteTable.match(request.method, url.pathname)
        switch (matched._tag) {
          case "NotFound":
            // contract §4.1: the route's own statuses (404/405) with the code invalid_request
            return errorResponse(Errors.fail("invalid_request", `no endpoint at ${url.pathname}`), requestId).pipe(
              HttpServerResponse.setStatus(404)
            )
          case "MethodNotAllowed":
            return errorResponse(
              Errors.fail("invalid_request", `${request.method} is not allowed here; use ${matched.allow.join(", ")}`, {
                headers: { allow: matched.allow.join(", ") }
              }),
              requestId
            ).pipe(HttpServerResponse.setStatus(405))
          case "Extra":
            return yield* run(app, requestId)
        }
        const route = matched.route
        if (route.public) return yield* run(Effect.zipRight(JsonBody.guard(request), app), requestId)
        if (route.bucket === undefined) return yield* run(app, requestId)

        // steps 2–4: who is calling, may the account act, does the key hold the scope
        const caller = yield* authenticate(request.headers.authorization).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.provideService(KeyHasher, hasher)
        )
        if (route.scope !== undefined && !Scopes.grants(caller.scopes, route.scope)) {
          return yield* Effect.fail(Errors.fail("insufficient_scope", `this endpoint needs the ${route.scope} scope`))
        }
        // step 5
        const admission = yield* admit(caller, route.bucket)
        const limitHeaders = rateLimitHeaders(admission)
        yield* HttpApp.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeaders(res, limitHeaders)))
        if (!admission.allowed) {
          return yield* Effect.fail(Errors.fail("rate_limit_exceeded", "too many requests this minute for this key", {
            retryAfter: admission.resetSeconds
          }))
        }

        // JSON bodies are small; refuse a huge one before reading it (the upload has its own limit)
        if (route.body === "json" && Number(request.headers["content-length"] ?? 0) > maxJsonBytes) {
          return yield* Effect.fail(Errors.fail("payload_too_large", "a JSON body may be at most 1 MiB"))
        }

        const principal = Option.some({ keyId: caller.keyId, workspaceId: caller.workspaceId, scopes: caller.scopes, spendCap24h: caller.spendCap24h })
        // uploads are read by our multipart reader (UploadBody.ts), which answers a truncated body at once
        const routed = route.body === "multipart"
          ? Effect.provideService(app, HttpServerRequest.HttpServerRequest, withUploadBody(request))
          : Effect.provideService(app, HttpServerRequest.HttpServerRequest, forRouter(route, request))
        const proceed = Effect.zipRight(checkBody(route, request), routed).pipe(
          (e) => run(e, requestId),
          Effect.locally(CurrentPrincipal, principal)
        )

        // step 6: idempotency, when the header is sent on an endpoint that takes it
        const key = request.headers["idempotency-key"]
        if (!route.idempotent || key === undefined) return yield* proceed
        if (!IdempotencyPolicy.isValidKey(key)) {
          return yield* Effect.fail(Errors.fail("validation_failed", "Idempotency-Key must be 1 to 255 printable ASCII characters"))
        }
        // `text` is cached on the request, so the router can still read the body after us
        const raw = yield* JsonBody.text(request)
        const begun = yield* Idempotency.begin(caller.keyId, route.name, key, IdempotencyPolicy.fingerprint(new TextEncoder().encode(raw))).pipe(
          Effect.provideService(SqlClient.SqlClient, sql)
        )
        switch (begun._tag) {
          case "Conflict":
            return yield* Effect.fail(Errors.fail("idempotency_conflict", "this Idempotency-Key was used with a different body"))
          case "InProgress":
            return yield* Effect.fail(Errors.fail("idempotency_in_progress", "a request with this Idempotency-Key is still being handled", {
              retryAfter: 1
            }))
          case "Replay": {
            // contract §7: a replayed import create answers the import's CURRENT state (creation
            // shape), not the body stored when it was pending; every other replay is verbatim
            if (route.name === "createImport" && begun.status === 202) {
              const current = yield* currentImport(caller.workspaceId, begun.body).pipe(Effect.provideService(SqlClient.SqlClient, sql))
              if (current !== undefined) return replay(202, current, requestId)
            }
            return replay(begun.status, begun.body, requestId)
          }
          case "New": {
            const exit = yield* proceed.pipe(Effect.locally(Idempotency.CurrentRecord, Option.some(begun.recordId)), Effect.exit)
            const response = Exit.isSuccess(exit) ? exit.value : yield* causeToResponse(exit.cause, requestId)
            yield* Idempotency.finish(begun.recordId, response.status, bodyJson(response)).pipe(
              Effect.provideService(SqlClient.SqlClient, sql)
            )
            return response
          }
        }
      })

    return (app: HttpApp.Default) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const requestId = `req_${randomBase62(24)}`
        yield* HttpApp.appendPreResponseHandler((_req, res) => Effect.succeed(HttpServerResponse.setHeader(res, "x-request-id", requestId)))
        return yield* handle(app, request, requestId).pipe(
          Effect.catchAllCause((cause) => causeToResponse(cause, requestId))
        )
      })
  })
)

/** The creation-shaped document of the import a remembered 202 named, as it is now. */
const currentImport = (workspaceId: string, stored: unknown) =>
  Effect.gen(function*() {
    const id = typeof stored === "object" && stored !== null && "id" in stored && typeof stored.id === "string" ? stored.id : undefined
    const row = id === undefined ? undefined : yield* Imports.find(workspaceId, id)
    return row === undefined ? undefined : yield* Imports.createdDocument(row)
  })

/**
 * The request as the router is given it. A path id is opaque (contract §4.8: the wrong shape is the
 * endpoint's own 404): a `%` that starts no valid escape is taken literally, so the handler looks the
 * id up instead of the router refusing the path as if it did not exist. A JSON body sent as
 * `application/…+json` is JSON to the router too (it would otherwise read the body as bytes, again).
 * The same request object underneath, so the body `checkBody` already read stays read.
 */
const forRouter = (route: RouteTable.Route, request: HttpServerRequest.HttpServerRequest): HttpServerRequest.HttpServerRequest => {
  const overrides: PropertyDescriptorMap = {}
  const q = request.url.indexOf("?")
  const path = q === -1 ? request.url : request.url.slice(0, q)
  const fixed = path.split("/").map((segment) => {
    try {
      decodeURIComponent(segment)
      return segment
    } catch {
      return segment.replace(/%/g, "%25")
    }
  }).join("/")
  if (fixed !== path) overrides.url = { value: fixed + (q === -1 ? "" : request.url.slice(q)) }
  const type = request.headers["content-type"] ?? ""
  if (route.body === "json" && !type.toLowerCase().includes("application/json")) {
    overrides.headers = { value: { ...request.headers, "content-type": "application/json" } }
  }
  return Object.keys(overrides).length === 0 ? request : Object.create(request, overrides)
}

/** A remembered outcome, with a fresh request id in error bodies (contract §6). */
const replay = (status: number, body: unknown, requestId: string) => {
  const fresh = typeof body === "object" && body !== null && "request_id" in body ? { ...body, request_id: requestId } : body
  return HttpServerResponse.unsafeJson(fresh, { status, headers: { "idempotency-replayed": "true" } })
}

