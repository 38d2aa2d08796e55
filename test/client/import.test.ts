import { Client } from "@pic2video/client"
import { Effect } from "effect"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectedWorkspace, driveEmulatorFor, image, reservePort, startDriveService } from "../drive/support.ts"
import type { DriveEmulator } from "../support/drive-emulator.ts"
import { makeShared, root, runCommand, type Service } from "../support/service.ts"

/**
 * Imports through packages/client and `p2v import --wait`, against the real service wired to the
 * drive emulator (test code standing in for the provider).
 */
let emulator: DriveEmulator
let service: Service
let secret: string

beforeAll(async () => {
  const at = await reservePort()
  emulator = await driveEmulatorFor(at.baseUrl)
  service = await startDriveService(await makeShared(), emulator, at)
  secret = (await connectedWorkspace(service, emulator)).secret
})

afterAll(async () => {
  await service?.stop()
  await emulator?.close()
})

const folderOf = async (name: string, files: number) => {
  const folder = emulator.addFolder({ name })
  for (let i = 0; i < files; i++) {
    emulator.addFile({
      name: `${i}.png`,
      parent: folder,
      mimeType: "image/png",
      bytes: await image("png", i + name.length)
    })
  }
  emulator.addFile({
    name: "notes.txt",
    parent: folder,
    mimeType: "text/plain",
    bytes: new TextEncoder().encode("not a photo")
  })
  return folder
}

describe("imports", () => {
  it("createImport + waitForImport follow an import to its end, with progress", async () => {
    const folder = await folderOf("Client", 3)
    const p2v = Effect.runSync(Client.makeWithFetch({ apiKey: secret, baseUrl: service.baseUrl }))
    const created = await Effect.runPromise(p2v.createImport(folder))
    expect(created).toMatchObject({ object: "media_import", status: "pending", folder_id: folder })
    const seen: Array<string> = []
    const done = await Effect.runPromise(
      p2v.waitForImport(created.id, { interval: "200 millis", onProgress: (i) => seen.push(i.status) })
    )
    expect(done).toMatchObject({ status: "completed", counts: { discovered: 4, imported: 3, skipped: 1, failed: 0 } })
    expect(seen.at(-1)).toBe("completed")
  })

  it("p2v import FOLDER --wait --json prints the finished import and exits 0", async () => {
    const folder = await folderOf("Cli", 2)
    const r = await runCommand(process.execPath, [
      Path.join(root, "packages/client/src/bin/p2v.ts"),
      "import",
      folder,
      "--wait",
      "--json"
    ], { env: { PATH: process.env.PATH ?? "", P2V_API_KEY: secret, P2V_BASE_URL: service.baseUrl } })
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({
      folder_id: folder,
      status: "completed",
      counts: { imported: 2, skipped: 1 }
    })
  })
})
