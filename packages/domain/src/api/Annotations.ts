import { Context, type Effect, type Option, Schema } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import * as Errors from "../Errors.ts"
import type * as RateLimit from "../RateLimit.ts"
import type * as Resources from "../Resources.ts"
import type * as Scopes from "../Scopes.ts"

/**
 * What the endpoints of the API declare for the request pipeline (contract §4), and what the
 * pipeline hands their handlers. Browser-safe: the definition (Api.ts) and the client import it.
 */

/** The authenticated caller: the API key and the workspace it belongs to. */
export interface PrincipalShape {
  readonly keyId: string
  readonly workspaceId: string
  readonly scopes: ReadonlyArray<string>
  /** the key's 24-hour spend cap, read with the key (contract §3) */
  readonly spendCap24h: number | null
}

/** The scope an endpoint requires (contract §4.4). */
export class RequiredScope extends Context.Service<RequiredScope, Scopes.Scope>()("pic2video/RequiredScope") {}

/**
 * The rate-limit bucket an endpoint draws from (contract §4.5): a group names its default, an
 * endpoint that differs names its own.
 */
export class RateBucket extends Context.Service<RateBucket, RateLimit.Bucket>()("pic2video/RateBucket") {}

/** Endpoints that take an `Idempotency-Key` (contract §4.6): their outcomes are remembered and replayed. */
export class Idempotent extends Context.Service<Idempotent, true>()("pic2video/Idempotent") {}

/** Endpoints that need no key (health, the OAuth callback authenticated by its state). */
export class PublicEndpoint extends Context.Service<PublicEndpoint, true>()("pic2video/PublicEndpoint") {}

/**
 * A rule on the parsed JSON body that answers before the schema does (contract §4.8: an
 * `unsupported_render_type` is named rather than reported as a field error).
 */
export class BodyRule
  extends Context.Service<BodyRule, (body: unknown) => Errors.ApiFailure | undefined>()("pic2video/BodyRule")
{}

/** Reads what a remembered success created, as it is now (undefined: gone; the stored answer stands). */
export interface CurrentState {
  readonly current: (workspaceId: string, stored: unknown) => Effect.Effect<unknown>
}

/** The import a remembered import create named, in its creation shape, as it is now. */
export class CurrentImport extends Context.Service<CurrentImport, CurrentState>()("pic2video/CurrentImport") {}

/**
 * A replayed success of this endpoint answers the current state of what it created, read by the
 * service under the tag named here, instead of the stored body (contract §7: an import create).
 */
export class ReplayCurrent extends Context.Service<ReplayCurrent, typeof CurrentImport>()("pic2video/ReplayCurrent") {}

/**
 * The render the path's `id` names is read in the same statement as the caller's key (contract
 * §14): a poll is one database round trip. The checks are unchanged (the key, its gates, the scope
 * and the rate limit decide first); the handler answers from what that statement read.
 */
export class ReadsRenderWithKey extends Context.Service<ReadsRenderWithKey, true>()("pic2video/ReadsRenderWithKey") {}

/**
 * What the request pipeline admitted (contract §4 steps 2–7): the caller (none on a public
 * endpoint), the idempotency record the request runs under, and the body read once.
 */
export interface AdmittedShape {
  readonly principal: Option.Option<PrincipalShape>
  readonly record: Option.Option<number>
  /** the parsed JSON value, or the persisted multipart parts; none on an endpoint without a body */
  readonly body: Option.Option<unknown>
  /**
   * On an endpoint that ReadsRenderWithKey: the render as read with the key, in the caller's
   * workspace (undefined: it has none by that id, or the id is not a render id); none elsewhere.
   */
  readonly render: Option.Option<Resources.Render | undefined>
}

export class Admitted extends Context.Service<Admitted, AdmittedShape>()("pic2video/Admitted") {}

/**
 * Handlers fail with the domain's ApiFailure; the request pipeline turns it into the error body
 * before HttpApi's own encoder would see it. Declared as the error of the middleware every group has
 * (Effect 4 has no API-wide error), so handler types check; in the document it is the body every
 * error has, replaced by each operation's own codes (OpenApiDocument.ts).
 */
export const ApiFailure = Schema.declare((u: unknown): u is Errors.ApiFailure => u instanceof Errors.ApiFailure, {
  identifier: "ApiFailure",
  httpApiStatus: 500
})

/**
 * The one middleware of every group: it runs once the router has matched the endpoint and before
 * anything is decoded, reads the endpoint's annotations above and applies contract §4 steps 2–7
 * (packages/api/src/Pipeline.ts). Declared as bearer security so the document shows how to authenticate.
 */
export class Admission extends HttpApiMiddleware.Service<Admission, { provides: Admitted }>()("pic2video/Admission", {
  security: { bearer: HttpApiSecurity.bearer },
  error: ApiFailure
}) {}
