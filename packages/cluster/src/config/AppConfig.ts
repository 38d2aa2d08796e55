import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { availableParallelism } from "node:os"
import * as Path from "node:path"

/**
 * The service's environment (contract §1), read once through Effect's Config so every value has a
 * default and a description, and nothing else reads the environment.
 */
interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly publicBaseUrl: string
  /** whether PUBLIC_BASE_URL or PORT was given, rather than both defaulted */
  readonly publicBaseUrlGiven: boolean
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly renderConcurrency: number
  readonly renderSeconds: number
  readonly renderTimeoutSeconds: number
  /** where this process's cluster runner listens; other runners reach it there */
  readonly runnerHost: string
  readonly runnerPort: Option.Option<number>
  /**
   * TRACE_TRUST_INCOMING: whether a request's own trace context (`traceparent`, `b3`) is continued by
   * its server span. Off by default: the public listener starts a trace of its own for every
   * request, so no client can force sampling or choose a trace id; turn it on only behind a proxy
   * that sets or strips those headers (docs/operations.md, "Traces").
   */
  readonly traceTrustIncoming: boolean
  /**
   * P2V_TABLE_STATS_SECONDS: how often the request path logs the sizes of its per-key tables (verified
   * secrets, last-used writes, rate windows); 0, the default, logs none. `npm run bench:soak` sets it
   * to watch them stay bounded.
   */
  readonly tableStatsSeconds: number
}

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("pic2video/AppConfig") {}

export const config: Config.Config<AppConfigShape> = Config.all({
  // the HTTP port
  port: Config.option(Config.Int("PORT")),
  // the bind address
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  publicBaseUrl: Config.option(Config.String("PUBLIC_BASE_URL")),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault("./data")),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  renderConcurrency: Config.Int("RENDER_CONCURRENCY").pipe(
    Config.withDefault(Math.max(1, Math.floor(availableParallelism() / 2)))
  ),
  renderSeconds: Config.Number("RENDER_SECONDS").pipe(Config.withDefault(8)),
  renderTimeoutSeconds: Config.Number("RENDER_TIMEOUT_SECONDS").pipe(Config.withDefault(1200)),
  // the address other runners use to reach this one
  runnerHost: Config.String("RUNNER_HOST").pipe(Config.withDefault("127.0.0.1")),
  runnerPort: Config.option(Config.Int("RUNNER_PORT")),
  // continue an incoming traceparent/b3 (trusted clients or proxy only)
  traceTrustIncoming: Config.Boolean("TRACE_TRUST_INCOMING").pipe(Config.withDefault(false)),
  // seconds between logs of the request path's per-key table sizes (0: never)
  tableStatsSeconds: Config.Number("P2V_TABLE_STATS_SECONDS").pipe(Config.withDefault(0))
}).pipe(
  Config.map((c) => {
    const port = Option.getOrElse(c.port, () => 8080)
    return {
      ...c,
      port,
      // PUBLIC_BASE_URL is never taken from the request's Host header
      publicBaseUrl: Option.getOrElse(c.publicBaseUrl, () => `http://localhost:${port}`).replace(/\/+$/, ""),
      publicBaseUrlGiven: Option.isSome(c.publicBaseUrl) || Option.isSome(c.port),
      dataDir: Path.resolve(c.dataDir)
    }
  })
)

export const layer = Layer.effect(AppConfig, config)
export const layerWith = (overrides: Partial<AppConfigShape>) =>
  Layer.effect(AppConfig, Effect.map(config, (c) => ({ ...c, ...overrides })))
