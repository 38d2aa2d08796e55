import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeShared, root, runCommand, type Service, startService } from "../support/service.ts"

/**
 * The served /openapi.json as third-party tools read it: Redocly's `recommended` ruleset and
 * Spectral's `spectral:oas` report no error and no warning. Both linters run offline from
 * node_modules on the test's own Node; the document is the one the service serves, not one built
 * in-process.
 */
let service: Service
let dir: string
// as an operator sets it (Redocly flags localhost and example.com servers, as it should)
const publicBaseUrl = "https://video.pic2video.test"

const run = (args: ReadonlyArray<string>, cwd: string) =>
  // no telemetry or update checks (nothing leaves the machine anyway)
  runCommand(process.execPath, args, {
    cwd,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" }
  })

beforeAll(async () => {
  service = await startService(await makeShared(), { PUBLIC_BASE_URL: publicBaseUrl })
  const res = await fetch(`${service.baseUrl}/openapi.json`)
  expect(res.status).toBe(200)
  dir = fs.mkdtempSync(Path.join(os.tmpdir(), "p2v-openapi-"))
  fs.writeFileSync(Path.join(dir, "openapi.json"), await res.text())
  for (const f of ["redocly.yaml", ".redocly.lint-ignore.yaml", ".spectral.yaml"]) {
    fs.copyFileSync(Path.join(root, "test/openapi", f), Path.join(dir, f))
  }
})

afterAll(async () => {
  await service?.stop()
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
})

describe("the served OpenAPI document", () => {
  it("names PUBLIC_BASE_URL as its server", () => {
    const doc = JSON.parse(fs.readFileSync(Path.join(dir, "openapi.json"), "utf8"))
    expect(doc.servers).toEqual([{ url: publicBaseUrl, description: "This service" }])
  })

  it("passes Redocly's recommended ruleset with no error and no warning", async () => {
    const r = await run([
      Path.join(root, "node_modules/@redocly/cli/bin/cli.js"),
      "lint",
      "openapi.json",
      "--format",
      "json"
    ], dir)
    const report = JSON.parse(r.stdout)
    expect(
      report.problems.map((p: { readonly severity: string; readonly ruleId: string; readonly message: string }) =>
        `${p.severity} ${p.ruleId}: ${p.message}`
      )
    ).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
    expect(r.code, r.stderr).toBe(0)
  })

  it("passes Spectral's spectral:oas ruleset with no error, warning, info or hint", async () => {
    const r = await run([
      Path.join(root, "node_modules/@stoplight/spectral-cli/dist/index.js"),
      "lint",
      "openapi.json",
      "--ruleset",
      ".spectral.yaml",
      "--format",
      "json",
      "--fail-severity",
      "hint",
      "--quiet"
    ], dir)
    const results = JSON.parse(r.stdout.trim() === "" ? "[]" : r.stdout)
    expect(
      results.map((
        p: {
          readonly severity: number
          readonly code: string
          readonly message: string
          readonly path: ReadonlyArray<string>
        }
      ) => `${p.severity} ${p.code}: ${p.message} at ${p.path.join(".")}`)
    ).toEqual([])
    expect(r.code, r.stderr).toBe(0)
  })
})
