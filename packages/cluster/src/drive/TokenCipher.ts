/**
 * Encryption at rest of drive token bundles (contract §1 `TOKEN_ENCRYPTION_KEY`): AES-256-GCM,
 * one random 12-byte IV per message, the 16-byte tag checked on decryption.
 *
 * Wire format, base64url of: `version (1 byte = 1) | IV (12) | tag (16) | ciphertext`.
 * The version byte and the caller's associated data (e.g. the workspace id, so one workspace's
 * bundle cannot be pasted into another's row) are authenticated as GCM AAD.
 *
 * @since 0.1.0
 */
import { Config, Context, Effect, FileSystem, Layer, Option, Path, Redacted, Result, Schema } from "effect"
import { Base64, Base64Url } from "effect/encoding"
import type { PlatformError } from "effect/PlatformError"
import { Buffer } from "node:buffer"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { InvalidTokenKey, TokenDecryptionFailed } from "./Errors.ts"
import { type Tokens, TokensFromJson } from "./Tokens.ts"

const VERSION = 1
const IV_BYTES = 12
const TAG_BYTES = 16
const KEY_BYTES = 32
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES

/**
 * @since 0.1.0
 * @category models
 */
interface TokenCipherShape {
  readonly encrypt: (plaintext: string, associatedData?: string) => Effect.Effect<string>
  readonly decrypt: (ciphertext: string, associatedData?: string) => Effect.Effect<string, TokenDecryptionFailed>
  readonly encryptTokens: (tokens: Tokens, associatedData?: string) => Effect.Effect<string>
  readonly decryptTokens: (ciphertext: string, associatedData?: string) => Effect.Effect<Tokens, TokenDecryptionFailed>
  /**
   * As `decryptTokens`, saying whether the bundle was encrypted under the previous key (a rotation's
   * window, `TOKEN_ENCRYPTION_KEY_PREVIOUS`): the caller then stores it again under the current one.
   */
  readonly openTokens: (
    ciphertext: string,
    associatedData?: string
  ) => Effect.Effect<{ readonly tokens: Tokens; readonly underPrevious: boolean }, TokenDecryptionFailed>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class TokenCipher
  extends Context.Service<TokenCipher, TokenCipherShape>()("@pic2video/cluster/drive/TokenCipher")
{}

const aad = (associatedData: string | undefined) =>
  Buffer.concat([Buffer.of(VERSION), Buffer.from(associatedData ?? "", "utf8")])

/**
 * Parses a base64 / base64url key; `undefined` unless it is exactly 32 bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseKey = (text: string): Redacted.Redacted<Uint8Array> | undefined => {
  const trimmed = text.trim()
  const decoded = Result.orElse(Base64.decode(trimmed), () => Base64Url.decode(trimmed))
  return Result.isSuccess(decoded) && decoded.success.length === KEY_BYTES ? Redacted.make(decoded.success) : undefined
}

/**
 * A fresh random key, base64 (the form `TOKEN_ENCRYPTION_KEY` and the key file hold).
 *
 * @since 0.1.0
 * @category constructors
 */
export const generateKey = (): Redacted.Redacted<string> => Redacted.make(randomBytes(KEY_BYTES).toString("base64"))

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  key: Redacted.Redacted<Uint8Array>,
  previousKey?: Redacted.Redacted<Uint8Array>
): Effect.Effect<TokenCipherShape, InvalidTokenKey> =>
  Redacted.value(key).length === KEY_BYTES &&
    (previousKey === undefined || Redacted.value(previousKey).length === KEY_BYTES)
    ? Effect.succeed(unsafeMake(Redacted.value(key), previousKey && Redacted.value(previousKey)))
    : Effect.fail(new InvalidTokenKey({ source: "key" }))

const unsafeMake = (keyBytes: Uint8Array, previousKeyBytes?: Uint8Array): TokenCipherShape => {
  const encrypt: TokenCipherShape["encrypt"] = (plaintext, associatedData) =>
    Effect.sync(() => {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", keyBytes, iv, { authTagLength: TAG_BYTES })
      cipher.setAAD(aad(associatedData))
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      return Buffer.concat([Buffer.of(VERSION), iv, cipher.getAuthTag(), body]).toString("base64url")
    })

  const decryptUnder = (key: Uint8Array, bytes: Uint8Array, associatedData: string | undefined) =>
    Effect.try({
      try: () => {
        const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(1, 1 + IV_BYTES), {
          authTagLength: TAG_BYTES
        })
        decipher.setAAD(aad(associatedData))
        decipher.setAuthTag(bytes.subarray(1 + IV_BYTES, HEADER_BYTES))
        const plain = Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES)), decipher.final()])
        return plain.toString("utf8")
      },
      // Wrong key, wrong associated data and any flipped bit all fail the tag check alike.
      catch: () => new TokenDecryptionFailed({ reason: "authentication_failed" })
    })

  /** The plaintext, and whether it took the previous key. */
  const open = (ciphertext: string, associatedData: string | undefined) =>
    Effect.suspend(() => {
      const bytes = Result.getOrUndefined(Base64Url.decode(ciphertext))
      if (bytes === undefined || bytes.length < HEADER_BYTES) {
        return Effect.fail(new TokenDecryptionFailed({ reason: "malformed" }))
      }
      if (bytes[0] !== VERSION) return Effect.fail(new TokenDecryptionFailed({ reason: "unsupported_version" }))
      const underCurrent = Effect.map(decryptUnder(keyBytes, bytes, associatedData), (plain) => ({
        plain,
        underPrevious: false
      }))
      return previousKeyBytes === undefined ? underCurrent : underCurrent.pipe(
        Effect.catch(() =>
          Effect.map(decryptUnder(previousKeyBytes, bytes, associatedData), (plain) => ({ plain, underPrevious: true }))
        )
      )
    })

  const decrypt: TokenCipherShape["decrypt"] = (ciphertext, associatedData) =>
    Effect.map(open(ciphertext, associatedData), ({ plain }) => plain)

  const encodeTokens = Schema.encodeEffect(TokensFromJson)
  const decodeTokens = Schema.decodeEffect(TokensFromJson)

  return {
    encrypt,
    decrypt,
    encryptTokens: (tokens, associatedData) =>
      encodeTokens(tokens).pipe(
        // Encoding a value of the schema's own type cannot fail.
        Effect.orDie,
        Effect.flatMap((json) => encrypt(json, associatedData))
      ),
    decryptTokens: (ciphertext, associatedData) =>
      decrypt(ciphertext, associatedData).pipe(
        Effect.flatMap((json) =>
          Effect.mapError(decodeTokens(json), () => new TokenDecryptionFailed({ reason: "invalid_payload" }))
        )
      ),
    openTokens: (ciphertext, associatedData) =>
      open(ciphertext, associatedData).pipe(
        Effect.flatMap(({ plain, underPrevious }) =>
          decodeTokens(plain).pipe(
            Effect.map((tokens) => ({ tokens, underPrevious })),
            Effect.mapError(() => new TokenDecryptionFailed({ reason: "invalid_payload" }))
          )
        )
      )
  }
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = (key: Redacted.Redacted<Uint8Array>): Layer.Layer<TokenCipher, InvalidTokenKey> =>
  Layer.effect(TokenCipher, make(key))

/**
 * Loads the key file, creating it (mode 0600, in a 0700 directory) with a random key the first
 * time. Creation is race-free: the key is written to a private temp file and hard-linked into
 * place, which fails if another process got there first, whose key then wins.
 *
 * @since 0.1.0
 * @category constructors
 */
export const loadOrCreateKeyFile = (
  keyPath: string
): Effect.Effect<Redacted.Redacted<Uint8Array>, InvalidTokenKey | PlatformError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    if (!(yield* fs.exists(keyPath))) {
      yield* fs.makeDirectory(path.dirname(keyPath), { recursive: true, mode: 0o700 })
      const temp = `${keyPath}.${randomBytes(6).toString("hex")}.tmp`
      yield* fs.writeFileString(temp, `${Redacted.value(generateKey())}\n`, { flag: "wx", mode: 0o600 })
      yield* fs.link(temp, keyPath).pipe(
        Effect.catchIf((e) => e.reason._tag === "AlreadyExists", () => Effect.void),
        Effect.ensuring(Effect.ignore(fs.remove(temp, { force: true })))
      )
    }
    const key = parseKey(yield* fs.readFileString(keyPath))
    return key ?? (yield* Effect.fail(new InvalidTokenKey({ source: keyPath })))
  })

/**
 * @since 0.1.0
 * @category layers
 */
const layerKeyFile = (
  keyPath: string
): Layer.Layer<TokenCipher, InvalidTokenKey | PlatformError, FileSystem.FileSystem | Path.Path> =>
  Layer.unwrap(Effect.map(loadOrCreateKeyFile(keyPath), layer))

/**
 * `TOKEN_ENCRYPTION_KEY` when set, else the key generated once into
 * `${DATA_DIR}/secrets/token-encryption.key` (`DATA_DIR` defaults to `./data`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<
  TokenCipher,
  Config.ConfigError | InvalidTokenKey | PlatformError,
  FileSystem.FileSystem | Path.Path
> = Layer.unwrap(
  Effect.gen(function*() {
    const envKey = yield* Config.option(Config.Redacted("TOKEN_ENCRYPTION_KEY"))
    const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
    const path = yield* Path.Path
    return Option.match(Option.filter(envKey, (k) => Redacted.value(k).trim() !== ""), {
      onNone: () => layerKeyFile(path.join(dataDir, "secrets", "token-encryption.key")),
      onSome: (text) => {
        const key = parseKey(Redacted.value(text))
        return key === undefined
          ? Layer.unwrap(Effect.fail(new InvalidTokenKey({ source: "TOKEN_ENCRYPTION_KEY" })))
          : layer(key)
      }
    })
  })
)
