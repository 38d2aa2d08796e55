import { randomBytes, randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { inProcessAdmin, keyed } from "../foundation/admin.ts"
import { downloadAndProbe } from "../renders/helpers.ts"
import { type S3Server, startS3Server } from "../support/s3-server.ts"
import { admin, client, makeShared, type Service, type Shared, startService, waitFor } from "../support/service.ts"

/**
 * Runners join and leave while renders flow. One API process and two runners on one
 * PostgreSQL and an object store (s3rver, a fake of S3; test/support/s3-server.ts), each process with
 * its own DATA_DIR: no shared volume. Renders are created at a steady pace; a third runner joins; one
 * runner is stopped with SIGTERM and another killed with kill -9. Then: every accepted render ended
 * completed, or failed and refunded; each was charged once (retries of a refused create reuse its
 * Idempotency-Key); every runner that lived through a phase executed renders; and no render waited
 * for a runner (after acceptance, or after its runner left) longer than the failover bound. `admin cluster
 * status` is checked against the same cluster as it changes. The figures are printed.
 *
 * Not tight timing: phases advance on what happened (renders executed, processes ready, exits), and
 * the bound is the sum of the failover settings with room for a loaded machine.
 */
// packages/cluster/src/entities/Sharding.ts: a drain on SIGTERM (10 s) or a shard move, or a kill's lock
// expiry (9 s) and health check (5 s), then the assignment refresh and message poll (2 s each); a
// loaded 2-core machine gets the rest
const failoverBoundSeconds = 60
const createEveryMillis = 4_000

let s3: S3Server
let shared: Shared
const services: Array<Service> = []
const secrets = {
  API_KEY_HASH_KEY: randomBytes(32).toString("base64"),
  TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("base64")
}

beforeAll(async () => {
  s3 = await startS3Server({ buckets: ["pic2video"] })
  shared = await makeShared()
})

afterAll(async () => {
  for (const s of services) await s.stop("SIGKILL").catch(() => {})
  await s3?.close()
})

interface Created {
  readonly key: string
  id?: string
  acceptedAt?: number
  refusals: number
}

// the service's log lines: `[HH:MM:SS.mmm] INFO (#fiber): message`, in this machine's time zone
const runLog = /\[(\d\d):(\d\d):(\d\d)\.(\d{3})\] INFO[^\n]*render (rnd_[A-Za-z0-9]+) processing, attempt (\d+)/g
const today = (h: string, m: string, s: string, ms: string) => {
  const d = new Date()
  d.setHours(Number(h), Number(m), Number(s), Number(ms))
  return d.getTime() > Date.now() + 60_000 ? d.getTime() - 86_400_000 : d.getTime() // a run across midnight
}
/** A runner as `p2v-admin cluster status` lists it. */
interface Runner {
  readonly address: string
  readonly healthy: boolean
  readonly shards: number
  readonly renders_in_flight: number
}

/** render id -> every attempt seen in a runner's output */
const attemptsOf = (runners: Record<string, Service>) => {
  const attempts = new Map<string, Array<{ runner: string; attempt: number; at: number }>>()
  for (const [name, svc] of Object.entries(runners)) {
    for (const m of svc.output().matchAll(runLog)) {
      const list = attempts.get(m[5]) ?? []
      list.push({ runner: name, attempt: Number(m[6]), at: today(m[1], m[2], m[3], m[4]) })
      attempts.set(m[5], list)
    }
  }
  return attempts
}
const receiptLog = /\[(\d\d):(\d\d):(\d\d)\.(\d{3})\] INFO[^\n]*render (rnd_[A-Za-z0-9]+) received/g
/** render id -> every delivery to a runner (before it waits for a slot), in time order */
const receiptsOf = (runners: Record<string, Service>) => {
  const receipts = new Map<string, Array<{ runner: string; at: number }>>()
  for (const [name, svc] of Object.entries(runners)) {
    for (const m of svc.output().matchAll(receiptLog)) {
      const list = receipts.get(m[5]) ?? []
      list.push({ runner: name, at: today(m[1], m[2], m[3], m[4]) })
      receipts.set(m[5], list)
    }
  }
  for (const list of receipts.values()) list.sort((a, b) => a.at - b.at)
  return receipts
}
const addressOf = (svc: Service) => /cluster runner at (\S+?)"?\s/.exec(svc.output())?.[1]
const executedBy = (runners: Record<string, Service>, name: string) =>
  [...attemptsOf(runners).values()].filter((list) => list.some((a) => a.runner === name)).length

it(
  "renders keep flowing while a runner joins, one drains (SIGTERM) and one is killed (kill -9): none lost, none charged twice",
  async () => {
    // Slots are not the limit (a delivered render starts at once), so a wait measures delivery and
    // handover, not a queue; short, cheap renders at ordinary priority keep a shared machine usable.
    const testStarted = Date.now()
    // progress, so a run that is cut short still says how far it got
    const mark = (what: string) =>
      console.log(`join/leave +${((Date.now() - testStarted) / 1000).toFixed(0)} s: ${what}`)
    const common = {
      ...s3.env("pic2video", "scaleout"),
      ...secrets,
      RENDER_SECONDS: "1",
      RENDER_CONCURRENCY: "8",
      RENDER_NICE: "0",
      RENDER_X264_PRESET: "superfast"
    }
    const own = (name: string) => ({ ...common, DATA_DIR: fs.mkdtempSync(Path.join(os.tmpdir(), `p2v-${name}-`)) })
    const start = async (name: string, entry: "api" | "runner") => {
      const svc = await startService(shared, own(name), entry)
      services.push(svc)
      return svc
    }
    // one at a time: the first start of a database creates the schema, and concurrent DDL would collide
    const api = await start("api", "api")
    const r1 = await start("r1", "runner")
    const r2 = await start("r2", "runner")
    const runners: Record<string, Service> = { r1, r2 }
    const db = new pg.Client({ connectionString: shared.databaseUrl })
    await db.connect()
    const ops = inProcessAdmin(api.env)
    try {
      const owner = await keyed(ops, "custom", ["--creates-per-minute", "1000", "--reads-per-minute", "100000"], [
        "--included",
        "1000"
      ])
      const http = client(api.baseUrl, owner.secret)
      const uploadStarted = Date.now()
      const upload = await http.upload(
        new Uint8Array(fs.readFileSync(Path.join(import.meta.dirname, "../fixtures/rocket.jpg"))),
        { filename: "rocket.jpg" }
      )
        .catch((e) => {
          throw new Error(`upload failed after ${Date.now() - uploadStarted} ms: ${e.cause ?? e}\n${api.output()}`)
        })
      expect(upload.status).toBe(201)
      console.log(
        `join/leave: processes up in ${((uploadStarted - testStarted) / 1000).toFixed(1)} s, upload ${
          Date.now() - uploadStarted
        } ms`
      )
      const mediaId = (await upload.json()).id as string

      // ---- a steady stream of creates; a refused one (503 while a key's entity moves) is retried with its key
      const created: Array<Created> = []
      const statuses = new Map<number, number>()
      let creating = true
      const create = async (c: Created) => {
        for (let tries = 0; tries < 30; tries++) {
          const res = await http.postJson("/api/v1/renders", {
            media_id: mediaId,
            quote: `Scale out ${created.length}`
          }, { "idempotency-key": c.key })
            .catch(() => undefined)
          if (res !== undefined) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
          if (res?.status === 202) {
            c.id = (await res.json()).id
            c.acceptedAt = Date.now()
            return
          }
          await res?.text()
          c.refusals++
          await new Promise((r) => setTimeout(r, 1_000))
        }
      }
      const pending: Array<Promise<void>> = []
      const stream = (async () => {
        while (creating) {
          const c: Created = { key: randomUUID(), refusals: 0 }
          created.push(c)
          pending.push(create(c))
          await new Promise((r) => setTimeout(r, createEveryMillis))
        }
      })()
      const phase = (what: string, check: () => boolean | Promise<boolean>, ms = 120_000) =>
        waitFor(
          async () => await check(),
          ms,
          `${what}; creates ${created.length}, statuses ${JSON.stringify([...statuses])}\n--- api\n${
            api.output().slice(-1500)
          }\n${Object.entries(runners).map(([n, s]) => `--- ${n}\n${s.output().slice(-1500)}`).join("\n")}`
        )
      const status = async () => {
        const r = await admin(api.env, "cluster", "status")
        expect(r.code, r.stderr).toBe(0)
        return r.json
      }

      // ---- two runners share the work
      await phase(
        "both first runners to execute renders",
        () => executedBy(runners, "r1") > 0 && executedBy(runners, "r2") > 0
      )
      mark("both runners executed renders")
      const two = await status()
      expect(two.object).toBe("cluster_status")
      expect(two.runners.filter((r: Runner) => r.healthy).map((r: Runner) => r.address).sort()).toEqual(
        [addressOf(r1), addressOf(r2)].sort()
      )
      expect(two.runners.reduce((n: number, r: Runner) => n + r.shards, 0)).toBe(300)
      for (const r of two.runners) {
        expect(Object.keys(r).sort()).toEqual(
          [
            "address",
            "healthy",
            "imports_in_flight",
            "last_heartbeat",
            "machine_id",
            "renders_in_flight",
            "seconds_since_heartbeat",
            "shards"
          ]
        )
        expect(r.shards).toBeGreaterThan(50)
        expect(Date.parse(r.last_heartbeat)).toBeGreaterThan(Date.now() - 60_000)
      }

      // ---- a third runner joins under load and takes a share
      const joinedAt = Date.now()
      const r3 = await start("r3", "runner")
      runners.r3 = r3
      await phase(
        "status to show three healthy runners",
        async () => (await status()).runners.filter((r: Runner) => r.healthy).length === 3,
        30_000
      )
      const threeAt = Date.now()
      const joinedAfter = (threeAt - joinedAt) / 1000
      mark("three runners")
      const three = await status()
      expect(three.runners.reduce((n: number, r: Runner) => n + r.shards, 0)).toBe(300)
      expect(three.runners.every((r: Runner) => r.shards > 30)).toBe(true)
      expect(three.queue.renders_processing).toBeGreaterThanOrEqual(
        three.runners.reduce((n: number, r: Runner) => n + r.renders_in_flight, 0) +
          three.unassigned.renders_in_flight - 1
      )

      // ---- one drains on SIGTERM (exit 0), then another is killed outright, each while rendering
      const busy = async (name: string) => {
        const running = [...attemptsOf(runners)].filter(([, list]) => list[list.length - 1]?.runner === name).map((
          [id]
        ) => id)
        if (running.length === 0) return false
        const { rows } = await db.query(
          `SELECT count(*)::int AS n FROM renders WHERE id = ANY($1) AND status = 'processing'`,
          [running]
        )
        return rows[0].n > 0
      }
      await phase("r1 to be rendering", () => busy("r1"))
      const drainStarted = Date.now()
      expect(await r1.stop("SIGTERM")).toBe(0)
      const drainSeconds = (Date.now() - drainStarted) / 1000
      mark("r1 drained")
      await phase("r2 to be rendering", () => busy("r2"))
      const killedAt = Date.now()
      r2.process.kill("SIGKILL")
      // renders keep coming for a moment with one runner left, then the stream stops
      await new Promise((r) => setTimeout(r, 4_000))
      creating = false
      await stream
      await Promise.all(pending)
      mark(`creates stopped: ${created.length} sent`)

      // ---- every accepted render ends
      const accepted = created.filter((c) => c.id !== undefined)
      const ids = accepted.map((c) => c.id!)
      await phase("every accepted render to end", async () => {
        const { rows } = await db.query(
          `SELECT count(*)::int AS n FROM renders WHERE id = ANY($1) AND status IN ('queued', 'processing')`,
          [ids]
        )
        return rows[0].n === 0
      }, 180_000)
      mark("every render ended")
      const after = await status()
      const live = after.runners.filter((r: Runner) => r.healthy)
      expect(live).toHaveLength(1)
      expect(live[0].shards).toBe(300)

      // ---- outcomes and money
      const { rows } = await db.query(
        `SELECT id, status, error_code, refunded_at, created_at, completed_at, attempts, idempotency_key FROM renders WHERE workspace_id = $1`,
        [owner.workspace.id]
      )
      expect(rows.length).toBe(accepted.length) // no render from a retried create, none lost
      expect(new Set(rows.map((r) => r.idempotency_key))).toEqual(new Set(accepted.map((c) => c.key)))
      for (const r of rows) {
        expect(
          r.status === "completed" || (r.status === "failed" && r.refunded_at !== null),
          `${r.id} ${r.status} ${r.error_code}`
        ).toBe(true)
      }
      const charged = rows.filter((r) => r.refunded_at === null).length
      const usage = await (await http.get("/api/v1/usage")).json()
      expect(usage.aesthetic_quotes.used).toBe(charged)
      const [{ used }] = (await db.query(`SELECT sum(used)::int AS used FROM allowance_usage WHERE workspace_id = $1`, [
        owner.workspace.id
      ])).rows
      expect(used).toBe(charged)
      expect(statuses.get(500) ?? 0).toBe(0)

      // ---- spread and waits
      const attempts = attemptsOf(runners)
      const finalRun = new Map<string, { runner: string; at: number }>()
      for (const [id, list] of attempts) {
        const last = list.reduce((a, b) => (b.attempt >= a.attempt ? b : a))
        finalRun.set(id, last)
      }
      const completed = rows.filter((r) => r.status === "completed")
      const perRunner: Record<string, number> = { r1: 0, r2: 0, r3: 0 }
      for (const r of completed) {
        const run = finalRun.get(r.id)
        expect(run, `no runner logged ${r.id}`).toBeDefined()
        perRunner[run!.runner]++
      }
      // A render's wait: from acceptance to its first delivery, and from each runner leaving it (SIGTERM,
      // kill -9, or its shard moving to the runner that joined) to its delivery to the next. Time queued
      // for a slot on a live runner, or rendering, is throughput, not failover, and is not counted.
      const left: Record<string, number> = { r1: drainStarted, r2: killedAt }
      const waits: Array<number> = []
      const receipts = receiptsOf(runners)
      for (const r of rows) {
        const list = receipts.get(r.id) ?? []
        expect(list.length, `no runner received ${r.id}`).toBeGreaterThan(0)
        waits.push((list[0].at - new Date(r.created_at).getTime()) / 1000)
        for (let i = 1; i < list.length; i++) {
          const [prev, next] = [list[i - 1], list[i]]
          if (prev.runner === next.runner) continue
          const movedAt = next.at < (left[prev.runner] ?? Infinity) ? threeAt : left[prev.runner]
          waits.push((next.at - Math.max(prev.at, movedAt)) / 1000)
        }
      }
      const rerun = rows.filter((r) => r.attempts > 1).length
      const longestWait = Math.max(...waits)
      const endToEnd = completed.map((r) =>
        (new Date(r.completed_at).getTime() - new Date(r.created_at).getTime()) / 1000
      )
      const figures = {
        renders_accepted: accepted.length,
        completed: completed.length,
        failed_refunded: rows.filter((r) => r.status === "failed").length,
        rerun_after_a_runner_left: rerun,
        executed_per_runner: perRunner,
        charged,
        creates_refused_then_retried: created.reduce((n, c) => n + c.refusals, 0),
        http_statuses: Object.fromEntries(statuses),
        longest_wait_s: Number(longestWait.toFixed(1)),
        median_wait_s: Number(waits.sort((a, b) => a - b)[Math.floor(waits.length / 2)].toFixed(1)),
        handovers: waits.length - rows.length,
        longest_end_to_end_s: Number(Math.max(...endToEnd).toFixed(1)),
        third_runner_holds_shards_after_s: Number(joinedAfter.toFixed(1)),
        sigterm_drain_s: Number(drainSeconds.toFixed(1)),
        since_kill_s: Number(((Date.now() - killedAt) / 1000).toFixed(1))
      }
      console.log(`join/leave figures ${JSON.stringify(figures)}`)
      expect(perRunner.r1).toBeGreaterThan(0)
      expect(perRunner.r2).toBeGreaterThan(0)
      expect(perRunner.r3).toBeGreaterThan(0)
      // the render killed with r2 ran again elsewhere
      expect(rerun).toBeGreaterThan(0)
      expect(longestWait).toBeLessThanOrEqual(failoverBoundSeconds)

      // ---- a finished video streams from the object store through the API, with the usual headers
      const { headers, bytes } = await downloadAndProbe(http, completed[completed.length - 1].id)
      expect(Number(headers.get("content-length"))).toBe(bytes.byteLength)
    } finally {
      // every process's log, to read after a run
      const logs = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-joinleave-logs-"))
      for (const [name, svc] of Object.entries({ api, ...runners })) {
        fs.writeFileSync(Path.join(logs, `${name}.log`), svc.output())
      }
      console.log(`join/leave logs in ${logs}`)
      await db.end()
      await ops.dispose()
    }
  },
  600_000
)
