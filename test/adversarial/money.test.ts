import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inProcessAdmin, keyed } from "../foundation/admin.ts"
import { type Api, findEncoder, pollToEnd, stopOrKill, uploadPhoto, usedOf } from "../renders/helpers.ts"
import { client, makeShared, type Service, type Shared, startService, waitFor } from "../support/service.ts"

/**
 * Money and crashes across processes: two `npm start` processes on
 * one database; kill -9 of the one encoding a render (the other finishes it, charged once); then
 * concurrent creates split over two processes against an allowance, a spend cap, and one
 * Idempotency-Key raced. Counts are exact; sizes are kept small so the file stays within a minute or two.
 */
const env = { RENDER_SECONDS: "1", RENDER_CONCURRENCY: "1" }
let shared: Shared
const services: Array<Service> = []
/** a process booting in the background, joined to `services` when up (afterAll waits for it) */
let booting: Promise<unknown> = Promise.resolve()
const fast = ["--creates-per-minute", "100000", "--reads-per-minute", "100000"]

beforeAll(async () => {
  shared = await makeShared()
  services.push(await startService(shared, env))
  services.push(await startService(shared, env))
}, 180_000)

// queued renders of the bursts are left behind: nothing to wait for
afterAll(async () => {
  await booting.catch(() => undefined)
  await Promise.all(services.map((s) => stopOrKill(s, 1_000, "SIGKILL")))
})

/** Pids of a process's ffmpeg children. */
const ffmpegChildren = (pid: number) =>
  new Promise<Array<number>>((resolve) =>
    execFile(
      "ps",
      ["--ppid", String(pid), "-o", "pid=,comm="],
      (_err, stdout) =>
        resolve(
          stdout.split("\n").map((l) => l.trim().split(/\s+/)).filter((f) => f[1] === "ffmpeg").map((f) => Number(f[0]))
        )
    )
  )

/** Whether a process still runs (exited and not yet reaped — a zombie — is not running). */
const running = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!)
  } catch {
    return false
  }
}

const live = () => services.filter((s) => s.process.exitCode === null && s.process.signalCode === null)

const account = async (opts: { plan?: string; workspaceArgs?: Array<string>; keyArgs?: Array<string> } = {}) => {
  const admin = inProcessAdmin(services[0].env)
  try {
    const k = await keyed(admin, opts.plan ?? "studio", [...fast, ...(opts.keyArgs ?? [])], opts.workspaceArgs ?? [])
    const apis = live().map((s) => client(s.baseUrl, k.secret))
    const mediaId = (await uploadPhoto(apis[0], "rocket.jpg")).id
    return { apis, mediaId, k }
  } finally {
    await admin.dispose()
  }
}

/** `n` creates at once, alternating between the live processes; counts of each outcome. */
const burst = async (apis: ReadonlyArray<Api>, n: number, body: unknown, headers?: Record<string, string>) => {
  const outcomes = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const r = await apis[i % apis.length].postJson("/api/v1/renders", body, headers)
    return { status: r.status, body: await r.json() }
  }))
  const counts: Record<string, number> = {}
  for (const o of outcomes) {
    const k = o.status === 202 ? "202" : `${o.status} ${o.body?.error?.code}`
    counts[k] = (counts[k] ?? 0) + 1
  }
  return { outcomes, counts }
}

describe("across two processes", () => {
  it("kill -9 of the process encoding a render: it is completed once, charged once", async () => {
    const { apis, mediaId } = await account()
    const created = await (await apis[0].postJson("/api/v1/renders", { media_id: mediaId, quote: "" })).json()
    expect(created.status, JSON.stringify(created)).toBe("queued")
    const which = await findEncoder(services.map((s) => s.process.pid!), 90_000)
    const encoders = await ffmpegChildren(services[which].process.pid!)
    expect(encoders.length).toBeGreaterThan(0)
    services[which].process.kill("SIGKILL")
    // its ffmpeg dies with it (the frames' pipe closes): none is left running, orphaned, encoding on
    await waitFor(
      async () => encoders.every((pid) => !running(pid)),
      10_000,
      `ffmpeg ${encoders.join(", ")} to exit with its runner`
    )
    // a fresh process takes the dead one's place for the bursts; it boots while the render fails over
    // (it may be the one that finishes it: either way once, charged once)
    const replacement = startService(shared, env)
    booting = replacement.then((s) => services.push(s))
    const api = apis[1 - which]
    const { render } = await pollToEnd(api, created.id, 120_000)
    expect(render.status).toBe("completed")
    expect(await usedOf(api)).toBe(1)
    await booting
  }, 240_000)

  it("60 concurrent creates over both processes against an allowance of 20: exactly 20 accepted", async () => {
    const { apis, mediaId } = await account({ plan: "custom", workspaceArgs: ["--included", "20"] })
    const { outcomes, counts } = await burst(apis, 60, { media_id: mediaId, quote: "" })
    expect(counts).toEqual({ "202": 20, "402 quota_exceeded": 40 })
    expect(new Set(outcomes.filter((o) => o.status === 202).map((o) => o.body.id)).size).toBe(20)
    expect(await usedOf(apis[0])).toBe(20)
    expect(await usedOf(apis[1])).toBe(20)
  }, 120_000)

  it("a spend cap of 7 under 30 concurrent creates over both processes: exactly 7 accepted", async () => {
    const { apis, mediaId } = await account({ plan: "custom", keyArgs: ["--spend-cap-24h", "7"] })
    const { counts } = await burst(apis, 30, { media_id: mediaId, quote: "" })
    expect(counts).toEqual({ "202": 7, "402 spend_cap_reached": 23 })
  }, 120_000)

  it("one Idempotency-Key raced 30 times over both processes: one render, one charge", async () => {
    const { apis, mediaId } = await account({ plan: "custom" })
    const { outcomes } = await burst(apis, 30, { media_id: mediaId, quote: "" }, { "idempotency-key": "race-1" })
    const accepted = outcomes.filter((o) => o.status === 202)
    expect(accepted.length).toBeGreaterThanOrEqual(1)
    expect(new Set(accepted.map((o) => o.body.id)).size).toBe(1)
    for (const o of outcomes.filter((o) => o.status !== 202)) {
      expect(`${o.status} ${o.body.error.code}`).toBe("409 idempotency_in_progress")
    }
    // afterwards every retry replays the one render
    const again = await apis[1].postJson("/api/v1/renders", { media_id: mediaId, quote: "" }, {
      "idempotency-key": "race-1"
    })
    expect(again.status).toBe(202)
    expect((await again.json()).id).toBe(accepted[0].body.id)
    expect(await usedOf(apis[0])).toBe(1)
  }, 120_000)
})
