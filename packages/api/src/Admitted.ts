import type { CreateIdempotency } from "@pic2video/cluster/services/RenderService"
import type { Caller } from "@pic2video/domain"
import { Admitted } from "@pic2video/domain/api/Annotations"
import * as Requests from "@pic2video/domain/Requests"
import { Effect, Option, Schema } from "effect"
import { schemaFailure } from "./ErrorResponse.ts"

/** What a handler reads of what admission admitted (Admission.ts). */

/** The verified caller: the API key, its workspace (who pays for what the request creates) and its cap. */
export const caller: Effect.Effect<Caller.Caller, never, Admitted> = Effect.map(Admitted, (a) => a.caller)

/** The create's idempotency: the header's key and the record admission began for it (contract §6). */
export const idempotency = (key: string | undefined): Effect.Effect<CreateIdempotency | null, never, Admitted> =>
  key === undefined
    ? Effect.succeed(null)
    : Effect.map(Admitted, (a) => ({ key, recordId: Option.getOrNull(a.record) }))

/**
 * The request's body, decoded with the endpoint's schema (contract §4.8; a failure is 422): strictly
 * (a field not in the schema is refused), and the first problem only.
 */
export const payload = <S extends Schema.Top>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return Effect.flatMap(
    Admitted,
    (a) => Effect.mapError(decode(Option.getOrUndefined(a.body), Requests.strict), schemaFailure)
  )
}
