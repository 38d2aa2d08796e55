/**
 * Spend cap (decisions §3): a key with cap N may have at most N charged renders accepted in the last
 * 24 hours, a window that slides and refills continuously. Pure over the acceptance times.
 */
export const spendWindowMillis = 24 * 60 * 60 * 1000

export const chargedInWindow = (acceptedAt: ReadonlyArray<number>, now: number): number =>
  acceptedAt.filter((t) => t > now - spendWindowMillis && t <= now).length

export const mayCharge = (cap: number | null, acceptedAt: ReadonlyArray<number>, now: number): boolean =>
  cap === null || chargedInWindow(acceptedAt, now) < cap

/** May the workspace's cycle allowance take one more render? `null` included is unlimited. */
export const allowanceLeft = (included: number | null, used: number): boolean => included === null || used < included
