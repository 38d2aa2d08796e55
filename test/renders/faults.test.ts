import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  client,
  makeShared,
  type Service,
  type Shared,
  startService,
  waitFor,
  workspaceWithKey
} from "../support/service.ts"
import {
  type Api,
  createRender,
  downloadAndProbe,
  findEncoder,
  getRender,
  pollToEnd,
  sleep,
  stopOrKill,
  uploadPhoto,
  usedOf
} from "./helpers.ts"

/**
 * Faults (contract §1 SIGTERM, §6 "a render never stays queued or processing forever: after a crash of
 * the process running it, it resumes or fails, with the charge refunded"; cluster crib §3): a runner
 * killed or stopped mid-render hands the render to the other runner, which finishes it; the render is
 * charged once; the file is valid. Then the only process of a single-process service is killed with
 * renders queued, and a new one on the same database and data dir finishes them all.
 *
 * Failover is about 10 s by design (shard lock 9 s, health check 5 s), so timeouts are generous.
 */
const env = { RENDER_SECONDS: "3", RENDER_CONCURRENCY: "1" }
const renderSeconds = 3

const logsOf = (services: ReadonlyArray<Service | undefined>) =>
  services.map((s, i) => `--- process ${i} (pid ${s?.process.pid}) ---\n${s?.output().slice(-3000) ?? ""}`).join("\n")

/** Waits for the render to move again after a fault: its updated_at passes `since`, or it ends. */
const waitForMovement = async (api: Api, id: string, since: string, timeoutMs: number) => {
  const t0 = Date.now()
  await waitFor(
    async () => {
      const r = await getRender(api, id)
      return Date.parse(r.updated_at) > Date.parse(since) || r.status === "completed"
    },
    timeoutMs,
    `render ${id} to move again after the fault`
  )
  return Date.now() - t0
}

describe("a runner dies mid-render (two runners + an api process)", () => {
  let shared: Shared
  const runners: Array<Service> = []
  let apiService: Service
  let api: Api
  let mediaId: string

  beforeAll(async () => {
    shared = await makeShared()
    // the first runner migrates the database; the second joins it
    runners.push(await startService(shared, env, "runner"))
    runners.push(await startService(shared, env, "runner"))
    apiService = await startService(shared, env, "api")
    const { secret } = await workspaceWithKey(apiService.env)
    api = client(apiService.baseUrl, secret)
    mediaId = (await uploadPhoto(api, "rocket.jpg", apiService)).id
  }, 180_000)

  afterAll(async () => {
    await Promise.all([...runners, apiService].map((s) => stopOrKill(s, 20_000)))
  })

  const live = () => runners.filter((r) => r.process.exitCode === null && r.process.signalCode === null)

  it("kill -9 of the rendering runner: the other runner completes it, charged once, valid file", async () => {
    const before = await usedOf(api)
    const { id } = await createRender(api, { media_id: mediaId, quote: "Survives a crash" })
    const candidates = live()
    expect(candidates.length).toBe(2)
    const which = await findEncoder(candidates.map((r) => r.process.pid!), 120_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${logsOf(candidates)}`)
    })
    const victim = candidates[which]
    const survivor = candidates[1 - which]
    const during = await getRender(api, id)
    expect(during.status).toBe("processing")

    victim.process.kill("SIGKILL")
    await victim.stop() // resolves on exit
    const killedAt = Date.now()
    const frozen = await getRender(api, id)
    expect(["processing", "queued"]).toContain(frozen.status)
    // reads keep working from the database while the cluster fails over
    await waitForMovement(api, id, frozen.updated_at, 120_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${logsOf([survivor, apiService])}`)
    })
    console.log(`kill -9: render moved again ${Date.now() - killedAt} ms after the kill`)

    const { render, seen } = await pollToEnd(api, id, 180_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${logsOf([survivor, apiService])}`)
    })
    console.log(
      `kill -9: render ${render.status} ${Date.now() - killedAt} ms after the kill; statuses ${seen.join(" → ")}`
    )
    expect(render.status, JSON.stringify(render)).toBe("completed")
    expect(render.error).toBeNull()
    expect(render.progress).toBe(100)
    expect(render.asset).toMatchObject({ content_type: "video/mp4", width: 1080, height: 1920 })
    expect(render.asset.duration_sec).toBeCloseTo(renderSeconds, 0)
    expect(await usedOf(api)).toBe(before + 1)
    const { bytes, probe } = await downloadAndProbe(api, id)
    expect(bytes.length).toBe(render.asset.byte_size)
    expect(probe.durationSec).toBeCloseTo(renderSeconds, 0)
    // the survivor is still serving: a new render completes too
    const next = await createRender(api, { media_id: mediaId, quote: "" })
    expect((await pollToEnd(api, next.id, 180_000)).render.status).toBe("completed")
    expect(await usedOf(api)).toBe(before + 2)
  }, 420_000)

  it("SIGTERM of the rendering runner: it exits 0 and the render completes, charged once, valid file", async () => {
    // back to two runners
    runners.push(await startService(shared, env, "runner"))
    // let the newcomer take its shards (assignments refresh every 2 s)
    await sleep(6_000)
    const before = await usedOf(api)
    const { id } = await createRender(api, { media_id: mediaId, quote: "Survives a deploy" })
    const candidates = live()
    expect(candidates.length).toBe(2)
    const which = await findEncoder(candidates.map((r) => r.process.pid!), 120_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${logsOf(candidates)}`)
    })
    const victim = candidates[which]
    const survivor = candidates[1 - which]
    const stoppedAt = Date.now()
    const code = await Promise.race([
      victim.stop("SIGTERM"),
      sleep(60_000).then(() => "still running 60 s after SIGTERM")
    ])
    console.log(`SIGTERM: runner exited with ${code} after ${Date.now() - stoppedAt} ms`)
    expect(code, logsOf([victim])).toBe(0)

    const { render, seen } = await pollToEnd(api, id, 180_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${logsOf([victim, survivor, apiService])}`)
    })
    console.log(
      `SIGTERM: render ${render.status} ${Date.now() - stoppedAt} ms after the signal; statuses ${seen.join(" → ")}`
    )
    expect(render.status, JSON.stringify(render)).toBe("completed")
    expect(render.error).toBeNull()
    expect(await usedOf(api)).toBe(before + 1)
    const { bytes } = await downloadAndProbe(api, id)
    expect(bytes.length).toBe(render.asset.byte_size)
  }, 420_000)
})

describe("the only process is killed with renders queued", () => {
  let first: Service | undefined
  let second: Service | undefined

  afterAll(async () => {
    await Promise.all([stopOrKill(first, 5_000), stopOrKill(second, 20_000)])
  })

  it("a new process on the same database and data dir resumes and completes them all, each charged once", async () => {
    const shared = await makeShared()
    first = await startService(shared, env, "start")
    const { secret } = await workspaceWithKey(first.env)
    const api1 = client(first.baseUrl, secret)
    const mediaId = (await uploadPhoto(api1, "rocket.jpg", first)).id
    const ids: Array<string> = []
    for (const quote of ["First", "", "Third"]) ids.push((await createRender(api1, { media_id: mediaId, quote })).id)
    expect(await usedOf(api1)).toBe(3)
    // kill it while the first is encoding and the others wait for the one slot
    await findEncoder([first.process.pid!], 120_000)
    const states = await Promise.all(ids.map(async (id) => (await getRender(api1, id)).status))
    expect(states.filter((s) => s === "queued").length, JSON.stringify(states)).toBeGreaterThanOrEqual(1)
    first.process.kill("SIGKILL")
    await first.stop()
    const killedAt = Date.now()

    second = await startService(shared, env, "start")
    const api2 = client(second.baseUrl, secret)
    for (const id of ids) {
      const { render } = await pollToEnd(api2, id, 240_000).catch((e) => {
        throw new Error(`${(e as Error).message}\n${logsOf([second])}`)
      })
      expect(render.status, JSON.stringify(render)).toBe("completed")
      const { bytes } = await downloadAndProbe(api2, id)
      expect(bytes.length).toBe(render.asset.byte_size)
    }
    console.log(`restart: all ${ids.length} renders completed ${Date.now() - killedAt} ms after the kill`)
    expect(await usedOf(api2)).toBe(3)
  }, 480_000)
})
