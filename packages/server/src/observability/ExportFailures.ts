import type { Context as OtelContext } from "@opentelemetry/api"
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as M from "@pic2video/cluster/metrics/Metric"
import { Clock, Effect, Layer, Schedule } from "effect"

/**
 * Spans that never reach the collector (docs/operations.md, "Traces"). The OpenTelemetry SDK drops
 * them silently: an export that fails (the collector down, hung past OTEL_EXPORTER_OTLP_TIMEOUT,
 * answering 429 or 500) loses its batch, and a span that ends while the batch processor's queue is
 * full (OTEL_BSP_MAX_QUEUE_SIZE, while exports are slow) is never queued. Here both are counted in
 * `p2v_trace_export_failures_total` and `p2v_trace_spans_dropped_total`, and said in the log at
 * most once per `reportEveryMillis`, with the counts since the previous line: a collector that is
 * down fails every few seconds for as long as it is down, and one line per failure would flood the log.
 *
 * Only types are imported from the SDK: this module is loaded with the service (the metrics are
 * exported from the start, at 0), the SDK only when traces are on.
 */
const exportFailures = M.counter(
  "p2v_trace_export_failures_total",
  "Span exports to the OTLP endpoint that failed (unreachable, timed out, refused)"
).of().register()
const spansDropped = M.counter(
  "p2v_trace_spans_dropped_total",
  "Sampled spans never delivered to the OTLP endpoint (their export failed, or the export queue was full)"
).of().register()

const reportEveryMillis = 60_000

/** SpanContext's sampled flag (TraceFlags.SAMPLED), as the batch processor tests it. */
const sampledFlag = 1

/** What went wrong since the last log line. */
export class ExportFailures {
  private failed = 0
  private droppedByFailure = 0
  private droppedByQueue = 0
  private lastError: string | undefined
  /** spans handed to the batch processor and not yet to the exporter: its queue, as it counts it */
  private queued = 0
  readonly maxQueueSize: number

  constructor(maxQueueSize: number) {
    this.maxQueueSize = maxQueueSize
  }

  private exportFailed(spans: number, error: Error | undefined) {
    exportFailures.unsafeUpdate(1)
    spansDropped.unsafeUpdate(spans)
    this.failed++
    this.droppedByFailure += spans
    // the exporter's message (a status text, `connect ECONNREFUSED host:port`, a timeout), never its data
    this.lastError = error === undefined ? "no reason given" : `${error.name}: ${error.message}`.slice(0, 200)
  }

  /**
   * In front of the batch processor: a sampled span that ends while the processor's queue is full
   * is dropped by it (same size, same test), and counted here.
   */
  watch(inner: SpanProcessor): SpanProcessor {
    return {
      onStart: (span: Span, context: OtelContext) => inner.onStart(span, context),
      onEnd: (span: ReadableSpan) => {
        if ((span.spanContext().traceFlags & sampledFlag) !== 0) {
          if (this.queued >= this.maxQueueSize) {
            spansDropped.unsafeUpdate(1)
            this.droppedByQueue++
          } else {
            this.queued++
          }
        }
        inner.onEnd(span)
      },
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown()
    }
  }

  /** Between the batch processor and the exporter: a batch leaving the queue, and how its export ended. */
  exporter(inner: SpanExporter): SpanExporter {
    return {
      export: (spans, resultCallback) => {
        // the processor takes a batch off its queue right before this call
        this.queued = Math.max(0, this.queued - spans.length)
        inner.export(spans, (result) => {
          // ExportResultCode.SUCCESS
          if (result.code !== 0) this.exportFailed(spans.length, result.error)
          resultCallback(result)
        })
      },
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve()
    }
  }

  /** The line for what happened since the previous one, if anything did; counts start again. */
  takeReport(): string | undefined {
    if (this.failed === 0 && this.droppedByQueue === 0) return undefined
    const parts: Array<string> = []
    if (this.failed > 0) {
      parts.push(
        `${this.failed} span export${this.failed === 1 ? "" : "s"} to the OTLP endpoint failed ` +
          `(${this.droppedByFailure} spans lost; last: ${this.lastError})`
      )
    }
    if (this.droppedByQueue > 0) {
      parts.push(`${this.droppedByQueue} spans dropped because the export queue was full`)
    }
    this.failed = 0
    this.droppedByFailure = 0
    this.droppedByQueue = 0
    return `traces: ${parts.join("; ")} since the last report ` +
      "(at most one line a minute; counted in p2v_trace_export_failures_total and p2v_trace_spans_dropped_total)"
  }
}

/**
 * Logs what `failures` recorded, at most one line per `reportEveryMillis` (the first failure after a
 * quiet minute is said within a second). Runs while the layer's scope is open; makes no spans.
 */
export const layerReport = (failures: ExportFailures): Layer.Layer<never> => {
  let lastLine = Number.NEGATIVE_INFINITY
  const check = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    if (now - lastLine < reportEveryMillis) return
    const line = failures.takeReport()
    if (line === undefined) return
    lastLine = now
    yield* Effect.logWarning(line)
  })
  return Layer.effectDiscard(
    check.pipe(
      Effect.repeat(Schedule.spaced("1 second")),
      Effect.withTracerEnabled(false),
      Effect.forkScoped
    )
  )
}
