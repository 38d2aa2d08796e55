import { AppConfig } from "@pic2video/cluster/config/AppConfig"
import { KeyHasher } from "@pic2video/cluster/config/KeyHasher"
import { RateWindows } from "@pic2video/cluster/entities/RateWindows"
import { KeyAccessRepo } from "@pic2video/cluster/repositories/KeyAccessRepo"
import type { RenderRow } from "@pic2video/cluster/repositories/RendersRepo"
import { Access, ApiKeyToken, Errors } from "@pic2video/domain"
import { Clock, Context, Effect, Layer } from "effect"
import * as crypto from "node:crypto"

/**
 * contract §4.2–4.3: who is calling. Malformed, unknown and wrong-secret keys are one answer
 * (`invalid_api_key`) reached through the same work: a malformed key is still hashed and compared
 * against a decoy, so timing does not tell them apart. Revocation, expiry and the account gates are
 * read from the database on every request (one query), so a change made by any process (the
 * operator CLI, the portal) takes effect on the next request in every process (contract §14).
 */
export interface AuthenticatedKey {
  readonly keyId: string
  readonly workspaceId: string
  readonly scopes: ReadonlyArray<string>
  /** the key's 24-hour spend cap (contract §3) */
  readonly spendCap24h: number | null
  readonly limits: { readonly reads: number; readonly creates: number; readonly uploads: number }
  /** the render read with the key, when one was asked for (`withRender`): KeyAccessRepo.findKeyAccountAndRender */
  readonly render: RenderRow | undefined
}

const invalid = Errors.fail("invalid_api_key", "the API key is not valid")

/** Looked up in place of a malformed key's id, so a malformed key costs the same query (no such id). */
const decoyKeyId = "key_0000000000000000"

// last_used_at is kept without a write per request: at most one write per key per minute per process
const lastUsedEvery = 60_000

/**
 * A secret that has verified need not be verified again (contract §14): the digest of the whole
 * token maps to the stored hash it matched. It counts only while the key's row, read fresh on every
 * request, still holds that same hash, so the entry dies with the key. A wrong secret or an unknown
 * key never enters it and is verified (an HMAC) on every request, as before, the same work for
 * both. Bounded: the oldest entry makes way once it is full.
 */
const verifiedMax = 10_000
const digest: (token: string) => string = typeof crypto.hash === "function"
  ? (token) => crypto.hash("sha256", token, "base64")
  : (token) => crypto.createHash("sha256").update(token).digest("base64")

const sameBytes = (a: Uint8Array, b: Uint8Array) => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * Authenticates a request's key. Its per-key tables (verified secrets, last-used writes) live in the
 * service, one pair per composition (a process, or a test's layer). The key reads and the hasher are
 * taken once, when the layer is built, not from the request's context: providing them per request
 * copied the request's whole context (a Map of every service) twice per request.
 */
export class Authentication extends Context.Service<Authentication>()("pic2video/api/Authentication", {
  make: Effect.gen(function*() {
    const hasher = yield* KeyHasher
    const keys = yield* KeyAccessRepo
    const { tableStatsSeconds } = yield* AppConfig
    const rateWindows = yield* RateWindows
    const lastUsedFlush = new Map<string, number>()
    let lastUsedSweptAt = 0
    const verified = new Map<string, Uint8Array>()
    const statsEvery = tableStatsSeconds * 1000
    let statsAt = 0

    /**
     * Sizes of the per-key tables of the request path, logged at most every P2V_TABLE_STATS_SECONDS
     * (AppConfig) when that is set (`npm run bench:soak` watches them stay bounded).
     */
    const tableSizes = () => ({
      verifiedSecrets: verified.size,
      lastUsed: lastUsedFlush.size,
      rateWindows: rateWindows.size()
    })

    /** `withRender`: the render id the path names (null: not a render id), read in the key's statement. */
    const authenticate = (authorization: string | undefined, withRender?: string | null) =>
      Effect.gen(function*() {
        // an empty header sends no key, as much as an absent one
        if (authorization === undefined || authorization.trim() === "") {
          return yield* Effect.fail(
            Errors.fail("missing_api_key", "send the key as `Authorization: Bearer <API_KEY>`")
          )
        }
        const token = Access.bearerToken(authorization)
        const parsed = token === undefined ? undefined : ApiKeyToken.parseToken(token)
        const tokenDigest = digest(token ?? "")
        const keyId = parsed?.keyId ?? decoyKeyId
        const found = withRender === undefined
          ? { key: yield* keys.findKeyAndAccount(keyId), render: undefined }
          : yield* keys.findKeyAccountAndRender(keyId, withRender)
        const row = parsed === undefined ? undefined : found.key
        // expiry and the per-minute tables read the fiber's Clock (a TestClock in the in-process tests)
        const now = new Date(yield* Clock.currentTimeMillis)
        const known = verified.get(tokenDigest)
        if (known === undefined || row === undefined || !sameBytes(known, row.secret_hash)) {
          if (known !== undefined) verified.delete(tokenDigest)
          const matched = hasher.check(parsed?.secret ?? "", row?.secret_hash)
          if (matched === undefined || row === undefined) {
            return yield* Effect.fail(invalid)
          }
          let storedHash = row.secret_hash
          if (matched === "previous") {
            // a rotation's window: the key is stored again under the current secret (keys are only
            // stored hashed, so only their use can move them), and works once the previous one is dropped
            storedHash = hasher.hash(parsed?.secret ?? "")
            yield* keys.rehash(row.id, row.secret_hash, storedHash, now)
          }
          if (verified.size >= verifiedMax) verified.delete(verified.keys().next().value!)
          verified.set(tokenDigest, storedHash)
        }
        const refusal = Access.refusal(
          { revokedAt: row.revoked_at, expiresAt: row.expires_at },
          { status: row.ws_status, apiEnabled: row.ws_api_enabled, plan: row.ws_plan },
          now
        )
        if (refusal !== undefined) {
          return yield* Effect.fail(Errors.fail(refusal, refusalMessages[refusal] ?? refusal))
        }
        if (statsEvery > 0 && now.getTime() - statsAt >= statsEvery) {
          statsAt = now.getTime()
          yield* Effect.logInfo(`request-path tables ${JSON.stringify(tableSizes())}`)
        }
        const flushed = lastUsedFlush.get(row.id) ?? 0
        if (now.getTime() - flushed >= lastUsedEvery) {
          if (now.getTime() - lastUsedSweptAt >= lastUsedEvery) {
            // keys not seen for a minute would write anyway: forget them, so the table stays bounded
            lastUsedSweptAt = now.getTime()
            for (const [keyId, at] of lastUsedFlush) {
              if (now.getTime() - at >= lastUsedEvery) lastUsedFlush.delete(keyId)
            }
          }
          lastUsedFlush.set(row.id, now.getTime())
          yield* keys.touchLastUsed(row.id, now, new Date(now.getTime() - lastUsedEvery))
        }
        return {
          keyId: row.id,
          workspaceId: row.workspace_id,
          scopes: row.scopes,
          limits: { reads: row.reads_per_minute, creates: row.creates_per_minute, uploads: row.uploads_per_minute },
          spendCap24h: row.spend_cap_24h,
          render: found.render
        } satisfies AuthenticatedKey
      })

    return { authenticate, tableSizes }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}

const refusalMessages: Partial<Record<Errors.ErrorCode, string>> = {
  api_key_revoked: "the API key has been revoked",
  api_key_expired: "the API key has expired",
  tenant_inactive: "the account is not active",
  api_disabled: "API access is switched off for this account",
  tier_not_eligible: "the account's plan cannot use API keys"
}
