import { Context, Metric } from "effect"

/**
 * How the service declares its Prometheus metrics (docs/operations.md, "Observe and scale"): Effect
 * metrics, exported by the process's /metrics listener (packages/server/src/Observability.ts).
 *
 * Names follow Prometheus' rules: snake_case, the base unit in the name (`_seconds`, `_bytes`), and
 * counters are `incremental`, which is what makes the exporter write them as counters with `_total`
 * (a plain Effect counter is exported as a gauge). No `unit`/`time_unit` tag: it would stay on every
 * series as a label.
 *
 * Every labelled series is bound once, here or at start, to its own metric (its labels given as
 * the metric's attributes): updating it is a direct write. `Metric.withAttributes` would rebuild
 * and hash the key on every update, which the request path cannot pay.
 * Label values come from fixed sets only: never an id, a key or a workspace.
 */
export type Labels = Readonly<Record<string, string>>

/**
 * Updates made outside an effect write to the default metric registry, which is the one the
 * exporter reads (nothing in the service provides another).
 */
const context = Context.empty()

/** One series: a metric with its labels fixed when it is made, so its registry key is computed once. */
export interface Series<in Input> {
  readonly metric: Metric.Metric<Input, unknown>
  /** a direct write; the second argument is v3's extra tags, always none here */
  readonly unsafeUpdate: (input: Input, extra?: ReadonlyArray<never>) => void
  /** puts the series in the registry now, so it is exported from the start (at 0) */
  readonly register: () => Series<Input>
}

const series = <Input>(metric: Metric.Metric<Input, unknown>): Series<Input> => {
  const self: Series<Input> = {
    metric,
    unsafeUpdate: (input) => metric.updateUnsafe(input, context),
    register: () => {
      metric.valueUnsafe(context)
      return self
    }
  }
  return self
}

/** A counter family; `.of(labels)` is one series (bind once, update often). */
export const counter = (name: string, description: string) => ({
  of: (labels: Labels = {}) => series(Metric.counter(name, { description, incremental: true, attributes: labels }))
})

export const gauge = (name: string, description: string) => ({
  of: (labels: Labels = {}) => series(Metric.gauge(name, { description, attributes: labels }))
})

export const histogram = (name: string, description: string, boundaries: ReadonlyArray<number>) => {
  const buckets = Metric.boundariesFromIterable(boundaries)
  return {
    of: (labels: Labels = {}) =>
      series(Metric.histogram(name, { description, boundaries: buckets, attributes: labels }))
  }
}

/** One series per value of a fixed set, bound at once (so each is exported from the start, at 0). */
export function each<K extends string, M extends { register(): M }>(
  values: ReadonlyArray<K>,
  make: (value: K) => M
): Record<K, M>
// the entries are exactly `values`, so the record has every key of K (Object.fromEntries cannot say so)
export function each<M extends { register(): M }>(
  values: ReadonlyArray<string>,
  make: (value: string) => M
): Record<string, M> {
  return Object.fromEntries(values.map((v) => [v, make(v).register()]))
}

/** Seconds: request latency buckets (5 ms … 10 s). */
export const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** Seconds: work that takes seconds to minutes (a render waiting for a runner, a render running). */
export const workBuckets = [0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200]
