import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pngOfSize } from "../foundation/photos.ts"
import { makeShared, root, type Service, startService, waitFor, workspaceWithKey } from "../support/service.ts"

/**
 * The `p2v` CLI as a user runs it: a separate process (`npm exec p2v`'s entry) against the real
 * service, with P2V_API_KEY / P2V_BASE_URL, checked by its output, its files and its exit codes.
 */
let service: Service
let env: Record<string, string>
let dir: string

beforeAll(async () => {
  service = await startService(await makeShared())
  const { secret } = await workspaceWithKey(service.env)
  env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    P2V_API_KEY: secret,
    P2V_BASE_URL: service.baseUrl
  }
  dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-cli-"))
})

afterAll(async () => {
  await service?.stop()
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
})

interface Run {
  readonly code: number | null
  readonly signal?: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const start = (args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) => {
  const child = spawn(process.execPath, [Path.join(root, "packages/client/src/bin/p2v.ts"), ...args], {
    cwd: root,
    env: { ...env, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const out = { stdout: "", stderr: "" }
  child.stdout.on("data", (d) => (out.stdout += d))
  child.stderr.on("data", (d) => (out.stderr += d))
  const done = new Promise<Run>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, ...out })))
  return { child, out, done }
}
const p2v = (...args: Array<string>) => start(args).done

describe("p2v", () => {
  it("uploads, renders a file with --wait --out, and reports progress as plain lines when not on a terminal", async () => {
    const up = await p2v(
      "upload",
      "test/fixtures/rocket.jpg",
      "test/fixtures/coffee.png",
      "--tag",
      "cli",
      "--label",
      "Shot",
      "--json"
    )
    expect(up.code, up.stderr).toBe(0)
    const media = JSON.parse(up.stdout)
    expect(media.map((m: { readonly label: string; readonly tags: ReadonlyArray<string> }) => [m.label, m.tags]))
      .toEqual([["Shot", ["cli"]], ["Shot", ["cli"]]])
    expect(up.stderr).toBe("") // --json: nothing but the document

    const out = Path.join(dir, "a.mp4")
    const r = await p2v(
      "render",
      "test/fixtures/chelsea.png",
      "--quote",
      "Stay curious",
      "--text-color",
      "yellow",
      "--metadata",
      "order=7",
      "--out",
      out
    )
    expect(r.code, r.stderr).toBe(0)
    const id = /render (rnd_\w+) queued/.exec(r.stderr)?.[1]
    expect(id, r.stderr).toBeDefined()
    // not a terminal: one plain line per change, no carriage returns
    expect(r.stderr).not.toContain("\r")
    expect(r.stderr).toMatch(/\] 100% completed rnd_/)
    expect(r.stderr).toContain(`saved ${out}`)
    expect(r.stderr).toMatch(
      /\] 100% 234\.9 KB of 234\.9 KB sent, waiting for the service\nuploaded test\/fixtures\/chelsea\.png as \S+\n/
    )
    expect(r.stdout.trim()).toBe(`${id} completed -> ${out}`)
    expect(fs.readFileSync(out).subarray(4, 8).toString()).toBe("ftyp")

    const status = await p2v("status", id!, "--json")
    expect(status.code).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ id, status: "completed", metadata: { order: "7" } })
    const dl = await p2v("download", id!, "--out", Path.join(dir, "b.mp4"))
    expect(dl.code, dl.stderr).toBe(0)
    expect(fs.readFileSync(Path.join(dir, "b.mp4")).equals(fs.readFileSync(out))).toBe(true)

    const list = await p2v("media", "list", "--limit", "2")
    expect(list.code).toBe(0)
    expect(list.stdout.trim().split("\n")).toHaveLength(3) // two photos and the next page's command
    expect(list.stdout).toMatch(/more: p2v media list --cursor \S+/)
    const usage = await p2v("usage", "--json")
    expect(JSON.parse(usage.stdout).aesthetic_quotes.used).toBe(1)
  })

  it("shows an upload's bytes as plain lines, a line each quarter, when not on a terminal", async () => {
    const big = Path.join(dir, "big.png")
    fs.writeFileSync(big, await pngOfSize(3 * 1024 * 1024))
    const up = await p2v("upload", big)
    expect(up.code, up.stderr).toBe(0)
    const lines = up.stderr.trim().split("\n")
    expect(lines.map((l) => /\]\s+(\d+)%/.exec(l)?.[1] ?? l.split(" ")[0])).toEqual([
      "0",
      "25",
      "50",
      "75",
      "100",
      "uploaded"
    ])
    expect(lines[1]).toMatch(/^\[#{7}-{21}\] {2}25% 768\.0 KB of 3\.0 MB uploading .*big\.png$/)
    expect(lines[4]).toMatch(/ 3\.0 MB of 3\.0 MB sent, waiting for the service$/)
    expect(lines[5]).toBe(`uploaded ${big} as ${up.stdout.trim().split(" ")[0]}`)
    expect(up.stdout.trim()).toMatch(/ "big\.png"$/) // labelled by the file name, as --help says
  })

  it("uploads photos whose names are in any script, each labelled with its name exactly", async () => {
    const names = ["日本.jpg", "東京タワー.jpg", "€.jpg", "한.jpg", "😀.jpg"]
    const files = names.map((name) => {
      const path = Path.join(dir, name)
      fs.copyFileSync(Path.join(root, "test/fixtures/rocket.jpg"), path)
      return path
    })
    const up = await p2v("upload", ...files, "--json")
    expect(up.code, up.stderr).toBe(0)
    expect(
      JSON.parse(up.stdout).map((m: { readonly label: string; readonly mime_type: string }) => [m.label, m.mime_type])
    ).toEqual(names.map((n) => [n, "image/jpeg"]))
  })

  it("answers with its documented exit codes", async () => {
    const notFound = await p2v("status", "rnd_doesnotexist00000000000")
    expect(notFound.code).toBe(3)
    expect(notFound.stderr).toMatch(/^error: render_not_found: .+ \(request \S+\)\n$/)
    const noKey = await start(["usage"], { P2V_API_KEY: "" }).done
    expect(noKey.code).toBe(2)
    expect(noKey.stderr).toContain("P2V_API_KEY")
    const badArgs = await p2v("render")
    expect(badArgs.code).toBe(2)
    // a value the contract refuses is the arguments' fault, found before anything is sent
    const notAMediaId = await start(["render", "not-a-uuid"], { P2V_BASE_URL: "http://127.0.0.1:9" }).done
    expect(notAMediaId.code, notAMediaId.stderr).toBe(2)
    expect(notAMediaId.stderr).toBe(
      `error: media_id: Expected a Universally Unique Identifier, actual "not-a-uuid" (nothing was sent)\n`
    )
    const unreachable = await start(["usage"], { P2V_BASE_URL: "http://127.0.0.1:9" }).done
    expect(unreachable.code).toBe(6)
    const noFolder = await p2v("import", "some-folder")
    expect(noFolder.code).toBe(3)
    expect(noFolder.stderr).toContain("integration_not_connected")
  })

  it("Ctrl-C stops waiting with 130 and cancels nothing", async () => {
    const up = JSON.parse((await p2v("upload", "test/fixtures/rocket.jpg", "--json")).stdout)
    const run = start(["render", up[0].id, "--quote", "keep going", "--wait"])
    await waitFor(async () => /render rnd_\w+ queued/.test(run.out.stderr), 120_000, "the render to be created")
    run.child.kill("SIGINT")
    const r = await run.done
    expect(r.code, `signal ${r.signal}; stderr:\n${r.stderr}`).toBe(130)
    const id = /render (rnd_\w+) queued/.exec(r.stderr)![1]
    expect(r.stderr).toContain(`stopped waiting; ${id} goes on (p2v status ${id})`)
    // the render was not canceled: it finishes
    const waited = await p2v("status", id, "--wait", "--json")
    expect(waited.code, waited.stderr).toBe(0)
    expect(JSON.parse(waited.stdout).status).toBe("completed")
  })

  it("Ctrl-C during an upload stops it with 130, and says truly whether it can have been stored", async () => {
    const big = Path.join(dir, "stop.png")
    fs.writeFileSync(big, await pngOfSize(14 * 1024 * 1024))
    const count = async () =>
      JSON.parse((await p2v("media", "list", "--limit", "100", "--json")).stdout).data.length as number
    const before = await count()
    const run = start(["upload", big])
    await waitFor(async () => / MB of /.test(run.out.stderr), 60_000, "the upload to be under way")
    run.child.kill("SIGINT")
    const r = await run.done
    expect(r.code, r.stderr).toBe(130)
    expect(r.stdout).toBe("")
    const line = r.stderr.trim().split("\n").at(-1)!
    if (line.startsWith("stopped uploading")) {
      // cut short: the service cannot have stored it
      expect(line).toBe(`stopped uploading ${big}; it was not stored`)
      expect(await count()).toBe(before)
    } else {
      expect(line).toBe(`stopped; ${big} was sent whole and may have been stored (p2v media list)`)
    }
  })
})
