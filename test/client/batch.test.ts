import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, makeShared, type Service, startService, waitFor, workspaceWithKey } from "../support/service.ts"
import { batchCli, makePhotos, manifestOf, videosIn } from "./batch-cli.ts"

/**
 * `p2v batch` as a user runs it, a separate process against the real service: killed (SIGKILL) halfway
 * and run again, stopped by a spend cap, held back by a rate limit. Checked by its files, its manifest,
 * its exit codes and the workspace's usage (what was charged).
 */
let service: Service
let dir: string
let photos: string
let start: ReturnType<typeof batchCli>["start"]
let used: ReturnType<typeof batchCli>["used"]

beforeAll(async () => {
  service = await startService(await makeShared(), { RENDER_SECONDS: "1" })
  ;({ start, used } = batchCli(service))
  dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-batch-"))
  photos = Path.join(dir, "photos")
  await makePhotos(12, photos)
})

afterAll(async () => {
  await service?.stop()
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
})

describe("p2v batch", () => {
  it(
    "killed (SIGKILL) halfway and run again: 12 MP4s, 12 charges, every photo uploaded once, the manifest complete",
    async () => {
      const { secret } = await workspaceWithKey(service.env)
      const out = Path.join(dir, "resumed")
      const args = [photos, "--out", out, "--quote", "Twelve at once", "--concurrency", "3"]
      const first = start(secret, args)
      // one line per photo as it ends (not a terminal): kill once half are done
      await waitFor(
        async () => (first.out.stderr.match(/^\[\d+\/12\] completed /gm) ?? []).length >= 6,
        170_000,
        "six photos done"
      )
      first.child.kill("SIGKILL")
      const killed = await first.done
      expect(killed.signal).toBe("SIGKILL")
      const partway = manifestOf(out)
      expect(partway.filter((e) => e.status === "completed").length).toBeGreaterThanOrEqual(6)
      expect(partway.filter((e) => e.status === "completed").length).toBeLessThan(12)

      const second = await start(secret, [...args, "--json"]).done
      expect(second.code, second.stderr).toBe(0)
      const result = JSON.parse(second.stdout)
      expect(result.counts).toEqual({ completed: 12, failed: 0, skipped: 0, left: 0 })

      const videos = videosIn(out)
      expect(videos).toEqual(fs.readdirSync(photos).map((p) => p.replace(/\.jpg$/, ".mp4")).sort())
      for (const v of videos) expect(fs.readFileSync(Path.join(out, v)).subarray(4, 8).toString()).toBe("ftyp")
      expect(fs.readdirSync(out).filter((f) => f.endsWith(".partial"))).toEqual([])

      const manifest = manifestOf(out)
      expect(manifest).toHaveLength(12)
      for (const e of manifest) {
        expect(e).toMatchObject({ status: "completed", error_code: null, bytes: fs.statSync(e.output).size })
        expect(e.media_id).toMatch(/^[0-9a-f-]{36}$/)
        expect(e.render_id).toMatch(/^rnd_/)
        expect(e.idempotency_key).toMatch(/^p2v-batch:[0-9a-f]{64}$/)
      }
      // the renders done before the kill were not made again: 12 distinct renders, 12 charges
      expect(new Set(manifest.map((e) => e.render_id)).size).toBe(12)
      expect(await used(secret)).toBe(12)
      // uploaded once each: every upload happened (and was recorded) long before the kill
      const media = await (await client(service.baseUrl, secret).get("/api/v1/media?limit=100")).json()
      expect(media.data).toHaveLength(12)
    },
    400_000
  )

  it(
    "a spend cap of 5: 5 videos, \"stopped by the cap: 7 left\", exit 8; the renders accepted are collected; --captions per photo",
    async () => {
      const { secret } = await workspaceWithKey(service.env, { keyArgs: ["--spend-cap-24h", "5"] })
      const out = Path.join(dir, "capped")
      // a column that is not a render field stops the batch before anything is sent
      const bad = Path.join(dir, "bad.csv")
      fs.writeFileSync(bad, "file,qoute\nphoto-01.jpg,typo\n")
      const refused = await start(secret, [photos, "--out", out, "--captions", bad]).done
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain(`error: ${bad}:1: unknown column "qoute"`)
      expect(fs.existsSync(out)).toBe(false)

      // per-photo fields, quoted as CSV quotes them, replacing the command line's
      const captions = Path.join(dir, "captions.csv")
      fs.writeFileSync(
        captions,
        `file,quote,metadata\r\nphoto-01.jpg,"One, ""quoted""",{"row":"1"}\r\nphoto-02.jpg,,"{""row"":""2""}"\r\n`
      )
      const r = await start(secret, [
        photos,
        "--out",
        out,
        "--quote",
        "Only five",
        "--concurrency",
        "2",
        "--captions",
        captions
      ]).done
      expect(r.code, r.stderr).toBe(8)
      expect(r.stderr).toContain("stopped by the cap: 7 left (spend_cap_reached: ")
      expect(r.stdout.trim()).toMatch(/^12 photos: 5 completed, 0 failed, 0 skipped, 7 left in \d+:\d\d; manifest /)
      expect(videosIn(out)).toHaveLength(5)
      const manifest = manifestOf(out)
      expect(manifest.filter((e) => e.status === "completed")).toHaveLength(5)
      expect(manifest.filter((e) => e.status === "left")).toHaveLength(7)
      expect(await used(secret)).toBe(5)
      const api = client(service.baseUrl, secret)
      for (const e of manifest.filter((e) => e.status === "completed")) {
        const render = await (await api.get(`/api/v1/renders/${e.render_id}`)).json()
        const row = { "photo-01.jpg": { row: "1" }, "photo-02.jpg": { row: "2" } }[Path.basename(e.photo) as string] ??
          {}
        expect(render.metadata, e.photo).toEqual(row)
      }
    },
    300_000
  )

  it("photos whose names are in any script are uploaded and rendered, each video named after its photo", async () => {
    const { secret } = await workspaceWithKey(service.env)
    const named = Path.join(dir, "named")
    fs.mkdirSync(named)
    const names = ["東京タワー", "😀"]
    names.forEach((name, i) =>
      fs.copyFileSync(Path.join(photos, `photo-0${i + 1}.jpg`), Path.join(named, `${name}.jpg`))
    )
    const out = Path.join(dir, "named-out")
    const r = await start(secret, [named, "--out", out, "--quote", "名前"]).done
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim()).toMatch(/^2 photos: 2 completed, 0 failed, 0 skipped/)
    expect(videosIn(out)).toEqual(names.map((n) => `${n}.mp4`).sort())
    const media = await (await client(service.baseUrl, secret).get("/api/v1/media")).json()
    expect(media.data.map((m: { readonly label: string }) => m.label).sort()).toEqual(
      names.map((n) => `${n}.jpg`).sort()
    )
  }, 300_000)

  it(
    "--concurrency 4 under a rate limit of 10 a minute: the 429s are waited out, none reaches the user as a failure",
    async () => {
      const { secret } = await workspaceWithKey(service.env, {
        keyArgs: ["--creates-per-minute", "10", "--uploads-per-minute", "10"]
      })
      const out = Path.join(dir, "limited")
      const r = await start(secret, [photos, "--out", out, "--quote", "Not too fast", "--concurrency", "4"]).done
      expect(r.code, r.stderr).toBe(0)
      // the limit was met (12 uploads in the first minute), and waited out
      expect(r.stderr).toMatch(/^waiting \d+ s: rate_limit_exceeded/m)
      expect(r.stderr).not.toMatch(/ failed /)
      expect(videosIn(out)).toHaveLength(12)
      expect(manifestOf(out).every((e) => e.status === "completed")).toBe(true)
      expect(await used(secret)).toBe(12)
    },
    400_000
  )
})
