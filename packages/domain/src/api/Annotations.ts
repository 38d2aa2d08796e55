import { Context, type Effect, type Option, Schema } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import type * as Caller from "../Caller.ts"
import * as Errors from "../Errors.ts"
import type * as RateLimit from "../RateLimit.ts"
import type * as Resources from "../Resources.ts"
import type * as Scopes from "../Scopes.ts"

/**
 * What the endpoints of the API declare for the request pipeline (contract §4), and what the
 * pipeline hands their handlers. Browser-safe: the definition (Api.ts) and the client import it.
 */

/** The scope an endpoint requires (contract §4.4). */
export class RequiredScope extends Context.Service<RequiredScope, Scopes.Scope>()("pic2video/RequiredScope") {}

/**
 * The rate-limit bucket an endpoint draws from (contract §4.5): a group names its default, an
 * endpoint that differs names its own.
 */
export class RateBucket extends Context.Service<RateBucket, RateLimit.Bucket>()("pic2video/RateBucket") {}

/** Endpoints that take an `Idempotency-Key` (contract §4.6): their outcomes are remembered and replayed. */
export class Idempotent extends Context.Service<Idempotent, true>()("pic2video/Idempotent") {}

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
 * What the admission middleware admitted (contract §4 steps 2–7): the caller, the idempotency record
 * the request runs under, and the body read once.
 */
export interface AdmittedShape {
  readonly caller: Caller.Caller
  readonly record: Option.Option<number>
  /** the parsed JSON value, or the persisted multipart parts; none on an endpoint without a body */
  readonly body: Option.Option<unknown>
  /**
   * On an endpoint that ReadsRenderWithKey: the render as read with the key, in the caller's
   * workspace (undefined: it has none by that id, or the id is not a render id); undefined elsewhere.
   */
  readonly render: Resources.Render | undefined
}

export class Admitted extends Context.Service<Admitted, AdmittedShape>()("pic2video/Admitted") {}

/**
 * The error of both middlewares, and so of every handler: the domain's ApiFailure, which answers
 * itself (Errors.ts). In the document it is the body every error has, replaced by each operation's
 * own codes (OpenApiDocument.ts).
 */
export const ApiFailure = Schema.declare((u: unknown): u is Errors.ApiFailure => u instanceof Errors.ApiFailure, {
  identifier: "ApiFailure",
  httpApiStatus: 500
})

/**
 * The middleware of every group that needs an API key: it runs once the router has matched the
 * endpoint and before anything is decoded, reads the endpoint's annotations above and applies contract
 * §4 steps 2–7 (packages/api/src/Admission.ts). Declared as bearer security so the document shows how
 * to authenticate.
 */
export class Admission extends HttpApiMiddleware.Service<Admission, { provides: Admitted }>()("pic2video/Admission", {
  security: { bearer: HttpApiSecurity.bearer },
  error: ApiFailure
}) {}

/**
 * The middleware of the groups that need no key (health, the OAuth callback authenticated by its
 * state): no key is checked; a body labelled JSON is bounded in size and depth, its syntax left to
 * the endpoint (packages/api/src/Admission.ts).
 */
export class Unauthenticated extends HttpApiMiddleware.Service<Unauthenticated>()("pic2video/Unauthenticated", {
  error: ApiFailure
}) {}
