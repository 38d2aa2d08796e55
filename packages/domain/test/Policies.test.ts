import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { prop } from "../../../test/support/prop.ts"
import { bearerToken, refusal } from "../src/Access.ts"
import { canonicalJson, fingerprint, isValidKey } from "../src/Idempotency.ts"
import { compareFolderNames, considered, finalStatus, maxFilesPerImport, stoppedReasons } from "../src/ImportState.ts"
import { cycleStart, planDefaults, plans } from "../src/Plans.ts"
import { admit, type Window, windowMillis } from "../src/RateLimit.ts"
import {
  allowanceLeft,
  chargedInWindow,
  chargeRefusal,
  chargeRefusalFor,
  mayCharge,
  spendWindowMillis
} from "../src/SpendCap.ts"

const minute = windowMillis
const day = 24 * 60 * 60 * 1000

describe("RateLimit.admit", () => {
  /** a request stream: gaps in ms between requests (mostly short, sometimes a minute or more) */
  const gaps = fc.array(fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 3 * minute })), {
    maxLength: 300
  })

  prop("never admits more than `limit` in one window; refusals do not consume", [
    fc.integer({ min: 0, max: 20 }),
    gaps,
    fc.integer({ min: 0, max: 2 ** 40 })
  ], ([limit, steps, start]) => {
    let window: Window | undefined
    let now = start
    const admittedPerWindow = new Map<number, number>()
    for (const gap of steps) {
      now += gap
      const before = window
      const d = admit(window, limit, now)
      expect(d.limit).toBe(limit)
      expect(d.remaining).toBeGreaterThanOrEqual(0)
      expect(d.remaining).toBeLessThanOrEqual(limit)
      expect(Number.isInteger(d.resetSeconds)).toBe(true)
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1)
      expect(d.resetSeconds).toBeLessThanOrEqual(60)
      expect(d.window.startedAt).toBeLessThanOrEqual(now)
      expect(now - d.window.startedAt).toBeLessThan(minute)
      if (d.allowed) {
        admittedPerWindow.set(d.window.startedAt, (admittedPerWindow.get(d.window.startedAt) ?? 0) + 1)
        expect(d.remaining).toBe(limit - d.window.count)
      } else {
        expect(d.remaining).toBe(0)
        // a refusal leaves the count as it was
        if (before !== undefined && now - before.startedAt < minute) expect(d.window).toEqual(before)
      }
      window = d.window
    }
    for (const count of admittedPerWindow.values()) expect(count).toBeLessThanOrEqual(limit)
  })

  prop(
    "a burst admits exactly min(n, limit)",
    [fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 100 })],
    ([limit, n]) => {
      let window: Window | undefined
      let admitted = 0
      for (let i = 0; i < n; i++) {
        const d = admit(window, limit, 1_000_000 + i)
        if (d.allowed) admitted++
        window = d.window
      }
      expect(admitted).toBe(Math.min(n, limit))
    }
  )

  prop("a full minute after the window opened, the budget is whole again", [
    fc.integer({ min: 1, max: 50 }),
    fc.integer({ min: 0, max: 10 * minute })
  ], ([limit, later]) => {
    let window: Window | undefined
    for (let i = 0; i < limit + 3; i++) window = admit(window, limit, 5_000 + i).window
    const d = admit(window, limit, 5_000 + minute + later)
    expect(d.allowed).toBe(true)
    expect(d.remaining).toBe(limit - 1)
  })
})

describe("SpendCap", () => {
  const attempts = fc.array(fc.integer({ min: 0, max: 6 * 60 * 60 * 1000 }), { maxLength: 200 })

  prop("charging only when mayCharge never puts more than `cap` in any trailing 24 h", [
    fc.integer({ min: 0, max: 15 }),
    attempts
  ], ([cap, gaps]) => {
    const accepted: Array<number> = []
    let now = 0
    for (const gap of gaps) {
      now += gap
      if (mayCharge(cap, accepted, now)) accepted.push(now)
      expect(chargedInWindow(accepted, now)).toBeLessThanOrEqual(cap)
    }
    // and over every window ending at an acceptance
    for (const t of accepted) {
      expect(accepted.filter((a) => a > t - spendWindowMillis && a <= t).length).toBeLessThanOrEqual(cap)
    }
  })

  prop("it refills continuously: 24 h after the oldest charge in the window, one more is allowed", [
    fc.integer({ min: 1, max: 10 }),
    fc.array(fc.integer({ min: 1, max: 60_000 }), { minLength: 1, maxLength: 10 })
  ], ([cap, gaps]) => {
    const accepted: Array<number> = []
    let now = 0
    for (const gap of gaps) {
      now += gap
      if (mayCharge(cap, accepted, now)) accepted.push(now)
    }
    const inWindow = accepted.filter((a) => a > now - spendWindowMillis)
    if (inWindow.length === cap) {
      expect(mayCharge(cap, accepted, now)).toBe(false)
      expect(mayCharge(cap, accepted, inWindow[0] + spendWindowMillis)).toBe(true)
    }
  })

  prop("no cap means no ceiling; allowance null means unlimited", [
    fc.array(fc.integer(), { maxLength: 50 }),
    fc.integer(),
    fc.nat()
  ], ([accepted, now, used]) => {
    expect(mayCharge(null, accepted, now)).toBe(true)
    expect(allowanceLeft(null, used)).toBe(true)
  })

  prop("allowanceLeft is used < included", [fc.nat(1000), fc.nat(1000)], ([included, used]) => {
    expect(allowanceLeft(included, used)).toBe(used < included)
  })

  prop("chargeRefusal: the cap is looked at before the allowance; a charge is allowed only when both have room", [
    fc.option(fc.nat(20), { nil: null }),
    fc.nat(25),
    fc.option(fc.nat(20), { nil: null }),
    fc.nat(25)
  ], ([spendCap, charged, included, used]) => {
    const r = chargeRefusal({ spendCap, chargedInWindow: charged, included, used })
    const capFull = spendCap !== null && charged >= spendCap
    const allowanceFull = included !== null && used >= included
    expect(r).toBe(capFull ? "spend_cap_reached" : allowanceFull ? "quota_exceeded" : undefined)
  })

  prop("chargeRefusalFor(n): allowed exactly when n charges in a row would each be, else the first refusal met", [
    fc.option(fc.nat(20), { nil: null }),
    fc.nat(25),
    fc.option(fc.nat(20), { nil: null }),
    fc.nat(25),
    fc.nat(30)
  ], ([spendCap, charged, included, used, count]) => {
    // the charges one by one, each taking one from the window and the allowance
    let first: ReturnType<typeof chargeRefusal>
    for (let i = 0; i < count && first === undefined; i++) {
      first = chargeRefusal({ spendCap, chargedInWindow: charged + i, included, used: used + i })
    }
    expect(chargeRefusalFor({ spendCap, chargedInWindow: charged, included, used }, count)).toBe(first)
  })
})

describe("Plans", () => {
  const date = fc.date({
    min: new Date("1970-01-01T00:00:00Z"),
    max: new Date("2200-01-01T00:00:00Z"),
    noInvalidDate: true
  })
  /** the anchor `months` after `anchor`, the day clamped to the month's length */
  const anchorAt = (anchor: Date, months: number) => {
    const y = anchor.getUTCFullYear()
    const m = anchor.getUTCMonth() + months
    const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
    return new Date(
      Date.UTC(
        y,
        m,
        Math.min(anchor.getUTCDate(), last),
        anchor.getUTCHours(),
        anchor.getUTCMinutes(),
        anchor.getUTCSeconds(),
        anchor.getUTCMilliseconds()
      )
    )
  }

  prop(
    "cycleStart is the latest anchor not in the future: ≤ now, > now − 32 days, and the next anchor is after now",
    [date, fc.integer({ min: 0, max: 40 * 365 * day })],
    ([anchor, elapsed]) => {
      const now = new Date(anchor.getTime() + elapsed)
      const start = cycleStart(anchor, now)
      expect(start.getTime()).toBeLessThanOrEqual(now.getTime())
      expect(start.getTime()).toBeGreaterThan(now.getTime() - 32 * day)
      expect(start.getTime()).toBeGreaterThanOrEqual(anchor.getTime())
      // it is one of the anchors, and the following one is in the future
      const months = (start.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + start.getUTCMonth() -
        anchor.getUTCMonth()
      expect(anchorAt(anchor, months).getTime()).toBe(start.getTime())
      expect(anchorAt(anchor, months + 1).getTime()).toBeGreaterThan(now.getTime())
    }
  )

  prop("at the anchor itself the cycle starts there", [date], ([anchor]) => {
    expect(cycleStart(anchor, anchor).getTime()).toBe(anchor.getTime())
  })

  it("a 31st anchor clamps to the month's last day", () => {
    const anchor = new Date("2024-01-31T10:00:00.000Z")
    expect(cycleStart(anchor, new Date("2024-02-29T10:00:00.000Z")).toISOString()).toBe("2024-02-29T10:00:00.000Z")
    expect(cycleStart(anchor, new Date("2024-03-30T10:00:00.000Z")).toISOString()).toBe("2024-02-29T10:00:00.000Z")
    expect(cycleStart(anchor, new Date("2024-03-31T10:00:00.000Z")).toISOString()).toBe("2024-03-31T10:00:00.000Z")
  })

  it("plan defaults are contract §3", () => {
    const GiB = 1024 ** 3
    expect(plans).toEqual(["free", "starter", "studio", "agency", "custom"])
    expect(planDefaults).toEqual({
      free: { canHoldKeys: false, included: 0, storageBudgetBytes: 0 },
      starter: { canHoldKeys: true, included: 0, storageBudgetBytes: GiB },
      studio: { canHoldKeys: true, included: 100, storageBudgetBytes: 10 * GiB },
      agency: { canHoldKeys: true, included: 500, storageBudgetBytes: 50 * GiB },
      custom: { canHoldKeys: true, included: null, storageBudgetBytes: 100 * GiB }
    })
  })
})

describe("Access", () => {
  const maybeDate = fc.option(
    fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }),
    { nil: null }
  )
  const standing = fc.record({
    key: fc.record({ revokedAt: maybeDate, expiresAt: maybeDate }),
    account: fc.record({
      status: fc.constantFrom("active" as const, "inactive" as const),
      apiEnabled: fc.boolean(),
      plan: fc.constantFrom(...plans)
    }),
    now: fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
  })

  prop(
    "refusal order: revoked, expired, tenant_inactive, api_disabled, tier_not_eligible",
    [standing],
    ([{ account, key, now }]) => {
      const reasons = [
        [key.revokedAt !== null && key.revokedAt <= now, "api_key_revoked"],
        [key.expiresAt !== null && key.expiresAt <= now, "api_key_expired"],
        [account.status === "inactive", "tenant_inactive"],
        [!account.apiEnabled, "api_disabled"],
        [account.plan === "free", "tier_not_eligible"]
      ] as const
      expect(refusal(key, account, now)).toBe(reasons.find(([applies]) => applies)?.[1])
    }
  )

  prop("the Bearer scheme compares case-insensitively; other schemes give nothing", [
    fc.stringMatching(/^[A-Za-z0-9_]{1,60}$/),
    fc.subarray([..."bearer".split("").keys()])
  ], ([token, upper]) => {
    const scheme = "bearer".split("").map((c, i) => (upper.includes(i) ? c.toUpperCase() : c)).join("")
    expect(bearerToken(`${scheme} ${token}`)).toBe(token)
    for (const other of ["Basic", "Token", "Bearerx", "Digest"]) {
      expect(bearerToken(`${other} ${token}`)).toBeUndefined()
    }
    expect(bearerToken(token)).toBeUndefined()
  })
})

describe("ImportState", () => {
  const tally = fc.record({ imported: fc.nat(600), skipped: fc.nat(600), failed: fc.nat(600) })
  const stopped = fc.option(fc.constantFrom(...stoppedReasons), { nil: null })

  prop("finalStatus: completed iff nothing failed and nothing stopped; else partial iff something was imported", [
    tally,
    stopped
  ], ([t, s]) => {
    const status = finalStatus(t, s)
    if (t.failed === 0 && s === null) expect(status).toBe("completed")
    else expect(status).toBe(t.imported > 0 ? "partial" : "failed")
  })

  prop("considered: the first 500 in name order, whatever the input order", [
    fc.uniqueArray(fc.record({ name: fc.string({ maxLength: 8 }), id: fc.uuid() }), {
      selector: (f) => f.id,
      maxLength: 700
    })
  ], ([files]) => {
    const a = considered(files)
    const b = considered([...files].reverse())
    expect(a).toEqual(b)
    expect(a.considered.length).toBe(Math.min(files.length, maxFilesPerImport))
    expect(a.limitReached).toBe(files.length > maxFilesPerImport)
    for (let i = 1; i < a.considered.length; i++) expect(a.considered[i - 1].name <= a.considered[i].name).toBe(true)
  })
})

describe("folder name order", () => {
  const folder = fc.record({ name: fc.string({ maxLength: 8 }), id: fc.string({ minLength: 1, maxLength: 4 }) })

  prop("is a total order: the same result whatever the input order", [
    fc.uniqueArray(folder, { selector: (f) => f.id, maxLength: 60 })
  ], ([folders]) => {
    const a = [...folders].sort(compareFolderNames)
    const b = [...folders].reverse().sort(compareFolderNames)
    expect(a).toEqual(b)
    for (let i = 1; i < a.length; i++) expect(compareFolderNames(a[i - 1], a[i])).toBeLessThan(0)
  })

  it("ignores case first, as a person reads a folder list", () => {
    const names = ["delta", "Alpha", "charlie", "Bravo", "alpha", "echo"].map((name, i) => ({ name, id: String(i) }))
    expect(names.sort(compareFolderNames).map((f) => f.name)).toEqual([
      "Alpha",
      "alpha",
      "Bravo",
      "charlie",
      "delta",
      "echo"
    ])
  })
})

describe("Idempotency", () => {
  /** the same value with every object's keys in reverse order */
  const reversed = (v: unknown): unknown =>
    Array.isArray(v) ?
      v.map(reversed)
      : v !== null && typeof v === "object" ?
      Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)]))
      : v

  prop("the fingerprint ignores key order and whitespace of the JSON body", [fc.jsonValue()], ([value]) => {
    const fp = (text: string) => fingerprint(new TextEncoder().encode(text))
    const a = fp(JSON.stringify(value))
    expect(fp(JSON.stringify(value, null, 2))).toBe(a)
    expect(fp(JSON.stringify(reversed(value)))).toBe(a)
    expect(canonicalJson(reversed(value))).toBe(canonicalJson(value))
  })

  prop("different JSON values have different fingerprints", [fc.jsonValue(), fc.jsonValue()], ([a, b]) => {
    fc.pre(canonicalJson(a) !== canonicalJson(b))
    expect(fingerprint(new TextEncoder().encode(JSON.stringify(a)))).not.toBe(
      fingerprint(new TextEncoder().encode(JSON.stringify(b)))
    )
  })

  prop("keys are 1–255 printable ASCII characters", [fc.string({ maxLength: 300, unit: "binary" })], ([key]) => {
    expect(isValidKey(key)).toBe(key.length >= 1 && key.length <= 255 && [...key].every((c) => c >= " " && c <= "~"))
  })
})
