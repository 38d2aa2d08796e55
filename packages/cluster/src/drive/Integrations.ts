import { Errors } from "@pic2video/domain"
import {
  Config,
  Context,
  Data,
  DateTime,
  Duration,
  Effect,
  Layer,
  Option,
  Predicate,
  Redacted,
  Result,
  Schema
} from "effect"
import type { PlatformError } from "effect/PlatformError"
import { createHash, randomBytes } from "node:crypto"
import { IntegrationsRepo } from "../repositories/IntegrationsRepo.ts"
import { DriveApi, type DriveFile, type DriveFolder, type DriveSession, type FolderPage } from "./DriveApi.ts"
import { DriveOAuth } from "./DriveOAuth.ts"
import type { DriveError, FileTooLarge, InvalidGrant, Unauthorized, UnknownFile, UnknownFolder } from "./Errors.ts"
import { defaults as retryDefaults, DriveRetryPolicy, type DriveRetryPolicyShape } from "./Retry.ts"
import { TokenCipher } from "./TokenCipher.ts"
import type { Tokens } from "./Tokens.ts"

/**
 * The workspace's drive connection, stored in PostgreSQL (contract §7):
 *
 * - `connect` makes a single-use `state` (only its SHA-256 is stored, bound to the workspace, valid
 *   10 minutes) and a PKCE pair whose verifier is stored encrypted beside it.
 * - The callback consumes the state (one conditional UPDATE: of two racing callbacks one wins),
 *   exchanges the code, and stores the tokens encrypted with `TokenCipher` (associated data = the
 *   workspace id, so a row pasted into another workspace does not decrypt). A new consent replaces
 *   the tokens of an existing connection.
 * - Sessions persist refreshed tokens; the provider answering `invalid_grant` ends the connection.
 *
 * Tokens exist in plaintext only in memory, inside `Redacted` values: no document, log line or
 * error built here carries one.
 */

const stateTtlMillis = 10 * 60_000

/** The connection is gone (never made, disconnected, ended by the provider, or unreadable). */
export class NotConnected extends Data.TaggedError("NotConnected") {}

/**
 * What a drive call on a connection can fail with. `InvalidGrant` has already ended the connection
 * and, like a token the provider refuses even after a refresh (`Unauthorized`), it surfaces as
 * `NotConnected`.
 */
export type ConnectionError = Exclude<DriveError, InvalidGrant | Unauthorized> | NotConnected

/** One workspace's drive session (see `DriveSession`), with the connection's own failures. */
export interface Connection {
  readonly listFolders: (
    params: Parameters<DriveSession["listFolders"]>[0]
  ) => Effect.Effect<FolderPage, UnknownFolder | ConnectionError>
  readonly getFolder: (folderId: string) => Effect.Effect<DriveFolder, UnknownFolder | ConnectionError>
  readonly listChildren: (folderId: string) => Effect.Effect<ReadonlyArray<DriveFile>, UnknownFolder | ConnectionError>
  readonly download: (
    fileId: string,
    options: Parameters<DriveSession["download"]>[1]
  ) => Effect.Effect<{ readonly bytes: number }, FileTooLarge | UnknownFile | ConnectionError | PlatformError>
}

interface IntegrationStatus {
  readonly connected: boolean
  readonly connectedAt: Date | null
  readonly scopes: ReadonlyArray<string>
}

/** How a callback ended; the HTTP handler turns it into a small HTML page. */
export type CallbackOutcome =
  & (
    | { readonly _tag: "Connected" }
    /** bad, reused or expired state: nothing was changed */
    | { readonly _tag: "InvalidState" }
    /** the user declined, or the provider refused the code: the state is spent, the connection unchanged */
    | { readonly _tag: "Refused" }
    | { readonly _tag: "Unavailable" }
  )
  & {
    /** the `returnTo` the flow was started with (only a claimed state has one) */
    readonly returnTo?: string
  }

interface IntegrationsShape {
  readonly status: (workspaceId: string) => Effect.Effect<IntegrationStatus>
  /**
   * 503 `service_unavailable` when the OAuth client is not configured. `returnTo` (a path of this
   * service, e.g. the portal's drive page) is where the callback sends the browser afterwards.
   */
  readonly startConnect: (
    workspaceId: string,
    options?: { readonly returnTo?: string }
  ) => Effect.Effect<{ readonly authorizationUrl: string; readonly expiresAt: Date }, Errors.ApiFailure>
  readonly completeConnect: (params: {
    readonly state: string | undefined
    readonly code: string | undefined
    readonly error: string | undefined
  }) => Effect.Effect<CallbackOutcome>
  /** Revokes at the provider (best effort) and forgets the tokens; 409 when nothing is connected. */
  readonly disconnect: (workspaceId: string) => Effect.Effect<void, Errors.ApiFailure>
  readonly open: (workspaceId: string) => Effect.Effect<Connection, NotConnected>
}

export class Integrations extends Context.Service<Integrations, IntegrationsShape>()("pic2video/Integrations") {}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** Associated data of a stored PKCE verifier: its state and workspace. */
const verifierAad = (stateHash: string, workspaceId: string) => `oauth_state:${stateHash}:${workspaceId}`

export const make = Effect.gen(function*() {
  const repo = yield* IntegrationsRepo
  const cipher = yield* TokenCipher
  const oauth = yield* DriveOAuth
  const drive = yield* DriveApi
  // Drive calls read the policy from their fiber; pin the one this service was built with.
  const policy = yield* DriveRetryPolicy
  const withPolicy = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.provideService(effect, DriveRetryPolicy, policy)

  const load = repo.find

  const status: IntegrationsShape["status"] = (workspaceId) =>
    Effect.map(load(workspaceId), (row) =>
      row === undefined
        ? { connected: false, connectedAt: null, scopes: [] }
        : { connected: true, connectedAt: row.connected_at, scopes: row.scopes })

  const startConnect: IntegrationsShape["startConnect"] = (workspaceId, options) =>
    Effect.gen(function*() {
      if (!oauth.isConfigured) {
        return yield* Effect.fail(
          Errors.fail("service_unavailable", "the drive integration is not configured on this service")
        )
      }
      const state = randomBytes(32).toString("base64url")
      const stateHash = sha256(state)
      const pkce = yield* oauth.newPkce
      const authorizationUrl = yield* oauth.authorizationUrl({ state, codeChallenge: pkce.challenge }).pipe(
        Effect.mapError(() =>
          Errors.fail("service_unavailable", "the drive integration is not configured on this service")
        )
      )
      const verifier = yield* cipher.encrypt(Redacted.value(pkce.verifier), verifierAad(stateHash, workspaceId))
      const now = yield* DateTime.nowAsDate
      const expiresAt = new Date(now.getTime() + stateTtlMillis)
      yield* repo.addState({
        state_hash: stateHash,
        workspace_id: workspaceId,
        verifier_ciphertext: verifier,
        expires_at: expiresAt,
        return_to: options?.returnTo ?? null
      }, now)
      return { authorizationUrl, expiresAt }
    }).pipe(Effect.withSpan("Integrations.startConnect"))

  const completeConnect: IntegrationsShape["completeConnect"] = ({ code, error, state }) =>
    Effect.gen(function*() {
      if (state === undefined || state.length === 0 || state.length > 200) return { _tag: "InvalidState" } as const
      const stateHash = sha256(state)
      // single use: only the first callback with a live state gets the row
      const claimed = yield* repo.claimState(stateHash, yield* DateTime.nowAsDate)
      if (claimed === undefined) return { _tag: "InvalidState" } as const
      const back = claimed.return_to === null ? {} : { returnTo: claimed.return_to }
      if (error !== undefined || code === undefined || code.length === 0) return { _tag: "Refused", ...back } as const
      const verifier = yield* cipher.decrypt(claimed.verifier_ciphertext, verifierAad(stateHash, claimed.workspace_id))
        .pipe(
          Effect.option
        )
      if (Option.isNone(verifier)) return { _tag: "Refused", ...back } as const
      const exchanged = yield* withPolicy(oauth.exchangeCode({ code, codeVerifier: Redacted.make(verifier.value) }))
        .pipe(
          Effect.result
        )
      if (Result.isFailure(exchanged)) {
        yield* Effect.logWarning(`drive consent could not be completed: ${exchanged.failure.message}`)
        return exchanged.failure._tag === "ProviderUnavailable" || exchanged.failure._tag === "DriveNotConfigured"
          ? { _tag: "Unavailable", ...back } as const
          : { _tag: "Refused", ...back } as const
      }
      const tokens = exchanged.success
      const ciphertext = yield* cipher.encryptTokens(tokens, claimed.workspace_id)
      // a new consent replaces the tokens of an existing connection
      yield* repo.connect(claimed.workspace_id, { ciphertext, scopes: tokens.scopes }, yield* DateTime.nowAsDate)
      return { _tag: "Connected", ...back } as const
    }).pipe(Effect.withSpan("Integrations.completeConnect"))

  const disconnect: IntegrationsShape["disconnect"] = (workspaceId) =>
    Effect.gen(function*() {
      const row = yield* load(workspaceId)
      if (row === undefined) {
        return yield* Effect.fail(Errors.fail("integration_not_connected", "no drive is connected to this workspace"))
      }
      const tokens = yield* cipher.decryptTokens(row.tokens_ciphertext, workspaceId).pipe(Effect.option)
      if (Option.isSome(tokens)) {
        // Revoking the refresh token revokes the whole grant. Whatever the provider says, the
        // tokens are forgotten below; a provider that keeps failing holds the answer 5 s at most.
        yield* withPolicy(oauth.revoke(tokens.value.refreshToken)).pipe(
          Effect.timeout("5 seconds"),
          Effect.catch((e) =>
            Effect.logWarning(`drive token revocation failed; the tokens are forgotten anyway: ${String(e)}`)
          )
        )
      }
      yield* repo.disconnect(workspaceId)
    }).pipe(Effect.withSpan("Integrations.disconnect"))

  const open: IntegrationsShape["open"] = (workspaceId) =>
    Effect.gen(function*() {
      const row = yield* load(workspaceId)
      if (row === undefined) return yield* Effect.fail(new NotConnected())
      const decrypted = yield* cipher.openTokens(row.tokens_ciphertext, workspaceId).pipe(Effect.result)
      if (Result.isFailure(decrypted)) {
        yield* Effect.logError(
          `the stored drive tokens of workspace ${workspaceId} cannot be decrypted (${decrypted.failure.reason}); is TOKEN_ENCRYPTION_KEY the one they were stored with?`
        )
        return yield* Effect.fail(new NotConnected())
      }
      // Writes are tied to this connection: after a reconnect (new connected_at) or a disconnect a
      // late refresh of the old session changes nothing.
      const connection = { workspaceId, connectedAt: row.connected_at }
      const persist = (fresh: Tokens) =>
        Effect.gen(function*() {
          const ciphertext = yield* cipher.encryptTokens(fresh, workspaceId)
          yield* repo.saveTokens(connection, { ciphertext, scopes: fresh.scopes }, yield* DateTime.nowAsDate)
        })
      const end = repo.end(connection).pipe(
        Effect.andThen(
          Effect.logWarning(`the drive provider ended the connection of workspace ${workspaceId} (invalid_grant)`)
        )
      )
      // a rotation's window: tokens stored under the previous key are stored again under the current one
      if (decrypted.success.underPrevious) yield* persist(decrypted.success.tokens)
      const session = yield* drive.session({ tokens: decrypted.success.tokens, onRefresh: persist })

      /** invalid_grant: the grant is over, so is the connection; a refused token is reported as not connected. */
      const guard = <A, E>(effect: Effect.Effect<A, E>) =>
        withPolicy(effect).pipe(
          Effect.catchIf(
            (e): e is Extract<E, InvalidGrant | Unauthorized> =>
              Predicate.isTagged(e, "InvalidGrant") || Predicate.isTagged(e, "Unauthorized"),
            (e) => Effect.andThen(e._tag === "InvalidGrant" ? end : Effect.void, Effect.fail(new NotConnected()))
          )
        )

      return {
        listFolders: (params) => guard(session.listFolders(params)),
        getFolder: (folderId) => guard(session.getFolder(folderId)),
        listChildren: (folderId) => guard(session.listChildren(folderId)),
        download: (fileId, options) => guard(session.download(fileId, options))
      } satisfies Connection
    })

  return { status, startConnect, completeConnect, disconnect, open } satisfies IntegrationsShape
})

/**
 * `admin secrets reencrypt`: every connection's stored tokens encrypted under the current key (the
 * end of a rotation's window, before `TOKEN_ENCRYPTION_KEY_PREVIOUS` is dropped). Tokens that neither
 * key decrypts are left as they are and named: their workspaces connect the drive again.
 */
export const reencryptAll = Effect.gen(function*() {
  const repo = yield* IntegrationsRepo
  const cipher = yield* TokenCipher
  const rows = yield* repo.all
  let reencrypted = 0
  const undecryptable: Array<string> = []
  for (const row of rows) {
    const opened = yield* cipher.openTokens(row.tokens_ciphertext, row.workspace_id).pipe(Effect.option)
    if (Option.isNone(opened)) undecryptable.push(row.workspace_id)
    else if (opened.value.underPrevious) {
      const ciphertext = yield* cipher.encryptTokens(opened.value.tokens, row.workspace_id)
      // a row changed meanwhile was written by a process that encrypts under the current key already
      if (yield* repo.reencrypt(row.workspace_id, row.tokens_ciphertext, ciphertext)) reencrypted++
    }
  }
  return {
    object: "token_reencryption" as const,
    drive_connections: rows.length,
    reencrypted,
    undecryptable_workspaces: undecryptable
  }
})

/** Needs the drive client (`DriveApi`, `DriveOAuth`), `TokenCipher` and the database. */
export const layer = Layer.effect(Integrations, make)

/**
 * The drive retry policy from the environment: `DRIVE_RETRY_BASE_MS` (first backoff cap, default
 * 500) and `DRIVE_RETRY_MAX_ATTEMPTS` (attempts in all, default 5). Tests shrink the delays.
 */
const retryPolicyConfig: Config.Config<DriveRetryPolicyShape> = Config.all({
  // the first backoff cap of drive calls, in milliseconds (doubles per attempt)
  baseMs: Config.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)), "DRIVE_RETRY_BASE_MS").pipe(
    Config.withDefault(Duration.toMillis(retryDefaults.baseDelay))
  ),
  // attempts of one drive call, the first included
  maxAttempts: Config.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)), "DRIVE_RETRY_MAX_ATTEMPTS").pipe(
    Config.withDefault(retryDefaults.maxAttempts)
  )
}).pipe(
  Config.map(({ baseMs, maxAttempts }) => ({ ...retryDefaults, baseDelay: Duration.millis(baseMs), maxAttempts }))
)

export const layerRetryPolicy = Layer.effect(DriveRetryPolicy, retryPolicyConfig)

/**
 * What a client is told when a drive call made on its behalf fails (contract §7): no connection
 * is 409, a folder the drive does not know or lets us see is 404, a provider that cannot be
 * reached (after the retries) is 503.
 */
export const toApiFailure = (e: ConnectionError | UnknownFolder): Errors.ApiFailure => {
  switch (e._tag) {
    case "NotConnected":
      return Errors.fail("integration_not_connected", "no drive is connected to this workspace; connect it first")
    case "UnknownFolder":
      return Errors.fail(
        "unknown_folder",
        `folder ${e.folderId} was not found in the connected drive, or is not accessible`
      )
    case "ProviderRejected":
      // a drive that refuses the folder lookup itself (400: an id it cannot parse) does not know it
      return e.status === 403 || e.status === 404 ||
          (e.status === 400 && (e.operation === "getFolder" || e.operation === "listFolders"))
        ? Errors.fail("unknown_folder", "the folder is not accessible with the connected drive")
        : Errors.fail("service_unavailable", "the drive provider refused the request; retry later", { retryAfter: 5 })
    case "ProviderUnavailable":
    case "DriveNotConfigured":
      return Errors.fail("service_unavailable", "the drive provider cannot be reached right now; retry later", {
        retryAfter: 5
      })
  }
}
