import { execFile, spawnSync } from "node:child_process"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeShared, root, type Service, startService } from "../support/service.ts"

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

const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) =>
  spawnSync(p, ["--version"]).status === 0
)

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
      execFile(
        chromium!,
        [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--virtual-time-budget=10000",
          "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
          "--dump-dom",
          `${service.baseUrl}/docs`
        ],
        { maxBuffer: 64 * 1024 * 1024, timeout: 90_000 },
        (e, out) => (e ? reject(e) : resolve(out))
      )
    )
    for (const summary of ["List photos", "Upload a photo", "Create a render", "Get usage"]) {
      expect(dom).toContain(summary)
    }
    // the page as shown (the inline bundle itself names every control it has)
    const shown = dom.replace(/<script[\s\S]*?<\/script>/g, "")
    expect(shown).not.toContain("Generate SDKs")
  })
})

/** Lines wider than a terminal's 80 columns: none in either CLI's help. */
const over80 = (text: string) => text.split("\n").filter((line) => [...line].length > 80)

describe("admin --help", () => {
  it("prints the commands and exits 0, within 80 columns", () => {
    const r = spawnSync(process.execPath, [Path.join(root, "packages/server/src/bin/admin.ts"), "--help"], {
      encoding: "utf8"
    })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("key create WORKSPACE_ID --scopes")
    expect(r.stderr).toBe("")
    expect(over80(r.stdout)).toEqual([])
  })
})

describe("p2v --help", () => {
  // not spawnSync: a blocked worker misses vitest's heartbeats
  const p2v = (...args: Array<string>) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [Path.join(root, "packages/client/src/bin/p2v.ts"), ...args], {
        env: { PATH: process.env.PATH ?? "" }
      }, (_e, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }))
    })

  it("lists each command's usage with its description below, within 80 columns", async () => {
    const r = await p2v("--help")
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toBe("")
    expect(r.stdout).toMatch(
      /\n {2}status \[--wait\] \[--deadline integer\] \[--json\] <RENDER_ID>\n {6}Show a render's status/
    )
    expect(r.stdout).toMatch(/\n {2}render \[options\] <MEDIA_ID\|FILE>\n/)
    expect(r.stdout).toMatch(/--first-byte-timeout SECONDS\n.*Default 60/)
    expect(r.stdout).toMatch(/\n {2}7 {4}unexpected answer from the service/)
    expect(r.stdout).toMatch(/\n {2}8 {4}batch: stopped creating at the spend cap or quota \(N left\)\n/)
    expect(r.stdout).not.toContain("\u001b")
    expect(over80(r.stdout)).toEqual([])
  })

  it("gives each command's help within 80 columns, its options listed once", async () => {
    // in this process (what `p2v COMMAND --help` prints, without starting a process per command)
    const { helpFor } = await import("../../packages/client/src/Cli.ts")
    const commands = [["upload"], ["render"], ["status"], ["download"], ["media"], ["media", "list"], ["import"], [
      "usage"
    ], ["batch"]]
    const helps = commands.map((command) => helpFor([...command, "--help"])!)
    for (const [i, command] of commands.entries()) {
      expect(helps[i].missing).toBe(false)
      expect(helps[i].text).toMatch(new RegExp(`^Usage: p2v ${command.join(" ")}\\b`))
      expect(over80(helps[i].text), command.join(" ")).toEqual([])
    }
    expect(helpFor(["render", "--quote", "x", "-h"])?.text).toBe(helps[1].text)
    expect(helpFor(["--idle-timeout", "5", "usage", "--help"])?.text).toBe(helps[7].text)
    expect(helpFor(["usage"])).toBeUndefined()
    const render = (await p2v("render", "--help")).stdout
    expect(render).toContain("[--image-class CHOICE]")
    expect(render).toMatch(/--image-class CHOICE\n {6}One of the following: person, doll_figurine,/)
    expect(render).not.toMatch(/This setting is optional|A user-defined piece of text/)
    const batch = helps[8].text
    expect(batch).toMatch(/^Usage: p2v batch --out directory /)
    expect(batch).toMatch(/--concurrency integer\n {6}Photos uploading, and photos rendering, at once \(default 2\)\./)
    expect(batch).not.toMatch(/A directory\.|An existing file or directory\./)
  })

  it("shows the help with exit 2 when no command is given", async () => {
    const [r, media] = await Promise.all([p2v(), p2v("media")])
    expect(r.status).toBe(2)
    expect(r.stdout).toMatch(/^p2v 0\.1\.0: the Pic-to-Video API from a shell\./)
    expect(media.status).toBe(2)
    expect(media.stdout).toMatch(/^Usage: p2v media COMMAND\n/)
  })
})
