import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import * as Http from "@pic2video/api/Http"
import { ApiKeyEntity } from "@pic2video/cluster/entities/ApiKeyEntity"
import * as Sharding from "@pic2video/cluster/entities/Sharding"
import * as ApiKeys from "@pic2video/cluster/repositories/ApiKeysRepo"
import { MediaRepo } from "@pic2video/cluster/repositories/MediaRepo"
import { WorkspacesRepo } from "@pic2video/cluster/repositories/WorkspacesRepo"
import { ApiKeyToken } from "@pic2video/domain"
import { Api } from "@pic2video/domain/api/Api"
import { layerDrive, layerEntities, layerInfra } from "@pic2video/server/Server"
import { Clock, ConfigProvider, Context, Effect, Layer, References, Schema } from "effect"
import { EntityId, ShardId, Sharding as ClusterSharding } from "effect/cluster"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { makeDatabase } from "../../../test/support/service.ts"

/**
 * The request pipeline's admission (contract §4.2–§4.6) driven in process: the real router and
 * middleware (`Http.serve`, as the all-in-one process serves it, without the portal and telemetry
 * wrappers) on the platform's test HTTP server, called through `HttpApiClient` made from the
 * contract, over a database of the block's own and a cluster runner of one with its entities. One
 * composition per block, so each test costs a few requests; the second block's request path reads
 * a `TestClock`, so a rate-limit window or an idempotency record can run out without waiting.
 */

/**
 * A `TestClock` for the request path, set to the wall clock at start; the tests move it. Only for
 * tests that create nothing: a charge's deadline and billing cycle are read by the key's entity,
 * which runs on the live clock.
 */
const layerTestRequestClock: Layer.Layer<never> = Layer.effectContext(
  Effect.gen(function*() {
    const clock = yield* TestClock.make()
    yield* clock.setTime(Date.now())
    return Context.make(Clock.Clock, clock)
  })
)

/** Until the runner holds every ApiKey shard: admission counts the window in place from then on. */
const layerShardsHeld = Layer.effectDiscard(
  Effect.gen(function*() {
    const sharding = yield* ClusterSharding.Sharding
    const group = ApiKeyEntity.getShardGroup(EntityId.make("key_any"))
    const shards = Array.from(
      { length: Sharding.failoverSettings.shardsPerGroup },
      (_, i) => ShardId.make(group, i + 1)
    )
    yield* Effect.sleep("50 millis").pipe(
      Effect.repeat({ until: () => shards.every((shard) => sharding.hasShardId(shard)) }),
      Effect.timeout("60 seconds"),
      Effect.orDie
    )
  })
)

/**
 * The composition, minus the listener, the portal and telemetry. `requestClock`: the clock the request
 * path reads (the runner and its entities keep the live one).
 */
const layerService = (requestClock: Layer.Layer<never>) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const env = {
        DATABASE_URL: yield* Effect.promise(makeDatabase),
        DATA_DIR: yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-api-test-"))),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        ),
        PUBLIC_BASE_URL: "http://p2v.test",
        RENDER_CONCURRENCY: "1"
      }
      return Http.serve((api) => api).pipe(
        Layer.provideMerge(NodeHttpServer.layerTest),
        Layer.provideMerge(requestClock),
        Layer.provideMerge(layerShardsHeld),
        Layer.provideMerge(layerEntities),
        Layer.provideMerge(layerDrive),
        Layer.provideMerge(Sharding.layerRunner),
        Layer.provideMerge(layerInfra),
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))),
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
      )
    })
  )

const allScopes = ["media:read", "media:write", "renders:create", "renders:read"]

/** A workspace of `plan` with one key; the workspace's gates are set after the key is minted. */
const keyed = (options: {
  readonly plan?: "starter" | "studio"
  readonly scopes?: ReadonlyArray<string>
  readonly readsPerMinute?: number
  readonly createsPerMinute?: number
  readonly expiresAt?: Date
  readonly revoked?: boolean
  readonly gates?: { readonly plan?: "free"; readonly status?: "inactive"; readonly apiEnabled?: boolean }
} = {}) =>
  Effect.gen(function*() {
    const workspaces = yield* WorkspacesRepo
    const workspace = yield* workspaces.create("admission", { plan: options.plan ?? "studio" })
    const key = yield* ApiKeys.create({
      workspaceId: workspace.id,
      scopes: options.scopes ?? allScopes,
      ...(options.readsPerMinute === undefined ? {} : { readsPerMinute: options.readsPerMinute }),
      ...(options.createsPerMinute === undefined ? {} : { createsPerMinute: options.createsPerMinute }),
      ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt })
    })
    if (options.revoked === true) yield* ApiKeys.revoke(key.id)
    if (options.gates !== undefined) yield* workspaces.update(workspace.id, options.gates)
    return { workspaceId: workspace.id, keyId: key.id, secret: key.secret }
  })

/** The contract's client, sending `authorization` as it is (none when undefined). */
const clientWith = (authorization: string | undefined) =>
  HttpApiClient.make(Api, {
    transformClient: (client) =>
      authorization === undefined
        ? client
        : HttpClient.mapRequest(client, HttpClientRequest.setHeader("authorization", authorization))
  })

const bearer = (secret: string) => clientWith(`Bearer ${secret}`)

/** The fields of a JSON answer the tests look at: a success's, or the error body's. */
const Answer = Schema.Struct({
  object: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  request_id: Schema.optional(Schema.String),
  error: Schema.optional(Schema.Struct({ code: Schema.String, message: Schema.String }))
})

/** An answer as the tests read it: status, the error code, and the headers the contract names. */
const read = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(Effect.flatMap(response.json, Schema.decodeUnknownEffect(Answer)), (body) => ({
    status: response.status,
    code: body.error?.code,
    body,
    requestId: response.headers["x-request-id"],
    replayed: response.headers["idempotency-replayed"],
    retryAfter: response.headers["retry-after"],
    rateLimit: response.headers["ratelimit-limit"] === undefined ? undefined : {
      limit: response.headers["ratelimit-limit"],
      remaining: response.headers["ratelimit-remaining"],
      reset: response.headers["ratelimit-reset"]
    }
  }))

const usage = (client: Effect.Success<ReturnType<typeof bearer>>) =>
  Effect.flatMap(client.renders.getUsage({ responseMode: "response-only" }), read)

const listMedia = (client: Effect.Success<ReturnType<typeof bearer>>) =>
  Effect.flatMap(client.media.listMedia({ query: {}, responseMode: "response-only" }), read)

const createRender = (
  client: Effect.Success<ReturnType<typeof bearer>>,
  payload: { readonly media_id: string; readonly quote?: string },
  idempotencyKey?: string
) =>
  Effect.flatMap(
    client.renders.createRender({
      payload,
      headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey },
      responseMode: "response-only"
    }),
    read
  )

/**
 * A request the contract's client cannot make (a body that is not JSON, a route that is not there),
 * sent as it is on the same test server.
 */
const raw = (
  method: "POST" | "DELETE" | "GET",
  path: string,
  options: { readonly secret?: string; readonly headers?: Record<string, string>; readonly body?: string } = {}
) =>
  Effect.gen(function*() {
    let request = HttpClientRequest.make(method)(path).pipe(HttpClientRequest.setHeaders(options.headers ?? {}))
    if (options.secret !== undefined) request = HttpClientRequest.bearerToken(request, options.secret)
    if (options.body !== undefined) {
      request = HttpClientRequest.bodyText(request, options.body, options.headers?.["content-type"])
    }
    const response = yield* (yield* HttpClient.HttpClient).execute(request)
    return { ...(yield* read(response)), allow: response.headers["allow"] }
  })

/**
 * A photo's row in the workspace's library, its inference stored as failed (as with no vision model),
 * so a create does not wait for one. No file behind it: its render fails, after the answers read here.
 */
const addPhoto = (workspaceId: string) =>
  Effect.gen(function*() {
    const id = randomUUID()
    const media = yield* MediaRepo
    const added = yield* media.add({
      id,
      workspaceId,
      label: "",
      tags: [],
      width: 10,
      height: 10,
      mimeType: "image/png",
      sizeBytes: 1,
      blobKey: `media/${workspaceId}/${id}`,
      sourceRef: null
    })
    if (added._tag !== "Inserted") return yield* Effect.die(new Error(`photo ${id} was not inserted`))
    yield* media.storeInference(id, { error: "no vision model in this test" })
    return id
  })

/** Every refusal's body: the catalogue's code, and the request id of its header (contract §4, spec "Errors"). */
const expectRefusal = (answer: Effect.Success<ReturnType<typeof read>>, status: number, code: string) => {
  expect({ status: answer.status, code: answer.code }).toEqual({ status, code })
  expect(answer.requestId).toMatch(/^req_/)
  expect(answer.body.request_id).toBe(answer.requestId)
}

layer(layerService(Layer.empty), { excludeTestServices: true, timeout: "120 seconds" })(
  "Admission, in process",
  (it) => {
    it.effect("a key that is there, valid and allowed is answered (the baseline of every refusal below)", () =>
      Effect.gen(function*() {
        const { secret } = yield* keyed()
        const answer = yield* usage(yield* bearer(secret))
        expect(answer.status).toBe(200)
        expect(answer.body.object).toBe("usage")
        expect(answer.requestId).toMatch(/^req_/)
      }))

    it.effect("a handler's refusal keeps its catalogue status and body in every group (it answers itself)", () =>
      Effect.gen(function*() {
        // an ApiFailure is answered by HttpApi only once it fails to encode with the endpoint's error
        // schemas: an error schema that could encode one would turn these into another status
        const { secret } = yield* keyed()
        const unknown = "00000000-0000-4000-8000-000000000000"
        expectRefusal(yield* raw("GET", `/api/v1/media/${unknown}/preview`, { secret }), 404, "unknown_media")
        expectRefusal(yield* raw("GET", "/api/v1/renders/rnd_unknown", { secret }), 404, "render_not_found")
        expectRefusal(yield* raw("GET", "/api/v1/renders/rnd_unknown/download", { secret }), 404, "render_not_found")
        expectRefusal(yield* raw("GET", "/api/v1/media/imports/imp_unknown", { secret }), 404, "import_not_found")
        expectRefusal(
          yield* raw("POST", "/api/v1/renders", {
            secret,
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ media_id: unknown, quote: "a photo that is not there" })
          }),
          404,
          "unknown_media"
        )
      }))

    it.effect("no key, or an empty header, is 401 missing_api_key", () =>
      Effect.gen(function*() {
        expectRefusal(yield* usage(yield* clientWith(undefined)), 401, "missing_api_key")
        expectRefusal(yield* usage(yield* clientWith("   ")), 401, "missing_api_key")
      }))

    it.effect("a malformed key, another scheme, an unknown key and a wrong secret are all 401 invalid_api_key", () =>
      Effect.gen(function*() {
        const { keyId, secret } = yield* keyed()
        // well-formed tokens (checksum and all): one names no stored key, one the key above with another secret
        const unknown = ApiKeyToken.mintToken().token
        const wrongSecret = ApiKeyToken.mintToken(ApiKeyToken.keyIdPart(keyId)).token
        for (
          const authorization of [
            "Bearer nope",
            "Bearer",
            `Basic ${secret}`,
            `Bearer ${unknown}`,
            `Bearer ${wrongSecret}`
          ]
        ) {
          expectRefusal(yield* usage(yield* clientWith(authorization)), 401, "invalid_api_key")
        }
      }))

    it.effect("a revoked key is 401 api_key_revoked; an expired one 401 api_key_expired", () =>
      Effect.gen(function*() {
        const revoked = yield* keyed({ revoked: true })
        expectRefusal(yield* usage(yield* bearer(revoked.secret)), 401, "api_key_revoked")
        // before the epoch: past under the wall clock and under the request path's clock alike
        const expired = yield* keyed({ expiresAt: new Date(-1000) })
        expectRefusal(yield* usage(yield* bearer(expired.secret)), 401, "api_key_expired")
      }))

    it.effect("the account gates: 403 tenant_inactive, api_disabled, tier_not_eligible, in that order", () =>
      Effect.gen(function*() {
        const inactive = yield* keyed({ gates: { status: "inactive", apiEnabled: false, plan: "free" } })
        expectRefusal(yield* usage(yield* bearer(inactive.secret)), 403, "tenant_inactive")
        const disabled = yield* keyed({ gates: { apiEnabled: false, plan: "free" } })
        expectRefusal(yield* usage(yield* bearer(disabled.secret)), 403, "api_disabled")
        const free = yield* keyed({ gates: { plan: "free" } })
        expectRefusal(yield* usage(yield* bearer(free.secret)), 403, "tier_not_eligible")
      }))

    it.effect("a key without the endpoint's scope is 403 insufficient_scope, and no window is counted", () =>
      Effect.gen(function*() {
        const { secret } = yield* keyed({ scopes: ["renders:read"], readsPerMinute: 1 })
        const client = yield* bearer(secret)
        const refused = yield* listMedia(client)
        expectRefusal(refused, 403, "insufficient_scope")
        expect(refused.rateLimit).toBeUndefined()
        // the refusal did not use the key's one read
        const answered = yield* usage(client)
        expect(answered.status).toBe(200)
        expect(answered.rateLimit).toEqual({ limit: "1", remaining: "0", reset: "60" })
      }))

    it.effect("the first failing step answers: key before gates before scope before rate limit", () =>
      Effect.gen(function*() {
        // an invalid key asking for a scope it could not have
        expectRefusal(yield* listMedia(yield* clientWith("Bearer p2v_live_nope")), 401, "invalid_api_key")
        // a revoked key of an inactive account, without the scope
        const revoked = yield* keyed({ scopes: ["renders:read"], revoked: true, gates: { status: "inactive" } })
        expectRefusal(yield* listMedia(yield* bearer(revoked.secret)), 401, "api_key_revoked")
        // an inactive account's key without the scope
        const inactive = yield* keyed({ scopes: ["renders:read"], gates: { status: "inactive" } })
        expectRefusal(yield* listMedia(yield* bearer(inactive.secret)), 403, "tenant_inactive")
        // a key whose one read is used, asking where it has no scope
        const narrow = yield* keyed({ scopes: ["renders:read"], readsPerMinute: 1 })
        const client = yield* bearer(narrow.secret)
        expect((yield* usage(client)).status).toBe(200)
        expectRefusal(yield* usage(client), 429, "rate_limit_exceeded")
        expectRefusal(yield* listMedia(client), 403, "insufficient_scope")
      }))

    it.effect("creates have their own window: a 429 comes before the body or the idempotency key is read", () =>
      Effect.gen(function*() {
        const { secret } = yield* keyed({ createsPerMinute: 1 })
        const client = yield* bearer(secret)
        const first = yield* createRender(client, { media_id: randomUUID() })
        expectRefusal(first, 404, "unknown_media")
        expect(first.rateLimit).toEqual({ limit: "1", remaining: "0", reset: "60" })
        // reads are another bucket
        expect((yield* usage(client)).rateLimit).toMatchObject({ limit: "600", remaining: "599" })
        const refused = yield* createRender(client, { media_id: randomUUID() }, "x".repeat(256))
        expectRefusal(refused, 429, "rate_limit_exceeded")
        const notJson = yield* raw("POST", "/api/v1/renders", {
          secret,
          headers: { "content-type": "application/json" },
          body: "{"
        })
        expectRefusal(notJson, 429, "rate_limit_exceeded")
      }))

    it.effect("the route comes before the key (404, 405 with Allow); the idempotency key before the body (400)", () =>
      Effect.gen(function*() {
        expectRefusal(yield* raw("GET", "/api/v1/nowhere"), 404, "invalid_request")
        const wrongMethod = yield* raw("DELETE", "/api/v1/usage")
        expectRefusal(wrongMethod, 405, "invalid_request")
        expect(wrongMethod.allow).toBe("GET")
        const { secret } = yield* keyed()
        const json = { "content-type": "application/json" }
        expectRefusal(
          yield* raw("POST", "/api/v1/renders", { secret, headers: json, body: "{" }),
          400,
          "invalid_request"
        )
        expectRefusal(
          yield* raw("POST", "/api/v1/renders", { secret, headers: { "content-type": "text/plain" }, body: "{}" }),
          400,
          "invalid_request"
        )
        const badKeyAndBody = yield* raw("POST", "/api/v1/renders", {
          secret,
          headers: { ...json, "idempotency-key": "x".repeat(256) },
          body: "{"
        })
        expectRefusal(badKeyAndBody, 422, "validation_failed")
      }))

    it.effect("an Idempotency-Key that is not 1–255 printable ASCII characters is 422 validation_failed", () =>
      Effect.gen(function*() {
        const { secret } = yield* keyed()
        const client = yield* bearer(secret)
        expectRefusal(
          yield* createRender(client, { media_id: randomUUID() }, "x".repeat(256)),
          422,
          "validation_failed"
        )
      }))

    it.effect("idempotency: the same key and body replay the 202 (same render, one charge); another body is 409", () =>
      Effect.gen(function*() {
        const { secret, workspaceId } = yield* keyed()
        const client = yield* bearer(secret)
        const mediaId = yield* addPhoto(workspaceId)
        const body = { media_id: mediaId, quote: "" }
        const created = yield* createRender(client, body, "order-1")
        expect(created.status).toBe(202)
        expect(created.body).toMatchObject({ object: "render", status: "queued" })
        expect(created.replayed).toBeUndefined()
        const replayed = yield* createRender(client, body, "order-1")
        expect(replayed.status).toBe(202)
        expect(replayed.body.id).toBe(created.body.id)
        expect(replayed.replayed).toBe("true")
        expect(replayed.requestId).not.toBe(created.requestId)
        // replays count against the creates window (contract §6.8)
        expect(replayed.rateLimit).toMatchObject({ remaining: "58" })
        // one charge for the two: one render row in the workspace (the test photo has no pixels, so the
        // runner may already have failed the render and refunded it: usage would read 0 by then)
        const sql = yield* SqlClient.SqlClient
        const charged = yield* sql<
          { readonly n: number }
        >`SELECT count(*)::int AS n FROM renders WHERE workspace_id = ${workspaceId}`
        expect(charged[0].n).toBe(1)
        expectRefusal(yield* createRender(client, { ...body, quote: "other" }, "order-1"), 409, "idempotency_conflict")
      }))

    it.effect("idempotency: a refused create is remembered too, and replayed with a fresh request id", () =>
      Effect.gen(function*() {
        const { secret } = yield* keyed()
        const client = yield* bearer(secret)
        const body = { media_id: randomUUID() }
        const first = yield* createRender(client, body, "order-2")
        expectRefusal(first, 404, "unknown_media")
        expect(first.replayed).toBeUndefined()
        const again = yield* createRender(client, body, "order-2")
        expectRefusal(again, 404, "unknown_media")
        expect(again.replayed).toBe("true")
        expect(again.requestId).not.toBe(first.requestId)
        expect(again.body.error).toEqual(first.body.error)
        expectRefusal(yield* createRender(client, { media_id: randomUUID() }, "order-2"), 409, "idempotency_conflict")
        // scoped to the key: another key may use the same value
        const other = yield* keyed()
        const fresh = yield* createRender(yield* bearer(other.secret), body, "order-2")
        expectRefusal(fresh, 404, "unknown_media")
        expect(fresh.replayed).toBeUndefined()
      }))
  }
)

layer(layerService(layerTestRequestClock), { excludeTestServices: true, timeout: "120 seconds" })(
  "Admission, in process, on a test clock",
  (it) => {
    it.effect("the rate limit: RateLimit-* on every answer, 429 with Retry-After past it, a fresh window a minute on", () =>
      Effect.gen(function*() {
        const { secret } = yield* keyed({ readsPerMinute: 2 })
        const client = yield* bearer(secret)
        const first = yield* usage(client)
        expect(first.status).toBe(200)
        expect(first.rateLimit).toEqual({ limit: "2", remaining: "1", reset: "60" })
        yield* TestClock.adjust("10 seconds")
        expect((yield* usage(client)).rateLimit).toEqual({ limit: "2", remaining: "0", reset: "50" })
        const refused = yield* usage(client)
        expectRefusal(refused, 429, "rate_limit_exceeded")
        expect(refused.retryAfter).toBe("50")
        expect(refused.rateLimit).toEqual({ limit: "2", remaining: "0", reset: "50" })
        // refused requests do not consume; the window refills a minute after its first request
        yield* TestClock.adjust("50 seconds")
        const again = yield* usage(client)
        expect(again.status).toBe(200)
        expect(again.rateLimit).toEqual({ limit: "2", remaining: "1", reset: "60" })
      }))

    it.effect("a key's expiry is decided by the request path's clock: valid until expires_at, then 401 api_key_expired", () =>
      Effect.gen(function*() {
        const expiresAt = new Date((yield* Clock.currentTimeMillis) + 60 * 60_000)
        const { secret } = yield* keyed({ expiresAt })
        const client = yield* bearer(secret)
        expect((yield* usage(client)).status).toBe(200)
        yield* TestClock.adjust("59 minutes")
        expect((yield* usage(client)).status).toBe(200)
        // the wall clock is still an hour short of expires_at; only the test clock has passed it
        yield* TestClock.adjust("1 minute")
        expectRefusal(yield* usage(client), 401, "api_key_expired")
      }))

    it.effect("an idempotency record lives 24 hours: then the same key with another body is a new request", () =>
      Effect.gen(function*() {
        const { secret } = yield* keyed()
        const client = yield* bearer(secret)
        expectRefusal(yield* createRender(client, { media_id: randomUUID() }, "order-3"), 404, "unknown_media")
        yield* TestClock.adjust("23 hours")
        expectRefusal(yield* createRender(client, { media_id: randomUUID() }, "order-3"), 409, "idempotency_conflict")
        yield* TestClock.adjust("1 hour")
        const fresh = yield* createRender(client, { media_id: randomUUID() }, "order-3")
        expectRefusal(fresh, 404, "unknown_media")
        expect(fresh.replayed).toBeUndefined()
      }))
  }
)
