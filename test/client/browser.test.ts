import { build } from "esbuild"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { root } from "../support/service.ts"

/**
 * The client is for browsers too: bundled for the browser platform (esbuild, vitest's own bundler),
 * nothing it imports may need a Node built-in (the domain index's node:crypto once did).
 */
describe("packages/client in a browser bundle", () => {
  it("bundles without Node built-ins", async () => {
    const result = await build({
      entryPoints: [Path.join(root, "packages/client/src/index.ts")],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent"
    }).catch((e: { errors: Array<{ text: string }> }) => ({ errors: e.errors, outputFiles: [] }))
    expect(result.errors.map((e) => e.text)).toEqual([])
    expect(result.outputFiles[0].text).not.toMatch(/from\s*["']node:/)
  })
})
