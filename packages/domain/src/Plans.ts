import { Schema } from "effect"

export const plans = ["free", "starter", "studio", "agency", "custom"] as const
export const Plan = Schema.Literals(plans)
export type Plan = typeof Plan.Type

const GiB = 1024 ** 3

/** contract §3: what each plan includes per billing cycle and its default storage budget. */
export const planDefaults: Record<
  Plan,
  { readonly canHoldKeys: boolean; readonly included: number | null; readonly storageBudgetBytes: number }
> = {
  free: { canHoldKeys: false, included: 0, storageBudgetBytes: 0 },
  starter: { canHoldKeys: true, included: 0, storageBudgetBytes: 1 * GiB },
  studio: { canHoldKeys: true, included: 100, storageBudgetBytes: 10 * GiB },
  agency: { canHoldKeys: true, included: 500, storageBudgetBytes: 50 * GiB },
  // custom: `--included` (default unlimited) and `--storage-budget-bytes` (default 100 GiB)
  custom: { canHoldKeys: true, included: null, storageBudgetBytes: 100 * GiB }
}

/**
 * The billing cycle is monthly, anchored at the workspace's creation (UTC): the cycle start is the
 * latest anchor not in the future. A day the month lacks (the 31st) clamps to the month's last day.
 */
export const cycleStart = (anchor: Date, now: Date): Date => {
  const at = (monthsAfter: number): Date => {
    const y = anchor.getUTCFullYear()
    const m = anchor.getUTCMonth() + monthsAfter
    const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
    return new Date(Date.UTC(
      y,
      m,
      Math.min(anchor.getUTCDate(), lastDay),
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds()
    ))
  }
  if (now.getTime() < anchor.getTime()) return anchor
  let months = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth())
  while (months > 0 && at(months).getTime() > now.getTime()) months--
  while (at(months + 1).getTime() <= now.getTime()) months++
  return at(months)
}
