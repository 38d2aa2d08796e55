/**
 * Spend cap (contract §3): a key with cap N may have at most N charged renders accepted in the last
 * 24 hours, a window that slides and refills continuously. Pure over the acceptance times.
 */
export const spendWindowMillis = 24 * 60 * 60 * 1000

export const chargedInWindow = (acceptedAt: ReadonlyArray<number>, now: number): number =>
  acceptedAt.filter((t) => t > now - spendWindowMillis && t <= now).length

/** Has a key with this cap (null: none) used it up with `charged` renders in the window? */
export const capReached = (cap: number | null, charged: number): boolean => cap !== null && charged >= cap

export const mayCharge = (cap: number | null, acceptedAt: ReadonlyArray<number>, now: number): boolean =>
  !capReached(cap, chargedInWindow(acceptedAt, now))

/** May the workspace's cycle allowance take one more render? `null` included is unlimited. */
export const allowanceLeft = (included: number | null, used: number): boolean => included === null || used < included

/** Where the key's sliding window starts: renders accepted after this count against its cap. */
export const windowStart = (now: number): Date => new Date(now - spendWindowMillis)

export type ChargeRefusal = "spend_cap_reached" | "quota_exceeded"

/** What a charge is decided on: the payer's key cap (null: none, or no key) and the cycle's allowance. */
export interface Standing {
  readonly spendCap: number | null
  /** the key's charged, unrefunded renders accepted within the window */
  readonly chargedInWindow: number
  readonly included: number | null
  readonly used: number
}

/**
 * The one charge rule (contract §3, §4.9): the key's spend cap is looked at before the
 * workspace's allowance, so a key at its cap answers `spend_cap_reached` even when the allowance
 * is also used up. Undefined: the charge may happen. The early refusal and the charge transaction
 * both ask this.
 */
export const chargeRefusal = (s: Standing): ChargeRefusal | undefined =>
  capReached(s.spendCap, s.chargedInWindow)
    ? "spend_cap_reached"
    : !allowanceLeft(s.included, s.used)
    ? "quota_exceeded"
    : undefined

export const refusalMessage = (refusal: ChargeRefusal, included: number | null): string =>
  refusal === "spend_cap_reached"
    ? "this key's 24-hour spend cap is used up"
    : included === 0
    ? "the plan includes no renders"
    : "the billing cycle's render allowance is used up"
