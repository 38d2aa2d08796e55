import { RenderState } from "@pic2video/domain"
import type { RenderStatus } from "@pic2video/domain/Resources"
import { Effect } from "effect"
import * as M from "./Metric.ts"

/**
 * What the cluster's work looks like as metrics, recorded where the work is done (the render
 * entity, the charge, a render's transitions, the one upload path). The cluster-wide gauges
 * (backlog, shards) are sampled when /metrics is read (Gauges.ts).
 */

export const rendersCreated = M.counter("p2v_renders_created_total", "Renders accepted and charged").of().register()

/** By terminal status, counted once per render where the transition is written (RenderTransitions.ts, `apply`). */
const rendersFinished = M.each(
  RenderState.terminalStatuses,
  (status) => M.counter("p2v_renders_finished_total", "Renders that reached a terminal status").of({ status })
)

const renderQueueSeconds = M.histogram(
  "p2v_render_queue_seconds",
  "Seconds from a render's acceptance to the start of its processing (first attempt)",
  M.workBuckets
).of().register()

export const renderProcessingSeconds = M.histogram(
  "p2v_render_processing_seconds",
  "Seconds a runner spent on a render attempt, from processing to its terminal status",
  M.workBuckets
).of().register()

export const runnerRendersActive = M.gauge("p2v_runner_renders_active", "Renders this runner is executing now").of()
  .register()

export const spendCapRefusals = M.counter(
  "p2v_spend_cap_refusals_total",
  "Render creates refused by the key's 24-hour spend cap"
).of().register()

const mediaSources = ["api", "portal", "import"] as const
export type MediaSource = (typeof mediaSources)[number]
export const mediaUploaded = M.each(
  mediaSources,
  (source) =>
    M.counter("p2v_media_uploaded_total", "Photos stored in a library, by the way they came in").of({ source })
)

/**
 * A render transition as written: counts a terminal status once (the UPDATE that made it is guarded,
 * so exactly one process writes it) and observes the queue time of a first start.
 */
export const renderTransitioned = (
  before: { readonly status: RenderStatus; readonly created_at: Date },
  after: { readonly status: RenderStatus; readonly updated_at: Date }
) =>
  Effect.sync(() => {
    if (before.status === after.status) return
    if (RenderState.isTerminal(after.status)) {
      rendersFinished[after.status].unsafeUpdate(1, [])
    } else if (before.status === "queued" && after.status === "processing") {
      renderQueueSeconds.unsafeUpdate(Math.max(0, after.updated_at.getTime() - before.created_at.getTime()) / 1000, [])
    }
  })
