import { Access, ApiKeyToken, Errors } from "@pic2video/domain"
import { KeyHasher } from "@pic2video/cluster/KeyHasher"
import * as KeyAccess from "@pic2video/cluster/repositories/KeyAccess"
import { Effect } from "effect"
import type { PrincipalShape } from "./Principal.ts"

/**
 * contract §4.2–4.3: who is calling. Malformed, unknown and wrong-secret keys are one answer
 * (`invalid_api_key`) reached through the same work: a malformed key is still hashed and compared
 * against a decoy, so timing does not tell them apart. Revocation is read from the database on
 * every request, so it takes effect on the next one.
 */
export interface Caller extends PrincipalShape {
  readonly limits: { readonly reads: number; readonly creates: number; readonly uploads: number }
}

const invalid = Errors.fail("invalid_api_key", "the API key is not valid")

/** Looked up in place of a malformed key's id, so a malformed key costs the same query (no such id). */
const decoyKeyId = "key_0000000000000000"

// last_used_at is kept without a write per request: at most one write per key per minute per process
const lastUsedFlush = new Map<string, number>()
const lastUsedEvery = 60_000

export const authenticate = (authorization: string | undefined) =>
  Effect.gen(function*() {
    // an empty header sends no key, as much as an absent one
    if (authorization === undefined || authorization.trim() === "") {
      return yield* Effect.fail(Errors.fail("missing_api_key", "send the key as `Authorization: Bearer <API_KEY>`"))
    }
    const hasher = yield* KeyHasher
    const token = Access.bearerToken(authorization)
    const parsed = token === undefined ? undefined : ApiKeyToken.parseToken(token)
    const found = yield* KeyAccess.findKeyAndAccount(parsed?.keyId ?? decoyKeyId)
    const row = parsed === undefined ? undefined : found
    const verified = hasher.verify(parsed?.secret ?? "", row?.secret_hash)
    if (!verified || row === undefined) return yield* Effect.fail(invalid)
    const now = new Date()
    const refusal = Access.refusal(
      { revokedAt: row.revoked_at, expiresAt: row.expires_at },
      { status: row.ws_status, apiEnabled: row.ws_api_enabled, plan: row.ws_plan },
      now
    )
    if (refusal !== undefined) return yield* Effect.fail(Errors.fail(refusal, refusalMessages[refusal] ?? refusal))
    const flushed = lastUsedFlush.get(row.id) ?? 0
    if (now.getTime() - flushed >= lastUsedEvery) {
      lastUsedFlush.set(row.id, now.getTime())
      yield* KeyAccess.touchLastUsed(row.id, now, new Date(now.getTime() - lastUsedEvery))
    }
    return {
      keyId: row.id,
      workspaceId: row.workspace_id,
      scopes: row.scopes,
      limits: { reads: row.reads_per_minute, creates: row.creates_per_minute, uploads: row.uploads_per_minute },
      spendCap24h: row.spend_cap_24h
    } satisfies Caller
  })

const refusalMessages: Partial<Record<Errors.ErrorCode, string>> = {
  api_key_revoked: "the API key has been revoked",
  api_key_expired: "the API key has expired",
  tenant_inactive: "the account is not active",
  api_disabled: "API access is switched off for this account",
  tier_not_eligible: "the account's plan cannot use API keys"
}
