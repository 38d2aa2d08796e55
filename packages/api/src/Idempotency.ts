import type { CreateIdempotency } from "@pic2video/cluster/services/RenderService"
import { Effect, FiberRef, Option } from "effect"

/**
 * Idempotency records (contract §4.6, §6, §7) are kept in the cluster's repository; the request
 * pipeline begins and finishes them, and hands the record to the handler that creates.
 */
export { begin, type Begin, finish } from "@pic2video/cluster/repositories/IdempotencyRecords"

/** The record the current request runs under, for the handler that charges (render) or creates (import). */
export const CurrentRecord = FiberRef.unsafeMake<Option.Option<number>>(Option.none())

/** The create's idempotency: the header's key and the record the pipeline began for it. */
export const currentIdempotency = (key: string | undefined): Effect.Effect<CreateIdempotency | null> =>
  key === undefined
    ? Effect.succeed(null)
    : Effect.map(FiberRef.get(CurrentRecord), (record) => ({ key, recordId: Option.getOrNull(record) }))
