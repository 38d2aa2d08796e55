/**
 * Spend cap (contract §3): a key with cap N may have at most N charged renders accepted in the last
 * 24 hours, a window that slides and refills continuously. Pure over the acceptance times.
 */
export const spendWindowMillis = 24 * 60 * 60 * 1000

export const chargedInWindow = (acceptedAt: ReadonlyArray<number>, now: number): number =>
  acceptedAt.filter((t) => t > now - spendWindowMillis && t <= now).length

/** Has a key with this cap (null: none) used it up with `charged` renders in the window? */
const capReached = (cap: number | null, charged: number): boolean => cap !== null && charged >= cap

export const mayCharge = (cap: number | null, acceptedAt: ReadonlyArray<number>, now: number): boolean =>
  !capReached(cap, chargedInWindow(acceptedAt, now))

/** May the workspace's cycle allowance take one more render? `null` included is unlimited. */
export const allowanceLeft = (included: number | null, used: number): boolean => included === null || used < included

/** Where the key's sliding window starts: renders accepted after this count against its cap. */
export const windowStart = (now: number): Date => new Date(now - spendWindowMillis)

type ChargeRefusal = "spend_cap_reached" | "quota_exceeded"

/** What a charge is decided on: the payer's key cap (null: none, or no key) and the cycle's allowance. */
interface Standing {
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

/** How many charges in a row the rule allows from here: the room under the cap and in the allowance. */
export const room = (s: Standing): { readonly cap: number; readonly allowance: number } => ({
  cap: s.spendCap === null ? Infinity : Math.max(0, s.spendCap - s.chargedInWindow),
  allowance: s.included === null ? Infinity : Math.max(0, s.included - s.used)
})

/**
 * The same rule asked once for `count` charges in a row (the portal's "Render selected" asks before it
 * creates each render of a batch): undefined when every one of them would be allowed, else the refusal
 * the first refused one would meet (the cap before the allowance, as `chargeRefusal`). Each charge is
 * still decided on its own when it happens.
 */
export const chargeRefusalFor = (s: Standing, count: number): ChargeRefusal | undefined => {
  const r = room(s)
  return count <= Math.min(r.cap, r.allowance)
    ? undefined
    : r.cap <= r.allowance
    ? "spend_cap_reached"
    : "quota_exceeded"
}

export const refusalMessage = (refusal: ChargeRefusal, included: number | null): string =>
  refusal === "spend_cap_reached"
    ? "this key's 24-hour spend cap is used up"
    : included === 0
    ? "the plan includes no renders"
    : "the billing cycle's render allowance is used up"

/** `refusalMessage` for `chargeRefusalFor`: how many of the `count` would fit (`left`), when more than one was asked for. */
export const refusalMessageFor = (
  refusal: ChargeRefusal,
  included: number | null,
  count: number,
  left: number
): string =>
  count <= 1 || (refusal === "quota_exceeded" && included === 0)
    ? refusalMessage(refusal, included)
    : `${
      refusal === "spend_cap_reached" ? "this key's 24-hour spend cap" : "the billing cycle's render allowance"
    } has room for ${left} more ${left === 1 ? "render" : "renders"}, and ${count} were asked for`
