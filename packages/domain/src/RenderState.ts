import type { RenderErrorCode } from "./Errors.ts"
import type { RenderStatus } from "./Resources.ts"

/**
 * The render state machine as data (spec "States and transitions", contract §3 and §6).
 * queued → processing → completed | failed; queued | processing → canceled | failed.
 * Every change is decided with `transition` (`packages/cluster/src/services/RenderTransitions.ts`)
 * and the state it returns written with an UPDATE guarded on the state it decided from; a refused
 * transition leaves the row as it is.
 */
export interface RenderState {
  readonly status: RenderStatus
  readonly progress: number
  readonly errorCode: RenderErrorCode | null
  readonly hasAsset: boolean
  readonly completed: boolean // completed_at is set
  readonly refunded: boolean
}

export type RenderEvent =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Progressed"; readonly percent: number }
  | { readonly _tag: "Finished" }
  | { readonly _tag: "Failed"; readonly code: Exclude<RenderErrorCode, "render_canceled"> }
  | { readonly _tag: "Canceled" }

export const terminalStatuses: ReadonlyArray<RenderStatus> = ["completed", "failed", "canceled"]
/** The statuses a render can still leave: the sweeper looks at these. */
export const activeStatuses: ReadonlyArray<RenderStatus> = ["queued", "processing"]
export const isTerminal = (s: RenderStatus): boolean => terminalStatuses.includes(s)

/** Only a completed render has a file (and an `asset`). */
export const isCompleted = (s: RenderStatus): boolean => s === "completed"

/** Forward order of statuses: a render's status never moves to a lower rank. */
export const rank = (s: RenderStatus): number => (s === "queued" ? 0 : s === "processing" ? 1 : 2)

/** The percentage the renderer reports after `done` of `total` frames (the transition clamps it). */
export const percentOf = (done: number, total: number): number => (done / Math.max(1, total)) * 100

export const initial: RenderState = {
  status: "queued",
  progress: 0,
  errorCode: null,
  hasAsset: false,
  completed: false,
  refunded: false
}

/** Returns the next state, or undefined when the event is not allowed in this state. */
export const transition = (s: RenderState, e: RenderEvent): RenderState | undefined => {
  if (isTerminal(s.status)) return undefined
  switch (e._tag) {
    case "Started":
      // a rerun after a crash starts again from processing: polls never see a step backwards
      return s.status === "queued" || s.status === "processing" ? { ...s, status: "processing" } : undefined
    case "Progressed":
      // progress only moves forward, and reaches 100 only on completion
      return s.status === "processing"
        ? {
          ...s,
          progress: Number.isNaN(e.percent)
            ? s.progress
            : Math.max(s.progress, Math.min(99, Math.max(0, Math.floor(e.percent))))
        }
        : undefined
    case "Finished":
      return s.status === "processing"
        ? { ...s, status: "completed", progress: 100, hasAsset: true, completed: true }
        : undefined
    case "Failed":
      return { ...s, status: "failed", errorCode: e.code, completed: true, refunded: true }
    case "Canceled":
      return { ...s, status: "canceled", errorCode: "render_canceled", completed: true, refunded: true }
  }
}

/** The invariant every reachable state keeps: which fields each status carries. */
export const isConsistent = (s: RenderState): boolean => {
  switch (s.status) {
    case "queued":
    case "processing":
      return !s.hasAsset && s.errorCode === null && !s.completed && !s.refunded && s.progress >= 0 && s.progress < 100
    case "completed":
      return s.hasAsset && s.errorCode === null && s.completed && !s.refunded && s.progress === 100
    case "failed":
      return !s.hasAsset && s.errorCode !== null && s.errorCode !== "render_canceled" && s.completed && s.refunded
    case "canceled":
      return !s.hasAsset && s.errorCode === "render_canceled" && s.completed && s.refunded
  }
}
