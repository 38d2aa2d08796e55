import type { RenderErrorCode } from "./Errors.ts"
import type { RenderStatus } from "./Resources.ts"

/**
 * The render state machine as data (spec "States and transitions", decisions §3 and §6).
 * queued → processing → completed | failed; queued | processing → canceled | failed.
 * Entities call `transition`; a refused transition leaves the state as it is.
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
export const isTerminal = (s: RenderStatus): boolean => terminalStatuses.includes(s)

export const initial: RenderState = {
  status: "queued", progress: 0, errorCode: null, hasAsset: false, completed: false, refunded: false
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
        ? { ...s, progress: Number.isNaN(e.percent) ? s.progress : Math.max(s.progress, Math.min(99, Math.max(0, Math.floor(e.percent)))) }
        : undefined
    case "Finished":
      return s.status === "processing" ? { ...s, status: "completed", progress: 100, hasAsset: true, completed: true } : undefined
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
