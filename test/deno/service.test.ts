import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { multipart, rawRequest } from "../foundation/http.ts"
import {
  type Api,
  createRender,
  downloadAndProbe,
  getRender,
  pollToEnd,
  probeBytes,
  stopOrKill,
  uploadPhoto,
  usedOf
} from "../renders/helpers.ts"
import { expectError, expectNoRateLimitHeaders, expectOk } from "../support/limits.ts"
import {
  adminOk,
  client,
  command,
  makeShared,
  root,
  type Service,
  type Shared,
  startService,
  workspaceWithKey
} from "../support/service.ts"

/**
 * The service on Deno 2 (the npm-shipped `deno`, run as `npm run start:deno` / `api:deno` /
 * `runner:deno` run it): a conformance subset in both shapes, one process on its embedded PostgreSQL
 * and an api process beside two runners on a shared DATABASE_URL. The operator CLI runs on Deno too.
 */
process.env.P2V_TEST_RUNTIME = "deno" // read by the harness at each start: every process of this file

/** The executable a process runs (Linux): proves the harness did not fall back to Node. */
const executableOf = (pid: number) => Path.basename(fs.readlinkSync(`/proc/${pid}/exe`))

/** The nice value of a process's main thread (/proc/<pid>/stat field 19, counted after the comm). */
const niceOf = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])
}

interface Shape {
  /** the process answering HTTP */
  readonly api: Service
  /** every process of the shape, the api included */
  readonly all: ReadonlyArray<Service>
  /** a data directory the shape made for itself, removed afterwards */
  readonly dataDir?: string
}

const conformance = (name: string, start: () => Promise<Shape>) =>
  describe(name, () => {
    let shape: Shape
    let api: Api
    let secret: string
    let env: Record<string, string>

    beforeAll(async () => {
      shape = await start()
      env = shape.api.env
      // the operator CLI, spawned on Deno with the service's environment
      secret = (await workspaceWithKey(env)).secret
      api = client(shape.api.baseUrl, secret)
    }, 180_000)

    afterAll(async () => {
      await Promise.all((shape?.all ?? []).map((s) => stopOrKill(s, 30_000)))
      if (shape?.dataDir !== undefined) fs.rmSync(shape.dataDir, { recursive: true, force: true })
    })

    it("every process runs on Deno", () => {
      for (const s of shape.all) expect(executableOf(s.process.pid!)).toBe("deno")
    })

    it("/healthz and /readyz answer 200 without a key, with X-Request-Id", async () => {
      for (const [path, body] of [["/healthz", { status: "ok" }], ["/readyz", { status: "ready" }]] as const) {
        const res = await fetch(`${shape.api.baseUrl}${path}`)
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual(body)
        expect(res.headers.get("x-request-id") ?? "").not.toBe("")
        expectNoRateLimitHeaders(res)
      }
    })

    it("key errors: missing, invalid, revoked, insufficient scope; every 401 names the Bearer scheme", async () => {
      const missing = await client(shape.api.baseUrl).get("/api/v1/media")
      expect(missing.headers.get("www-authenticate")).toBe("Bearer")
      await expectError(missing, 401, "missing_api_key")
      const invalid = await client(shape.api.baseUrl, "p2v_live_nonsense").get("/api/v1/media")
      expect(invalid.headers.get("www-authenticate")).toBe("Bearer")
      await expectError(invalid, 401, "invalid_api_key")
      const readOnly = await workspaceWithKey(env, { scopes: "media:read" })
      await expectError(
        await client(shape.api.baseUrl, readOnly.secret).upload(new Uint8Array([1])),
        403,
        "insufficient_scope"
      )
      await adminOk(env, "key", "revoke", readOnly.key.id)
      await expectError(await client(shape.api.baseUrl, readOnly.secret).get("/api/v1/media"), 401, "api_key_revoked")
    })

    it("a body the service never read (an upload answered 401) does not stall the keep-alive connection", async () => {
      // one socket, so the second request must reuse the connection the unread body came on
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      try {
        // bigger than one socket read, so the server must keep reading the connection to get past it
        const form = multipart([{
          name: "file",
          filename: "big.png",
          type: "image/png",
          bytes: new Uint8Array(1024 * 1024)
        }])
        const refused = await rawRequest(`${shape.api.baseUrl}/api/v1/media`, {
          method: "POST",
          agent,
          headers: { "content-type": form.contentType },
          body: form.body
        })
        expect(refused.status).toBe(401)
        for (let i = 0; i < 3; i++) {
          const next = await rawRequest(`${shape.api.baseUrl}/healthz`, { agent })
          expect(next.status).toBe(200)
        }
      } finally {
        agent.destroy()
      }
    })

    it("upload → list (dimensions filled) → preview", async () => {
      const media = await uploadPhoto(api, "rocket.jpg", shape.api) as {
        readonly id: string
        readonly preview_url: string
      }
      expect(media).toMatchObject({ object: "media", mime_type: "image/jpeg", width: null, height: null })
      const list = await expectOk(await api.get("/api/v1/media"))
      const listed = list.data.find((m: { readonly id: string }) => m.id === media.id)
      expect(listed).toMatchObject({ id: media.id, mime_type: "image/jpeg" })
      expect(listed.width).toBeGreaterThan(0)
      expect(listed.height).toBeGreaterThan(0)
      const preview = await api.get(new URL(media.preview_url).pathname)
      expect(preview.status).toBe(200)
      expect(preview.headers.get("content-type")).toBe("image/jpeg")
      const bytes = new Uint8Array(await preview.arrayBuffer())
      expect([bytes[0], bytes[1], bytes[2]]).toEqual([0xff, 0xd8, 0xff])
    })

    it("render: queued → completed, a valid 1080×1920 MP4 to download, charged exactly once (idempotent replay included)", async () => {
      const before = await usedOf(api)
      const { id: mediaId } = await uploadPhoto(api, "coffee.png", shape.api)
      const created = await createRender(api, { media_id: mediaId, quote: "Runs on Deno ✨" }, {
        "idempotency-key": `deno-${name}`
      })
      const replay = await createRender(api, { media_id: mediaId, quote: "Runs on Deno ✨" }, {
        "idempotency-key": `deno-${name}`
      })
      expect(replay.id).toBe(created.id)
      const { render } = await pollToEnd(api, created.id, 240_000)
      expect(render.status, JSON.stringify(render)).toBe("completed")
      expect(render).toMatchObject({
        progress: 100,
        error: null,
        asset: { content_type: "video/mp4", width: 1080, height: 1920 }
      })
      const { probe, bytes } = await downloadAndProbe(api, created.id)
      expect(bytes.length).toBe(render.asset.byte_size)
      expect(probe.durationSec).toBeGreaterThan(0.5)
      expect(await usedOf(api)).toBe(before + 1)
      expect((await getRender(api, created.id)).status).toBe("completed")
      // renders lower only their own threads' priority: the processes themselves keep theirs
      for (const s of shape.all) expect(niceOf(s.process.pid!)).toBe(os.getPriority())
    })

    it("SIGTERM: every process exits 0", async () => {
      // runners first, so the api never outlives the cluster it is a client of
      const order = [...shape.all.filter((s) => s !== shape.api), shape.api]
      for (const s of order) expect(await s.stop("SIGTERM"), s.output().slice(-3000)).toBe(0)
      // the embedded PostgreSQL stopped with it (a running server keeps its postmaster.pid)
      if (shape.dataDir !== undefined) {
        expect(fs.existsSync(Path.join(shape.dataDir, "postgres", "postmaster.pid"))).toBe(false)
      }
    })
  })

conformance("one process on its embedded PostgreSQL (npm run start:deno)", async () => {
  const dataDir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-deno-"))
  const shared: Shared = { databaseUrl: "", dataDir }
  const one = await startService(shared, { RENDER_CONCURRENCY: "1" })
  expect(one.output()).toContain("embedded PostgreSQL on")
  return { api: one, all: [one], dataDir }
})

conformance("an api and two runners on DATABASE_URL (npm run api:deno, runner:deno)", async () => {
  const shared = await makeShared()
  const env = { RENDER_CONCURRENCY: "1" }
  // the first runner migrates the database; the second joins it
  const first = await startService(shared, env, "runner")
  const second = await startService(shared, env, "runner")
  const api = await startService(shared, env, "api")
  return { api, all: [api, first, second] }
})

describe("the renderer on Deno", () => {
  it(
    "makes the same MP4, byte for byte, as on Node (sharp, WebAssembly frames on worker threads, ffmpeg)",
    async () => {
      const dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-deno-render-"))
      const render = (cmd: [string, Array<string>]) =>
        new Promise<void>((resolve, reject) =>
          execFile(
            cmd[0],
            cmd[1],
            { cwd: root, maxBuffer: 16 * 1024 * 1024 },
            (err, _out, stderr) => err ? reject(new Error(`${err.message}\n${stderr.slice(-2000)}`)) : resolve()
          )
        )
      try {
        const args = (
          out: string
        ) => ["test/fixtures/rocket.jpg", "--quote", "Same on Deno ✨", "--seconds", "1", "--out", Path.join(dir, out)]
        const script = Path.join(root, "packages/server/src/bin/render.ts")
        await render(command(script, args("deno.mp4")))
        await render([process.execPath, [script, ...args("node.mp4")]])
        const [deno, node] = ["deno.mp4", "node.mp4"].map((f) => fs.readFileSync(Path.join(dir, f)))
        expect((await probeBytes(deno)).height).toBe(1920)
        expect(deno.equals(node)).toBe(true)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    },
    240_000
  )
})
