import {
  Cause,
  Context,
  Effect,
  FiberId,
  FiberRef,
  FiberRefs,
  HashMap,
  HashSet,
  Layer,
  Logger,
  Option,
  Tracer
} from "effect"

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

export const jsonLogger = Logger.make<unknown, void>((options) => {
  const entry: Record<string, unknown> = {
    time: options.date.toISOString(),
    level: options.logLevel.label,
    message: messageOf(options.message),
    fiber: FiberId.threadName(options.fiberId)
  }
  for (const [key, value] of HashMap.toEntries(options.annotations)) entry[key] = value
  const span = Context.getOption(FiberRefs.getOrDefault(options.context, FiberRef.currentContext), Tracer.ParentSpan)
  // with tracing disabled the span's ids are "noop"
  if (Option.isSome(span) && span.value.traceId !== "noop") {
    entry.trace_id = span.value.traceId
    entry.span_id = span.value.spanId
  }
  if (!Cause.isEmpty(options.cause)) entry.cause = Cause.pretty(options.cause, { renderErrorCause: true })
  globalThis.console.log(toJson(entry))
})

/** In place of the human loggers: Effect's default, and the pretty one NodeRuntime.runMain puts in its stead. */
export const layer = Layer.scopedDiscard(
  Effect.locallyScopedWith(
    FiberRef.currentLoggers,
    (loggers) =>
      loggers.pipe(
        HashSet.remove(Logger.defaultLogger),
        HashSet.remove(Logger.prettyLoggerDefault),
        HashSet.add(jsonLogger)
      )
  )
)
