import { Effect, References } from "effect"

/**
 * How every repository operation ends: a database that cannot be reached or a row the schema
 * refuses (the table's constraints forbid it) is a defect, which no caller can act on; and the
 * operation is a span named after it (`RendersRepo.find`), beside @effect/sql's own per-statement spans.
 *
 * Only while tracing is on (the request's reads run with it off unless traces are exported,
 * Pipeline.ts): Effect makes a span even then, a no-op one, and provides it as the parent, which
 * copies the request's whole context, and captures a stack trace for it (an Error per call).
 */
export const operation = (name: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> => {
  const dying = Effect.orDie(self)
  return Effect.flatMap(References.TracerEnabled, (traced) => traced ? Effect.withSpan(dying, name) : dying)
}
