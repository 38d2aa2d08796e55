import * as fs from "node:fs"
import * as Path from "node:path"
import { gzipSync } from "node:zlib"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { expect } from "vitest"
import { type Admin, inProcessAdmin } from "../foundation/admin.ts"
import { type DriveEmulator, startDriveEmulator } from "../support/drive-emulator.ts"
import { freePort, makeShared, root, type Service, type Shared, startService } from "../support/service.ts"

/**
 * Harness of the portal's browser suite: the real service over real HTTP (as `npm start` runs it),
 * sign-in links from the operator CLI's own command code, and Debian's Chromium driven by
 * playwright-core. No browser is ever downloaded: the Chromium is the one `scripts/setup.mjs`
 * installs (or CHROMIUM_PATH). Every page a test visits goes through `check`: axe-core (zero
 * serious or critical violations), the landmarks the UI contract promises, no CSP violation or
 * uncaught script error, and a full-page screenshot in test-results/portal/NAME.png.
 */

// CHROMIUM_PATH, when set, is the only candidate (a wrong one skips, naming it, rather than testing another browser)
const explicit = process.env.CHROMIUM_PATH !== undefined && process.env.CHROMIUM_PATH !== ""
  ? process.env.CHROMIUM_PATH
  : undefined
const candidates = explicit !== undefined
  ? [explicit]
  : ["/usr/bin/chromium", "/usr/lib/chromium/chromium", "/usr/bin/chromium-browser"]
export const chromiumPath: string | undefined = candidates.find((p) => fs.existsSync(p))

/** The suite's name, saying why it skips when it does. */
export const suite = (name: string) =>
  chromiumPath === undefined
    ? `${name} — SKIPPED: no Chromium at ${
      candidates.join(", ")
    } (run \`node scripts/setup.mjs\` as root on Debian, or set CHROMIUM_PATH)`
    : name
export const noChromium = chromiumPath === undefined
if (noChromium) console.warn(`[portal tests] ${suite("browser suite")}`)

export const artifacts = Path.join(root, "test-results/portal")

/** The portal's navigation, in the contract's words. */
export const NAV = ["Overview", "API keys", "Library", "Renders", "Drive"] as const

const axeSource = fs.readFileSync(Path.join(root, "node_modules/axe-core/axe.min.js"), "utf8")

/** Debian's Chromium, headless, offline. Playwright gives every launch a fresh --user-data-dir of its own. */
export const launchChromium = () =>
  chromium.launch({
    executablePath: chromiumPath!,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

export interface Portal {
  readonly service: Service
  readonly shared: Shared
  readonly admin: Admin
  readonly browser: Browser
  readonly emulator: DriveEmulator | undefined
  readonly baseUrl: string
  /** A sign-in link from `admin portal link` (in-process). */
  readonly link: (
    workspaceId: string,
    ...args: Array<string>
  ) => Promise<{ object: string; url: string; expires_at: string }>
  /** A fresh browser context (own cookie jar) with a page whose problems are recorded. */
  readonly newPage: () => Promise<Page>
  /** Opens a sign-in link in a fresh context and returns the page on the Overview. */
  readonly signIn: (workspaceId: string) => Promise<Page>
  readonly close: () => Promise<void>
}

const problems = new WeakMap<Page, Array<string>>()

/**
 * Records uncaught script errors, CSP violations and portal sub-resources (style, script, image…)
 * that failed to load; any of them fails the page's next check.
 */
const watch = (page: Page) => {
  const seen: Array<string> = []
  problems.set(page, seen)
  page.on("pageerror", (e) => seen.push(`uncaught: ${e.message}`))
  page.on("response", (r) => {
    const type = r.request().resourceType()
    if (type !== "document" && type !== "media" && type !== "fetch" && type !== "xhr" && r.status() >= 400) {
      seen.push(`${type} ${r.url()}: ${r.status()}`)
    }
  })
  page.on("requestfailed", (r) => {
    const type = r.resourceType()
    const error = r.failure()?.errorText ?? ""
    // leaving a page aborts what it was still loading (ERR_ABORTED); that is no fault of the page
    if (
      type !== "document" && type !== "media" && type !== "fetch" && type !== "xhr" && !error.includes("ERR_ABORTED")
    ) {
      seen.push(`${type} ${r.url()}: ${error}`)
    }
  })
  // problems belong to a document: a new one starts clean
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) seen.length = 0
  })
  page.on("console", (m) => {
    if (m.type() === "error" && /Content Security Policy|Refused to/i.test(m.text())) seen.push(`console: ${m.text()}`)
  })
  return page
}

export const startPortal = async (
  opts: { readonly env?: Record<string, string>; readonly drive?: boolean } = {}
): Promise<Portal> => {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const emulator = opts.drive === true
    ? await startDriveEmulator({ redirectUris: [`${baseUrl}/oauth/cloud_drive/callback`] })
    : undefined
  const shared = await makeShared()
  const [service, browser] = await Promise.all([
    startService(shared, {
      ...(emulator === undefined ? {} : emulator.env()),
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      DRIVE_RETRY_BASE_MS: "10",
      ...opts.env
    }),
    launchChromium()
  ])
  const admin = inProcessAdmin(service.env)
  const contexts: Array<BrowserContext> = []
  const newPage = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    contexts.push(context)
    return watch(await context.newPage())
  }
  const link = (workspaceId: string, ...args: Array<string>) => admin.ok("portal", "link", workspaceId, ...args)
  return {
    service,
    shared,
    admin,
    browser,
    emulator,
    baseUrl,
    link,
    newPage,
    signIn: async (workspaceId) => {
      const { url } = await link(workspaceId)
      const page = await newPage()
      const response = await page.goto(url)
      // (its body is gone once the page's script has moved on: read only to explain a failure)
      if (response?.status() !== 200) expect(response?.status(), await response?.text()).toBe(200)
      // the link's page signs in by a POST its script sends (docs/portal.md)
      await page.waitForURL(`${baseUrl}/portal`)
      await expect.poll(() => heading(page)).toBe("Overview")
      return page
    },
    close: async () => {
      await Promise.all(contexts.map((c) => c.close().catch(() => undefined)))
      await browser.close().catch(() => undefined)
      await admin.dispose()
      const code = await service.stop()
      await emulator?.close()
      expect(code, service.output().slice(-3000)).toBe(0)
    }
  }
}

/** The page's one h1. */
export const heading = async (page: Page) => {
  const h1 = page.locator("h1")
  expect(await h1.count(), `one <h1> on ${page.url()}`).toBe(1)
  return (await h1.innerText()).trim()
}

export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: Array<{ readonly target: Array<string>; readonly html: string }>
}

/** axe-core in the page (evaluated over CDP, so the portal's CSP needs no exception for it). */
export const axe = async (page: Page): Promise<Array<AxeViolation>> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
  return page.evaluate(async () => {
    // what the test reads of axe-core's answer
    type Axe = {
      readonly run: (
        context: Document,
        options: { readonly resultTypes: ReadonlyArray<string> }
      ) => Promise<{ readonly violations: ReadonlyArray<AxeViolation> }>
    }
    const result = await (window as unknown as { readonly axe: Axe }).axe.run(document, { resultTypes: ["violations"] })
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, html: String(n.html).slice(0, 200) }))
    }))
  })
}

/**
 * The checks every page gets: zero serious/critical axe violations; one h1, one main, lang="en",
 * a title; on signed-in pages the "Portal" nav and the Sign out button; no CSP violation or
 * uncaught error; and a full-page screenshot saved as NAME.png.
 */
export const check = async (page: Page, name: string, opts: { readonly signedIn?: boolean } = {}) => {
  await page.waitForLoadState("load")
  fs.mkdirSync(artifacts, { recursive: true })
  await page.screenshot({ path: Path.join(artifacts, `${name}.png`), fullPage: true })
  const violations = await axe(page)
  const severe = violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  expect(severe, `axe on ${name} (${page.url()}):\n${JSON.stringify(severe, null, 1)}`).toEqual([])
  await heading(page)
  expect(await page.locator("main").count(), `one <main> on ${name}`).toBe(1)
  expect(await page.locator("html").getAttribute("lang"), `lang on ${name}`).toBe("en")
  expect((await page.title()).trim(), `title on ${name}`).not.toBe("")
  if (opts.signedIn !== false) {
    const nav = page.getByRole("navigation", { name: "Portal" })
    for (const link of NAV) {
      expect(await nav.getByRole("link", { name: link, exact: true }).count(), `${link} in nav on ${name}`).toBe(1)
    }
    expect(await page.getByRole("button", { name: "Sign out" }).count(), `Sign out on ${name}`).toBe(1)
  }
  expect(problems.get(page) ?? [], `script errors / CSP violations on ${name}`).toEqual([])
  await recordMetrics(page, name)
}

/** Bytes of a static asset as served and gzipped (fetched once per run). */
const assetSizes = new Map<string, Promise<{ readonly raw: number; readonly gzip: number }>>()
const assetSize = (url: string) => {
  if (!assetSizes.has(url)) {
    assetSizes.set(
      url,
      fetch(url).then(async (r) => {
        const body = new Uint8Array(await r.arrayBuffer())
        return { raw: body.length, gzip: gzipSync(body, { level: 9 }).length }
      })
    )
  }
  return assetSizes.get(url)!
}

/**
 * A measurement, not a check: the page's weight (document bytes as served; its scripts and styles as
 * served and gzipped) and its first contentful paint on loopback, in
 * test-results/portal/metrics/NAME.json, for the closing note.
 */
const recordMetrics = async (page: Page, name: string) => {
  const m = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined
    return {
      path: location.pathname,
      document_bytes: nav?.encodedBodySize ?? null,
      scripts: [...document.querySelectorAll("script[src]")].map((e) => (e as HTMLScriptElement).src),
      styles: [...document.querySelectorAll("link[rel=\"stylesheet\"]")].map((e) => (e as HTMLLinkElement).href),
      first_contentful_paint_ms: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null,
      dom_content_loaded_ms: nav === undefined ? null : Math.round(nav.domContentLoadedEventEnd)
    }
  })
  const sum = async (urls: Array<string>) => {
    const sizes = await Promise.all(urls.map(assetSize))
    return { raw: sizes.reduce((n, s) => n + s.raw, 0), gzip: sizes.reduce((n, s) => n + s.gzip, 0) }
  }
  const [js, css] = await Promise.all([sum(m.scripts), sum(m.styles)])
  const line = {
    page: name,
    path: m.path,
    document_bytes: m.document_bytes,
    js_bytes: js.raw,
    js_gzip_bytes: js.gzip,
    css_bytes: css.raw,
    css_gzip_bytes: css.gzip,
    first_contentful_paint_ms: m.first_contentful_paint_ms,
    dom_content_loaded_ms: m.dom_content_loaded_ms
  }
  fs.mkdirSync(Path.join(artifacts, "metrics"), { recursive: true })
  fs.writeFileSync(Path.join(artifacts, "metrics", `${name}.json`), `${JSON.stringify(line)}\n`)
}

/** Waits (by polling the DOM, never reloading) until `probe` is true. */
export const until = async (probe: () => Promise<boolean>, what: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
}

/** Marks the document, so a test can prove a later change came without a reload. */
interface Marked {
  __p2vMark?: boolean
}
export const markDocument = (page: Page) => page.evaluate(() => ((window as Marked).__p2vMark = true))
export const sameDocument = (page: Page) => page.evaluate(() => (window as Marked).__p2vMark === true)

/** The session cookie of a signed-in page's context (the one SameSite=Strict cookie on /portal). */
export const sessionCookie = async (page: Page) => {
  const cookies = (await page.context().cookies()).filter((c) => c.path === "/portal" && c.sameSite === "Strict")
  expect(cookies.length, JSON.stringify(cookies)).toBe(1)
  return cookies[0]!
}

export const fixture = (name: string) => Path.join(root, "test/fixtures", name)

/** An API client with a key (Bearer only). */
export const api = (baseUrl: string, secret?: string, cookie?: string) => {
  const headers = (extra: Record<string, string> = {}) => ({
    ...(secret === undefined ? {} : { authorization: `Bearer ${secret}` }),
    ...(cookie === undefined ? {} : { cookie }),
    ...extra
  })
  return {
    get: (path: string) => fetch(`${baseUrl}${path}`, { headers: headers() }),
    postJson: (path: string, body: unknown, extra?: Record<string, string>) =>
      fetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: headers({ "content-type": "application/json", ...extra }),
        body: JSON.stringify(body)
      }),
    upload: (file: string, label?: string) => {
      const form = new FormData()
      form.append("file", new Blob([fs.readFileSync(fixture(file))]), file)
      if (label !== undefined) form.append("label", label)
      return fetch(`${baseUrl}/api/v1/media`, { method: "POST", headers: headers(), body: form })
    }
  }
}

export const expectError = async (r: Response, status: number, code: string) => {
  const text = await r.text()
  expect(r.status, text).toBe(status)
  expect(JSON.parse(text).error.code, text).toBe(code)
}
