import type { CreateIdempotency } from "@pic2video/cluster/services/RenderService"
import { Admitted } from "@pic2video/domain/api/Annotations"
import { Effect, FiberRef, Option } from "effect"

/**
 * Idempotency records (contract §4.6, §6, §7) are kept in the cluster's repository; the request
 * pipeline begins and finishes them, and hands the record to the handler that creates.
 */
export { type Begin, IdempotencyRepo } from "@pic2video/cluster/repositories/IdempotencyRecords"

/**
 * The record this request began and has yet to finish: set by the pipeline's checks (Admission,
 * inside the router), read by the pipeline around the router once the answer is known.
 */
export const Pending = FiberRef.unsafeMake<Option.Option<number>>(Option.none())

/** The create's idempotency: the header's key and the record the pipeline began for it. */
export const currentIdempotency = (key: string | undefined): Effect.Effect<CreateIdempotency | null, never, Admitted> =>
  key === undefined
    ? Effect.succeed(null)
    : Effect.map(Admitted, (a) => ({ key, recordId: Option.getOrNull(a.record) }))
