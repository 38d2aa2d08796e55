import { build } from "esbuild"
import * as Path from "node:path"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium, noChromium, suite } from "../portal/support.ts"
import { makeShared, photo, root, type Service, startService, workspaceWithKey } from "../support/service.ts"

/**
 * The client's upload in a real browser (Debian's Chromium), against the real service over HTTP/1.1:
 * the page is served from the service's own origin (a route of the test), so the client's fetch is
 * same-origin. In a browser the client sends the upload as a FormData by default (the progress
 * callback hears once, at the end), because Chromium streams a request body only over HTTP/2 or
 * HTTP/3: the second case shows what `streamUploads: true` would do here.
 */
let service: Service | undefined
let secret: string
let browser: Browser | undefined
let bundle: string

beforeAll(async () => {
  if (noChromium) return
  service = await startService(await makeShared())
  secret = (await workspaceWithKey(service.env)).secret
  browser = await launchChromium()
  const out = await build({
    entryPoints: [Path.join(root, "packages/client/src/index.ts")],
    bundle: true,
    platform: "browser",
    format: "iife",
    globalName: "P2V",
    write: false,
    logLevel: "silent"
  })
  bundle = out.outputFiles[0].text
})

afterAll(async () => {
  await browser?.close()
  await service?.stop()
})

describe.skipIf(noChromium)(suite("the client's upload in Chromium"), () => {
  it("uploads from a page, the callback hearing the size once; a streamed body is refused over HTTP/1.1", async () => {
    const page = await browser!.newPage()
    const origin = service!.baseUrl.replace(/\/+$/, "")
    await page.route(
      `${origin}/__client-test`,
      (route) => route.fulfill({ contentType: "text/html", body: "<!doctype html><title>client</title>" })
    )
    await page.goto(`${origin}/__client-test`)
    await page.addScriptTag({ content: bundle })
    const bytes = Array.from(photo("rocket.jpg"))
    const result = await page.evaluate(async ({ apiKey, bytes }) => {
      // the bundle the page loaded: the client's main entry as a global
      const P2V = (globalThis as unknown as { readonly P2V: typeof import("@pic2video/client") }).P2V
      const file = new Blob([new Uint8Array(bytes)], { type: "image/jpeg" })
      const seen: Array<[number, number]> = []
      const media = await P2V.createClient({ apiKey, baseUrl: location.origin }).upload({
        file,
        filename: "rocket.jpg",
        onProgress: (sent: number, total: number) => seen.push([sent, total])
      })
      let streamed = ""
      try {
        await P2V.createClient({ apiKey, baseUrl: location.origin, streamUploads: true, maxAttempts: 1 }).upload({
          file,
          filename: "rocket.jpg"
        })
        streamed = "uploaded"
      } catch (e) {
        const { _tag, message } = e as { readonly _tag: string; readonly message: string }
        streamed = `${_tag}: ${message}`
      }
      return { size: media.file_size_bytes, seen, streamed }
    }, { apiKey: secret, bytes })
    expect(result.size).toBe(bytes.length)
    expect(result.seen).toEqual([[bytes.length, bytes.length]])
    expect(result.streamed).toMatch(/^TransportError: /)
    await page.close()
  })
})
