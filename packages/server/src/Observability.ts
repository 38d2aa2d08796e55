import { type App, ReadsTraced } from "@pic2video/api/Http"
import * as RouteMetrics from "@pic2video/api/RouteMetrics"
import { AppConfig } from "@pic2video/cluster/config/AppConfig"
import * as Gauges from "@pic2video/cluster/metrics/Gauges"
import { Clock, Config, Context, Effect, Exit, Layer, Logger, Option, Tracer as EffectTracer } from "effect"
import * as HttpServerError from "effect/http/HttpServerError"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import type { HttpServerResponse } from "effect/http/HttpServerResponse"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import { createServer } from "node:http"
import { hostname } from "node:os"
import * as ExportFailures from "./observability/ExportFailures.ts"
import { ExpositionCache } from "./observability/ExpositionCache.ts"
import * as JsonLogger from "./observability/JsonLogger.ts"
import * as ProcessMetrics from "./observability/ProcessMetrics.ts"
import * as SpanRedaction from "./observability/SpanRedaction.ts"

/**
 * What an operator sees of a process (docs/operations.md, "Observe and scale"):
 * - metrics: with METRICS_PORT, Prometheus' text format at `GET /metrics` on a listener of its own
 *   (METRICS_HOST, 127.0.0.1 by default), never on the API's port and never in /openapi.json; every
 *   Effect metric of the process, exported through OpenTelemetry's Prometheus exporter;
 * - traces: with OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT), spans over OTLP/HTTP, sampled
 *   as OTEL_TRACES_SAMPLER says, named by OTEL_SERVICE_NAME (default `pic2video-<role>`); without an
 *   endpoint no tracer is installed and the request path is as cheap as before (reads make no spans);
 * - logs: LOG_FORMAT=json writes one JSON object per line with the request and trace ids.
 * The OpenTelemetry SDK is loaded only when metrics or traces are asked for.
 */
export type Role = "all-in-one" | "api" | "runner"

const config = Config.all({
  // port of the Prometheus /metrics listener; unset: none
  metricsPort: Config.option(Config.Port("METRICS_PORT")),
  metricsHost: Config.String("METRICS_HOST").pipe(Config.withDefault("127.0.0.1")),
  logFormat: Config.Literals(["text", "json"], "LOG_FORMAT").pipe(Config.withDefault("text")),
  otlp: Config.option(Config.NonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")),
  otlpTraces: Config.option(Config.NonEmptyString("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  serviceName: Config.option(Config.NonEmptyString("OTEL_SERVICE_NAME")),
  sdkDisabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  // the batch processor's queue (the SDK's default); given to it here so the drops it makes are counted
  maxQueueSize: Config.Int("OTEL_BSP_MAX_QUEUE_SIZE").pipe(Config.withDefault(2048))
})

/** The Prometheus exposition of this process's metrics, when METRICS_PORT is set. */
class MetricsExposition extends Context.Service<
  MetricsExposition,
  Option.Option<{ readonly host: string; readonly port: number; readonly collect: () => Promise<string> }>
>()("pic2video/MetricsExposition") {}

const contentType = "text/plain; version=0.0.4; charset=utf-8"

/**
 * The process's telemetry: its logger, and (loaded on demand) the OpenTelemetry SDK with the
 * Prometheus reader and the OTLP span exporter. Provided beneath everything else, so every fiber the
 * service starts logs and traces through it.
 */
export const layerTelemetry = (role: Role) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const c = yield* config
      // text: Effect's pretty lines (as NodeRuntime.runMain wrote them in Effect 3, annotations on lines of their own)
      const logger = c.logFormat === "json"
        ? JsonLogger.layer
        : Logger.layer([Logger.consolePretty(), Logger.tracerLogger])
      const tracing = !c.sdkDisabled && (Option.isSome(c.otlp) || Option.isSome(c.otlpTraces))
      const metrics = Option.isSome(c.metricsPort)
      if (!tracing && !metrics) return Layer.mergeAll(logger, Layer.succeed(MetricsExposition, Option.none()))

      const [
        NodeSdk,
        OtelTracer,
        { PrometheusExporter, PrometheusSerializer },
        { BatchSpanProcessor },
        { OTLPTraceExporter },
        { SemanticSpanNames }
      ] = yield* Effect
        .promise(() =>
          Promise.all([
            import("@effect/opentelemetry/NodeSdk"),
            import("@effect/opentelemetry/OtelTracer"),
            import("@opentelemetry/exporter-prometheus"),
            import("@opentelemetry/sdk-trace-base"),
            import("@opentelemetry/exporter-trace-otlp-http"),
            import("./observability/SpanNames.ts")
          ])
        )
      const reader = metrics ? new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true }) : undefined
      const serializer = new PrometheusSerializer("", false, undefined, false, true)
      const sdk = NodeSdk.layer(() => ({
        // OTEL_SERVICE_NAME wins when set (a name given here would override it)
        resource: Option.isSome(c.serviceName) ? undefined : {
          serviceName: `pic2video-${role}`,
          attributes: { "service.instance.id": `${hostname()}:${process.pid}` }
        },
        metricReader: reader
      }))
      // Effect's spans become OpenTelemetry spans, exported in batches; the exporter reads the
      // OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers, timeout). Unlike @effect/opentelemetry's
      // own tracer layer, this one does not enter an OpenTelemetry context on every step of every fiber
      // while a span is open (its `context` hook, there so OpenTelemetry instrumentations of other
      // libraries see Effect's span; this service has none): that alone cost more than the spans.
      // Effect 4's Tracer takes no `context` hook at all when none is given.
      // Spans that never reach the collector are counted and logged (ExportFailures.ts).
      const failures = new ExportFailures.ExportFailures(c.maxQueueSize)
      const tracer = () =>
        Layer.effect(
          EffectTracer.Tracer,
          Effect.map(OtelTracer.make, (otel) => EffectTracer.make({ span: (options) => otel.span(options) }))
        ).pipe(
          Layer.provide(OtelTracer.layerTracer),
          Layer.provide(
            NodeSdk.layerTracerProvider(
              failures.watch(
                new BatchSpanProcessor(failures.exporter(new SemanticSpanNames(new OTLPTraceExporter())), {
                  maxQueueSize: c.maxQueueSize
                })
              )
            )
          )
        )
      const exposition = Option.map(c.metricsPort, (port) => ({
        host: c.metricsHost,
        port,
        collect: () => reader!.collect().then(({ resourceMetrics }) => serializer.serialize(resourceMetrics))
      }))
      yield* Effect.logDebug(`telemetry: metrics ${metrics ? "on" : "off"}, traces ${tracing ? "on" : "off"}`)
      return Layer.mergeAll(
        tracing ? Layer.provideMerge(tracer(), sdk) : sdk,
        logger,
        tracing ? Layer.provide(ExportFailures.layerReport(failures), logger) : Layer.empty,
        Layer.succeed(MetricsExposition, exposition),
        Layer.succeed(ReadsTraced, tracing),
        Layer.succeed(Observed, tracing ? "traces" : "metrics"),
        tracing ? Layer.succeed(SpanRenamer, renameOtelSpan(OtelTracer.currentOtelSpan)) : Layer.empty
      )
    }).pipe(Effect.orDie)
  )

/**
 * `GET /metrics` on METRICS_HOST:METRICS_PORT: samples the gauges read at scrape time (the cluster's
 * backlog, this runner's shards, the pool, the process), then writes every metric in Prometheus'
 * text format 0.0.4; every answer is rendered after its scrape arrived, at most one rendering a second,
 * shared by every scrape waiting for it (ExpositionCache.ts).
 * Anything else on that port is 404 (405 for another method on /metrics).
 */
export const layerMetricsServer = Layer.effectDiscard(Effect.gen(function*() {
  const exposition = yield* MetricsExposition
  if (Option.isNone(exposition)) return
  const { collect, host, port } = exposition.value
  const sampleCluster = yield* Gauges.makeSampler
  const sampleProcess = yield* ProcessMetrics.make
  const services = yield* Effect.context<never>()
  const clock = yield* Clock.Clock
  const now = () => Number(clock.monotonicTimeNanosUnsafe() / 1_000_000n)
  // a scrape makes no spans of its own (its backlog query would otherwise be traced every 15 s)
  const sample = () =>
    Effect.runPromiseWith(services)(Effect.withTracerEnabled(Effect.andThen(sampleProcess, sampleCluster), false))
  // rendered at most once a second, one rendering at a time, whoever scrapes how often (ExpositionCache.ts)
  const expositions = new ExpositionCache(() => sample().then(collect), {
    now,
    sleep: (millis) => Effect.runPromise(Effect.sleep(millis))
  })
  // Prometheus says how long it waits for the answer; a fifth of it is left for the body to travel
  const scrapeDeadline = (timeout: string | Array<string> | undefined) => {
    const seconds = Number(timeout)
    return typeof timeout === "string" && seconds > 0 ? now() + seconds * 800 : Number.POSITIVE_INFINITY
  }
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0]
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: metrics are at /metrics\n")
      return
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end()
      return
    }
    expositions.fresh(scrapeDeadline(req.headers["x-prometheus-scrape-timeout-seconds"])).then(
      (exposition) => {
        res.writeHead(200, {
          "content-type": contentType,
          "content-length": exposition.body.length,
          "cache-control": "no-store"
        }).end(req.method === "HEAD" ? undefined : exposition.body)
      },
      (e) =>
        res.writeHead(500, { "content-type": "text/plain" }).end(
          `metrics could not be collected: ${e instanceof Error ? e.message : String(e)}\n`
        )
    )
  })
  yield* Effect.acquireRelease(
    Effect.callback<void, Error>((resume) => {
      server.once("error", (e) => resume(Effect.fail(e)))
      server.listen(port, host, () => resume(Effect.void))
    }),
    () =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.orDie)
  yield* Effect.logInfo(`metrics at http://${host}:${port}/metrics`)
}))

/**
 * Wraps the HTTP app (API and portal): each answer is counted in
 * `http_server_request_duration_seconds` under the route its router named (RouteMetrics.ts), and,
 * when traces are exported, the request gets its server span here, as the HTTP semantic conventions
 * make it: named `{method} {route}` once routed, with the method, path, scheme, query (an allow-list
 * of parameters, secrets redacted: SpanRedaction.ts), client address, user agent (cut short), route
 * and status, and no other header (the platform's own span, never made, had every header as an
 * attribute: Pipeline.layerWithoutPlatformSpan). An incoming `traceparent` (or b3) is continued only
 * with TRACE_TRUST_INCOMING=true; by default every request starts its own trace, sampled here. A
 * process with neither metrics nor traces skips all of it.
 */
export const observed = <R>(app: App<R>): App<R> => {
  const measured = measure(app)
  const traced = serverSpan(measured)
  return Effect.withFiber((fiber) => {
    const mode = fiber.getRef(Observed)
    return mode === "off" ? app : mode === "metrics" ? measured : traced
  })
}

/** What this process's requests are observed for: nothing, metrics (METRICS_PORT), or metrics and traces. */
const Observed = Context.Reference<"off" | "metrics" | "traces">("pic2video/Observed", { defaultValue: () => "off" })

const measure = <R>(app: App<R>): App<R> =>
  Effect.clockWith((clock) => {
    const start = clock.currentTimeNanosUnsafe()
    return Effect.onExit(app, (exit) =>
      Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest)
        const route = RouteMetrics.routeOf(request) ?? RouteMetrics.unmatched
        RouteMetrics.recordRequest(
          request.method,
          route,
          statusOf(exit),
          Number(clock.currentTimeNanosUnsafe() - start) / 1e9
        )
        return Effect.void
      }))
  })

const statusOf = (exit: Exit.Exit<HttpServerResponse, unknown>) =>
  Exit.isSuccess(exit) ? exit.value.status : HttpServerError.exitResponse(exit).status

/** Renames the current OpenTelemetry span; provided only while traces are exported. */
const SpanRenamer = Context.Reference<(name: string) => Effect.Effect<void>>("pic2video/SpanRenamer", {
  defaultValue: () => () => Effect.void
})

const serverSpan = <R>(app: App<R>): App<R> =>
  Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest)
    const rename = fiber.getRef(SpanRenamer)
    const q = request.url.indexOf("?")
    return Effect.useSpan(
      request.method,
      {
        kind: "server",
        // a trace context sent by the client (traceparent, b3) is followed only when the operator
        // trusts it: otherwise anyone could force sampling, or choose the trace id
        parent: trustsIncoming(fiber.context)
          ? Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers))
          : undefined,
        root: true
      },
      (span) => {
        span.attribute("http.request.method", request.method)
        span.attribute("url.path", SpanRedaction.redactedPath(q === -1 ? request.url : request.url.slice(0, q)))
        span.attribute("url.scheme", "http")
        if (q !== -1) span.attribute("url.query", SpanRedaction.redactedQuery(request.url.slice(q + 1)))
        if (Option.isSome(request.remoteAddress)) span.attribute("client.address", request.remoteAddress.value)
        const userAgent = request.headers["user-agent"]
        if (userAgent !== undefined) span.attribute("user_agent.original", SpanRedaction.headerValue(userAgent))
        return Effect.onExit(Effect.withParentSpan(app, span), (exit) =>
          Effect.suspend(() => {
            const status = statusOf(exit)
            span.attribute("http.response.status_code", status)
            if (status >= 500) span.attribute("error.type", String(status))
            const route = RouteMetrics.routeOf(request)
            if (route === undefined) return Effect.void
            span.attribute("http.route", route)
            return Effect.withParentSpan(rename(`${request.method} ${route}`), span)
          }))
      }
    )
  })

/** TRACE_TRUST_INCOMING (AppConfig): whether a request's own trace context is continued. */
const trustsIncoming = (context: Context.Context<never>): boolean =>
  Context.getOrUndefined(context, AppConfig)?.traceTrustIncoming === true

const renameOtelSpan =
  (currentOtelSpan: Effect.Effect<{ updateName(name: string): unknown }, unknown>) => (name: string) =>
    Effect.match(currentOtelSpan, { onFailure: () => undefined, onSuccess: (span) => void span.updateName(name) })
