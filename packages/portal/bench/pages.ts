/**
 * Page weight and time to first render of each portal page, on a running service.
 *
 *   npm run --silent admin -- portal link WS > /tmp/link.json
 *   node packages/portal/bench/pages.ts "$(node -pe 'JSON.parse(require("fs").readFileSync("/tmp/link.json")).url')"
 *
 * Weight: the page's own CSS + JS (bytes as sent, and gzip-compressed as a proxy would send them).
 * Time: navigation start → first contentful paint in Chromium (median of 5 loads), and the server's
 * time to the first byte of the HTML.
 */
import { gzipSync } from "node:zlib"
import { chromium } from "playwright-core"

const link = process.argv[2]
if (link === undefined) throw new Error("give a sign-in link")
const base = new URL(link).origin
const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] })
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
await page.goto(link)
// the link opens a page whose script signs in (a POST), then lands on the overview
await page.waitForURL(`${base}/portal`)

const assets: Record<string, number> = {}
for (const name of ["portal.css", "portal.js"]) {
  const bytes = new Uint8Array(await (await page.request.get(`${base}/portal/static/${name}`)).body())
  assets[name] = bytes.length
  assets[`${name} (gzip)`] = gzipSync(bytes).length
}
console.log("assets", JSON.stringify(assets))

const renderId = await page.evaluate(async () => {
  const html = await (await fetch("/portal/renders")).text()
  return /\/portal\/renders\/(rnd_[A-Za-z0-9]+)/.exec(html)?.[1]
})
const pages = [
  "/portal",
  "/portal/keys",
  "/portal/library",
  "/portal/renders",
  "/portal/renders/new",
  "/portal/drive",
  ...(renderId ? [`/portal/renders/${renderId}`] : [])
]
const median = (xs: Array<number>) => {
  const known = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b)
  return known.length === 0 ? Number.NaN : known[Math.floor(known.length / 2)]
}
for (const path of pages) {
  const fcp: Array<number> = []
  const ttfb: Array<number> = []
  let htmlBytes = 0
  for (let i = 0; i < 5; i++) {
    const response = await page.goto(`${base}${path}`, { waitUntil: "load" })
    htmlBytes = (await response!.body()).length
    // the paint entry can arrive after `load`: wait for it (buffered) rather than read it too early
    const t = await page.evaluate(() =>
      new Promise<{ ttfb: number; fcp: number }>((resolve) => {
        const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming
        const done = (fcp: number) => resolve({ ttfb: nav.responseStart - nav.startTime, fcp })
        new PerformanceObserver((list) => {
          const paint = list.getEntriesByName("first-contentful-paint")[0]
          if (paint !== undefined) done(paint.startTime)
        }).observe({ type: "paint", buffered: true })
        setTimeout(() => done(Number.NaN), 3000)
      })
    )
    fcp.push(t.fcp)
    ttfb.push(t.ttfb)
  }
  console.log(
    `${path.padEnd(48)} html ${String(htmlBytes).padStart(6)} B  ttfb ${
      median(ttfb).toFixed(1).padStart(6)
    } ms  first render ${median(fcp).toFixed(1).padStart(6)} ms`
  )
}
await browser.close()
