import { execFile, spawnSync } from "node:child_process"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeShared, root, startService, type Service } from "../support/service.ts"

/**
 * /docs is ours and works offline: Scalar's script is inlined, its configuration turns off the
 * vendor's fonts, toolbar (SDK generation, sharing) and telemetry, preselects Bearer and heads
 * operations by their summaries. The operator CLI answers --help.
 */
let service: Service

beforeAll(async () => {
  service = await startService(await makeShared())
})

afterAll(async () => {
  await service?.stop()
})

const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => spawnSync(p, ["--version"]).status === 0)

describe("/docs", () => {
  it("loads nothing from elsewhere and is configured as ours", async () => {
    const html = await (await fetch(`${service.baseUrl}/docs`)).text()
    // no external script, stylesheet or font tags: the one script is inline
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=["']?https?:/i)
    const config = JSON.parse(/dataset\.configuration = JSON\.stringify\((.*)\)\s*$/m.exec(html)![1])
    expect(config).toMatchObject({
      withDefaultFonts: false,
      showToolbar: "never",
      telemetry: false,
      operationTitleSource: "summary",
      authentication: { preferredSecurityScheme: "bearer" }
    })
  })

  it.skipIf(chromium === undefined)("renders in a browser that can reach nothing but the service", async () => {
    const dom = await new Promise<string>((resolve, reject) =>
      execFile(chromium!, [
        "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--dump-dom", `${service.baseUrl}/docs`
      ], { maxBuffer: 64 * 1024 * 1024, timeout: 90_000 }, (e, out) => (e ? reject(e) : resolve(out))))
    for (const summary of ["List photos", "Upload a photo", "Create a render", "Get usage"]) expect(dom).toContain(summary)
    // the page as shown (the inline bundle itself names every control it has)
    const shown = dom.replace(/<script[\s\S]*?<\/script>/g, "")
    expect(shown).not.toContain("Generate SDKs")
  })
})

describe("admin --help", () => {
  it("prints the commands and exits 0", () => {
    const r = spawnSync(process.execPath, [Path.join(root, "packages/server/src/bin/admin.ts"), "--help"], { encoding: "utf8" })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("key create WORKSPACE_ID --scopes")
    expect(r.stderr).toBe("")
  })
})
