import { HttpApi } from "@effect/platform"
import { Context, Option } from "effect"
import type { RateLimit, Scopes } from "@pic2video/domain"
import { Api } from "./Api.ts"
import { Idempotent, PublicEndpoint, RateBucket, RequiredScope } from "./Principal.ts"

/**
 * The route table the request pipeline consults before anything else (contract §4.1): which
 * path and method exist, and what the definition's annotations say of each — the scope it requires,
 * its rate bucket, whether it takes an Idempotency-Key, whether it is public. Derived from the
 * HttpApi definition, so a new endpoint cannot be added without its scope and bucket.
 */
export interface Route {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly pattern: RegExp
  readonly scope: Scopes.Scope | undefined
  /** the rate-limit bucket (contract §4.5); undefined only on public routes */
  readonly bucket: RateLimit.Bucket | undefined
  readonly public: boolean
  /** takes an Idempotency-Key (contract §6, §7) */
  readonly idempotent: boolean
  /** how the body is read: JSON, multipart, or none */
  readonly body: "json" | "multipart" | "none"
}

const toPattern = (path: string) =>
  new RegExp(`^${path.split("/").map((s) => (s.startsWith(":") ? "([^/]+)" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}$`)

const build = (): ReadonlyArray<Route> => {
  const routes: Array<Route> = []
  HttpApi.reflect(Api, {
    onGroup() {},
    onEndpoint({ endpoint, mergedAnnotations, payloads }) {
      const scope = Option.getOrUndefined(Context.getOption(mergedAnnotations, RequiredScope))
      const isPublic = Option.isSome(Context.getOption(mergedAnnotations, PublicEndpoint))
      const bucket = Option.getOrUndefined(Context.getOption(mergedAnnotations, RateBucket))
      if (scope === undefined && !isPublic) throw new Error(`endpoint ${endpoint.name} declares no scope`)
      if (bucket === undefined && !isPublic) throw new Error(`endpoint ${endpoint.name} declares no rate bucket`)
      const multipart = [...payloads.keys()].some((contentType) => contentType.startsWith("multipart/"))
      routes.push({
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path,
        pattern: toPattern(endpoint.path),
        scope,
        bucket,
        public: isPublic,
        idempotent: Option.isSome(Context.getOption(mergedAnnotations, Idempotent)),
        body: endpoint.method === "GET" || endpoint.method === "DELETE" ? "none" : multipart ? "multipart" : "json"
      })
    }
  })
  return routes
}

export const routes = build()

/** Served outside the HttpApi groups (docs); public, GET only. */
const extraPublic = new Set(["/openapi.json", "/docs"])

export type Match =
  | { readonly _tag: "Route"; readonly route: Route }
  | { readonly _tag: "Extra" }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<string> }

/** HEAD is answered as GET (RFC 9110 §9.3.2; Node sends the head without the body). */
export const routingMethod = (method: string): string => (method === "HEAD" ? "GET" : method)

export const match = (method: string, pathname: string): Match => {
  const routed = routingMethod(method)
  if (extraPublic.has(pathname)) return routed === "GET" ? { _tag: "Extra" } : { _tag: "MethodNotAllowed", allow: ["GET"] }
  const candidates = routes.filter((r) => r.pattern.test(pathname))
  if (candidates.length === 0) return { _tag: "NotFound" }
  const route = candidates.find((r) => r.method === routed)
  return route !== undefined ? { _tag: "Route", route } : { _tag: "MethodNotAllowed", allow: [...new Set(candidates.map((r) => r.method))].sort() }
}
