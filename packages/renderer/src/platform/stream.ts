import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, type Scope, type Stream } from "effect"
import type { Readable } from "node:stream"

/** A Node Readable fed by an Effect Stream (pull-based); destroyed, and its fiber interrupted, on scope close. */
export const toReadable = <E, R>(stream: Stream.Stream<Uint8Array, E, R>): Effect.Effect<Readable, never, R | Scope.Scope> =>
  Effect.acquireRelease(NodeStream.toReadable(stream), (r) => Effect.sync(() => r.destroy()))
