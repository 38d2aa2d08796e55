import type { Errors, RateLimit, Scopes } from "@pic2video/domain"
import {
  BodyRule,
  type CurrentImport,
  Idempotent,
  RateBucket,
  ReadsRenderWithKey,
  ReplayCurrent,
  RequiredScope,
  Unauthenticated
} from "@pic2video/domain/api/Annotations"
import { Api } from "@pic2video/domain/api/Api"
import { Context, Option } from "effect"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as Multipart from "effect/http/Multipart"
import * as RouteMetrics from "./RouteMetrics.ts"

/**
 * What each endpoint of the definition declares for the request pipeline (contract §4): the scope
 * it requires, its rate bucket, whether it takes an Idempotency-Key, how its body is read, and its
 * own rules. Read from the HttpApi annotations, so an endpoint cannot be added without its scope
 * and bucket; keyed by the route the router matched (method and declared path), never matched here.
 */
export interface Route {
  readonly name: string
  readonly method: string
  readonly path: string
  /** the path as OpenAPI writes it (`/api/v1/renders/{id}`): the `http_route` of its metrics */
  readonly template: string
  readonly scope: Scopes.Scope | undefined
  /** the rate-limit bucket (contract §4.5); undefined only on public routes */
  readonly bucket: RateLimit.Bucket | undefined
  readonly public: boolean
  /** takes an Idempotency-Key (contract §4.6, §6) */
  readonly idempotent: boolean
  /** how the body is read (contract §4.7): JSON, multipart (with the endpoint's limits), or none */
  readonly body: "json" | "multipart" | "none"
  readonly multipartLimits: Option.Option<Multipart.withLimits.Options>
  /** checked on the parsed body before the schema (contract §4.8) */
  readonly bodyRule: ((body: unknown) => Errors.ApiFailure | undefined) | undefined
  /** a replayed success answers the current state read by this service (contract §7) */
  readonly replayCurrent: typeof CurrentImport | undefined
  /** the render named by the path's `id` is read with the key, in one statement */
  readonly readsRenderWithKey: boolean
}

const build = (): ReadonlyArray<Route> => {
  const routes: Array<Route> = []
  HttpApi.reflect(Api, {
    onGroup() {},
    onEndpoint({ endpoint, mergedAnnotations, middleware }) {
      const annotation = <I, S>(tag: Context.Key<I, S>) =>
        Option.getOrUndefined(Context.getOption(mergedAnnotations, tag))
      const scope = annotation(RequiredScope)
      const isPublic = [...middleware].some((m) => m.key === Unauthenticated.key)
      const bucket = annotation(RateBucket)
      if (scope === undefined && !isPublic) throw new Error(`endpoint ${endpoint.identifier} declares no scope`)
      if (bucket === undefined && !isPublic) throw new Error(`endpoint ${endpoint.identifier} declares no rate bucket`)
      let multipartLimits = Option.none<Multipart.withLimits.Options>()
      for (const { encoding } of endpoint.payload.values()) {
        if (encoding._tag === "Multipart") multipartLimits = Option.some(encoding.limits ?? {})
      }
      routes.push({
        name: endpoint.identifier,
        method: endpoint.method,
        path: endpoint.path,
        template: RouteMetrics.template(endpoint.path),
        scope,
        bucket,
        public: isPublic,
        idempotent: annotation(Idempotent) === true,
        body: endpoint.method === "GET" || endpoint.method === "DELETE"
          ? "none"
          : Option.isSome(multipartLimits)
          ? "multipart"
          : "json",
        multipartLimits,
        bodyRule: annotation(BodyRule),
        replayCurrent: annotation(ReplayCurrent),
        readsRenderWithKey: annotation(ReadsRenderWithKey) === true
      })
    }
  })
  return routes
}

export const routes = build()

const byName = new Map(routes.map((r) => [r.name, r]))

/** The endpoint the middleware runs for, by its name in the definition. */
export const forEndpoint = (name: string): Route | undefined => byName.get(name)
