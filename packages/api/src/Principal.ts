import { HttpApiError } from "@effect/platform"
import type { Payer } from "@pic2video/cluster/services/RenderService"
import { Admitted, type PrincipalShape } from "@pic2video/domain/api/Annotations"
import { Effect, Option, Schema } from "effect"

/** What a handler reads of what the request pipeline admitted (Pipeline.ts). */

/** The verified caller of an authenticated endpoint. */
export const Principal: Effect.Effect<PrincipalShape, never, Admitted> = Effect.flatMap(
  Admitted,
  (a) =>
    Option.match(a.principal, {
      onNone: () => Effect.dieMessage("an authenticated endpoint ran without a verified key"),
      onSome: Effect.succeed
    })
)

/** Who pays for what this request creates: the key, and through it its workspace. */
export const payer: Effect.Effect<Payer, never, Admitted> = Effect.map(Principal, (p) => ({
  workspaceId: p.workspaceId,
  keyId: p.keyId,
  spendCap24h: p.spendCap24h
}))

/** The request's body, decoded with the endpoint's schema (contract §4.8; a failure is 422). */
export const payload = <A, I, R>(schema: Schema.Schema<A, I, R>) =>
  Effect.flatMap(Admitted, (a) =>
    Effect.catchTag(
      Schema.decodeUnknown(schema)(Option.getOrUndefined(a.body)),
      "ParseError",
      (e) => Effect.flatMap(HttpApiError.HttpApiDecodeError.fromParseError(e), Effect.fail)
    ))
