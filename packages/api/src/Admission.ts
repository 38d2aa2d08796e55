import { RateLimiter } from "@pic2video/cluster/entities/RateLimiter"
import { IdempotencyRepo } from "@pic2video/cluster/repositories/IdempotencyRepo"
import { RenderService } from "@pic2video/cluster/services/RenderService"
import { Errors, Idempotency, Ids, type RateLimit, Scopes } from "@pic2video/domain"
import {
  Admission,
  Admitted,
  type AdmittedShape,
  type CurrentImport,
  Unauthenticated
} from "@pic2video/domain/api/Annotations"
import type { Parsed } from "@pic2video/domain/JsonBody"
import { Context, Effect, FileSystem, Layer, Option, Path } from "effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Multipart from "effect/http/Multipart"
import { type AuthenticatedKey, Authentication } from "./Authentication.ts"
import { multipartFailure } from "./ErrorResponse.ts"
import { InFlight } from "./InFlight.ts"
import * as JsonBody from "./JsonBody.ts"
import * as RouteMetrics from "./RouteMetrics.ts"
import * as RouteTable from "./RouteTable.ts"
import * as UploadBody from "./UploadBody.ts"

/**
 * Contract §4 steps 2–7, in the order the contract fixes (the first refusal answers): the key (2),
 * the account gates (3), the scope (4), the rate limit (5), the Idempotency-Key (6), the body (7).
 * The `Admission` middleware of every group that needs a key runs them once the router has matched
 * the endpoint and before anything is decoded, reading what the endpoint declares (RouteTable.ts, from
 * the Api.ts annotations). A refusal is the middleware's declared error (`ApiFailure`, which answers
 * itself); a remembered outcome is answered instead of the handler.
 */

/** How long a request waits for its key's rate window in another process (contract §8.3). */
const entityTimeout = "3 seconds"

const unavailable = Errors.fail("service_unavailable", "the service is briefly unavailable; retry", { retryAfter: 2 })

const rateLimitHeaders = (a: RateLimit.Decision) => ({
  "ratelimit-limit": String(a.limit),
  "ratelimit-remaining": String(a.remaining),
  "ratelimit-reset": String(a.resetSeconds)
})

const outcomes = { New: "new", Replay: "replayed", Conflict: "conflict", InProgress: "in_progress" } as const

/** A remembered answer, with a fresh request id in an error body (contract §6). */
const replayResponse = (status: number, body: unknown, requestId: string) => {
  const fresh = typeof body === "object" && body !== null && "request_id" in body
    ? { ...body, request_id: requestId }
    : body
  return HttpServerResponse.jsonUnsafe(fresh, { status, headers: { "idempotency-replayed": "true" } })
}

/** The render id a path names, or null when it is not one (its endpoint answers 404 either way). */
const renderIdOf = (id: string | undefined) => id !== undefined && Ids.isRenderId(id) ? id : null

/** What admission ends in: the handler runs with what was admitted, or a remembered answer is given. */
type Outcome =
  | { readonly _tag: "Admitted"; readonly admitted: AdmittedShape }
  | { readonly _tag: "Replay"; readonly response: HttpServerResponse.HttpServerResponse }

const routeOf = (name: string) =>
  Effect.suspend(() => {
    const route = RouteTable.forEndpoint(name)
    // every endpoint of the definition is in the table (it is built from the definition): one that is
    // not is a fault of the service, said in the log
    return route === undefined
      ? Effect.andThen(
        Effect.logError(`no endpoint declared as ${name} in the route table`),
        Effect.fail(Errors.fail("internal_error", "an unexpected fault in the service"))
      )
      : Effect.succeed(route)
  })

/** The `Admission` middleware: steps 2–7 for the endpoint the router matched. */
export const layer = Layer.effect(
  Admission,
  Effect.gen(function*() {
    const records = yield* IdempotencyRepo
    const { authenticate } = yield* Authentication
    const windows = yield* RateLimiter
    const renders = yield* RenderService
    const inFlight = yield* InFlight
    // the services a ReplayCurrent annotation names (checked here, at start, for every endpoint)
    const services = yield* Effect.context<CurrentImport>()
    for (const route of RouteTable.routes) {
      if (route.replayCurrent !== undefined) Context.getUnsafe(services, route.replayCurrent)
    }
    // the upload reader spools to temp files
    const files = Effect.provideContext(
      Context.make(FileSystem.FileSystem, yield* FileSystem.FileSystem).pipe(Context.add(Path.Path, yield* Path.Path))
    )

    /** Steps 2–3: who is calling, and may the account act; a poll's render is read in the key's statement. */
    const key = (route: RouteTable.Route, request: HttpServerRequest) =>
      Effect.flatMap(
        HttpRouter.RouteContext,
        (matched) =>
          authenticate(
            request.headers.authorization,
            route.readsRenderWithKey ? renderIdOf(matched.params.id) : undefined
          )
      )

    /** Step 4: the key holds the endpoint's scope. */
    const scope = (route: RouteTable.Route, key: AuthenticatedKey) =>
      route.scope === undefined || Scopes.grants(key.scopes, route.scope)
        ? Effect.void
        : Effect.fail(Errors.fail("insufficient_scope", `this endpoint needs the ${route.scope} scope`))

    /**
     * Step 5: the request counts against its key's window, kept where the key's entity lives; RateLimit-*
     * are on every answer from here on. Reads are admitted when the window cannot be reached in time.
     */
    const rateLimit = (bucket: RateLimit.Bucket, key: AuthenticatedKey, request: HttpServerRequest) =>
      Effect.gen(function*() {
        const limit = key.limits[bucket]
        const decision = yield* windows.admit(key.keyId, bucket, limit).pipe(
          Effect.timeout(entityTimeout),
          Effect.catchCause((cause) =>
            bucket === "reads"
              ? Effect.as(Effect.logWarning("rate-limit entity unreachable; read admitted", cause), {
                allowed: true,
                limit,
                remaining: limit,
                resetSeconds: 60
              })
              : Effect.fail(unavailable)
          )
        )
        inFlight.setRateLimit(request, rateLimitHeaders(decision))
        if (decision.allowed) return
        RouteMetrics.rateLimited[bucket].unsafeUpdate(1, [])
        return yield* Effect.fail(Errors.fail("rate_limit_exceeded", "too many requests this minute for this key", {
          retryAfter: decision.resetSeconds
        }))
      })

    /** Step 6: begin the record, or answer from it. The body is read here, once, for its fingerprint. */
    const idempotency = (route: RouteTable.Route, key: AuthenticatedKey, header: string, request: HttpServerRequest) =>
      Effect.gen(function*() {
        if (!Idempotency.isValidKey(header)) {
          return yield* Effect.fail(
            Errors.fail("validation_failed", "Idempotency-Key must be 1 to 255 printable ASCII characters")
          )
        }
        const json = yield* JsonBody.read(request)
        const begun = yield* records.begin(
          key.keyId,
          route.name,
          header,
          Idempotency.fingerprintParsed(json.text, json.parsed)
        )
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
              ? yield* Context.getUnsafe(services, route.replayCurrent).current(key.workspaceId, begun.body)
              : undefined
            return {
              _tag: "Replay" as const,
              response: replayResponse(begun.status, current ?? begun.body, yield* Errors.RequestId)
            }
          }
          case "New":
            // finished by the pipeline with whatever the request is answered
            inFlight.setRecord(request, begun.recordId)
            return { _tag: "New" as const, record: begun.recordId, json }
        }
      })

    /** Step 7: the content type the endpoint takes, and its body read once. */
    const body = (route: RouteTable.Route, request: HttpServerRequest, json: { readonly parsed: Parsed } | undefined) =>
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
            const parts = files(Effect.mapError(UploadBody.read(request), multipartFailure))
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

    const admit = (name: string) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest
        const route = yield* routeOf(name)
        RouteMetrics.setRoute(request, route.template)
        const caller = yield* key(route, request)
        yield* scope(route, caller)
        // every endpoint that needs a key declares its bucket (RouteTable.ts refuses to start otherwise)
        if (route.bucket !== undefined) yield* rateLimit(route.bucket, caller, request)
        // JSON bodies are small; a huge one is refused before it is read (uploads have their own limit)
        if (route.body === "json") yield* JsonBody.declaredTooLarge(request)
        const header = route.idempotent ? request.headers["idempotency-key"] : undefined
        const begun = header === undefined ? undefined : yield* idempotency(route, caller, header, request)
        if (begun?._tag === "Replay") return begun satisfies Outcome
        return {
          _tag: "Admitted",
          admitted: {
            caller: { keyId: caller.keyId, workspaceId: caller.workspaceId, spendCap24h: caller.spendCap24h },
            record: Option.fromNullishOr(begun?.record),
            body: yield* body(route, request, begun?.json),
            render: caller.render && renders.document(caller.render)
          }
        } satisfies Outcome
      })

    return Admission.of({
      bearer: (handler, { endpoint }) =>
        Effect.flatMap(
          admit(endpoint.identifier),
          (outcome) =>
            outcome._tag === "Replay"
              ? Effect.succeed(outcome.response)
              : Effect.provideService(handler, Admitted, outcome.admitted)
        )
    })
  })
)

/** The `Unauthenticated` middleware: no key to check; a body labelled JSON is bounded, its syntax left to the endpoint. */
export const layerUnauthenticated = Layer.succeed(
  Unauthenticated,
  (handler, { endpoint }) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest
      const route = yield* routeOf(endpoint.identifier)
      RouteMetrics.setRoute(request, route.template)
      yield* JsonBody.guard(request)
      return yield* handler
    })
)
