import * as M from "@pic2video/cluster/metrics/Metric"
import { Errors, RateLimit } from "@pic2video/domain"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"

/**
 * The HTTP side of the service's metrics (docs/operations.md, "Observe and scale"): request
 * duration per route template, error bodies by code, idempotency outcomes, rate-limit refusals.
 *
 * The route a request matched is named by whoever routed it, as a template (`/api/v1/renders/{id}`,
 * `/portal/renders/{id}`): the API's middleware once its router matched (Admission.ts), the
 * portal's own table (Portal.ts). A request nothing routed is `unmatched`: the raw path never becomes
 * a label. The HTTP server records the duration once the answer is sent (server/Observability.ts).
 */
export const unmatched = "unmatched"

/**
 * The matched route's template, set by the code that routed the request; undefined: nothing did.
 * Kept per request (by the connection's own request object, which every adjusted view of the
 * request shares), not in the fiber's context: the router sets it deep inside the handling and the
 * server reads it once the answer is known, outside (Effect 4's context is not writable outwards).
 */
const routes = new WeakMap<object, string>()

export const setRoute = (request: HttpServerRequest, template: string): void => {
  routes.set(request.source, template)
}

export const routeOf = (request: HttpServerRequest): string | undefined => routes.get(request.source)

/** `/api/v1/renders/:id` (the router's form) as OpenAPI writes it: `/api/v1/renders/{id}`. */
export const template = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

const duration = M.histogram(
  "http_server_request_duration_seconds",
  "Seconds from a request's arrival to its answer, by method, route template and status",
  M.latencyBuckets
)

/** Request methods that are their own label value; any other is `_OTHER` (OpenTelemetry's rule). */
const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])

type Histogram = M.Series<number>
// bound once per (method, route, status) seen: a lookup per request, never a key built and hashed
const series = new Map<string, Map<number, Histogram>>()

export const recordRequest = (method: string, route: string, status: number, seconds: number) => {
  const m = knownMethods.has(method) ? method : "_OTHER"
  const key = `${m} ${route}`
  let byStatus = series.get(key)
  if (byStatus === undefined) series.set(key, byStatus = new Map())
  let h = byStatus.get(status)
  if (h === undefined) {
    h = duration.of({ http_request_method: m, http_route: route, http_response_status_code: String(status) })
    byStatus.set(status, h)
  }
  h.unsafeUpdate(seconds, [])
}

const refusals = M.each(
  Errors.errorCodes,
  (code) => M.counter("p2v_api_refusals_total", "Error bodies the API sent, by their contract code").of({ code })
)

/** One error body sent (the API's error shape, whatever answered it). */
export const refused = (code: Errors.ErrorCode) => refusals[code].unsafeUpdate(1, [])

export const idempotency = M.each(
  ["new", "replayed", "conflict", "in_progress"] as const,
  (outcome) =>
    M.counter("p2v_idempotency_total", "Requests sent with an Idempotency-Key, by what the key decided").of({ outcome })
)

/** The API's per-key buckets (contract §4.5) and the portal's per-workspace window. */
export const rateLimited = M.each(
  [...RateLimit.buckets, "portal"] as const,
  (bucket) => M.counter("p2v_rate_limited_total", "Requests refused by a rate limit, by bucket").of({ bucket })
)

const protocolErrors = M.counter(
  "p2v_http_protocol_errors_total",
  "Requests Node's HTTP parser could not read (answered 400 invalid_request before any route), logged or not"
).of().register()

/** One request refused by the HTTP parser (packages/server/src/ClientError.ts): counted, whatever the log's rate bound kept. */
export const protocolError = () => protocolErrors.unsafeUpdate(1, [])
