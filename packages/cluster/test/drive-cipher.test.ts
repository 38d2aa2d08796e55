import { NodeServices } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Redacted, Result } from "effect"
import { Base64Url } from "effect/encoding"
import * as fc from "fast-check"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as TokenCipher from "../src/drive/TokenCipher.ts"
import type { Tokens } from "../src/drive/Tokens.ts"

const keyOf = (seed: number) => Redacted.make(new Uint8Array(32).map((_, i) => (i * 31 + seed) & 0xff))
const cipher = Effect.runSync(TokenCipher.make(keyOf(1)))
const otherCipher = Effect.runSync(TokenCipher.make(keyOf(2)))

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "token-cipher-"))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

const bytesOf = (text: string) => Result.getOrThrow(Base64Url.decode(text))
const textOf = (bytes: Uint8Array) => Base64Url.encode(bytes)

/**
 * A property over fast-check arbitraries, as Effect 3's `it.prop` ran it (@effect/vitest 4's takes
 * only Effect's own Arbitrary, and effect no longer ships fast-check).
 */
const prop = <const Ts extends ReadonlyArray<unknown>>(
  name: string,
  arbitraries: { readonly [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  body: (values: Ts) => void
) =>
  it(name, () =>
    fc.assert(
      fc.property(
        fc.tuple(...(arbitraries as ReadonlyArray<fc.Arbitrary<unknown>>)),
        (values: ReadonlyArray<unknown>) => {
          body(values as unknown as Ts)
        }
      )
    ))

describe("TokenCipher", () => {
  prop(
    "decrypt(encrypt(x)) === x, for any text and associated data",
    [fc.string({ unit: "binary", maxLength: 2000 }), fc.option(fc.string({ maxLength: 40 }), { nil: undefined })],
    ([plaintext, associatedData]) => {
      const sealed = Effect.runSync(cipher.encrypt(plaintext, associatedData))
      expect(Effect.runSync(cipher.decrypt(sealed, associatedData))).toBe(plaintext)
    }
  )

  prop(
    "layout: version byte 1, 12-byte IV, 16-byte tag, then as many bytes as the plaintext",
    [fc.string({ maxLength: 200 })],
    ([plaintext]) => {
      const bytes = bytesOf(Effect.runSync(cipher.encrypt(plaintext)))
      expect(bytes[0]).toBe(1)
      expect(bytes.length).toBe(1 + 12 + 16 + Buffer.byteLength(plaintext, "utf8"))
    }
  )

  prop(
    "any flipped bit is detected",
    [fc.string({ minLength: 1, maxLength: 300 }), fc.nat(), fc.integer({ min: 0, max: 7 })],
    ([plaintext, position, bit]) => {
      const bytes = bytesOf(Effect.runSync(cipher.encrypt(plaintext)))
      const index = position % bytes.length
      bytes[index] ^= 1 << bit
      const exit = Effect.runSyncExit(cipher.decrypt(textOf(bytes)))
      expect(Exit.isFailure(exit)).toBe(true)
    }
  )

  prop(
    "truncated or extended ciphertexts are refused",
    [fc.string({ maxLength: 100 }), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 })],
    ([plaintext, cut, extra]) => {
      const bytes = bytesOf(Effect.runSync(cipher.encrypt(plaintext)))
      const shorter = bytes.subarray(0, cut % bytes.length)
      expect(Exit.isFailure(Effect.runSyncExit(cipher.decrypt(textOf(shorter))))).toBe(true)
      const longer = new Uint8Array([...bytes, ...extra])
      expect(Exit.isFailure(Effect.runSyncExit(cipher.decrypt(textOf(longer))))).toBe(true)
    }
  )

  it.effect("another key, other associated data, another version or garbage fail with a reason", () =>
    Effect.gen(function*() {
      const sealed = yield* cipher.encrypt("secret", "ws_1")
      const reasons = yield* Effect.all([
        Effect.flip(otherCipher.decrypt(sealed, "ws_1")),
        Effect.flip(cipher.decrypt(sealed, "ws_2")),
        Effect.flip(cipher.decrypt(textOf(new Uint8Array([2, ...bytesOf(sealed).subarray(1)])), "ws_1")),
        Effect.flip(cipher.decrypt("not base64 !!", "ws_1")),
        Effect.flip(cipher.decrypt("AQID", "ws_1"))
      ])
      expect(reasons.map((e) => e.reason)).toEqual([
        "authentication_failed",
        "authentication_failed",
        "unsupported_version",
        "malformed",
        "malformed"
      ])
    }))

  it.effect("encrypts token bundles; the stored text holds no token", () =>
    Effect.gen(function*() {
      const tokens: Tokens = {
        accessToken: Redacted.make("ya29.access-token-value"),
        refreshToken: Redacted.make("1//refresh-token-value"),
        expiresAt: 1_800_000_000_000,
        scopes: ["https://www.googleapis.com/auth/drive.readonly"]
      }
      const sealed = yield* cipher.encryptTokens(tokens, "ws_1")
      expect(sealed).not.toContain("ya29")
      expect(Buffer.from(bytesOf(sealed)).toString("latin1")).not.toContain("refresh-token-value")
      const opened = yield* cipher.decryptTokens(sealed, "ws_1")
      expect(Redacted.value(opened.accessToken)).toBe("ya29.access-token-value")
      expect(Redacted.value(opened.refreshToken)).toBe("1//refresh-token-value")
      expect(opened.expiresAt).toBe(tokens.expiresAt)
      expect(opened.scopes).toEqual(tokens.scopes)
      const notTokens = yield* cipher.encrypt("{\"hello\":1}")
      expect((yield* Effect.flip(cipher.decryptTokens(notTokens))).reason).toBe("invalid_payload")
    }))

  it.effect("a key must be 32 bytes", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(TokenCipher.make(Redacted.make(new Uint8Array(16))))
      expect(error._tag).toBe("InvalidTokenKey")
      expect(TokenCipher.parseKey(Redacted.value(TokenCipher.generateKey()))).toBeDefined()
      expect(TokenCipher.parseKey(Buffer.alloc(31).toString("base64"))).toBeUndefined()
    }))
})

describe("TokenCipher key sources", () => {
  const withEnv = (env: Record<string, string>) =>
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

  const cipherFrom = (env: Record<string, string>) =>
    TokenCipher.TokenCipher.pipe(
      Effect.provide(TokenCipher.layerConfig),
      withEnv(env),
      Effect.provide(NodeServices.layer)
    )

  it.effect("without TOKEN_ENCRYPTION_KEY a key is generated once into DATA_DIR/secrets (0600)", () =>
    Effect.gen(function*() {
      const dataDir = tempDir()
      const first = yield* cipherFrom({ DATA_DIR: dataDir })
      const keyPath = join(dataDir, "secrets", "token-encryption.key")
      expect(statSync(keyPath).mode & 0o777).toBe(0o600)
      expect(statSync(join(dataDir, "secrets")).mode & 0o777).toBe(0o700)
      const keyText = readFileSync(keyPath, "utf8")
      const sealed = yield* first.encrypt("hello")
      // A restart reads the same key.
      const second = yield* cipherFrom({ DATA_DIR: dataDir })
      expect(yield* second.decrypt(sealed)).toBe("hello")
      expect(readFileSync(keyPath, "utf8")).toBe(keyText)
      // The file's key, given as TOKEN_ENCRYPTION_KEY, is the same key.
      const fromEnv = yield* cipherFrom({ DATA_DIR: tempDir(), TOKEN_ENCRYPTION_KEY: keyText.trim() })
      expect(yield* fromEnv.decrypt(sealed)).toBe("hello")
    }))

  it.effect("concurrent first starts agree on one key", () =>
    Effect.gen(function*() {
      const keyPath = join(tempDir(), "secrets", "token-encryption.key")
      const keys = yield* Effect.all(
        Array.from({ length: 6 }, () => TokenCipher.loadOrCreateKeyFile(keyPath)),
        { concurrency: "unbounded" }
      ).pipe(Effect.provide(NodeServices.layer))
      const distinct = new Set(keys.map((k) => Buffer.from(Redacted.value(k)).toString("hex")))
      expect(distinct.size).toBe(1)
    }))

  it.effect("a malformed TOKEN_ENCRYPTION_KEY is refused", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(cipherFrom({ TOKEN_ENCRYPTION_KEY: "c2hvcnQ=", DATA_DIR: tempDir() }))
      expect(exit).toMatchObject({ _tag: "Failure" })
      expect(JSON.stringify(exit)).toContain("InvalidTokenKey")
    }))
})
