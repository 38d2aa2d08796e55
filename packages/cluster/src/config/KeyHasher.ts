import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto"
import { AppConfig } from "./AppConfig.ts"
import { loadOrCreateSecret } from "./Secrets.ts"

/**
 * API key secrets are stored as HMAC-SHA256 under a server-side key (API_KEY_HASH_KEY, else
 * generated into DATA_DIR), so a copy of the database alone cannot be used to test guesses.
 */
export interface KeyHasherShape {
  readonly hash: (secret: string) => Uint8Array
  /** constant time in the secret; `stored` undefined still does the work, so unknown keys time alike */
  readonly verify: (secret: string, stored: Uint8Array | undefined) => boolean
}

export class KeyHasher extends Context.Service<KeyHasher, KeyHasherShape>()("pic2video/KeyHasher") {}

export const make = (key: Uint8Array): KeyHasherShape => {
  // a KeyObject made once: an HMAC from raw key bytes builds one per call (3–5× the cost)
  const keyObject = createSecretKey(key)
  const hash = (secret: string) => new Uint8Array(createHmac("sha256", keyObject).update(secret).digest())
  const decoy = hash("decoy")
  return {
    hash,
    verify: (secret, stored) => {
      const actual = hash(secret)
      const expected = stored !== undefined && stored.length === actual.length ? stored : decoy
      return timingSafeEqual(actual, expected) && stored !== undefined
    }
  }
}

export const layer = Layer.effect(
  KeyHasher,
  Effect.gen(function*() {
    const { dataDir } = yield* AppConfig
    const fromEnv = yield* Config.option(Config.Redacted("API_KEY_HASH_KEY"))
    return make(
      yield* loadOrCreateSecret(dataDir, "api-key-hash.key", Option.getOrUndefined(Option.map(fromEnv, Redacted.value)))
    )
  })
)
