import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pngOfSize } from "../foundation/photos.ts"
import { makeShared, root, runCommand, type Service, startService, workspaceWithKey } from "../support/service.ts"

/**
 * packages/client on Deno 2 (the `deno` npm package, run from node_modules): the Effect client and
 * the Promise facade against the real service over HTTP — fetch only, no Node-only API in the client.
 */
let service: Service
let secret: string

beforeAll(async () => {
  service = await startService(await makeShared())
  secret = (await workspaceWithKey(service.env)).secret
})

afterAll(async () => {
  await service?.stop()
})

describe("the client on Deno", () => {
  it("uploads with progress, renders, waits, downloads and reports errors by code", async () => {
    const dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-deno-"))
    const big = Path.join(dir, "big.png")
    fs.writeFileSync(big, await pngOfSize(5 * 1024 * 1024 + 777))
    const r = await runCommand(Path.join(root, "node_modules/.bin/deno"), ["run", "-A", "test/client/deno-client.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
        BASE_URL: service.baseUrl,
        API_KEY: secret,
        PHOTO: Path.join(root, "test/fixtures/rocket.jpg"),
        BIG_PHOTO: big
      }
    })
    fs.rmSync(dir, { recursive: true, force: true })
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout.trim().split("\n").at(-1)!)
    expect(out.runtime).toBe("deno 2.9.6")
    expect(out.effect).toMatchObject({ status: "completed", lastProgress: "completed", missing: "render_not_found" })
    expect(out.effect.bytes).toBe(out.effect.size)
    // the bytes are counted as Deno's fetch sends them: many calls, growing, ending at the file's size
    const size = 5 * 1024 * 1024 + 777
    expect(out.upload.size).toBe(size)
    expect(out.upload.tooLarge).toBe("payload_too_large")
    for (const client of [out.upload.effect, out.upload.promise]) {
      expect(client).toMatchObject({ last: [size, size], increasing: true, stored: size })
      expect(client.calls).toBeGreaterThan(10)
    }
    expect(out.promise).toMatchObject({ status: "completed", error: "import_not_found" })
    expect(out.promise.bytes).toBe(out.promise.size)
  })
})
