import { describe, expect, it } from "vitest"
import { boundedLog } from "../src/ClientError.ts"

/** Client protocol errors are logged at a bounded rate: a fake clock, no server. */
describe("boundedLog", () => {
  it("writes at most N lines a minute, then one line with how many more there were", () => {
    let now = 0
    const lines: Array<string> = []
    const log = boundedLog(3, (l) => lines.push(l), () => now)
    for (let i = 0; i < 2_000; i++) log(`refused ${i}`)
    expect(lines).toEqual(["refused 0", "refused 1", "refused 2"])
    now = 60_000
    log("refused next minute")
    expect(lines.slice(3)).toEqual([
      "1997 more requests Node's HTTP parser could not read in the last minute (not logged one by one)",
      "refused next minute"
    ])
    // a quiet minute says nothing
    now = 180_000
    log("later")
    expect(lines.slice(5)).toEqual(["later"])
  })
})
