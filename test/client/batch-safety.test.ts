import { idempotencyKey } from "@pic2video/client/Batch"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Json } from "../support/limits.ts"
import {
  adminOk,
  makeShared,
  type Service,
  type Shared,
  startService,
  waitFor,
  workspaceWithKey
} from "../support/service.ts"
import { batchCli, type Finished, makePhotos, manifestOf, videosIn } from "./batch-cli.ts"

/**
 * `p2v batch` against what a user's disk, a shared `--out` and time do to it: whatever state the
 * manifest or `--out` is in, the same photo with the same fields is charged once and its render
 * found; files in `--out` are only ever created, never followed or replaced; a bad input is listed
 * and the rest go on; a signal ends it at once. A separate process against the real service, checked
 * by its files, its manifest, its exit code and the workspace's usage.
 */
let shared: Shared
let service: Service
let dir: string
let cli: ReturnType<typeof batchCli>

beforeAll(async () => {
  shared = await makeShared()
  service = await startService(shared, { RENDER_SECONDS: "1" })
  cli = batchCli(service)
  dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-batch-safety-"))
})

afterAll(async () => {
  await service?.stop()
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
})

/**
 * A day passes for one workspace: its idempotency records expire (the service forgets them after 24
 * hours) and its photos were uploaded 25 hours ago.
 */
const aDayLater = async (workspaceId: string, keyId: string) => {
  const db = new pg.Client({ connectionString: shared.databaseUrl })
  await db.connect()
  try {
    await db.query(
      "UPDATE idempotency_records SET created_at = created_at - interval '25 hours', expires_at = now() - interval '1 second' WHERE api_key_id = $1",
      [keyId]
    )
    await db.query("UPDATE media SET created_at = created_at - interval '25 hours' WHERE workspace_id = $1", [
      workspaceId
    ])
  } finally {
    await db.end()
  }
}

/** The process's end, or null if it has not ended within `ms` (then it is killed). */
const within = async (run: ReturnType<typeof cli.start>, ms: number): Promise<Finished | null> => {
  const timer = new Promise<null>((resolve) => setTimeout(() => resolve(null), ms))
  const ended = await Promise.race([run.done, timer])
  if (ended === null) {
    run.child.kill("SIGKILL")
    await run.done
  }
  return ended
}

const sha = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex")
const byName = (manifest: ReadonlyArray<Json>) => Object.fromEntries(manifest.map((e) => [Path.basename(e.photo), e]))

describe("p2v batch: charged once, whatever the manifest and --out", () => {
  it(
    "a run killed while photos wait for a slot keeps the render ids of earlier runs; the next run collects them without uploading or charging again, also once the idempotency records are gone",
    async () => {
      const { secret, workspace, key } = await workspaceWithKey(service.env, { keyArgs: ["--uploads-per-minute", "3"] })
      const photos = Path.join(dir, "waiting")
      const out = Path.join(dir, "waiting-out")
      await makePhotos(2, photos, "b-")
      const args = [photos, "--out", out, "--quote", "Wait your turn", "--concurrency", "1"]
      const first = await cli.start(secret, args).done
      expect(first.code, first.stderr).toBe(0)
      const rendered = byName(manifestOf(out))
      expect(rendered["b-01.jpg"].render_id).toMatch(/^rnd_/)

      // new photos that sort first: the earlier ones wait behind them, here for the upload rate limit
      await makePhotos(3, photos, "a-", 2)
      const second = cli.start(secret, args)
      await waitFor(
        async () => /^waiting \d+ s: rate_limit_exceeded/m.test(second.out.stderr),
        120_000,
        "the rate limit"
      )
      second.child.kill("SIGKILL")
      await second.done
      const partway = byName(manifestOf(out))
      for (const name of ["b-01.jpg", "b-02.jpg"]) {
        expect(partway[name], name).toMatchObject({
          render_id: rendered[name].render_id,
          media_id: rendered[name].media_id,
          status: "completed"
        })
      }

      const third = await cli.start(secret, [...args, "--json"]).done
      expect(third.code, third.stderr).toBe(0)
      expect(JSON.parse(third.stdout).counts).toEqual({ completed: 5, failed: 0, skipped: 0, left: 0 })
      const after = byName(manifestOf(out))
      for (const name of ["b-01.jpg", "b-02.jpg"]) expect(after[name].render_id).toBe(rendered[name].render_id)
      expect(await cli.used(secret)).toBe(5)
      expect(await cli.media(secret)).toHaveLength(5)

      // a day later, the videos gone: the manifest's render ids are downloaded again, nothing is charged
      await aDayLater(workspace.id, key.id)
      for (const v of videosIn(out)) fs.rmSync(Path.join(out, v))
      const fourth = await cli.start(secret, args).done
      expect(fourth.code, fourth.stderr).toBe(0)
      expect(videosIn(out)).toHaveLength(5)
      expect(await cli.used(secret)).toBe(5)
    },
    400_000
  )

  it(
    "identical files in one folder, a new --out, a manifest of junk, a truncated manifest: one render per photo and fields, found again; a day later unrendered until --rerender",
    async () => {
      const { secret, workspace, key } = await workspaceWithKey(service.env)
      const photos = Path.join(dir, "same")
      await makePhotos(2, photos)
      fs.copyFileSync(Path.join(photos, "photo-01.jpg"), Path.join(photos, "photo-01-copy.jpg"))
      const run = (out: string, ...extra: Array<string>) =>
        cli.start(secret, [photos, "--out", out, "--quote", "Once only", ...extra, "--json"]).done

      const first = await run(Path.join(dir, "same-1"))
      expect(first.code, first.stderr).toBe(0)
      expect(JSON.parse(first.stdout).counts).toEqual({ completed: 3, failed: 0, skipped: 0, left: 0 })
      const once = byName(manifestOf(Path.join(dir, "same-1")))
      expect(once["photo-01-copy.jpg"].render_id).toBe(once["photo-01.jpg"].render_id)
      expect(videosIn(Path.join(dir, "same-1"))).toEqual(["photo-01-copy.mp4", "photo-01.mp4", "photo-02.mp4"])
      expect(await cli.used(secret)).toBe(2)
      expect(await cli.media(secret)).toHaveLength(2)

      // the same photos and caption into a new --out, one with a manifest of junk, one with a truncated manifest
      const junk = Path.join(dir, "same-junk")
      fs.mkdirSync(junk)
      fs.writeFileSync(Path.join(junk, "batch.jsonl"), "not json\n{\"photo\": 12}\n[1,2]\n")
      const truncated = Path.join(dir, "same-truncated")
      fs.mkdirSync(truncated)
      const text = fs.readFileSync(Path.join(dir, "same-1", "batch.jsonl"), "utf8")
      fs.writeFileSync(Path.join(truncated, "batch.jsonl"), text.slice(0, Math.floor(text.length / 2)))
      for (const out of [Path.join(dir, "same-2"), junk, truncated]) {
        const r = await run(out)
        expect(r.code, `${out}: ${r.stderr}`).toBe(0)
        expect(JSON.parse(r.stdout).counts, out).toEqual({ completed: 3, failed: 0, skipped: 0, left: 0 })
        const found = byName(manifestOf(out))
        for (const name of Object.keys(once)) expect(found[name].render_id, `${out} ${name}`).toBe(once[name].render_id)
        expect(videosIn(out)).toHaveLength(3)
      }
      expect(await cli.used(secret)).toBe(2)
      expect(await cli.media(secret)).toHaveLength(2)

      // a day later the service has forgotten the keys: a new --out does not render them again unasked
      await aDayLater(workspace.id, key.id)
      const later = Path.join(dir, "same-later")
      const unasked = await run(later)
      expect(unasked.code, unasked.stderr).toBe(0)
      const skipped = JSON.parse(unasked.stdout)
      expect(skipped.counts).toEqual({ completed: 0, failed: 0, skipped: 3, left: 0 })
      for (const e of skipped.entries) {
        expect(e).toMatchObject({ status: "skipped", error_code: "rendered_before", render_id: null })
      }
      expect(await cli.used(secret)).toBe(2)

      // asked: rendered again, once per photo and fields, and the next plain run collects those
      const asked = await run(later, "--rerender")
      expect(asked.code, asked.stderr).toBe(0)
      expect(JSON.parse(asked.stdout).counts).toEqual({ completed: 3, failed: 0, skipped: 0, left: 0 })
      const again = byName(manifestOf(later))
      expect(again["photo-01-copy.jpg"].render_id).toBe(again["photo-01.jpg"].render_id)
      expect(again["photo-01.jpg"].render_id).not.toBe(once["photo-01.jpg"].render_id)
      expect(await cli.used(secret)).toBe(4)
      const plain = await run(later)
      expect(plain.code, plain.stderr).toBe(0)
      expect(byName(manifestOf(later))["photo-02.jpg"].render_id).toBe(again["photo-02.jpg"].render_id)
      expect(await cli.used(secret)).toBe(4)
      expect(await cli.media(secret)).toHaveLength(2)
    },
    400_000
  )

  it(
    "photos left at the allowance are rendered by the next run once it is raised (a refused create is not replayed for ever)",
    async () => {
      const { secret, workspace } = await workspaceWithKey(service.env, {
        plan: "custom",
        workspaceArgs: ["--included", "2"]
      })
      const photos = Path.join(dir, "allowance")
      const out = Path.join(dir, "allowance-out")
      await makePhotos(4, photos)
      const args = [photos, "--out", out, "--quote", "Two now, two later", "--concurrency", "1"]
      const first = await cli.start(secret, args).done
      expect(first.code, first.stderr).toBe(8)
      expect(await cli.used(secret)).toBe(2)
      await adminOk(service.env, "workspace", "update", workspace.id, "--included", "4")
      const second = await cli.start(secret, [...args, "--json"]).done
      expect(second.code, second.stderr).toBe(0)
      expect(JSON.parse(second.stdout).counts).toEqual({ completed: 4, failed: 0, skipped: 0, left: 0 })
      expect(await cli.used(secret)).toBe(4)
    },
    300_000
  )
})

describe("p2v batch: files in --out", () => {
  it("follows no symlink planted at OUT/x.mp4.partial or OUT/batch.jsonl.partial", async () => {
    const { secret } = await workspaceWithKey(service.env)
    const photos = Path.join(dir, "planted")
    const out = Path.join(dir, "planted-out")
    await makePhotos(1, photos)
    fs.mkdirSync(out)
    const victims = [Path.join(dir, "victim-video.txt"), Path.join(dir, "victim-manifest.txt")]
    for (const v of victims) fs.writeFileSync(v, "the user's own file\n")
    fs.symlinkSync(victims[0], Path.join(out, "photo-01.mp4.partial"))
    fs.symlinkSync(victims[1], Path.join(out, "batch.jsonl.partial"))
    const r = await cli.start(secret, [photos, "--out", out, "--quote", "No links"]).done
    expect(r.code, r.stderr).toBe(0)
    for (const v of victims) expect(fs.readFileSync(v, "utf8")).toBe("the user's own file\n")
    for (const f of ["photo-01.mp4", "batch.jsonl"]) expect(fs.lstatSync(Path.join(out, f)).isFile(), f).toBe(true)
    expect(fs.readFileSync(Path.join(out, "photo-01.mp4")).subarray(4, 8).toString()).toBe("ftyp")
    expect(manifestOf(out)).toHaveLength(1)
  }, 120_000)

  it(
    "never replaces a file: two photos of one name, a user's own video, a manifest line pointing outside --out",
    async () => {
      const { secret } = await workspaceWithKey(service.env)
      const x = Path.join(dir, "x")
      const y = Path.join(dir, "y")
      const other = Path.join(dir, "other")
      const same = "same01.jpg"
      await makePhotos(1, x, "same", 0)
      await makePhotos(2, y, "same", 0)
      fs.renameSync(Path.join(y, "same02.jpg"), Path.join(y, same))
      await makePhotos(2, other, "s", 4)
      const out = Path.join(dir, "names-out")
      const quote = "Mine is mine"
      const first = await cli.start(secret, [Path.join(x, same), "--out", out, "--quote", quote]).done
      expect(first.code, first.stderr).toBe(0)
      const xVideo = sha(Path.join(out, "same01.mp4"))

      // the user's own s05.mp4, and a line that says photo s06.jpg is done as a file outside --out
      fs.writeFileSync(Path.join(out, "s05.mp4"), "the user's own video\n")
      const victim = Path.join(dir, "hostname")
      fs.writeFileSync(victim, "victim\n")
      const s06 = Path.join(other, "s06.jpg")
      const forged = {
        photo: s06,
        sha256: null,
        media_id: null,
        render_id: null,
        idempotency_key: idempotencyKey(new Uint8Array(fs.readFileSync(s06)), { quote }),
        status: "completed",
        progress: 100,
        error_code: null,
        error_message: null,
        output: victim,
        bytes: fs.statSync(victim).size,
        seconds: 1
      }
      fs.appendFileSync(Path.join(out, "batch.jsonl"), `${JSON.stringify(forged)}\n`)

      const r = await cli.start(secret, [Path.join(y, same), Path.join(x, same), other, "--out", out, "--quote", quote])
        .done
      expect(r.code, r.stderr).toBe(0)
      const entries = byName(manifestOf(out).filter((e) => e.photo !== Path.join(x, same)))
      const manifest = manifestOf(out)
      const xEntry = manifest.find((e) => e.photo === Path.join(x, same))
      const yEntry = manifest.find((e) => e.photo === Path.join(y, same))
      expect(xEntry.output).toBe(Path.join(out, "same01.mp4"))
      expect(sha(Path.join(out, "same01.mp4"))).toBe(xVideo)
      expect(yEntry.output).toBe(Path.join(out, "same01-2.mp4"))
      expect(sha(yEntry.output)).not.toBe(xVideo)
      expect(r.stderr).toContain(`-> ${Path.join(out, "same01-2.mp4")}`)

      expect(fs.readFileSync(Path.join(out, "s05.mp4"), "utf8")).toBe("the user's own video\n")
      expect(entries["s05.jpg"]).toMatchObject({ status: "completed", output: Path.join(out, "s05-2.mp4") })
      expect(r.stderr).toMatch(/s05-2\.mp4 .*s05\.mp4 was taken/)

      expect(fs.readFileSync(victim, "utf8")).toBe("victim\n")
      expect(entries["s06.jpg"]).toMatchObject({ status: "completed", output: Path.join(out, "s06.mp4") })
      expect(fs.readFileSync(Path.join(out, "s06.mp4")).subarray(4, 8).toString()).toBe("ftyp")
      const outputs = manifest.filter((e) => e.output !== null).map((e) => e.output)
      expect(new Set(outputs).size).toBe(outputs.length)
      for (const o of outputs) expect(Path.dirname(o)).toBe(out)
    },
    200_000
  )
})

describe("p2v batch: bad inputs", () => {
  it(
    "a FIFO, a symlinked photo, a dangling link, an unreadable file and a text file: each listed, the rest rendered",
    async () => {
      const { secret } = await workspaceWithKey(service.env)
      // root reads any file: the batch runs as nobody so that one can be unreadable
      const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}
      fs.chmodSync(dir, 0o755)
      const photos = Path.join(dir, "mixed")
      const elsewhere = Path.join(dir, "elsewhere")
      await makePhotos(1, photos, "good-")
      await makePhotos(2, elsewhere, "linked-", 1)
      fs.symlinkSync(Path.join(elsewhere, "linked-02.jpg"), Path.join(photos, "linked.jpg"))
      fs.symlinkSync(Path.join(elsewhere, "gone.jpg"), Path.join(photos, "dangling.jpg"))
      execFileSync("mkfifo", [Path.join(photos, "pipe.jpg")])
      fs.copyFileSync(Path.join(elsewhere, "linked-03.jpg"), Path.join(photos, "locked.jpg"))
      fs.chmodSync(Path.join(photos, "locked.jpg"), 0o000)
      fs.writeFileSync(Path.join(photos, "notes.txt"), "not a photo\n")
      const out = Path.join(dir, "mixed-out")
      fs.mkdirSync(out, { mode: 0o777 })
      fs.chmodSync(out, 0o777)

      const run = cli.start(secret, [photos, "--out", out, "--quote", "Mixed", "--json"], as)
      const r = await within(run, 120_000)
      expect(r, "still running after 120 s").not.toBeNull()
      expect(r!.code, r!.stderr).toBe(0)
      const result = JSON.parse(r!.stdout)
      expect(result.counts).toEqual({ completed: 2, failed: 0, skipped: 4, left: 0 })
      const entries = byName(result.entries)
      expect(Object.keys(entries).sort()).toEqual([
        "dangling.jpg",
        "good-01.jpg",
        "linked.jpg",
        "locked.jpg",
        "notes.txt",
        "pipe.jpg"
      ])
      expect(entries["good-01.jpg"].status).toBe("completed")
      expect(entries["linked.jpg"].status).toBe("completed")
      expect(entries["pipe.jpg"]).toMatchObject({ status: "skipped", error_code: "not_a_file" })
      expect(entries["dangling.jpg"]).toMatchObject({ status: "skipped", error_code: "unreadable" })
      expect(entries["locked.jpg"]).toMatchObject({ status: "skipped", error_code: "unreadable" })
      expect(entries["notes.txt"]).toMatchObject({ status: "skipped", error_code: "unsupported_media_type" })
      expect(await cli.used(secret)).toBe(2)
    },
    200_000
  )

  it("SIGTERM ends it at once, a FIFO among the photos or not, the manifest intact", async () => {
    const { secret } = await workspaceWithKey(service.env)
    const photos = Path.join(dir, "signal")
    await makePhotos(3, photos, "b-")
    // given by name, first: it is opened before anything else
    const pipe = Path.join(dir, "a-pipe.jpg")
    execFileSync("mkfifo", [pipe])
    const out = Path.join(dir, "signal-out")
    const run = cli.start(secret, [pipe, photos, "--out", out, "--quote", "Stop now", "--concurrency", "1"])
    const rendering = () =>
      fs.existsSync(Path.join(out, "batch.jsonl")) && manifestOf(out).some((e) => e.status === "rendering")
    await waitFor(async () => rendering(), 20_000, "a render under way").catch(() => undefined)
    run.child.kill("SIGTERM")
    const r = await within(run, 10_000)
    expect(r, "SIGTERM did not end it within 10 s").not.toBeNull()
    expect(r!.code).toBe(130)
    const manifest = manifestOf(out)
    expect(manifest.map((e) => Path.basename(e.photo)).sort()).toEqual([
      "a-pipe.jpg",
      "b-01.jpg",
      "b-02.jpg",
      "b-03.jpg"
    ])
    expect(manifest.some((e) => /^rnd_/.test(e.render_id ?? ""))).toBe(true)
  }, 120_000)

  it("a captions row for a file that is not among the photos stops the batch before anything is sent", async () => {
    const { secret } = await workspaceWithKey(service.env)
    const photos = Path.join(dir, "captioned")
    await makePhotos(2, photos)
    const captions = Path.join(dir, "typo.csv")
    fs.writeFileSync(captions, "file,quote\nphoto-01.jpg,First\nphoto-2.jpg,Second\n")
    const out = Path.join(dir, "captioned-out")
    const r = await cli.start(secret, [photos, "--out", out, "--quote", "Default", "--captions", captions]).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain("photo-2.jpg")
    expect(fs.existsSync(out)).toBe(false)
    expect(await cli.used(secret)).toBe(0)

    const twice = Path.join(dir, "twice.csv")
    fs.writeFileSync(twice, "file,quote\nphoto-01.jpg,First\nphoto-01.jpg,Again\n")
    const again = await cli.start(secret, [photos, "--out", out, "--captions", twice]).done
    expect(again.code, again.stderr).toBe(2)
    expect(again.stderr).toContain(`${twice}:3: photo-01.jpg`)
    expect(await cli.used(secret)).toBe(0)
  }, 60_000)
})
