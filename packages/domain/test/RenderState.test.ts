import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { prop } from "../../../test/support/prop.ts"
import {
  initial,
  isConsistent,
  isTerminal,
  type RenderEvent,
  type RenderState,
  transition
} from "../src/RenderState.ts"

/** The render state machine (spec "States and transitions", contract §6) under random event sequences. */
const allowed = new Set(["queued", "processing", "completed", "failed", "canceled"])
const edges = new Set([
  "queued>processing",
  "queued>failed",
  "queued>canceled",
  "processing>processing",
  "processing>completed",
  "processing>failed",
  "processing>canceled"
])

const percent = fc.oneof(
  fc.integer({ min: -50, max: 200 }),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }),
  fc.constantFrom(Infinity, -Infinity)
)
const event: fc.Arbitrary<RenderEvent> = fc.oneof(
  fc.constant({ _tag: "Started" } as const),
  percent.map((p) => ({ _tag: "Progressed", percent: p }) as const),
  fc.constant({ _tag: "Finished" } as const),
  fc.constantFrom("render_failed" as const, "render_timeout" as const, "render_rejected" as const).map((code) =>
    ({ _tag: "Failed", code }) as const
  ),
  fc.constant({ _tag: "Canceled" } as const)
)

const replay = (
  events: ReadonlyArray<RenderEvent>,
  check: (before: RenderState, e: RenderEvent, after: RenderState | undefined) => void
) => {
  let s = initial
  for (const e of events) {
    const next = transition(s, e)
    check(s, e, next)
    if (next !== undefined) s = next
  }
  return s
}

describe("RenderState", () => {
  it("starts queued, consistent", () => {
    expect(initial.status).toBe("queued")
    expect(isConsistent(initial)).toBe(true)
  })

  prop("random event sequences stay in the allowed set, along allowed edges, always consistent", [
    fc.array(event, { maxLength: 40 })
  ], ([events]) => {
    replay(events, (before, e, after) => {
      if (after === undefined) return
      expect(allowed.has(after.status)).toBe(true)
      expect(
        edges.has(`${before.status}>${after.status}`) || before.status === after.status,
        `${before.status} -${e._tag}-> ${after.status}`
      ).toBe(true)
      expect(isConsistent(after), JSON.stringify({ before, e, after })).toBe(true)
      // progress never moves backwards
      expect(after.progress).toBeGreaterThanOrEqual(before.progress)
    })
  })

  prop("a terminal state never changes", [fc.array(event, { maxLength: 40 })], ([events]) => {
    replay(events, (before, _e, after) => {
      if (isTerminal(before.status)) expect(after).toBeUndefined()
    })
  })

  prop("progress is 100 exactly when completed", [fc.array(event, { maxLength: 40 })], ([events]) => {
    const s = replay(events, () => {})
    expect(s.progress === 100).toBe(s.status === "completed")
  })

  prop("NaN progress reports do not break the invariant", [fc.array(event, { maxLength: 10 })], ([events]) => {
    const s = replay([{ _tag: "Started" }, ...events, { _tag: "Progressed", percent: Number.NaN }], () => {})
    expect(isConsistent(s), JSON.stringify(s)).toBe(true)
  })
})
