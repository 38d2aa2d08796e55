import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Effect, FiberRef, Option, Schema } from "effect"
import type { RateLimit, Scopes } from "@pic2video/domain"
import type { Payer } from "@pic2video/cluster/services/RenderService"

/** The authenticated caller: the API key and the workspace it belongs to. */
export interface PrincipalShape {
  readonly keyId: string
  readonly workspaceId: string
  readonly scopes: ReadonlyArray<string>
  /** the key's 24-hour spend cap, read with the key (contract §3) */
  readonly spendCap24h: number | null
}

export class Principal extends Context.Tag("pic2video/Principal")<Principal, PrincipalShape>() {}

/** Who pays for what this request creates: the key, and through it its workspace. */
export const payer: Effect.Effect<Payer, never, Principal> = Effect.map(Principal, (p) => ({
  workspaceId: p.workspaceId,
  keyId: p.keyId,
  spendCap24h: p.spendCap24h
}))

/** Set by the request pipeline once the key has been verified (contract §4 steps 2–5). */
export const CurrentPrincipal = FiberRef.unsafeMake<Option.Option<PrincipalShape>>(Option.none())

/** The scope an endpoint requires, as an endpoint annotation the pipeline reads from the definition. */
export class RequiredScope extends Context.Tag("pic2video/RequiredScope")<RequiredScope, Scopes.Scope>() {}

/**
 * The rate-limit bucket an endpoint draws from (contract §4.5): a group names its default, an
 * endpoint that differs names its own. The pipeline reads it from the definition.
 */
export class RateBucket extends Context.Tag("pic2video/RateBucket")<RateBucket, RateLimit.Bucket>() {}

/** Endpoints that take an `Idempotency-Key` (contract §4.6): their outcomes are remembered and replayed. */
export class Idempotent extends Context.Tag("pic2video/Idempotent")<Idempotent, true>() {}

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
