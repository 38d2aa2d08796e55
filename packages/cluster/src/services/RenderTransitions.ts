import { type Errors, RenderState } from "@pic2video/domain"
import { DateTime, Effect } from "effect"
import * as WorkMetrics from "../metrics/WorkMetrics.ts"
import { type Asset, type RenderRow, RendersRepo } from "../repositories/RendersRepo.ts"

/**
 * A render's transitions, as its owners make them (the Render entity, the sweeper, `cancel`): each
 * is decided by the domain's state machine (`RenderState.transition`) on the row as read, and
 * written with an UPDATE guarded on that very state, so a change decided on a stale read writes
 * nothing and is decided again. A transition into a refunded state gives the allowance back in
 * the same transaction.
 */

/** The state machine's view of a row. */
export const stateOf = (r: RenderRow): RenderState.RenderState => ({
  status: r.status,
  progress: r.progress,
  errorCode: r.error_code,
  hasAsset: r.asset_blob_key !== null,
  completed: r.completed_at !== null,
  refunded: r.refunded_at !== null
})

/** What a transition writes besides the state: the message of an error, the finished file. */
type Change =
  | { readonly event: { readonly _tag: "Started" } | { readonly _tag: "Progressed"; readonly percent: number } }
  | { readonly event: { readonly _tag: "Finished" }; readonly asset: Asset }
  | {
    readonly event: Extract<RenderState.RenderEvent, { readonly _tag: "Failed" | "Canceled" }>
    readonly message: string
  }

type Applied =
  | { readonly _tag: "Applied"; readonly row: RenderRow }
  /** the state machine refused the event in the row's state (or there is no such render): nothing written */
  | { readonly _tag: "Refused"; readonly row: RenderRow | undefined }

const decide = (id: string, change: Change): Effect.Effect<Applied, never, RendersRepo> =>
  Effect.gen(function*() {
    const renders = yield* RendersRepo
    const current = yield* renders.byId(id)
    if (current === undefined) return { _tag: "Refused", row: undefined } satisfies Applied
    const next = RenderState.transition(stateOf(current), change.event)
    if (next === undefined) return { _tag: "Refused", row: current } satisfies Applied
    const now = yield* DateTime.nowAsDate
    const written = yield* renders.writeState(current, {
      status: next.status,
      progress: next.progress,
      errorCode: next.errorCode,
      errorMessage: "message" in change ? change.message : current.error_message,
      completedAt: next.completed ? current.completed_at ?? now : null,
      refundedAt: next.refunded ? current.refunded_at ?? now : null,
      attempts: current.attempts + (change.event._tag === "Started" ? 1 : 0),
      updatedAt: now,
      asset: "asset" in change ? change.asset : undefined,
      refund: next.refunded && current.refunded_at === null
    })
    // the row moved on since it was read: decide again on what it is now
    if (written === undefined) return yield* decide(id, change)
    yield* WorkMetrics.renderTransitioned(current, written)
    return { _tag: "Applied", row: written } satisfies Applied
  })

/** Applies one event to a render (see above); progress, written every half second while a render runs, has no span. */
const apply = (id: string, change: Change): Effect.Effect<Applied, never, RendersRepo> =>
  change.event._tag === "Progressed"
    ? decide(id, change)
    // the span keeps the name operators know it by (docs/operations.md, "Traces")
    : Effect.withSpan(decide(id, change), "RendersRepo.apply", {
      attributes: { "p2v.render.event": change.event._tag },
      captureStackTrace: false
    })

const appliedRow = (a: Applied) => (a._tag === "Applied" ? a.row : undefined)

/** Moves a render into processing (a rerun after a crash stays in processing); undefined when it may not run. */
export const markProcessing = (id: string) => Effect.map(apply(id, { event: { _tag: "Started" } }), appliedRow)

/** Records progress; false when the render is no longer processing (canceled meanwhile). */
export const recordProgress = (id: string, percent: number) =>
  Effect.map(apply(id, { event: { _tag: "Progressed", percent } }), (a) => a._tag === "Applied")

/** Completes a render with its stored files; false when it is no longer processing. */
export const complete = (id: string, asset: Asset) =>
  Effect.map(apply(id, { event: { _tag: "Finished" }, asset }), (a) => a._tag === "Applied")

/**
 * Ends a render as failed or canceled and refunds it (allowance and spend cap), in one
 * transaction; a render already terminal is left as it is. Returns the row when it changed.
 */
export const endUnsuccessfully = (id: string, code: Errors.RenderErrorCode, message: string) =>
  Effect.map(
    apply(id, { event: code === "render_canceled" ? { _tag: "Canceled" } : { _tag: "Failed", code }, message }),
    appliedRow
  )
