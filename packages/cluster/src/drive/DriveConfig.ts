/**
 * Where the drive integration talks to and as whom (contract §1, §7). Every endpoint is
 * overridable so tests point the client at the local drive emulator.
 *
 * @since 0.1.0
 */
import { Config, Context, Layer, Option, Redacted } from "effect"

/**
 * The OAuth client registered with the provider.
 *
 * @since 0.1.0
 * @category models
 */
export interface OAuthClientCredentials {
  readonly id: string
  readonly secret: Redacted.Redacted<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DriveConfigShape {
  /** `None` when `GOOGLE_CLIENT_ID` or `GOOGLE_CLIENT_SECRET` is unset: connect answers 503. */
  readonly client: Option.Option<OAuthClientCredentials>
  readonly authorizeUrl: string
  readonly tokenUrl: string
  readonly revokeUrl: string
  /** API root like googleapis' `rootUrl`, ending in `/`; `drive/v3/...` is appended. */
  readonly driveApiUrl: string
  /** `PUBLIC_BASE_URL` + `/oauth/cloud_drive/callback`. */
  readonly redirectUri: string
  readonly scope: string
}

/**
 * @since 0.1.0
 * @category tags
 */
export class DriveConfig
  extends Context.Service<DriveConfig, DriveConfigShape>()("@pic2video/cluster/drive/DriveConfig")
{}

/**
 * @since 0.1.0
 * @category constants
 */
const DRIVE_READONLY_SCOPE = "https://www.googleapis.com/auth/drive.readonly"

/**
 * @since 0.1.0
 * @category constants
 */
export const CALLBACK_PATH = "/oauth/cloud_drive/callback"

/**
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  authorizeUrl: "https://accounts.google.com/o/oauth2/v2/auth",
  tokenUrl: "https://oauth2.googleapis.com/token",
  revokeUrl: "https://oauth2.googleapis.com/revoke",
  driveApiUrl: "https://www.googleapis.com/",
  port: 8080
} as const

const trimTrailingSlashes = (url: string) => url.replace(/\/+$/, "")

// googleapis joins `rootUrl + "/drive/v3/..."`; a root without its trailing slash would still
// work there, but our own URL building (`new URL("drive/v3/...", root)`) needs it.
const withTrailingSlash = (url: string) => `${trimTrailingSlashes(url)}/`

/** An unset *or empty* variable counts as absent (compose files often pass `VAR=`). */
const optionalNonEmpty = <A>(config: Config.Config<A>, isEmpty: (a: A) => boolean) =>
  Config.option(config).pipe(Config.map(Option.filter((a) => !isEmpty(a))))

/** `name`: overridable so tests can use a local drive emulator */
const urlString = (name: string, fallback: string) =>
  Config.URL(name).pipe(
    Config.map((url) => url.href),
    Config.withDefault(fallback)
  )

/**
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<DriveConfigShape> = Config.all({
  // the OAuth client id and secret of the drive integration
  clientId: optionalNonEmpty(Config.String("GOOGLE_CLIENT_ID"), (s) => s.trim() === ""),
  clientSecret: optionalNonEmpty(Config.Redacted("GOOGLE_CLIENT_SECRET"), (s) => Redacted.value(s).trim() === ""),
  authorizeUrl: urlString("GOOGLE_OAUTH_AUTHORIZE_URL", defaults.authorizeUrl),
  tokenUrl: urlString("GOOGLE_OAUTH_TOKEN_URL", defaults.tokenUrl),
  revokeUrl: urlString("GOOGLE_OAUTH_REVOKE_URL", defaults.revokeUrl),
  driveApiUrl: urlString("GOOGLE_DRIVE_API_URL", defaults.driveApiUrl),
  port: Config.Port("PORT").pipe(Config.withDefault(defaults.port)),
  // the origin for the OAuth redirect URI; never taken from a request's Host header
  publicBaseUrl: Config.option(Config.URL("PUBLIC_BASE_URL"))
}).pipe(
  Config.map((env) =>
    make({
      clientId: Option.getOrUndefined(env.clientId),
      clientSecret: Option.getOrUndefined(env.clientSecret),
      authorizeUrl: env.authorizeUrl,
      tokenUrl: env.tokenUrl,
      revokeUrl: env.revokeUrl,
      driveApiUrl: env.driveApiUrl,
      publicBaseUrl: Option.match(env.publicBaseUrl, {
        onNone: () => `http://localhost:${env.port}`,
        onSome: (url) => url.href
      })
    })
  )
)

/**
 * Builds a config from plain values (tests, or a caller that already parsed its environment).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly clientId?: string | undefined
  readonly clientSecret?: Redacted.Redacted<string> | string | undefined
  readonly authorizeUrl?: string | undefined
  readonly tokenUrl?: string | undefined
  readonly revokeUrl?: string | undefined
  readonly driveApiUrl?: string | undefined
  readonly publicBaseUrl: string
}): DriveConfigShape => {
  const secret = options.clientSecret
  return {
    client: options.clientId !== undefined && secret !== undefined
      ? Option.some({ id: options.clientId, secret: Redacted.isRedacted(secret) ? secret : Redacted.make(secret) })
      : Option.none(),
    authorizeUrl: options.authorizeUrl ?? defaults.authorizeUrl,
    tokenUrl: options.tokenUrl ?? defaults.tokenUrl,
    revokeUrl: options.revokeUrl ?? defaults.revokeUrl,
    driveApiUrl: withTrailingSlash(options.driveApiUrl ?? defaults.driveApiUrl),
    redirectUri: trimTrailingSlashes(options.publicBaseUrl) + CALLBACK_PATH,
    scope: DRIVE_READONLY_SCOPE
  }
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (shape: DriveConfigShape): Layer.Layer<DriveConfig> => Layer.succeed(DriveConfig, shape)

/**
 * Reads the environment through the ambient `ConfigProvider` (never `process.env` directly).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<DriveConfig, Config.ConfigError> = Layer.effect(
  DriveConfig,
  config
)
