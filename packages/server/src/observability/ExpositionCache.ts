import * as M from "@pic2video/cluster/metrics/Metric"
import { Buffer } from "node:buffer"

/** Renderings so far: scrapes answered by one rendering carry the same number. */
const renderings = M.counter(
  "p2v_metrics_renderings_total",
  "Expositions of this process rendered for /metrics (at most one a second, however often it is scraped)"
).of().register()

interface Exposition {
  readonly body: Buffer
  /** when its rendering started (the caller's monotonic clock, ms) */
  readonly renderedAt: number
  /** how long its rendering took (ms) */
  readonly tookMillis: number
}

/**
 * The /metrics answer, rendered at most once per `minIntervalMillis` and never twice at once
 * (docs/operations.md, "Observe and scale"). A rendering samples the gauges (the backlog's query
 * among them) and serializes every series on the process's one event loop; a client scraping in a
 * tight loop made one per scrape and took that loop from the API (4,245 polls per 8 s down to 99).
 * Every scrape is answered by a rendering that started after the scrape arrived, so it shows all that
 * happened before it was sent (a test reading a counter right after a request sees the request):
 * scrapes that arrive together share one; a scrape within `minIntervalMillis` of the last rendering's
 * start waits for the next one, which every scrape waiting then shares.
 *
 * A scrape that says by when it must be answered (Prometheus sends its scrape timeout) and would miss
 * that by waiting gets the latest rendering instead, at most a second old: a scraper with a 1 s timeout
 * that arrives just after another scraper's rendering began would otherwise fail (`up` 0, RunnerDown).
 */
export class ExpositionCache {
  private last: Exposition | undefined
  private rendering: { readonly startedAt: number; readonly done: Promise<Exposition> } | undefined
  private readonly render: () => Promise<string>
  private readonly now: () => number
  private readonly sleep: (millis: number) => Promise<void>
  private readonly minIntervalMillis: number

  /** `now`, `sleep`: the process's Clock (monotonic milliseconds) */
  constructor(
    render: () => Promise<string>,
    clock: { readonly now: () => number; readonly sleep: (millis: number) => Promise<void> },
    minIntervalMillis = 1_000
  ) {
    this.render = render
    this.now = clock.now
    this.sleep = clock.sleep
    this.minIntervalMillis = minIntervalMillis
  }

  /** A new rendering, shared by every scrape that arrives while it is made. */
  private start(): Promise<Exposition> {
    // aged from the start: the gauges are sampled first, so the body is as old as its start
    const startedAt = this.now()
    // counted before the gauges are sampled: each body carries its own rendering's number
    renderings.unsafeUpdate(1, [])
    // a failed rendering is not kept: the scrapes sharing it fail, the next one tries again
    const done = this.render().then((text) =>
      this.last = { body: Buffer.from(text), renderedAt: startedAt, tookMillis: this.now() - startedAt }
    )
      .finally(() => {
        this.rendering = undefined
      })
    this.rendering = { startedAt, done }
    return done
  }

  /**
   * The answer to a scrape arriving now: a rendering that starts at or after this moment, or, when
   * waiting for one would miss `deadline` (the caller's clock, ms), the latest.
   */
  async fresh(deadline = Number.POSITIVE_INFINITY): Promise<Exposition> {
    const arrivedAt = this.now()
    for (;;) {
      const rendering = this.rendering
      if (rendering !== undefined) {
        if (rendering.startedAt >= arrivedAt) return rendering.done
        // begun before this scrape: it may miss what the scraper just did; the next one will not
        await rendering.done.catch(() => undefined)
        continue
      }
      const last = this.last
      const wait = last === undefined ? 0 : last.renderedAt + this.minIntervalMillis - this.now()
      if (wait <= 0) return this.start()
      if (last !== undefined && this.now() + wait + last.tookMillis > deadline) return last
      await this.sleep(wait)
    }
  }
}
