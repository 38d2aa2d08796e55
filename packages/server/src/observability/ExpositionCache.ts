import * as M from "@pic2video/cluster/metrics/Metric"
import { Buffer } from "node:buffer"

/** Renderings so far: a body seen twice was served from the cache. */
const renderings = M.counter(
  "p2v_metrics_renderings_total",
  "Expositions of this process rendered for /metrics (at most one a second, however often it is scraped)"
).of().register()

export interface Exposition {
  readonly body: Buffer
  /** when its rendering started (the caller's monotonic clock, ms) */
  readonly renderedAt: number
}

/**
 * The /metrics answer, rendered at most once per `maxAgeMillis` and never twice at once
 * (docs/operations.md, "Observe and scale"). A rendering samples the gauges (the backlog's query
 * among them) and serializes every series on the process's one event loop; a client scraping in a
 * tight loop made one per scrape and took that loop from the API (4,245 polls per 8 s down to 99).
 * Scrapes that arrive while a rendering is made share it; later ones within `maxAgeMillis` of its
 * start get its bytes as they are, so an answer is never older than that. `after` also bounds what
 * a client scraping back to back costs in between: a connection is sent each rendering once, and a
 * rendering is sent from the cache at most `maxServed` times; a scrape past either waits for the next
 * rendering (Prometheus, scraping every few seconds, never does).
 */
export class ExpositionCache {
  private cached: Exposition | undefined
  /** answers of `cached` sent from the cache (those that shared its making not counted) */
  private served = 0
  private rendering: Promise<Exposition> | undefined
  private readonly render: () => Promise<string>
  private readonly now: () => number
  private readonly sleep: (millis: number) => Promise<void>
  private readonly maxAgeMillis: number
  private readonly maxServed: number

  /** `now`, `sleep`: the process's Clock (monotonic milliseconds) */
  constructor(
    render: () => Promise<string>,
    clock: { readonly now: () => number; readonly sleep: (millis: number) => Promise<void> },
    limits: { readonly maxAgeMillis: number; readonly maxServed: number } = { maxAgeMillis: 1_000, maxServed: 16 }
  ) {
    this.render = render
    this.now = clock.now
    this.sleep = clock.sleep
    this.maxAgeMillis = limits.maxAgeMillis
    this.maxServed = limits.maxServed
  }

  /** The cached rendering while it is young enough to send. */
  private current(): Exposition | undefined {
    const cached = this.cached
    return cached !== undefined && this.now() - cached.renderedAt < this.maxAgeMillis ? cached : undefined
  }

  /** The cached rendering, or the one being made, or a new one. */
  get(): Promise<Exposition> {
    const cached = this.current()
    if (cached !== undefined) return Promise.resolve(cached)
    if (this.rendering !== undefined) return this.rendering
    // aged from the start: the gauges are sampled first, so the body is as old as its start
    const renderedAt = this.now()
    // counted before the gauges are sampled: each body carries its own rendering's number
    renderings.unsafeUpdate(1, [])
    // a failed rendering is not cached: the scrapes sharing it fail, the next one tries again
    const rendering = this.render().then((text) => {
      this.served = 0
      return this.cached = { body: Buffer.from(text), renderedAt }
    }).finally(() => {
      this.rendering = undefined
    })
    this.rendering = rendering
    return rendering
  }

  /**
   * The answer to one scrape from a client that was last sent `previous`: the cached rendering
   * unless this client has it or it was sent `maxServed` times already, else the next one (made
   * now, or shared, or waited for until the cached one is `maxAgeMillis` old).
   */
  async after(previous: Exposition | undefined): Promise<Exposition> {
    for (;;) {
      const cached = this.current()
      if (cached === undefined) return this.get()
      if (cached !== previous && this.served < this.maxServed) {
        this.served++
        return cached
      }
      await this.sleep(Math.max(1, cached.renderedAt + this.maxAgeMillis - this.now()))
    }
  }
}
