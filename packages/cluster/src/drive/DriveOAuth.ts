/**
 * OAuth 2.0 authorization-code flow with PKCE against the drive provider (contract §7), on top
 * of google-auth-library's `OAuth2Client` pointed at the configured endpoints.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { CodeChallengeMethod, type Credentials, OAuth2Client } from "google-auth-library"
import { createHash, randomBytes } from "node:crypto"
import { DriveConfig, type DriveConfigShape, type OAuthClientCredentials } from "./DriveConfig.ts"
import { DriveNotConfigured, InvalidGrant, ProviderRejected, type ProviderUnavailable } from "./Errors.ts"
import { describeFailure, DriveRetryPolicy, retrying, toTransient, Transient } from "./Retry.ts"
import type { Tokens } from "./Tokens.ts"

/**
 * A PKCE pair: the verifier stays server-side (with the `state`), the S256 challenge goes into
 * the authorization URL.
 *
 * @since 0.1.0
 * @category models
 */
interface Pkce {
  readonly verifier: Redacted.Redacted<string>
  readonly challenge: string
}

/**
 * @since 0.1.0
 * @category errors
 */
type OAuthError = InvalidGrant | ProviderRejected | ProviderUnavailable | DriveNotConfigured

/**
 * @since 0.1.0
 * @category models
 */
interface DriveOAuthShape {
  /** False without `GOOGLE_CLIENT_ID` / `GOOGLE_CLIENT_SECRET`; then connect answers 503. */
  readonly isConfigured: boolean
  readonly authorizationUrl: (params: {
    readonly state: string
    readonly codeChallenge: string
  }) => Effect.Effect<string, DriveNotConfigured>
  readonly newPkce: Effect.Effect<Pkce>
  readonly exchangeCode: (params: {
    readonly code: string
    readonly codeVerifier: Redacted.Redacted<string>
  }) => Effect.Effect<Tokens, OAuthError>
  /** Keeps the given refresh token unless the provider rotated it. */
  readonly refresh: (refreshToken: Redacted.Redacted<string>) => Effect.Effect<Tokens, OAuthError>
  /** An already revoked or expired token counts as revoked. */
  readonly revoke: (token: Redacted.Redacted<string>) => Effect.Effect<void, ProviderRejected | ProviderUnavailable>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class DriveOAuth extends Context.Service<DriveOAuth, DriveOAuthShape>()("@pic2video/cluster/drive/DriveOAuth") {}

/**
 * `refreshToken` / `refreshTokenNoCache` are protected; the public `refreshAccessToken` works on
 * the client's mutable `credentials` (unsafe on a shared client) and overwrites a rotated
 * refresh token with the old one. This subclass exposes the raw refresh call instead.
 */
class ProviderClient extends OAuth2Client {
  refreshWith(refreshToken: string) {
    return this.refreshTokenNoCache(refreshToken)
  }
}

const makeProviderClient = (config: DriveConfigShape) => {
  const credentials: Option.Option<OAuthClientCredentials> = config.client
  const client = new ProviderClient({
    clientId: Option.getOrUndefined(Option.map(credentials, (c) => c.id)),
    clientSecret: Option.getOrUndefined(Option.map(credentials, (c) => Redacted.value(c.secret))),
    redirectUri: config.redirectUri,
    endpoints: {
      oauth2AuthBaseUrl: config.authorizeUrl,
      oauth2TokenUrl: config.tokenUrl,
      oauth2RevokeUrl: config.revokeUrl
    },
    // Native fetch instead of gaxios' bundled node-fetch: one HTTP stack for the whole client
    // (and the one Deno has).
    transporterOptions: { fetchImplementation: (input, init) => fetch(input, init) }
  })
  // `getToken` / `refreshToken*` force gaxios' own retry (3 tries, fixed schedule) into each
  // request; switch it off so `DriveRetryPolicy` is the only retry layer.
  client.transporter.interceptors.request.add({
    resolved: async (options) => {
      options.retry = false
      options.retryConfig = { ...options.retryConfig, retry: 0 }
      return options
    }
  })
  return client
}

/**
 * RFC 7636: 32 random bytes as base64url (43 chars) and their SHA-256 as the S256 challenge.
 * (`OAuth2Client.generateCodeVerifierAsync` does the same, but types the challenge as optional.)
 *
 * @since 0.1.0
 * @category constructors
 */
const makePkce = (): Pkce => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier: Redacted.make(verifier), challenge: pkceChallenge(verifier) }
}

/**
 * @since 0.1.0
 * @category constructors
 */
const pkceChallenge = (verifier: string): string => createHash("sha256").update(verifier).digest("base64url")

const oauthFailure = (operation: string) => (error: unknown): InvalidGrant | ProviderRejected | Transient => {
  const failure = describeFailure(error)
  if (failure.code === "invalid_grant") return new InvalidGrant({ operation })
  return toTransient(failure) ?? new ProviderRejected({ operation, status: failure.status ?? 0, code: failure.code })
}

const scopesOf = (scope: string | undefined, fallback: string): ReadonlyArray<string> =>
  (scope ?? fallback).split(/\s+/).filter((s) => s.length > 0)

/**
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<DriveOAuthShape, never, DriveConfig> = Effect.gen(function*() {
  const config = yield* DriveConfig
  const client = makeProviderClient(config)

  const requireClient = Option.match(config.client, {
    onNone: () => Effect.fail(new DriveNotConfigured()),
    onSome: () => Effect.void
  })

  /** One attempt of a library call, bounded by the policy's request timeout. */
  const attempt = <A>(operation: string, call: () => Promise<A>) =>
    Effect.flatMap(DriveRetryPolicy, (policy) =>
      Effect.tryPromise({ try: call, catch: oauthFailure(operation) }).pipe(
        // The library's token calls take no AbortSignal: on timeout the request is abandoned, not cancelled.
        Effect.timeoutOrElse({
          duration: policy.requestTimeout,
          orElse: () => Effect.fail(new Transient({ reason: "timeout", status: null }))
        })
      ))

  const toTokens = (
    operation: string,
    raw: Credentials,
    previousRefreshToken: Option.Option<Redacted.Redacted<string>>
  ): Effect.Effect<Tokens, ProviderRejected> => {
    const accessToken = raw.access_token
    const refreshToken = raw.refresh_token
      ? Option.some(Redacted.make(raw.refresh_token))
      : previousRefreshToken
    if (!accessToken || Option.isNone(refreshToken)) {
      const code = accessToken ? "missing_refresh_token" : "missing_access_token"
      return Effect.fail(new ProviderRejected({ operation, status: 200, code }))
    }
    return Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => ({
      accessToken: Redacted.make(accessToken),
      refreshToken: refreshToken.value,
      // gaxios already turned `expires_in` into `expiry_date`; an answer without it gets an hour.
      expiresAt: raw.expiry_date ?? now + 3_600_000,
      scopes: scopesOf(raw.scope, config.scope)
    }))
  }

  const authorizationUrl: DriveOAuthShape["authorizationUrl"] = ({ codeChallenge, state }) =>
    Effect.as(
      requireClient,
      client.generateAuthUrl({
        response_type: "code",
        access_type: "offline",
        // Without a fresh consent Google omits the refresh token on a reconnect.
        prompt: "consent",
        scope: config.scope,
        state,
        code_challenge: codeChallenge,
        code_challenge_method: CodeChallengeMethod.S256
      })
    )

  const newPkce: DriveOAuthShape["newPkce"] = Effect.sync(makePkce)

  const exchangeCode: DriveOAuthShape["exchangeCode"] = ({ code, codeVerifier }) =>
    requireClient.pipe(
      Effect.andThen(retrying(
        "exchangeCode",
        attempt("exchangeCode", () => client.getToken({ code, codeVerifier: Redacted.value(codeVerifier) }))
      )),
      Effect.flatMap(({ tokens }) => toTokens("exchangeCode", tokens, Option.none())),
      Effect.withSpan("DriveOAuth.exchangeCode")
    )

  const refresh: DriveOAuthShape["refresh"] = (refreshToken) =>
    requireClient.pipe(
      Effect.andThen(retrying(
        "refresh",
        attempt("refresh", () => client.refreshWith(Redacted.value(refreshToken)))
      )),
      Effect.flatMap(({ tokens }) => toTokens("refresh", tokens, Option.some(refreshToken))),
      Effect.withSpan("DriveOAuth.refresh")
    )

  // Plain fetch, not `OAuth2Client.revokeToken`, so the retry policy and timeout are ours. The token
  // goes where Google documents it (`?token=`, as its client libraries send it) and in the form body
  // (RFC 7009), so a provider reading either one sees it.
  const revokeUrl = (token: string) => {
    const url = new URL(config.revokeUrl)
    url.searchParams.set("token", token)
    return url
  }
  const revoke: DriveOAuthShape["revoke"] = (token) =>
    retrying(
      "revoke",
      Effect.flatMap(DriveRetryPolicy, (policy) =>
        Effect.tryPromise({
          // Interruption (the timeout below) aborts `signal`, which cancels the request.
          try: (signal) =>
            fetch(revokeUrl(Redacted.value(token)), {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({ token: Redacted.value(token) }),
              signal
            }).then(async (response) => ({ status: response.status, body: await response.text() })),
          catch: () => new Transient({ reason: "network", status: null })
        }).pipe(
          Effect.timeoutOrElse({
            duration: policy.requestTimeout,
            orElse: () => Effect.fail(new Transient({ reason: "timeout", status: null }))
          })
        )).pipe(
          Effect.flatMap(({ body, status }): Effect.Effect<void, ProviderRejected | Transient> => {
            if (status >= 200 && status < 300) return Effect.void
            const failure = describeFailure({ response: { status, data: body } })
            // Google answers 400 invalid_token for a token that is already revoked or expired.
            if (failure.code === "invalid_token") return Effect.void
            return Effect.fail(
              toTransient(failure) ?? new ProviderRejected({ operation: "revoke", status, code: failure.code })
            )
          })
        )
    ).pipe(Effect.withSpan("DriveOAuth.revoke"))

  return {
    isConfigured: Option.isSome(config.client),
    authorizationUrl,
    newPkce,
    exchangeCode,
    refresh,
    revoke
  }
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<DriveOAuth, never, DriveConfig> = Layer.effect(DriveOAuth, make)
