import type { CreateIdempotency } from "@pic2video/cluster/services/RenderService"
import { Admitted } from "@pic2video/domain/api/Annotations"
import { Effect, Option } from "effect"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"

/**
 * Idempotency records (contract §4.6, §6, §7) are kept in the cluster's repository; the request
 * pipeline begins and finishes them, and hands the record to the handler that creates.
 */
export { type Begin, IdempotencyRepo } from "@pic2video/cluster/repositories/IdempotencyRecords"

/**
 * The record this request began and has yet to finish: set by the pipeline's checks (Admission,
 * inside the router), read by the pipeline around the router once the answer is known. Kept per
 * request (by the connection's request object, shared by every adjusted view of it): the checks run
 * inside the router, and what they set in the fiber's context would not be seen outside it.
 */
const pending = new WeakMap<object, number>()

export const setPending = (request: HttpServerRequest, recordId: number): void => {
  pending.set(request.source, recordId)
}

/** The record the request began, forgotten as it is read (it is finished once). */
export const takePending = (request: HttpServerRequest): number | undefined => {
  const id = pending.get(request.source)
  if (id !== undefined) pending.delete(request.source)
  return id
}

/** The create's idempotency: the header's key and the record the pipeline began for it. */
export const currentIdempotency = (key: string | undefined): Effect.Effect<CreateIdempotency | null, never, Admitted> =>
  key === undefined
    ? Effect.succeed(null)
    : Effect.map(Admitted, (a) => ({ key, recordId: Option.getOrNull(a.record) }))
