import type { ErrorCode } from "./Errors.ts"
import type { Plan } from "./Plans.ts"

/**
 * Whether a key whose secret has verified may act (contract §4 steps 2–3, in that order):
 * revoked, expired, then the account gates tenant_inactive, api_disabled, tier_not_eligible.
 * Revoked and expired are only reported after the secret verified, so they reveal nothing.
 */
interface KeyStanding {
  readonly revokedAt: Date | null
  readonly expiresAt: Date | null
}

interface AccountStanding {
  readonly status: "active" | "inactive"
  readonly apiEnabled: boolean
  readonly plan: Plan
}

export const refusal = (key: KeyStanding, account: AccountStanding, now: Date): ErrorCode | undefined => {
  if (key.revokedAt !== null && key.revokedAt.getTime() <= now.getTime()) return "api_key_revoked"
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime()) return "api_key_expired"
  if (account.status !== "active") return "tenant_inactive"
  if (!account.apiEnabled) return "api_disabled"
  if (account.plan === "free") return "tier_not_eligible"
  return undefined
}

/** `Authorization: Bearer <key>`; the scheme compares case-insensitively (contract §4.2). */
export const bearerToken = (header: string): string | undefined => {
  const match = /^([A-Za-z]+) +(\S+) *$/.exec(header)
  return match !== null && match[1].toLowerCase() === "bearer" ? match[2] : undefined
}
