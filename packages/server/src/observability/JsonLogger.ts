import { Cause, Context, Logger, References, Tracer } from "effect"

/**
 * LOG_FORMAT=json: one JSON object per line — `time`, `level`, `message`, the fiber, every log
 * annotation (`request_id` on a request's lines), `trace_id` and `span_id` when a span is active (as
 * the exported trace has them), and `cause` when there is one. Effect's own JSON logger prints log
 * spans, not trace ids; this one reads the fiber's current span.
 *
 * Nothing here decides what is logged: a secret is never a log annotation or a message in this
 * service (test/observability/logs.test.ts looks for every secret in a whole run's output).
 */
const messageOf = (message: unknown): unknown => {
  const parts = Array.isArray(message) ? message : [message]
  const text = parts.map((p) => (typeof p === "string" ? p : Cause.isCause(p) ? Cause.pretty(p) : safeString(p)))
  return text.length === 1 ? text[0] : text.join(" ")
}

const safeString = (u: unknown): string => {
  if (u instanceof Error) return `${u.name}: ${u.message}`
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

const toJson = (entry: Record<string, unknown>) => {
  try {
    return JSON.stringify(entry, (_k, v) => (typeof v === "bigint" ? v.toString() : v))
  } catch {
    return JSON.stringify({
      time: entry.time,
      level: entry.level,
      message: String(entry.message),
      log_error: "a field could not be written as JSON"
    })
  }
}

const jsonLogger = Logger.make<unknown, void>((options) => {
  const entry: Record<string, unknown> = {
    time: options.date.toISOString(),
    level: options.logLevel.toUpperCase(),
    message: messageOf(options.message),
    fiber: `#${options.fiber.id}`
  }
  const annotations = options.fiber.getRef(References.CurrentLogAnnotations)
  for (const key of Object.keys(annotations)) entry[key] = annotations[key]
  const span = Context.getOrUndefined(options.fiber.context, Tracer.ParentSpan)
  // with tracing disabled the span's ids are "noop"
  if (span !== undefined && span.traceId !== "noop") {
    entry.trace_id = span.traceId
    entry.span_id = span.spanId
  }
  if (options.cause.reasons.length > 0) entry.cause = Cause.pretty(options.cause)
  globalThis.console.log(toJson(entry))
})

/** In place of the human logger (Effect's default); spans still get their log events. */
export const layer = Logger.layer([jsonLogger, Logger.tracerLogger])
