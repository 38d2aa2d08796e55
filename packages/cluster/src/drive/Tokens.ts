/**
 * The token bundle of one drive connection. Tokens are `Redacted`, so logging a value of this
 * type (or an error built from one) prints `<redacted>`; `Schema.Redacted` encodes them back to
 * plain strings only where they are meant to leave: into `TokenCipher` and onto the wire.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Tokens = Schema.Struct({
  accessToken: Schema.RedactedFromValue(Schema.String),
  refreshToken: Schema.RedactedFromValue(Schema.String),
  /** Epoch milliseconds. */
  expiresAt: Schema.Number,
  scopes: Schema.Array(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Tokens = typeof Tokens.Type

/**
 * JSON text <-> `Tokens`, the plaintext that `TokenCipher` encrypts.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TokensFromJson = Schema.fromJsonString(Tokens)
