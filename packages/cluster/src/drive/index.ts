/**
 * Cloud-drive provider client: configuration, OAuth (code + PKCE), Drive v3 calls with retries
 * and token refresh, and encryption of stored tokens. No database: callers own persistence.
 *
 * @since 0.1.0
 */
export * as DriveApi from "./DriveApi.ts"
export * as DriveConfig from "./DriveConfig.ts"
export * as DriveErrors from "./Errors.ts"
export * as DriveOAuth from "./OAuth.ts"
export * as DriveRetry from "./Retry.ts"
export * as TokenCipher from "./TokenCipher.ts"
export * as DriveTokens from "./Tokens.ts"
