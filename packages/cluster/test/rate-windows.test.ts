import { describe, expect, it } from "vitest"
import { makeTable } from "../src/entities/RateWindows.ts"

/**
 * The per-process window table that both the ApiKey entity and the local admission path count in
 * (contract §14.3): exact per key and bucket, refused requests not consumed, idle keys swept. Each
 * test counts in a table of its own, as each composition does (the RateWindows service).
 */
describe("RateWindows", () => {
  it("counts each key and bucket on its own, exactly, and refuses past the limit without consuming", () => {
    const windows = makeTable()
    const t = 1_000_000_000
    const a = Array.from({ length: 7 }, (_, i) => windows.admit("key_a", "reads", 5, t + i))
    expect(a.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false])
    expect(a.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0])
    expect(windows.admit("key_a", "creates", 1, t + 10)).toMatchObject({ allowed: true, remaining: 0 })
    expect(windows.admit("key_b", "reads", 5, t + 10)).toMatchObject({ allowed: true, remaining: 4 })
    // the window refills a minute after its first request
    expect(windows.admit("key_a", "reads", 5, t + 59_999)).toMatchObject({ allowed: false, resetSeconds: 1 })
    expect(windows.admit("key_a", "reads", 5, t + 60_000)).toMatchObject({ allowed: true, remaining: 4 })
  })

  it("forgets keys whose windows have all run out", () => {
    const windows = makeTable()
    const t = 2_000_000_000
    for (let i = 0; i < 100; i++) windows.admit(`key_idle_${i}`, "reads", 10, t)
    expect(windows.size()).toBeGreaterThanOrEqual(100)
    // two minutes on, one request sweeps every idle key; only the one just used remains
    windows.admit("key_live", "reads", 10, t + 120_000)
    expect(windows.size()).toBe(1)
  })
})
