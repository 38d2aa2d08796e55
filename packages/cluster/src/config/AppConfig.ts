import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { availableParallelism } from "node:os"
import * as Path from "node:path"

/**
 * The service's environment (contract §1), read once through Effect's Config so every value has a
 * default and a description, and nothing else reads the environment.
 */
export interface AppConfigShape {
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
}

export class AppConfig extends Context.Tag("pic2video/AppConfig")<AppConfig, AppConfigShape>() {}

export const config: Config.Config<AppConfigShape> = Config.all({
  port: Config.option(Config.integer("PORT").pipe(Config.withDescription("HTTP port"))),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1"), Config.withDescription("bind address")),
  publicBaseUrl: Config.option(Config.string("PUBLIC_BASE_URL")),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  renderConcurrency: Config.integer("RENDER_CONCURRENCY").pipe(
    Config.withDefault(Math.max(1, Math.floor(availableParallelism() / 2)))
  ),
  renderSeconds: Config.number("RENDER_SECONDS").pipe(Config.withDefault(8)),
  renderTimeoutSeconds: Config.number("RENDER_TIMEOUT_SECONDS").pipe(Config.withDefault(1200)),
  runnerHost: Config.string("RUNNER_HOST").pipe(
    Config.withDefault("127.0.0.1"),
    Config.withDescription("address other runners use to reach this one")
  ),
  runnerPort: Config.option(Config.integer("RUNNER_PORT"))
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
