/**
 * Typed failures of the cloud-drive client. None of them carries a token, a code or a client
 * secret: the provider's raw error objects (gaxios errors hold request headers and form bodies)
 * are reduced to a status and the provider's error code before they become one of these.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * `GOOGLE_CLIENT_ID` / `GOOGLE_CLIENT_SECRET` are unset: the integration is off (connect answers 503).
 *
 * @since 0.1.0
 * @category errors
 */
export class DriveNotConfigured extends Schema.TaggedError<DriveNotConfigured>()("DriveNotConfigured", {}) {
  override get message() {
    return "the drive integration is not configured (GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET unset)"
  }
}

/**
 * The provider answered `invalid_grant`: the code, or the refresh token behind the connection,
 * is no longer valid. The connection must end; retrying cannot help.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidGrant extends Schema.TaggedError<InvalidGrant>()("InvalidGrant", {
  operation: Schema.String
}) {
  override get message() {
    return `${this.operation}: the provider rejected the grant (invalid_grant)`
  }
}

/**
 * Why a call still failed after its retries.
 *
 * @since 0.1.0
 * @category errors
 */
export const UnavailableReason = Schema.Literals([
  "rate_limited",
  "server_error",
  "network",
  "timeout",
  "truncated_body"
])

/**
 * @since 0.1.0
 * @category errors
 */
export type UnavailableReason = typeof UnavailableReason.Type

/**
 * Network failure, timeout, 5xx, rate limit or a truncated body, still failing after the retry
 * policy's attempts.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderUnavailable extends Schema.TaggedError<ProviderUnavailable>()("ProviderUnavailable", {
  operation: Schema.String,
  reason: UnavailableReason,
  status: Schema.NullOr(Schema.Number),
  attempts: Schema.Number
}) {
  override get message() {
    const status = this.status === null ? "" : ` (HTTP ${this.status})`
    return `${this.operation}: provider unavailable after ${this.attempts} attempt(s): ${this.reason}${status}`
  }
}

/**
 * A 4xx the client cannot recover from (invalid_client, bad request, permission denied, ...).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderRejected extends Schema.TaggedError<ProviderRejected>()("ProviderRejected", {
  operation: Schema.String,
  status: Schema.Number,
  code: Schema.String
}) {
  override get message() {
    return `${this.operation}: provider rejected the request (HTTP ${this.status}, ${this.code})`
  }
}

/**
 * The access token was refused (401) and no refresh could fix it: either no refresh was possible
 * or the refreshed token was refused too.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  operation: Schema.String
}) {
  override get message() {
    return `${this.operation}: the provider refused the access token`
  }
}

/**
 * The folder does not exist, is not accessible, is not a folder, or is trashed.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownFolder extends Schema.TaggedError<UnknownFolder>()("UnknownFolder", {
  folderId: Schema.String
}) {
  override get message() {
    return `unknown folder ${this.folderId}`
  }
}

/**
 * The file vanished (404) between listing and download.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownFile extends Schema.TaggedError<UnknownFile>()("UnknownFile", {
  fileId: Schema.String
}) {
  override get message() {
    return `unknown file ${this.fileId}`
  }
}

/**
 * The download passed `maxBytes` (declared by Content-Length or counted while streaming); it was
 * aborted at that point, never read to the end.
 *
 * @since 0.1.0
 * @category errors
 */
export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()("FileTooLarge", {
  fileId: Schema.String,
  maxBytes: Schema.Number
}) {
  override get message() {
    return `file ${this.fileId} is larger than ${this.maxBytes} bytes`
  }
}

/**
 * A stored token bundle could not be decrypted: malformed, unknown version, or tampered with /
 * encrypted under another key (GCM authentication failed).
 *
 * @since 0.1.0
 * @category errors
 */
export class TokenDecryptionFailed extends Schema.TaggedError<TokenDecryptionFailed>()("TokenDecryptionFailed", {
  reason: Schema.Literals(["malformed", "unsupported_version", "authentication_failed", "invalid_payload"])
}) {
  override get message() {
    return `stored tokens could not be decrypted: ${this.reason}`
  }
}

/**
 * `TOKEN_ENCRYPTION_KEY` or the generated key file does not hold 32 bytes of base64.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidTokenKey extends Schema.TaggedError<InvalidTokenKey>()("InvalidTokenKey", {
  source: Schema.String
}) {
  override get message() {
    return `${this.source}: expected 32 bytes, base64-encoded`
  }
}

/**
 * Every failure a drive call can end with (besides local file-system errors of `download`).
 *
 * @since 0.1.0
 * @category errors
 */
export type DriveError =
  | InvalidGrant
  | ProviderUnavailable
  | ProviderRejected
  | Unauthorized
  | DriveNotConfigured
