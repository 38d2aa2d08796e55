import { afterAll, expect, it } from "vitest"
import {
  client,
  freePort,
  makeShared,
  type Service,
  startService,
  waitFor,
  workspaceWithKey
} from "../support/service.ts"
import { createRender, findEncoder, getRender, pollToEnd, stopOrKill, uploadPhoto, usedOf } from "./helpers.ts"

/**
 * After kill -9 and a restart, queued renders start within 5 s of readiness, and
 * the cluster's "Could not find entity manager for address, retrying" warning takes at most one line
 * (the probe saw them untouched for about 25 s after /readyz, under 181 multi-line warnings).
 *
 * One process (`npm start`) with one render slot takes four renders: one encodes, three wait queued.
 * It is killed with SIGKILL and started again at once on the same database and data directory, as a
 * supervisor would, this time with four slots so every waiting render can start at once; the time from
 * its first /readyz 200 to each queued render leaving `queued` is measured, then all complete,
 * each charged once. Run with and without a fixed RUNNER_PORT (the restarted runner at its old
 * address, as docker-compose.yml runs runners, or at a new one, as `npm start` does by default).
 */
const renders = 4
const started: Array<Service> = []

afterAll(async () => {
  await Promise.all(started.map((s) => stopOrKill(s, 20_000)))
})

const start = async (...args: Parameters<typeof startService>) => {
  const service = await startService(...args)
  started.push(service)
  return service
}

const warning = "Could not find entity manager for address"

it.each([
  { address: "a new runner address", runnerPort: false },
  { address: "the same runner address (RUNNER_PORT)", runnerPort: true }
])(
  "kill -9 with renders queued, restarted at $address: each queued render starts within 5 s of /readyz; one entity-manager line",
  async ({ runnerPort }) => {
    const shared = await makeShared()
    const port = runnerPort ? { RUNNER_PORT: String(await freePort()) } : undefined
    const env = { RENDER_SECONDS: "2", RENDER_NICE: "0", RENDER_X264_PRESET: "superfast", ...port }
    const first = await start(shared, { ...env, RENDER_CONCURRENCY: "1" })
    const { secret } = await workspaceWithKey(first.env)
    const api1 = client(first.baseUrl, secret)
    const mediaId = (await uploadPhoto(api1, "rocket.jpg", first)).id
    const ids: Array<string> = []
    for (let i = 0; i < renders; i++) {
      ids.push((await createRender(api1, { media_id: mediaId, quote: i % 2 === 0 ? "" : `Resumed ${i}` })).id)
    }
    await findEncoder([first.process.pid!], 120_000)
    const before = await Promise.all(ids.map(async (id) => (await getRender(api1, id)).status as string))
    const queued = ids.filter((_, i) => before[i] === "queued")
    expect(queued.length, JSON.stringify(before)).toBeGreaterThanOrEqual(renders - 1)

    first.process.kill("SIGKILL")
    await first.stop()
    const second = await start(shared, { ...env, RENDER_CONCURRENCY: String(renders) })
    // startService polls /readyz every 100 ms: the first 200 was at most that long before this
    const readyAt = performance.now()
    const api2 = client(second.baseUrl, secret)

    const startedAfter = new Map<string, number>()
    await waitFor(
      async () => {
        for (const id of queued) {
          if (startedAfter.has(id)) continue
          if ((await getRender(api2, id)).status !== "queued") {
            startedAfter.set(id, (performance.now() - readyAt) / 1000)
          }
        }
        return startedAfter.size === queued.length
      },
      120_000,
      "every queued render to start"
    ).catch((e) => {
      throw new Error(
        `${(e as Error).message}; started ${JSON.stringify([...startedAfter])}\n${second.output().slice(-4000)}`
      )
    })
    const seconds = [...startedAfter.values()]
    console.log(
      `restart at ${runnerPort ? "the same" : "a new"} runner address: queued renders left queued ${
        seconds.map((s) => s.toFixed(1)).join(", ")
      } s after /readyz`
    )

    for (const id of ids) {
      const { render } = await pollToEnd(api2, id, 180_000)
      expect(render.status, JSON.stringify(render)).toBe("completed")
    }
    expect(await usedOf(api2)).toBe(renders)

    const warnings = second.output().split("\n").filter((l) => l.includes(warning))
    console.log(`"${warning}" lines after the restart: ${warnings.length}`)
    expect(Math.max(...seconds), second.output().slice(-4000)).toBeLessThanOrEqual(5)
    expect(warnings.length, warnings.slice(0, 3).join("\n")).toBeLessThanOrEqual(1)
  },
  420_000
)
