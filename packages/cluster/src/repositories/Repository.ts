import { Effect } from "effect"

/**
 * How every repository operation ends: a database that cannot be reached or a row the schema
 * refuses (the table's constraints forbid it) is a defect, which no caller can act on; and the
 * operation is a span named after it (`RendersRepo.find`), beside @effect/sql's own per-statement spans.
 */
export const operation = (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> =>
  self.pipe(Effect.orDie, Effect.withSpan(name))
