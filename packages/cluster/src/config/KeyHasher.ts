import { Context, Effect, Layer } from "effect"
import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto"
import { InstallationSecrets } from "./InstallationSecrets.ts"

/**
 * API key secrets are stored as HMAC-SHA256 under a server-side key (API_KEY_HASH_KEY, else
 * generated into DATA_DIR), so a copy of the database alone cannot be used to test guesses.
 * During a rotation (API_KEY_HASH_KEY_PREVIOUS) a hash under the previous key verifies too, and is
 * reported as such so the caller can store the secret's hash under the current key.
 */
interface KeyHasherShape {
  readonly hash: (secret: string) => Uint8Array
  /** constant time in the secret; `stored` undefined still does the work, so unknown keys time alike */
  readonly verify: (secret: string, stored: Uint8Array | undefined) => boolean
  /** as `verify`, saying under which key `stored` was made; undefined when it does not match */
  readonly check: (secret: string, stored: Uint8Array | undefined) => "current" | "previous" | undefined
}

export class KeyHasher extends Context.Service<KeyHasher, KeyHasherShape>()("pic2video/KeyHasher") {}

const hasherOf = (key: Uint8Array) => {
  // a KeyObject made once: an HMAC from raw key bytes builds one per call (3–5× the cost)
  const keyObject = createSecretKey(key)
  const hash = (secret: string) => new Uint8Array(createHmac("sha256", keyObject).update(secret).digest())
  const decoy = hash("decoy")
  const matches = (secret: string, stored: Uint8Array | undefined) => {
    const actual = hash(secret)
    const expected = stored !== undefined && stored.length === actual.length ? stored : decoy
    return timingSafeEqual(actual, expected) && stored !== undefined
  }
  return { hash, matches }
}

export const make = (key: Uint8Array, previousKey?: Uint8Array): KeyHasherShape => {
  const current = hasherOf(key)
  const previous = previousKey === undefined ? undefined : hasherOf(previousKey)
  const check: KeyHasherShape["check"] = (secret, stored) => {
    // both are computed whenever there is a previous key: a match under either costs the same
    const underCurrent = current.matches(secret, stored)
    const underPrevious = previous !== undefined && previous.matches(secret, stored)
    return underCurrent ? "current" : underPrevious ? "previous" : undefined
  }
  return {
    hash: current.hash,
    verify: (secret, stored) => check(secret, stored) !== undefined,
    check
  }
}

export const layer = Layer.effect(
  KeyHasher,
  Effect.map(InstallationSecrets, ({ keyHash }) => make(keyHash.current, keyHash.previous))
)
