import * as Version from "@pic2video/client/Version"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeShared, root, runCommand, type Service, startService, workspaceWithKey } from "../support/service.ts"

/**
 * The standalone `p2v` (`npm run build:p2v-standalone`: Node's single executable application with
 * the bundled CLI inside) run where there is no `node` at all: PATH is an empty directory.
 */
const exe = Path.join(root, "packages/client/standalone/p2v")
let service: Service
let secret: string
let dir: string

beforeAll(async () => {
  const built = await runCommand(process.execPath, [Path.join(root, "scripts/build-client.ts"), "--standalone"])
  expect(built.code, `${built.stdout}${built.stderr}`).toBe(0)
  console.log(built.stdout.trim().split("\n").at(-1))
  service = await startService(await makeShared())
  secret = (await workspaceWithKey(service.env)).secret
  dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-standalone-"))
  fs.mkdirSync(Path.join(dir, "empty"))
  fs.copyFileSync(Path.join(root, "test/fixtures/rocket.jpg"), Path.join(dir, "rocket.jpg"))
}, 300_000)

afterAll(async () => {
  await service?.stop()
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
})

describe("the standalone p2v", () => {
  it("says its version and renders with --wait --out, with no node on PATH", async () => {
    const env = { PATH: Path.join(dir, "empty"), HOME: dir, P2V_API_KEY: secret, P2V_BASE_URL: service.baseUrl }
    const version = await runCommand(exe, ["--version"], { cwd: dir, env })
    expect(version).toMatchObject({ code: 0, stdout: `${Version.text}\n\n`, stderr: "" })

    const r = await runCommand(exe, ["render", "rocket.jpg", "--quote", "No Node here", "--wait", "--out", "a.mp4"], {
      cwd: dir,
      env
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim()).toMatch(/^rnd_\w+ completed -> a\.mp4$/)
    expect(fs.readFileSync(Path.join(dir, "a.mp4")).subarray(4, 8).toString()).toBe("ftyp")

    const missing = await runCommand(exe, ["status", "rnd_doesnotexist0000000000"], { cwd: dir, env })
    expect(missing.code).toBe(3)
    const started = performance.now()
    await runCommand(exe, ["--version"], { cwd: dir, env })
    console.log(
      `standalone p2v: ${(fs.statSync(exe).size / 1024 / 1024).toFixed(1)} MiB; --version in ${
        (performance.now() - started).toFixed(0)
      } ms`
    )
  })
})
