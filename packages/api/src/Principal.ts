import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Effect, FiberRef, Option, Schema } from "effect"
import type { Scopes } from "@pic2video/domain"

/** The authenticated caller: the API key and the workspace it belongs to. */
export interface PrincipalShape {
  readonly keyId: string
  readonly workspaceId: string
  readonly scopes: ReadonlyArray<string>
}

export class Principal extends Context.Tag("pic2video/Principal")<Principal, PrincipalShape>() {}

/** Set by the request pipeline once the key has been verified (decisions §4 steps 2–5). */
export const CurrentPrincipal = FiberRef.unsafeMake<Option.Option<PrincipalShape>>(Option.none())

/** The scope an endpoint requires, as an endpoint annotation the pipeline reads from the definition. */
export class RequiredScope extends Context.Tag("pic2video/RequiredScope")<RequiredScope, Scopes.Scope>() {}

/** Endpoints that need no key (health, docs, the OAuth callback authenticated by its state). */
export class PublicEndpoint extends Context.Tag("pic2video/PublicEndpoint")<PublicEndpoint, true>() {}

/**
 * The security middleware of every authenticated group. The pipeline has already authenticated
 * the request before routing (it must answer 401/403/429 before the body is read), so this only
 * lifts the verified key into the handler's context, and documents bearer auth in OpenAPI.
 */
export class Authenticated extends HttpApiMiddleware.Tag<Authenticated>()("pic2video/Authenticated", {
  provides: Principal,
  security: { bearer: HttpApiSecurity.bearer },
  failure: Schema.Never
}) {}

export const authenticatedFromPipeline = Authenticated.of({
  bearer: () =>
    Effect.flatMap(FiberRef.get(CurrentPrincipal), Option.match({
      onNone: () => Effect.dieMessage("an authenticated route ran without the pipeline's principal"),
      onSome: Effect.succeed
    }))
})
